/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What roamd-apps.c shares with its other parts (roamd-apps-run.c): not for other modules. */

#include <stdbool.h>
#include <stdint.h>

#include "roamd-apps.h"
#include "roamd-cgroup.h"

/* The app with this ID, made (and announced, and classed) when new: 1 made, 0 known. */
int app_get_or_create(Apps *a, const char *id, App **ret);
/* Moves app to the class its policy and grant call for (one transaction). */
int app_reclass(Apps *a, App *app);
/* Recomputes the app's state and routes from its class (emit: PropertiesChanged). */
void app_refresh(App *app, bool emit);
/* The kernel refused what roamd wants (what: "policy of app X"): Degraded, and a retry. */
void note_refused(Apps *a, const char *what, int error);
/* Drops app (InterfacesRemoved) when nothing keeps it: no policy, grant or cgroup. */
void app_forget_if_unused(Apps *a, App *app);
CgroupTree *apps_cgroups(Apps *a);
/* The cgroup's nftables element is in the kernel. */
bool apps_cgroup_installed(Apps *a, uint64_t id);
