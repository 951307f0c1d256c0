/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* A change polkit may want a password for, from a program that cannot let polkit's agent
 * write on its terminal at any moment (the full-screen TUI). The call goes out without
 * interaction: polkit's yes or no needs nobody. When roamd answers
 * InteractiveAuthorizationRequired and the program set an interaction (the TUI: its screen
 * suspended and polkit's text agent started), the same call goes once more, allowing
 * interaction, and the interaction ends (agent stopped, screen back) once that call is
 * answered or dropped. The callback sees only the last answer. */
typedef struct RoamInteraction {
        int (*begin)(void *userdata); /* <0: not now, the refusal stands */
        void (*end)(void *userdata);
        void *userdata;
} RoamInteraction;

/* NULL: none (the refusal reaches the callback as it is). */
void roam_auth_set_interaction(const RoamInteraction *i);

/* Sends m like sd_bus_call_async(): with ret_slot, the caller holds the call's slot (and may
 * drop it to cancel; it is replaced when the call goes again); without, the call is floating
 * and destroy(userdata) runs once it is over. */
int roam_auth_call_async(sd_bus *bus, sd_bus_slot **ret_slot, sd_bus_message *m,
                         sd_bus_message_handler_t callback, void *userdata,
                         sd_bus_destroy_t destroy);
