# SPDX-License-Identifier: LGPL-2.1-or-later
"""The control-socket double (tests/wpa/fakewpa.py) picks a BSS for a network as
wpa_supplicant's wpa_supplicant_ssid_bss_match() does (events.c): the network's key_mgmt must
share an AKM with the BSS ("skip RSN IE - key mgmt mismatch"), and a BSS that requires
management frame protection (WPA3-Personal only: SAE alone) is skipped by a network without
ieee80211w ("no mgmt frame protection enabled but AP requires it"); with no BSS left the join
is CTRL-EVENT-NETWORK-NOT-FOUND."""
import pytest

import wpaenv_path  # noqa: F401 - tests/wpa on sys.path
from fakewpa import FakeWpa

SAE_ONLY = {"flags": "[WPA2-SAE-CCMP][ESS]"}
MIXED = {"flags": "[WPA2-PSK+SAE-CCMP][ESS]"}
PSK = {"flags": "[WPA2-PSK-CCMP][ESS]"}
EAP = {"flags": "[WPA2-EAP-CCMP][ESS]"}
OPEN = {"flags": "[ESS]"}


@pytest.mark.parametrize("network,bss,match", [
    ({"key_mgmt": "SAE", "ieee80211w": "2"}, SAE_ONLY, True),
    ({"key_mgmt": "SAE"}, SAE_ONLY, False),            # PMF required, not enabled
    ({"key_mgmt": "SAE", "ieee80211w": "0"}, SAE_ONLY, False),
    ({"key_mgmt": "SAE", "ieee80211w": "1"}, SAE_ONLY, True),
    ({"key_mgmt": "WPA-PSK"}, SAE_ONLY, False),        # key mgmt mismatch
    ({"key_mgmt": "WPA-PSK SAE", "ieee80211w": "1"}, MIXED, True),
    ({"key_mgmt": "WPA-PSK"}, MIXED, True),            # transition mode: PMF optional
    ({"key_mgmt": "SAE"}, PSK, False),
    ({}, PSK, True),                                    # default WPA-PSK WPA-EAP
    ({}, EAP, True),
    ({}, OPEN, False),
    ({"key_mgmt": "NONE"}, OPEN, True),
    ({"key_mgmt": "NONE"}, PSK, False),
])
def test_bss_match(network, bss, match):
    assert FakeWpa.bss_matches(network, bss) is match
