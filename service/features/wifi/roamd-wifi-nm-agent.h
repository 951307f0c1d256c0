/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* roamd's NetworkManager secret agent: one per bus connection, shared by the NM backends of
 * every interface (NM calls the fixed path /org/freedesktop/NetworkManager/SecretAgent), made
 * by the first and freed with the last. NM asks only agents of the activation's uid, so the
 * joins roamd (root) starts reach this agent, and no other root agent exists for them.
 *
 * Every call is checked: the sender must be NetworkManager's unique name right now (anyone may
 * send to roamd's bus name, data/org.roam1.conf), else PermissionDenied; a connection roamd did
 * not start is answered NoSecrets (never UserCanceled, which would end NM's request for every
 * other agent). */

#include <stdint.h>
#include <systemd/sd-bus.h>

#define NM_SECRET_FLAG_ALLOW_INTERACTION 0x1u
#define NM_SECRET_FLAG_REQUEST_NEW       0x2u

typedef struct NmAgent NmAgent;

/* A GetSecrets for a connection a join registered: the join replies to request later (with
 * nm_agent_reply_secrets() or nm_agent_reply_error()) and keeps a reference until then. */
typedef struct NmAgentJoinOps {
        void (*get_secrets)(sd_bus_message *request, const char *setting, uint32_t flags,
                            void *userdata);
        /* NM canceled the outstanding request: drop it (the agent has answered it) */
        void (*canceled)(void *userdata);
} NmAgentJoinOps;

NmAgent *nm_agent_ref(sd_bus *bus);
NmAgent *nm_agent_unref(NmAgent *a);

/* The connection (its settings path) a join started; at most one join per path. */
int nm_agent_add_join(NmAgent *a, const char *conn_path, const NmAgentJoinOps *ops, void *userdata);
void nm_agent_remove_join(NmAgent *a, const char *conn_path);

/* {setting: {key: value}}: the one secret NM asked for (psk, or 802-1x password and
 * identity). Consumes the request reference (*request is NULL after). */
int nm_agent_reply_secret(sd_bus_message **request, const char *setting, const char *key,
                          const char *value, const char *identity);
int nm_agent_reply_error(sd_bus_message **request, const char *name, const char *text);
