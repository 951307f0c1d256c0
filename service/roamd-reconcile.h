/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The retry side of roamd's reconciler for kernel state (routes, ip rules, nftables; the
 * pass itself is apps_reconcile() in roamd-apps.c): a failed pass leaves the last good state
 * in force, is shown as the manager's Degraded reason, and runs again after a backoff
 * (250 ms, doubling, at most 4 s) until one succeeds. */

#include <stdint.h>
#include <systemd/sd-event.h>

typedef struct Reconcile Reconcile;
typedef int (*reconcile_run_t)(void *userdata);
typedef void (*reconcile_changed_t)(void *userdata);

/* run: one pass (called again after a failure); changed: the Degraded reason changed. */
int reconcile_new(sd_event *event, reconcile_run_t run, reconcile_changed_t changed, void *userdata,
                  Reconcile **ret);
Reconcile *reconcile_free(Reconcile *rc);

/* Part of a pass failed: what (e.g. "nftables transaction") and the error. The first failure
 * of a pass names the reason; a retry is scheduled. */
void reconcile_failed(Reconcile *rc, const char *what, int error);
/* A pass ended: without failures since reconcile_begin() the reason clears. */
void reconcile_begin(Reconcile *rc);
void reconcile_end(Reconcile *rc);
/* "" when the kernel holds what roamd wants. */
const char *reconcile_degraded(Reconcile *rc);
/* CLOCK_REALTIME µs since when the reason has been set (a changed reason keeps it), 0 while
 * none: Manager.DegradedSince. */
uint64_t reconcile_degraded_since(Reconcile *rc);
