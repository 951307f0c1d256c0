/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include <systemd/sd-bus.h>

#include "roam-macro.h"

/* The base of the client's models of roamd's objects beyond the manager, links and apps
 * (roam-live.c): one interface of one object, read with one Properties.GetAll and again after
 * each PropertiesChanged of that interface (a few values, and never a stale mix of two
 * states), all asynchronous on the bus's sd-event loop. What the answer holds, a model file of
 * the interface reads (roam-bluetooth.c, roam-time.c, ...): this only carries it there and
 * then tells its owner. The CLI, which has no loop, reads the same model with one GetAll
 * (roam_props_get_all()). Front ends never decode an interface themselves. */

typedef struct RoamProps RoamProps;

/* Reads a GetAll answer (a{sv}, the message at it) into the model. */
typedef int (*RoamPropsReadFn)(sd_bus_message *props, void *model);
/* A GetAll was answered: error is roamd's refusal (NULL: read, r is read's result). */
typedef void (*RoamPropsDoneFn)(RoamProps *w, const sd_bus_error *error, int r, void *userdata);

/* Follows interface at path on bus (attached to an event loop by its owner): matches
 * PropertiesChanged and starts the first GetAll; each answer is read into model by read, then
 * done tells the owner (userdata). */
int roam_props_new(sd_bus *bus, const char *path, const char *interface, RoamPropsReadFn read,
                   void *model, RoamPropsDoneFn done, void *userdata, RoamProps **ret);
/* Cancels what is in flight; NULL-safe. */
RoamProps *roam_props_free(RoamProps *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(RoamProps *, roam_props_free);

/* Reads the whole state again (a GetAll in flight is replaced): after a call that changed
 * something, so an owner never waits on a PropertiesChanged a reload in flight raced. */
int roam_props_reload(RoamProps *w);
sd_bus *roam_props_get_bus(const RoamProps *w);
/* A first answer came (read or refused). */
bool roam_props_loaded(const RoamProps *w);

/* One GetAll, blocking, read by read: for the CLI's one-shot commands. roamd's refusal is in
 * *error (the return its errno); a read failure is -EBADMSG or read's errno. */
int roam_props_get_all(sd_bus *bus, const char *path, const char *interface, RoamPropsReadFn read,
                       void *model, sd_bus_error *error);
