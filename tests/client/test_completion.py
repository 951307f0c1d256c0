"""The shell completions (completions/) against fake_roamd.py on a private system bus: app
IDs and link names come from the running roamd; when none runs they are left out and
nothing is printed."""
import os
import shlex
import shutil
import subprocess

import pytest

from fakebus import ROAM

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASH = os.path.join(TOP, "completions", "roam.bash")
FISH = os.path.join(TOP, "completions", "roam.fish")
ZSH = os.path.join(TOP, "completions", "_roam")

SCENARIO = {
    "manager": {"State": "online", "BestLink": "/org/roam1/link/3"},
    "links": [
        {"Index": 3, "Name": "wifi0", "Bearer": "wifi", "Connectivity": "online",
         "ConnectivityReason": "ok", "State": "routable"},
        {"Index": 9, "Name": "tun0", "Bearer": "vpn", "Connectivity": "online",
         "ConnectivityReason": "ok", "State": "routable"},
    ],
    "apps": [
        {"Id": "org.example.Mail", "Access": "allow", "Source": "config", "State": "online"},
        {"Id": "org.example.Chat", "Access": "deny", "Source": "runtime",
         "State": "blocked: access denied"},
        {"Id": "default", "Access": "allow", "Source": "builtin", "State": "online"},
        {"Id": "system", "Source": "builtin", "State": "online"},
    ],
}
RUNNABLE = ["org.example.Chat", "org.example.Mail"]


def shell_env(env):
    """The bus's environment with this tree's roam first in PATH (the completion runs it)."""
    return dict(env, PATH=os.path.dirname(os.path.abspath(ROAM)) + ":/usr/sbin:/usr/bin:/bin")


def bash_complete(env, line):
    """What bash offers for LINE (its last word is the one being completed)."""
    words = shlex.split(line) + ([""] if line.endswith(" ") else [])
    script = (f"source {shlex.quote(BASH)}\n"
              f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n"
              "_roam\n"
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=shell_env(env),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return sorted(w for w in p.stdout.split("\n") if w), p.stderr


def test_bash_app_ids_from_roamd(bus, roamd):
    roamd(SCENARIO)
    offered, err = bash_complete(bus.env, "roam app ")
    assert offered == ["default", "org.example.Chat", "org.example.Mail", "system"]
    assert err == ""
    assert bash_complete(bus.env, "roam run --app org.example.M")[0] == ["org.example.Mail"]


def test_run_offers_apps_not_policies(bus, roamd, tmp_path):
    """issue 39: `roam run --app` takes an app; roamd refuses to run a program under the
    policies default, system, user:UID, so the completion does not offer them (other
    commands' --app, and `roam app`, still do)."""
    roamd(SCENARIO)
    assert bash_complete(bus.env, "roam run --app ")[0] == RUNNABLE
    assert bash_complete(bus.env, "roam --json run --app ")[0] == RUNNABLE
    assert bash_complete(bus.env, "roam run ")[0] == ["--", "--app", "--online-for"]
    assert "system" in bash_complete(bus.env, "roam stats --app ")[0]
    if shutil.which("fish"):
        env = dict(shell_env(bus.env), HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
        p = subprocess.run(["fish", "--no-config", "-c", f"source {shlex.quote(FISH)}; "
                            "complete -C 'roam run --app '"], env=env,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        assert sorted(l.split("\t")[0] for l in p.stdout.split("\n") if l) == RUNNABLE
    if shutil.which("zsh"):
        # _roam_run_apps as zsh runs it, _describe replaced by a printer of its candidates
        script = (f"source {shlex.quote(ZSH)} 2>/dev/null\n"
                  "_describe() { print -l -- ${(P)4}; }\n"
                  "_roam_run_apps\n")
        p = subprocess.run(["zsh", "-f", "-c", "autoload -Uz compinit; " + script],
                           env=shell_env(bus.env), capture_output=True, text=True, timeout=30)
        assert sorted(w for w in p.stdout.split("\n") if w) == RUNNABLE, (p.stdout, p.stderr)


def test_bash_links_from_roamd(bus, roamd):
    roamd(SCENARIO)
    assert bash_complete(bus.env, "roam network trust home ")[0] == ["tun0", "wifi0"]
    assert bash_complete(bus.env, "roam stats --link w")[0] == ["wifi0"]


def test_bash_without_roamd_is_silent(bus):
    """No roamd on the bus: only what the completion knows itself, and no error text."""
    offered, err = bash_complete(bus.env, "roam app ")
    assert offered == ["default", "system"]
    assert err == ""
    offered, err = bash_complete(bus.env, "roam network trust home ")
    assert offered == [] and err == ""


def test_bash_commands_and_values(bus):
    assert bash_complete(bus.env, "roam ne")[0] == ["network"]
    assert bash_complete(bus.env, "roam app org.example.Mail ")[0] == [
        "online-for", "release", "reset", "set"]
    assert bash_complete(bus.env, "roam app org.example.Mail set vpn=")[0] == [
        "vpn=any", "vpn=forbidden", "vpn=required"]
    assert bash_complete(bus.env, "roam firewall check ")[0] == ["tcp", "udp"]
    # help is a command, and takes one (L6 of the new-user report)
    assert bash_complete(bus.env, "roam he")[0] == ["help"]
    assert bash_complete(bus.env, "roam help sta")[0] == ["stats", "status"]


@pytest.mark.skipif(not shutil.which("fish"), reason="fish is not installed")
def test_fish_app_ids_and_links_from_roamd(bus, roamd, tmp_path):
    roamd(SCENARIO)
    env = dict(shell_env(bus.env), HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))

    def fish(line):
        p = subprocess.run(["fish", "--no-config", "-c", f"source {shlex.quote(FISH)}; "
                            f"complete -C {shlex.quote(line)}"], env=env,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        return sorted(line.split("\t")[0] for line in p.stdout.split("\n") if line)

    assert fish("roam app ") == ["default", "org.example.Chat", "org.example.Mail", "system"]
    assert fish("roam network trust home ") == ["tun0", "wifi0"]


def policy_keys(env):
    """The keys of `roam app ID set`, as roam's usage error names them (the shared table)."""
    p = subprocess.run([ROAM, "app", "x", "set"], env=env, capture_output=True, text=True,
                       timeout=10)
    assert p.returncode == 2
    keys = p.stderr.split("(keys: ", 1)[1].split(")", 1)[0].split(", ")
    assert "wake" in keys and "wake-bytes" in keys, p.stderr
    return keys


def test_every_policy_key_is_completed(bus):
    """issue 41 §3: bash, zsh and fish offer every key roam takes, the wake keys included."""
    keys = policy_keys(bus.env)
    assert bash_complete(bus.env, "roam app org.example.Mail set ")[0] == sorted(
        k + "=" for k in keys)
    assert bash_complete(bus.env, "roam app org.example.Mail set wake=")[0] == [
        "wake=0", "wake=100", "wake=50", "wake=80", "wake=no"]
    zsh = open(os.path.join(TOP, "completions", "_roam")).read()
    fish = open(FISH).read()
    for k in keys:
        assert "'%s[" % k in zsh, k
        assert " %s=" % k in fish or "'%s=" % k in fish, k


def test_time_zone_and_set_are_completed(bus, roamd):
    """issue 41 §5: `roam time zone <TAB>` offers the zones roamd gives to choose from."""
    roamd(dict(SCENARIO, time={"State": "settled", "Zone": "Europe/Berlin",
                               "ZoneState": "choose", "ZoneReason": "several-candidates",
                               "ZoneCandidates": ["America/Detroit", "America/New_York"]}))
    assert bash_complete(bus.env, "roam time ")[0] == ["set", "zone"]
    assert bash_complete(bus.env, "roam time zone ")[0] == ["America/Detroit",
                                                            "America/New_York"]
    zsh = open(os.path.join(TOP, "completions", "_roam")).read()
    fish = open(FISH).read()
    assert "'zone[" in zsh and "'set[" in zsh
    assert "__roam_args_are time 0' -a 'zone'" in fish


def test_wifi_priority_and_eap_options(bus, roamd, tmp_path):
    roamd(SCENARIO)
    assert bash_complete(bus.env, "roam wifi pri")[0] == ["priority"]
    assert bash_complete(bus.env, "roam wifi join corp --eap peap --phase2 ")[0] == [
        "GTC", "MD5", "MSCHAPV2", "PAP"]
    offered = bash_complete(bus.env, "roam wifi join corp --")[0]
    assert "--phase2" in offered and "--anonymous-identity" in offered
    # the value of --anonymous-identity is no word to complete: nothing offered
    assert bash_complete(bus.env, "roam wifi join corp --anonymous-identity ")[0] == []
    if shutil.which("fish"):
        env = dict(shell_env(bus.env), HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
        p = subprocess.run(["fish", "--no-config", "-c", f"source {shlex.quote(FISH)}; "
                            "complete -C 'roam wifi join corp --phase2 '"], env=env,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        assert sorted(l.split("\t")[0] for l in p.stdout.split("\n") if l) == [
            "GTC", "MD5", "MSCHAPV2", "PAP"]
