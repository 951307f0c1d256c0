/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roam-bus-model.h"

/* What keeps app enforcement from being what roamd wants, one sentence each, shared by
 * `roam status`, the overview and plain mode: the manager's Degraded reason (since when, and
 * that the last good state stays in force), each mark conflict, and the mask to use instead.
 * *ret is NULL when there is nothing to say. */
int roam_enforcement_notes(const RoamModel *m, char ***ret);
/* The same, short (for small terminals): at most one sentence each for Degraded and for
 * the mark conflicts. */
int roam_enforcement_summary(const RoamModel *m, char ***ret);
