/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "roam-auth-call.h"
#include "roam-macro.h"

/* roamd waits up to 5 min for polkit's interactive answer: a password takes a while */
#define INTERACTIVE_TIMEOUT_USEC (5 * 60 * 1000000ULL)

typedef struct AuthCall {
        sd_bus_message *call;
        sd_bus_message_handler_t callback;
        void *userdata;
        sd_bus_destroy_t destroy;
        sd_bus_slot **owner; /* the caller's slot variable; NULL: floating */
        unsigned slots;      /* live slots of ours: the first call's, the second's */
        bool interacting;
} AuthCall;

static RoamInteraction interaction;
static bool have_interaction;

void roam_auth_set_interaction(const RoamInteraction *i)
{
        have_interaction = i != NULL;
        if (i)
                interaction = *i;
}

/* A slot of ours is gone (answered, cancelled, or the bus closed): the call is over with the
 * last of them. */
static void slot_gone(void *p)
{
        AuthCall *c = p;

        if (--c->slots > 0)
                return;
        if (c->interacting && have_interaction && interaction.end)
                interaction.end(interaction.userdata);
        if (c->destroy)
                c->destroy(c->userdata);
        sd_bus_message_unref(c->call);
        free(c);
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error);

static int send_call(sd_bus *bus, AuthCall *c, sd_bus_message *m)
{
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        int r;

        r = sd_bus_call_async(bus, &slot, m, on_reply, c,
                              c->interacting ? INTERACTIVE_TIMEOUT_USEC : 0);
        if (r < 0)
                return r;
        c->slots++;
        (void)sd_bus_slot_set_destroy_callback(slot, slot_gone);
        if (c->owner)
                *c->owner = TAKE_PTR(slot);
        else
                (void)sd_bus_slot_set_floating(slot, 1); /* the bus's now: freed when answered */
        return 0;
}

/* The same call, allowing interactive authorization this time. */
static int copy_call(sd_bus_message *call, sd_bus_message **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(
            sd_bus_message_get_bus(call), &m, sd_bus_message_get_destination(call),
            sd_bus_message_get_path(call), sd_bus_message_get_interface(call),
            sd_bus_message_get_member(call));
        if (r >= 0)
                r = sd_bus_message_set_auto_start(m, sd_bus_message_get_auto_start(call) > 0);
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(m, true);
        if (r >= 0)
                r = sd_bus_message_rewind(call, true);
        if (r >= 0)
                r = sd_bus_message_copy(m, call, true);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        AuthCall *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (e && !c->interacting && have_interaction &&
            sd_bus_error_has_name(e, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED)) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *again = NULL;

                if (copy_call(c->call, &again) >= 0 &&
                    interaction.begin(interaction.userdata) >= 0) {
                        sd_bus_slot *old = c->owner ? *c->owner : NULL;

                        c->interacting = true;
                        if (send_call(sd_bus_message_get_bus(reply), c, again) >= 0) {
                                /* the caller's variable holds the new slot now; the old one
                                 * ends after this callback (sd-bus holds it meanwhile) */
                                sd_bus_slot_unref(old);
                                return 0;
                        }
                        /* not sent: the interaction ends with the call, the refusal stands */
                }
        }
        return c->callback(reply, c->userdata, ret_error);
}

int roam_auth_call_async(sd_bus *bus, sd_bus_slot **ret_slot, sd_bus_message *m,
                         sd_bus_message_handler_t callback, void *userdata,
                         sd_bus_destroy_t destroy)
{
        AuthCall *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = (AuthCall){.call = sd_bus_message_ref(m),
                        .callback = callback,
                        .userdata = userdata,
                        .destroy = destroy,
                        .owner = ret_slot};
        r = send_call(bus, c, m);
        if (r < 0) {
                /* nothing sent: the caller still owns userdata */
                sd_bus_message_unref(c->call);
                free(c);
                return r;
        }
        return 0;
}
