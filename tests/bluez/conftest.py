"""The BlueZ test double and roamd for tests/bluez."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from btenv import BtEnv  # noqa: E402


@pytest.fixture
def env():
    e = BtEnv("bt")
    try:
        e.add_headset()
        yield e
        rc = e.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{e.log()[-4000:]}"
    finally:
        e.close()


