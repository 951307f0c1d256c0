# tests/wpa's helpers (wpaenv: roamd's configuration beside a wpa_supplicant) for tests/wifi
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "wpa"))
