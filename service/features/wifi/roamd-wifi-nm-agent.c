/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-name.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-wifi-nm-agent.h"

#define NM_BUS_NAME       "org.freedesktop.NetworkManager"
#define NM_AGENT_MGR_PATH "/org/freedesktop/NetworkManager/AgentManager"
#define NM_AGENT_MGR_IF   "org.freedesktop.NetworkManager.AgentManager"
#define NM_AGENT_PATH     "/org/freedesktop/NetworkManager/SecretAgent"
#define NM_AGENT_IF       "org.freedesktop.NetworkManager.SecretAgent"
#define NM_AGENT_ERR      NM_AGENT_IF "."
#define AGENT_IDENTIFIER  "org.roam1.wifi"

typedef struct AgentJoin {
        char *conn_path;
        const NmAgentJoinOps *ops;
        void *userdata;
        struct AgentJoin *next;
} AgentJoin;

struct NmAgent {
        unsigned n_ref;
        sd_bus *bus;
        sd_bus_slot *vtable, *register_call;
        BusNameWatch *nm;
        AgentJoin *joins;
};

/* One agent per bus connection: NM calls one fixed path. */
static NmAgent *the_agent;

static AgentJoin *find_join(NmAgent *a, const char *conn_path)
{
        for (AgentJoin *j = a->joins; j; j = j->next)
                if (streq(j->conn_path, conn_path))
                        return j;
        return NULL;
}

/* NM's unique name, and only it, may call the agent. */
static int check_caller(NmAgent *a, sd_bus_message *m, sd_bus_error *error)
{
        const char *sender = sd_bus_message_get_sender(m);
        const char *nm = bus_name_watch_owner(a->nm);

        if (sender && nm && streq(sender, nm))
                return 0;
        log_warning("NetworkManager agent: %s called by %s, not NetworkManager (%s): refused",
                    sd_bus_message_get_member(m), strempty(sender), nm ?: "not running");
        return sd_bus_error_set(error, NM_AGENT_ERR "PermissionDenied",
                                "Only NetworkManager may ask roamd's secret agent");
}

static int method_get_secrets(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        NmAgent *a = userdata;
        const char *conn_path, *setting;
        uint32_t flags;
        AgentJoin *j;
        int r;

        r = check_caller(a, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_skip(m, "a{sa{sv}}");
        if (r >= 0)
                r = sd_bus_message_read(m, "os", &conn_path, &setting);
        if (r >= 0)
                r = sd_bus_message_skip(m, "as");
        if (r >= 0)
                r = sd_bus_message_read(m, "u", &flags);
        if (r < 0)
                return sd_bus_error_set(error, NM_AGENT_ERR "InvalidConnection",
                                        "GetSecrets arguments could not be read");
        j = find_join(a, conn_path);
        if (!j) /* not a join roamd started: the next agent answers (never UserCanceled) */
                return sd_bus_error_set(error, NM_AGENT_ERR "NoSecrets",
                                        "roamd has no secrets for this connection");
        log_debug("NetworkManager asks secrets of %s for %s (flags 0x%x)", setting, conn_path,
                  flags);
        j->ops->get_secrets(m, setting, flags, j->userdata);
        return 1; /* answered later by the join */
}

static int method_cancel_get_secrets(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        NmAgent *a = userdata;
        const char *conn_path, *setting;
        AgentJoin *j;
        int r;

        r = check_caller(a, m, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "os", &conn_path, &setting);
        if (r < 0)
                return r;
        j = find_join(a, conn_path);
        if (j)
                j->ops->canceled(j->userdata);
        return sd_bus_reply_method_return(m, NULL);
}

/* roamd keeps no secrets: NM stores them (psk-flags 0) or drops them (volatile). */
static int method_save_or_delete(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        NmAgent *a = userdata;
        int r;

        r = check_caller(a, m, error);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable agent_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS("GetSecrets",
                            SD_BUS_ARGS("a{sa{sv}}", connection, "o", connection_path, "s",
                                        setting_name, "as", hints, "u", flags),
                            SD_BUS_RESULT("a{sa{sv}}", secrets), method_get_secrets, 0),
    SD_BUS_METHOD_WITH_ARGS("CancelGetSecrets",
                            SD_BUS_ARGS("o", connection_path, "s", setting_name), SD_BUS_NO_RESULT,
                            method_cancel_get_secrets, 0),
    SD_BUS_METHOD_WITH_ARGS("SaveSecrets",
                            SD_BUS_ARGS("a{sa{sv}}", connection, "o", connection_path),
                            SD_BUS_NO_RESULT, method_save_or_delete, 0),
    SD_BUS_METHOD_WITH_ARGS("DeleteSecrets",
                            SD_BUS_ARGS("a{sa{sv}}", connection, "o", connection_path),
                            SD_BUS_NO_RESULT, method_save_or_delete, 0),
    SD_BUS_VTABLE_END,
};

static int on_registered(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        NmAgent *a = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        a->register_call = sd_bus_slot_unref(a->register_call);
        if (e)
                log_warning("NetworkManager refused roamd's secret agent: %s", e->message);
        else
                log_debug("NetworkManager secret agent registered");
        return 0;
}

/* Registered again each time NM (re)appears: NM forgets agents when it restarts. */
static int on_nm_owner(BusNameWatch *w, const char *owner, void *userdata)
{
        NmAgent *a = userdata;
        (void)w;

        a->register_call = sd_bus_slot_unref(a->register_call);
        if (!*owner)
                return 0;
        return sd_bus_call_method_async(a->bus, &a->register_call, NM_BUS_NAME, NM_AGENT_MGR_PATH,
                                        NM_AGENT_MGR_IF, "RegisterWithCapabilities", on_registered,
                                        a, "su", AGENT_IDENTIFIER, 0u);
}

static void agent_free(NmAgent *a)
{
        while (a->joins) {
                AgentJoin *j = a->joins;
                a->joins = j->next;
                free(j->conn_path);
                free(j);
        }
        /* a registered agent goes when roamd's connection does; while roamd runs on, say so */
        if (bus_name_watch_has_owner(a->nm))
                (void)sd_bus_call_method_async(a->bus, NULL, NM_BUS_NAME, NM_AGENT_MGR_PATH,
                                               NM_AGENT_MGR_IF, "Unregister", NULL, NULL, "");
        sd_bus_slot_unref(a->register_call);
        sd_bus_slot_unref(a->vtable);
        bus_name_watch_free(a->nm);
        sd_bus_unref(a->bus);
        free(a);
}

NmAgent *nm_agent_ref(sd_bus *bus)
{
        NmAgent *a;
        int r;

        if (the_agent) {
                the_agent->n_ref++;
                return the_agent;
        }
        a = calloc(1, sizeof(*a));
        if (!a)
                return NULL;
        a->n_ref = 1;
        a->bus = sd_bus_ref(bus);
        r = sd_bus_add_object_vtable(bus, &a->vtable, NM_AGENT_PATH, NM_AGENT_IF, agent_vtable, a);
        if (r >= 0)
                r = bus_name_watch_new_full(bus, NM_BUS_NAME, BUS_NAME_WATCH_TELL_FIRST,
                                            on_nm_owner, a, &a->nm);
        if (r < 0) {
                log_warning_errno(-r, "NetworkManager secret agent: %m");
                agent_free(a);
                return NULL;
        }
        the_agent = a;
        return a;
}

NmAgent *nm_agent_unref(NmAgent *a)
{
        if (!a || --a->n_ref > 0)
                return NULL;
        if (the_agent == a)
                the_agent = NULL;
        agent_free(a);
        return NULL;
}

int nm_agent_add_join(NmAgent *a, const char *conn_path, const NmAgentJoinOps *ops, void *userdata)
{
        AgentJoin *j;

        if (find_join(a, conn_path))
                return -EEXIST;
        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->conn_path = strdup(conn_path);
        if (!j->conn_path) {
                free(j);
                return -ENOMEM;
        }
        j->ops = ops;
        j->userdata = userdata;
        j->next = a->joins;
        a->joins = j;
        return 0;
}

void nm_agent_remove_join(NmAgent *a, const char *conn_path)
{
        if (!a || !conn_path)
                return;
        for (AgentJoin **p = &a->joins; *p; p = &(*p)->next)
                if (streq((*p)->conn_path, conn_path)) {
                        AgentJoin *j = *p;
                        *p = j->next;
                        free(j->conn_path);
                        free(j);
                        return;
                }
}

int nm_agent_reply_secret(sd_bus_message **request, const char *setting, const char *key,
                          const char *value, const char *identity)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *req = TAKE_PTR(*request);
        int r;

        if (!req)
                return -EINVAL;
        r = sd_bus_message_new_method_return(req, &reply);
        if (r >= 0) /* the buffer holds a secret: wiped when freed */
                r = sd_bus_message_sensitive(reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "{sa{sv}}");
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'e', "sa{sv}");
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", setting);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r >= 0)
                r = sd_bus_message_append(reply, "{sv}", key, "s", value);
        if (r >= 0 && identity)
                r = sd_bus_message_append(reply, "{sv}", "identity", "s", identity);
        for (int i = 0; r >= 0 && i < 3; i++)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

int nm_agent_reply_error(sd_bus_message **request, const char *name, const char *text)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *req = TAKE_PTR(*request);

        if (!req)
                return 0;
        return sd_bus_reply_method_errorf(req, name, "%s", text);
}
