"""A test double of neard (org.neard) speaking its documented agent API (neard's
doc/agent-api.txt): org.neard.AgentManager at /org/neard takes RegisterNDEFAgent(path, type)
and UnregisterNDEFAgent(path, type); a tag "read" by the test (org.neard.Test.Touch) is given
to the agent registered for its record type as GetNDEF({"NDEF": raw, "Record": path}), as neard
does. neard is not in Debian 12, and this kernel has no NFC."""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

MANAGER = "org.neard.AgentManager"
TEST = "org.neard.Test"


class Neard(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/neard")
        self.bus = bus
        self.agents = {}  # type -> (owner, path)

    @dbus.service.method(MANAGER, in_signature="os", out_signature="", sender_keyword="sender")
    def RegisterNDEFAgent(self, path, rtype, sender=None):
        if str(rtype) in self.agents:
            raise dbus.exceptions.DBusException("Already registered",
                                                name="org.neard.Error.AlreadyExists")
        self.agents[str(rtype)] = (str(sender), str(path))
        self.AgentRegistered(rtype)

    @dbus.service.method(MANAGER, in_signature="os", out_signature="", sender_keyword="sender")
    def UnregisterNDEFAgent(self, path, rtype, sender=None):
        self.agents.pop(str(rtype), None)

    @dbus.service.signal(TEST, signature="s")
    def AgentRegistered(self, rtype):
        pass

    @dbus.service.method(TEST, in_signature="", out_signature="as")
    def Registered(self):
        return sorted(self.agents)

    @dbus.service.method(TEST, in_signature="ays", out_signature="s",
                         async_callbacks=("ok", "err"))
    def Touch(self, ndef, rtype, ok, err):
        if str(rtype) not in self.agents:
            ok("no agent")
            return
        owner, path = self.agents[str(rtype)]
        fields = dbus.Dictionary({"NDEF": dbus.Array(ndef, signature="y"),
                                  "Record": dbus.ObjectPath("/org/neard/nfc0/tag0/record0")},
                                 signature="sv")
        self.bus.call_async(owner, path, "org.neard.NDEFAgent", "GetNDEF", "a{sv}", (fields,),
                            lambda *a: ok("delivered"), lambda e: ok(e.get_dbus_name()))


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    neard = Neard(bus)  # noqa: F841 (exported while the loop runs)
    name = dbus.service.BusName("org.neard", bus)  # noqa: F841 (kept: owning the name)
    print("ready", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    sys.exit(main())
