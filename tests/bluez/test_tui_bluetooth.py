"""The TUI's Bluetooth screen (key 7) against roamd and the BlueZ double: screenshot goldens in
tests/bluez/golden (text with attributes, as tests/tui), the pairing question as a dialog
answered with keys. ROAM_REGEN_GOLDENS=1 rewrites the goldens (tests/tui/regen -k ... does
not reach them: run this file with it)."""
import difflib
import os
import sys

import dbus
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tui"))
sys.path.insert(0, os.path.join(HERE, "..", "client"))
from btenv import HEADSET, PHONE, TOP  # noqa: E402
from tuidriver import Tui, theme_roles  # noqa: E402

GOLDEN = os.path.join(HERE, "golden")
REGEN = os.environ.get("ROAM_REGEN_GOLDENS") == "1"


def check_golden(name, t, theme="default"):
    header = f"# roam screenshot {name}: {t.cols}x{t.rows}, theme {theme}\n"
    actual = header + t.dump(theme_roles(theme)).replace(TOP, "<top>")
    path = os.path.join(GOLDEN, name + ".txt")
    if REGEN:
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write(actual)
        return
    if not os.path.exists(path):
        pytest.fail(f"no golden {path}: run with ROAM_REGEN_GOLDENS=1")
    with open(path) as f:
        expected = f.read()
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            f"golden/{name}.txt", "screen now"))
        pytest.fail(f"screen differs from golden/{name}.txt:\n{diff}", pytrace=False)


@pytest.fixture
def screen(env, tmp_path):
    started = []

    def start(text="Roam Headset", **kwargs):
        t = Tui(env.env, tmp_path, **kwargs)
        started.append(t)
        t.wait_for(live="ready")
        t.key("7")
        return t.wait_for(screen="bluetooth", text=text)

    yield start
    for t in started:
        t.close()


def test_devices_and_confirm_dialog(env, screen):
    env.mock_call("AddBattery", env.dev, dbus.Byte(80))
    phone = env.mock_call("AddNetworkDevice", "hci0", PHONE, "Roam Phone")
    env.wait(lambda: env.device(HEADSET)["battery"] == 80 and env.device(PHONE), what="devices")
    t = screen(text=["battery 80%", "offers a network"])
    check_golden("bluetooth-devices", t)

    # Pairing from the screen: the agent's question becomes a dialog; y answers it.
    env.mock_call("SetPairing", env.dev, "confirm", "123456")
    t.key("p")
    t.wait_for(screen="bluetooth", text="Does the device show passkey 123456 too?")
    check_golden("bluetooth-confirm", t)
    # Keys typed before it showed do not answer it; after the grace period they do.
    t.key("y")
    t.wait_for(screen="bluetooth", text="A question just came: keys wait a moment")
    assert not env.device(HEADSET)["paired"]
    t.settle()
    t.key("y")
    t.wait_for(screen="bluetooth", text=["paired, not connected", "Last: Pairing with Roam "
                                         "Headset: done"])
    assert "Does the device show" not in t.text()
    assert env.device(HEADSET)["paired"]

    # A PIN typed in the dialog.
    env.mock_call("SetPairing", phone, "pin", "1234")
    t.press("kcud1")
    t.key("p")
    t.wait_for(screen="bluetooth", text="Type its PIN")
    t.settle()
    t.key("12")
    t.wait_for(screen="bluetooth", text="PIN: 12_")
    t.key("34\r")
    env.wait(lambda: env.device(PHONE)["paired"], what="phone paired")


def test_small_terminal_and_refusal(env, screen):
    t = screen(cols=40, rows=12)
    check_golden("bluetooth-small", t)
    env.mock_call("SetPairing", env.dev, "confirm", "000777")
    t.key("p")
    t.wait_for(screen="bluetooth", text="000777")
    check_golden("bluetooth-small-confirm", t)
    t.settle()
    # The global keys still work while the question waits: help, and back to the question.
    t.key("?")
    t.wait_for(screen="help", text="Help: the Bluetooth screen")
    t.key("?")
    t.wait_for(screen="bluetooth", text="000777")
    t.key("n")
    t.wait_for(screen="bluetooth", text=["Pairing with Roam Headset failed:", "refused"])
    assert not env.device(HEADSET)["paired"]


@pytest.mark.parametrize("theme", ["monochrome", "high-contrast"])
def test_themes(env, screen, theme):
    env.mock_call("SetPairing", env.dev, "pin", "1234")
    t = screen(args=("--theme", theme))
    check_golden(f"bluetooth-theme-{theme}", t, theme)
    t.key("p")
    t.wait_for(screen="bluetooth", text="Type its PIN")
    check_golden(f"bluetooth-pin-theme-{theme}", t, theme)
    t.settle()
    t.key("\x1b")
    t.wait_for(screen="bluetooth", text=["Pairing with Roam Headset failed:", "refused"])


def test_nfc_wifi_result_in_words(env, screen):
    """An NFC tag's WiFi network that cannot be added (no wpa_supplicant here): roam nfc import
    says why, and the Bluetooth screen's last event says it in words."""
    t = screen()
    with open(os.path.join(TOP, "tests/unit/ndef/wpas-config-token-psk.hex")) as f:
        r = env.roam("nfc", "import", "-", "--yes", input=f.read())
    assert r.returncode != 0
    assert "No WiFi interface is run by wpa_supplicant" in r.stderr
    t.wait_for(screen="bluetooth", text="The WiFi network of an NFC tag was not added: no WiFi")
    check_golden("bluetooth-nfc-wifi-result", t)


def test_nfc_tag_asks_first(env, screen):
    """A tag touched to neard's reader: the screen asks what the tag offers, in words; nothing
    is paired before y. y pairs the device (its question is the next dialog); n drops it."""
    from test_nfc import bt_oob, record, start_neard, touch
    neard = start_neard(env)
    t = screen()
    msg = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None,
                 bt_oob(HEADSET, "Roam Headset"))
    assert touch(neard, msg) == "delivered"
    t.wait_for(screen="bluetooth",
               text=["NFC tag", f"Pair with Roam Headset (headset, {HEADSET})?"])
    check_golden("bluetooth-nfc-offer", t)
    assert env.question()["id"] == 0
    t.settle()
    t.key("n")
    t.wait_for(screen="bluetooth", text="Last: The NFC tag was declined: nothing was done")
    assert "NFC tag\n" not in t.text() and not env.device(HEADSET)["paired"]

    env.mock_call("SetPairing", env.dev, "confirm", "271828")
    assert touch(neard, msg) == "delivered"
    t.wait_for(screen="bluetooth", text=f"Pair with Roam Headset (headset, {HEADSET})?")
    t.settle()
    t.key("y")
    t.wait_for(screen="bluetooth", text="Does the device show passkey 271828 too?")
    t.settle()
    t.key("y")
    t.wait_for(screen="bluetooth", text="Last: Pairing with Roam Headset: done")
    assert env.device(HEADSET)["paired"]


def test_nfc_tag_small_terminal(env, screen):
    from test_nfc import handover_select, start_neard, touch
    neard = start_neard(env)
    t = screen(cols=40, rows=12)
    assert touch(neard, handover_select(HEADSET, "Roam Headset")) == "delivered"
    t.wait_for(screen="bluetooth", text="NFC tag")
    check_golden("bluetooth-small-nfc-offer", t)
    t.settle()
    t.key("n")
    env.wait(lambda: "declined" in str(env.prop("LastEvent")), what="declined")
    t.wait(lambda t: "NFC tag" not in t.text(), what="the dialog closed")
    assert env.question()["id"] == 0


def test_questions_reach_other_screens(env, tmp_path):
    """A tag touched, or a pairing another program started, while another screen is shown:
    the status line asks in words and names the key; 7 shows the question as a dialog."""
    from test_nfc import bt_oob, record, start_neard, touch
    neard = start_neard(env)
    t = Tui(env.env, tmp_path)
    try:
        t.wait_for(screen="overview", live="ready")
        msg = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None,
                     bt_oob(HEADSET, "Roam Headset"))
        assert touch(neard, msg) == "delivered"
        t.wait_for(screen="overview", text=["An NFC tag asks: Pair with Roam Headset (headset",
                                            "to answer."])
        check_golden("bluetooth-asks-elsewhere", t)
        t.key("7")
        t.wait_for(screen="bluetooth", text=["NFC tag", "Pair with Roam Headset"])
        assert "to answer." not in t.text()
        t.settle()
        t.key("n")
        t.wait_for(screen="bluetooth", text="Last: The NFC tag was declined: nothing was done")

        t.key("1")
        t.wait_for(screen="overview")
        env.mock_call("SetPairing", env.dev, "confirm", "141421")
        res = env.call_async("Pair", HEADSET)
        # (env.wait runs the test's main loop: the call goes out, and roamd's question is seen.)
        env.wait(lambda: env.question()["kind"] == "confirm", what="roamd asks")
        t.wait_for(screen="overview", text=["Bluetooth: Roam Headset shows passkey 141421",
                                            "to answer."])
        t.key("7")
        t.wait_for(screen="bluetooth", text="Does the device show passkey 141421 too?")
        t.settle()
        t.key("y")
        env.wait(lambda: res, what="Pair")
        assert "ok" in res, res
        # Answered: the status line stops asking (once the screen has read roamd's state).
        t.key("1")
        t.wait(lambda t: t.frame.screen == "overview" and "to answer." not in t.text(),
               what="the overview without the question")
    finally:
        t.close()


def test_remove_asks_first(env, screen):
    """x (remove the device: BlueZ forgets it and its pairing) asks y/N; n and Esc leave the device in
    BlueZ, y removes it."""
    t = screen()
    # (the status line wraps it over two rows)
    question = [f"Remove Roam Headset ({HEADSET})? It is forgotten, with any pairing.", "(y/N)"]
    t.key("x")
    t.wait_for(screen="bluetooth", text=question)
    check_golden("bluetooth-confirm-remove", t)
    t.key("n")
    t.wait_for(screen="bluetooth", text="Not done: Roam Headset is kept.")
    t.key("x")
    t.wait_for(screen="bluetooth", text=question)
    t.key("\x1b")
    t.wait_for(screen="bluetooth", text="Not done: Roam Headset is kept.")
    assert env.device(HEADSET)
    t.key("x")
    t.wait_for(screen="bluetooth", text=question)
    t.key("y")
    env.wait(lambda: not env.device(HEADSET), what="the headset removed")


def test_without_bluez_no_key_is_offered(env, screen):
    """BlueZ gone: the screen says so, and the hint bar offers none of the keys that would
    only answer "No Bluetooth adapter" (L1 of the new-user report); with it, x and o are
    offered like the rest (L11)."""
    t = screen()
    hints = t.text_lines()[-1]
    assert "x remove" in hints and "o adapter" in hints, hints
    env.mock.terminate()
    env.mock.wait()
    t.wait_for(screen="bluetooth", text="BlueZ is not running")
    hints = t.text_lines()[-1]
    for k in ("s scan", "p pair", "o adapter", "x remove"):
        assert k not in hints, hints


def test_service_authorization_names_the_profile(env, screen):
    """A paired device asking for a service: the dialog names the profile, not only its
    UUID (L10 of the new-user report)."""
    env.mock_call("SetPairing", env.dev, "just-works", "")
    env.bt().Pair(HEADSET)
    env.wait(lambda: env.device(HEADSET)["paired"], what="paired")
    t = screen()
    env.bus.get_object("org.bluez", "/").IncomingService(
        env.dev, "0000110b-0000-1000-8000-00805f9b34fb", dbus_interface="org.bluez.Mock",
        reply_handler=lambda *a: None, error_handler=lambda *a: None, timeout=30)
    env.wait(lambda: env.question()["kind"] == "authorize-service", what="the question")
    def named(t):
        return "audio sink (A2DP) service?" in " ".join(t.text().split())
    t.wait(lambda t: True, what="a frame")  # what arrived while env.wait ran
    if not named(t):
        t.wait(named, what="the profile named")
    assert "Service: " in t.text(), t.text()


def test_filter_devices(env, screen):
    """/ narrows the devices to those whose name, address, kind or state contains the text
    (L8 of the new-user report: / did nothing here); the keys act on a shown device; Esc
    brings them all back."""
    env.mock_call("AddNetworkDevice", "hci0", PHONE, "Roam Phone")
    env.wait(lambda: env.device(PHONE), what="the phone")
    t = screen(text=["Roam Headset", "Roam Phone"])
    t.key("/")
    t.key("phone")
    t.wait_for(screen="bluetooth", text="Filter: phone_ (1 of 2 devices)")
    t.key("\r")
    t.wait_for(screen="bluetooth", text="Filter: phone (1 of 2 devices)")
    text = t.text()
    assert "Roam Phone" in text and "Roam Headset" not in text, text
    check_golden("bluetooth-filter", t)
    # the selection is the phone: x asks about it, not the hidden headset
    t.key("x")
    t.wait_for(screen="bluetooth", text="Remove Roam Phone (")
    t.key("n")
    t.wait_for(screen="bluetooth", text="Not done: Roam Phone is kept.")
    t.key("\x1b")
    t.wait_for(screen="bluetooth", text="Roam Headset")
    assert "Filter:" not in t.text()
