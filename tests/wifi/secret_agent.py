# SPDX-License-Identifier: LGPL-2.1-or-later
"""A secret agent for the doubles' own tests (tests/dbusmock/networkmanager_wifi.py, iwd.py):
a process of its own on the test bus, as a desktop agent would be.

Usage: secret_agent.py nm|iwd ADDRESS ANSWER...
Registers with NetworkManager's AgentManager (identifier "roam.test.agentPID") or iwd's
AgentManager (path /agent), prints "ready", then answers each request with the next ANSWER:
a secret ("secret:TEXT"; for iwd's RequestUserNameAndPassword "secret:USER:PASSWORD"), or an
error ("error:NAME" for NM's org.freedesktop.NetworkManager.SecretAgent.NAME or iwd's
net.connman.iwd.Agent.Error.NAME). Each request is printed as a JSON line before it is
answered: {"method", "args", "sender"}; a request with no ANSWER left is answered NoSecrets
(NM) or Canceled (iwd)."""
import json
import os
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NM_AGENT = "org.freedesktop.NetworkManager.SecretAgent"
IWD_AGENT = "net.connman.iwd.Agent"


def plain(v):
    if isinstance(v, dbus.Array) and v.signature == "y":
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, (dbus.Dictionary, dict)):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (dbus.Array, list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (int, dbus.UInt32, dbus.Int32)):
        return int(v)
    return str(v)


class Agent(dbus.service.Object):
    def __init__(self, bus, path, answers, error_prefix):
        super().__init__(bus, path)
        self.answers = list(answers)
        self.error_prefix = error_prefix

    def note(self, method, args, sender):
        print(json.dumps({"method": method, "args": plain(args), "sender": sender}), flush=True)

    def answer(self, default_error):
        a = self.answers.pop(0) if self.answers else "error:" + default_error
        kind, _, value = a.partition(":")
        if kind == "error":
            raise dbus.exceptions.DBusException("refused", name=self.error_prefix + value)
        return value

    @dbus.service.method(NM_AGENT, in_signature="a{sa{sv}}osasu", out_signature="a{sa{sv}}",
                         sender_keyword="sender")
    def GetSecrets(self, conn, path, setting, hints, flags, sender=None):
        self.note("GetSecrets", [conn, path, setting, hints, flags], sender)
        value = self.answer("NoSecrets")
        key = "password" if setting == "802-1x" else "psk"
        return {setting: {key: dbus.String(value)}}

    @dbus.service.method(NM_AGENT, in_signature="os", sender_keyword="sender")
    def CancelGetSecrets(self, path, setting, sender=None):
        self.note("CancelGetSecrets", [path, setting], sender)

    @dbus.service.method(IWD_AGENT, in_signature="o", out_signature="s", sender_keyword="sender")
    def RequestPassphrase(self, network, sender=None):
        self.note("RequestPassphrase", [network], sender)
        return self.answer("Canceled")

    @dbus.service.method(IWD_AGENT, in_signature="o", out_signature="ss",
                         sender_keyword="sender")
    def RequestUserNameAndPassword(self, network, sender=None):
        self.note("RequestUserNameAndPassword", [network], sender)
        user, _, password = self.answer("Canceled").partition(":")
        return user, password

    @dbus.service.method(IWD_AGENT, in_signature="os", out_signature="s",
                         sender_keyword="sender")
    def RequestUserPassword(self, network, user, sender=None):
        self.note("RequestUserPassword", [network, user], sender)
        return self.answer("Canceled")

    @dbus.service.method(IWD_AGENT, in_signature="s", sender_keyword="sender")
    def Cancel(self, reason, sender=None):
        self.note("Cancel", [reason], sender)

    @dbus.service.method(IWD_AGENT, in_signature="", sender_keyword="sender")
    def Release(self, sender=None):
        self.note("Release", [], sender)


def main():
    kind, address, *answers = sys.argv[1:]
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(address)
    if kind == "nm":
        Agent(bus, "/org/freedesktop/NetworkManager/SecretAgent", answers, NM_AGENT + ".")
        bus.call_blocking("org.freedesktop.NetworkManager",
                          "/org/freedesktop/NetworkManager/AgentManager",
                          "org.freedesktop.NetworkManager.AgentManager",
                          "RegisterWithCapabilities", "su", ("roam.test.agent%d" % os.getpid(), 0))
    else:
        Agent(bus, "/agent", answers, IWD_AGENT + ".Error.")
        bus.call_blocking("net.connman.iwd", "/net/connman/iwd", "net.connman.iwd.AgentManager",
                          "RegisterAgent", "o", ("/agent",))
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
