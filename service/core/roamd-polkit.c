/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-polkit.h"

#define POLKIT_TIMEOUT_USEC (25 * USEC_PER_SEC)
/* A check polkit may answer by asking the user (the caller allowed interactive authorization,
 * as systemctl does): typing a password takes longer than a bus call's 25 s. */
#define POLKIT_INTERACTIVE_TIMEOUT_USEC (5 * 60 * USEC_PER_SEC)
/* An answer whose message never came back to its handler (the caller went away, the handler
 * failed before asking again) is dropped after this long. */
#define POLKIT_ANSWER_KEEP_USEC (30 * USEC_PER_SEC)

typedef struct PolkitQuery PolkitQuery;
struct PolkitQuery {
        PolkitQuery *next, *prev;
        sd_bus_message *request;
        char *action;
        char *sender;
        uid_t uid; /* the caller's: each user's checks count against its own share */
        sd_bus_slot *slot;
        int verdict; /* -EINPROGRESS while polkit is asked */
        uint64_t answered;
};

static PolkitQuery *queries;

static void query_free(PolkitQuery *q)
{
        if (!q)
                return;
        if (q->prev)
                q->prev->next = q->next;
        else if (queries == q)
                queries = q->next;
        if (q->next)
                q->next->prev = q->prev;
        sd_bus_slot_unref(q->slot);
        sd_bus_message_unref(q->request);
        free(q->action);
        free(q->sender);
        free(q);
}

void polkit_flush(void)
{
        while (queries)
                query_free(queries);
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        PolkitQuery *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        sd_bus *bus = sd_bus_message_get_bus(q->request);
        int authorized = 0, challenge = 0, r;

        q->slot = sd_bus_slot_unref(q->slot);
        if (e) {
                if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                           SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                        q->verdict = -ENOENT;
                else if (sd_bus_error_has_name(e, SD_BUS_ERROR_LIMITS_EXCEEDED))
                        /* the bus holds no more of our calls (its max_replies_per_connection):
                         * a moment's limit, not polkit's no */
                        q->verdict = -EBUSY;
                else {
                        log_warning("polkit could not check %s: %s", q->action, e->message);
                        q->verdict = 0;
                }
        } else {
                r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
                if (r >= 0)
                        r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
                q->verdict = r < 0 ? 0 : authorized ? 1 : challenge ? POLKIT_CHALLENGE : 0;
        }
        q->answered = clock_now_usec(CLOCK_MONOTONIC);
        /* the handler runs again, from its first argument, and finds the verdict */
        r = sd_bus_message_rewind(q->request, true);
        if (r >= 0)
                r = sd_bus_enqueue_for_read(bus, q->request);
        if (r < 0) {
                log_warning_errno(r, "Cannot resume a call after polkit's answer: %m");
                (void)sd_bus_reply_method_errorf(q->request, SD_BUS_ERROR_FAILED,
                                                 "Cannot resume the call after polkit's answer.");
                query_free(q);
        }
        return 0;
}

static int ask(sd_bus_message *msg, const char *action, const char *sender, uid_t uid)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        sd_bus *bus = sd_bus_message_get_bus(msg);
        /* The caller said it can wait for a password (the message's ALLOW_INTERACTIVE_
         * AUTHORIZATION flag): polkit may ask through the caller's agent. The check stays
         * asynchronous, so the wait blocks nobody. */
        bool interactive = sd_bus_message_get_allow_interactive_authorization(msg) > 0;
        PolkitQuery *q;
        int r;

        r = sd_bus_message_new_method_call(
            bus, &call, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
            "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r < 0)
                return r;
        /* polkitd is started on demand by D-Bus activation (Debian's polkit.service is not
         * running until first asked): only a polkit that is not installed (ServiceUnknown)
         * means "no polkit here" (group netdev decides). */
        r = sd_bus_message_set_auto_start(call, true);
        if (r < 0)
                return r;
        /* flags: 1 is AllowUserInteraction */
        r = sd_bus_message_append(call, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s",
                                  sender, action, 0, (uint32_t)(interactive ? 1 : 0), "");
        if (r < 0)
                return r;
        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->verdict = -EINPROGRESS;
        q->uid = uid;
        q->request = sd_bus_message_ref(msg);
        q->next = queries;
        if (queries)
                queries->prev = q;
        queries = q;
        q->action = strdup(action);
        q->sender = strdup(sender);
        if (!q->action || !q->sender) {
                query_free(q);
                return -ENOMEM;
        }
        r = sd_bus_call_async(bus, &q->slot, call, on_reply, q,
                              interactive ? POLKIT_INTERACTIVE_TIMEOUT_USEC : POLKIT_TIMEOUT_USEC);
        if (r < 0) {
                query_free(q);
                return r;
        }
        return -EINPROGRESS;
}

int polkit_check(sd_bus_message *msg, const char *action, uid_t uid)
{
        const char *sender = sd_bus_message_get_sender(msg);
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC);
        unsigned mine = 0, users = 0;
        PolkitQuery *next;

        if (!sender)
                return -ENOENT; /* a direct connection: no bus name polkit could check */
        for (PolkitQuery *q = queries; q; q = next) {
                next = q->next;
                if (q->request == msg && streq(q->action, action) && q->verdict != -EINPROGRESS) {
                        int v = q->verdict;
                        query_free(q);
                        return v;
                }
                if (q->verdict != -EINPROGRESS && now - q->answered > POLKIT_ANSWER_KEEP_USEC) {
                        query_free(q);
                        continue;
                }
                if (q->verdict == -EINPROGRESS && q->uid == uid) {
                        users++;
                        if (streq(q->sender, sender))
                                mine++;
                }
        }
        /* No cap over all users: one user's many connections would fill it for everyone. */
        if (mine >= POLKIT_PENDING_PER_SENDER || users >= POLKIT_PENDING_PER_USER)
                return -EBUSY;
        return ask(msg, action, sender, uid);
}
