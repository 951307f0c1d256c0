"""What the WiFi tests share: roamd's configuration beside wpa_supplicant (or its protocol
double, fakewpa.py) and the check that roamd stopped cleanly."""
import os

BASE = """[Daemon]
LogLevel=debug
[Apps]
Enforce=no
[Probe]
HttpURL=http://192.0.2.1/
HttpsURL=https://192.0.2.1/
Timeout=1
[WiFi]
"""


def config(ctrl, client, **wifi):
    """The [WiFi] section names the control and client socket directories, then each keyword
    as Key=value (RequestTimeout="3", GlobalControl=path...). The probe's TEST-NET address
    never answers: these tests are about WiFi, not verdicts."""
    keys = {"ControlDirectory": ctrl, "ClientDirectory": client, **wifi}
    return BASE + "".join(f"{k}={v}\n" for k, v in keys.items())


def start_roamd(env, ctrl, **wifi):
    """roamd in the MiniEnv, its client sockets in the env's own directory."""
    env.start_roamd(config(ctrl, os.path.join(env.dir, "client"), **wifi))


def stop_roamd(env):
    rc = env.stop_roamd()
    assert rc in (None, 0), f"roamd exited with {rc}:\n{env.log()[-4000:]}"
