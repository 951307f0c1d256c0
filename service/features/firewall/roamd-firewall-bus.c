/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-bus-auth.h"
#include "roamd-config.h"
#include "roamd-firewall-chain.h"
#include "roamd-firewall.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-reconcile.h"

/* "" means the link with the default route (the best link). */
static Link *link_arg(Firewall *fw, const char *name, sd_bus_error *error)
{
        Links *links = firewall_core(fw)->links;
        Link *l = *name ? links_get_by_name(links, name) : links->best;

        if (!l || !l->announced) {
                if (*name)
                        sd_bus_error_setf(error, ROAM_ERROR_NO_SUCH_LINK, "No link named %s.",
                                          name);
                else
                        sd_bus_error_set(error, ROAM_ERROR_NO_SUCH_LINK,
                                         "No link has the default route.");
                return NULL;
        }
        return l;
}

static int no_firewall(sd_bus_error *error)
{
        return sd_bus_error_set(error, ROAM_ERROR_FAILED,
                                "The firewall is off ([Firewall] Enable=no in roamd.conf).");
}

/* The pass carrying a new location ran: the caller hears the kernel's word. */
static void on_location_pass(Reconcile *rc, int result, void *userdata)
{
        sd_bus_message *msg = userdata;
        int r;

        if (result < 0)
                r = sd_bus_reply_method_errorf(
                    msg, ROAM_ERROR_FAILED,
                    "The kernel refused the change (%s): the rules of the old location stay in "
                    "force, and roamd applies the new one as soon as the kernel accepts it (see "
                    "Manager.Degraded).",
                    strerror(-result));
        else
                r = sd_bus_reply_method_return(msg, NULL);
        if (r < 0)
                log_debug_errno(r, "Cannot answer SetLocation: %m");
}

static void message_unref(void *userdata)
{
        sd_bus_message_unref(userdata);
}

static int method_set_location(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Firewall *fw = *(Firewall *const *)userdata;
        const char *name, *location;
        Link *l;
        int r;

        r = sd_bus_message_read(msg, "ss", &name, &location);
        if (r < 0)
                return r;
        r = bus_check_authorized(msg, "org.roam1.set-location", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        if (!fw)
                return no_firewall(error);
        /* with nothing in force a location would be a promise roamd cannot keep */
        if (!reconcile_enforcing(firewall_core(fw)->reconcile))
                return sd_bus_error_set(error, ROAM_ERROR_FAILED,
                                        "The firewall is not enforced here ([Apps] "
                                        "Enforce=no, or no cgroup v2; see roamd's log): nothing "
                                        "changed.");
        l = link_arg(fw, name, error);
        if (!l)
                return -ENOENT;
        r = firewall_set_location(fw, l, location);
        if (r == -EINVAL)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Unknown location \"%s\": one of home, work, public, "
                                         "untrusted or a location networks.d or firewall.d "
                                         "defines.",
                                         location);
        if (r == -ENONET)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "%s is on no network now (no carrier or address, or "
                                         "its gateway is not resolved yet).",
                                         strempty(l->info.name));
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Cannot set the location: %m");
        /* the answer is the kernel's, once the pass that carries the new location's rules
         * committed: the call stays open until then */
        r = reconcile_wait(firewall_core(fw)->reconcile, on_location_pass, sd_bus_message_ref(msg),
                           message_unref, NULL);
        if (r < 0) {
                sd_bus_message_unref(msg);
                return sd_bus_error_set_errnof(error, -r, "Cannot apply the location: %m");
        }
        return 1;
}

static int method_get_rules(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Firewall *fw = *(Firewall *const *)userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        FwRuleRow *rows = NULL;
        size_t n = 0;
        int r;

        if (!fw)
                return no_firewall(error);
        r = firewall_rules(fw, &rows, &n);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sssssssstt)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(reply, "(sssssssstt)", rows[i].link, rows[i].location,
                                          rows[i].direction, rows[i].action, rows[i].match,
                                          rows[i].app, rows[i].source, rows[i].id, rows[i].packets,
                                          rows[i].bytes);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        firewall_rules_free(rows, n);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_check_inbound(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Firewall *fw = *(Firewall *const *)userdata;
        _cleanup_free_ char *rule = NULL, *reason = NULL;
        const char *proto, *app, *name;
        uint16_t port;
        bool accepted;
        FwProto p;
        Link *l;
        LinkIdentityView v;
        int r;

        r = sd_bus_message_read(msg, "sqss", &proto, &port, &app, &name);
        if (r < 0)
                return r;
        if (!fw)
                return no_firewall(error);
        p = fw_proto_from_string(proto);
        if (p != FW_PROTO_TCP && p != FW_PROTO_UDP)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Protocol \"%s\": tcp or udp.", proto);
        if (port == 0)
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS, "Port 0 is not a port.");
        l = link_arg(fw, name, error);
        if (!l)
                return -ENOENT;
        r = firewall_check_inbound(fw, l, p, port, app, &accepted, &rule, &reason);
        if (r < 0)
                return r;
        firewall_link_view(fw, l->ifindex, &v);
        return sd_bus_reply_method_return(msg, "bssss", accepted, strempty(l->info.name),
                                          v.location, rule, reason);
}

/* The locations whose rules let TCP 22 in ([Firewall] SSH=): a client says so where it names
 * a location's rules, "the strictest" ones included. None while the firewall is off. */
static int ssh_let_in(Firewall *fw, sd_bus_message *reply)
{
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        STRV_FOREACH (l, fw ? firewall_locations(fw) : NULL)
                if (r >= 0 && fw_ssh_open(firewall_core(fw)->config->firewall.ssh, *l))
                        r = sd_bus_message_append(reply, "s", *l);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        Firewall *fw = *(Firewall *const *)userdata;
        static const char *const builtin[] = {"home", "work", "public", "untrusted", NULL};

        if (streq(property, "FirewallError"))
                return sd_bus_message_append(reply, "s", firewall_error(fw));
        if (streq(property, "SSH"))
                return sd_bus_message_append(
                    reply, "s",
                    fw ? firewall_ssh_to_string(firewall_core(fw)->config->firewall.ssh) : "");
        if (streq(property, "SSHLetIn"))
                return ssh_let_in(fw, reply);
        return sd_bus_message_append_strv(reply, fw ? firewall_locations(fw) : (char **)builtin);
}

/* The firewall's members of org.roam1.Manager: a vtable of their own beside the manager's. */
static const sd_bus_vtable firewall_manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("FirewallError", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Locations", "as", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("SSH", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("SSHLetIn", "as", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("SetLocation", SD_BUS_ARGS("s", link, "s", location), SD_BUS_NO_RESULT,
                            method_set_location, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetFirewallRules", SD_BUS_NO_ARGS,
                            SD_BUS_RESULT("a(sssssssstt)", rules), method_get_rules,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS(
        "CheckInbound", SD_BUS_ARGS("s", proto, "q", port, "s", app, "s", link),
        SD_BUS_RESULT("b", accepted, "s", link, "s", location, "s", rule_id, "s", reason),
        method_check_inbound, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

int firewall_bus_manager_setup(sd_bus *bus, Firewall *const *fw, sd_bus_slot **ret)
{
        int r;

        r = sd_bus_add_object_vtable(bus, ret, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                                     firewall_manager_vtable, (void *)fw);
        if (r < 0)
                return log_error_errno(r, "Failed to add the firewall's manager members: %m");
        return 0;
}
