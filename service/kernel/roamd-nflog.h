/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One nfnetlink_log group (NFLOG), for rules that only need to wake roamd: a packet a rule
 * logs to the group makes the kernel send its metadata on this socket, and every batch of
 * them read together calls the callback once. Nothing is read from the packets: what they
 * are is asked where it is kept (sock_diag, the rules' counters). */

#include <stdint.h>
#include <systemd/sd-event.h>

typedef struct NflogWatch NflogWatch;
typedef void (*nflog_cb_t)(void *userdata);

/* Binds the group in roamd's network namespace (-EBUSY: another process has it). */
int nflog_watch_new(sd_event *e, uint16_t group, nflog_cb_t cb, void *userdata, NflogWatch **ret);
NflogWatch *nflog_watch_free(NflogWatch *w);
