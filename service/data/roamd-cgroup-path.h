/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <sys/types.h>

/* What a cgroup v2 path means to roamd: an app, a system service, a user's slice, or nothing
 * in particular. Pure string work, no I/O (see roamd-cgroup.h for the live tree). */

#ifndef UID_INVALID
#define UID_INVALID ((uid_t)-1)
#endif

typedef enum CgroupKind {
        CGROUP_KIND_APP,
        CGROUP_KIND_SYSTEM,
        CGROUP_KIND_USER,
        CGROUP_KIND_OTHER,
        _CGROUP_KIND_MAX,
        _CGROUP_KIND_INVALID = -EINVAL,
} CgroupKind;

const char *cgroup_kind_to_string(CgroupKind k);
CgroupKind cgroup_kind_from_string(const char *s);

typedef struct CgroupClass {
        CgroupKind kind;
        char *app_id; /* APP only */
        uid_t uid;    /* owning user from user-UID.slice or user@UID.service, else UID_INVALID */
} CgroupClass;

/* Frees the app ID and leaves an empty class (kind invalid, no uid). */
void cgroup_class_done(CgroupClass *c);

/* path: absolute path of a cgroup relative to the root of roamd's cgroup namespace ("/" is the
 * root); empty components ("//", a trailing "/") are ignored.
 * roam_slice: the path of roamd's own roam.slice (e.g. "/system.slice/roamd.service/roam.slice"),
 * may be NULL.
 * system_cgroups: extra paths (may be NULL) that count as system (e.g. roamd's own cgroup).
 * The last component decides, read in the light of its ancestors (the first rule that fits):
 *   a path equal to an entry of system_cgroups                       -> SYSTEM
 *   <roam_slice>/app-<ID>.scope                                       -> APP, ID verbatim
 *   .../app.slice/app-<launcher>-<AppID>@<rand>.scope|.service,
 *   .../app.slice/app-<AppID>@<rand>.service, .../app.slice/app-[<launcher>-]<AppID>.service,
 *   .../app.slice/app-[<launcher>-]<AppID>-<rand>.scope                -> APP, AppID unescaped
 *     (systemd escapes '-' inside an AppID as \x2d: \xNN is undone)
 *   .../system.slice/[<x>.slice/...]<name>.service, not below user.slice, user-UID.slice or
 *   user@UID.service, and /init.scope                                 -> SYSTEM
 *   .../user-<UID>.slice, .../user@<UID>.service                      -> USER
 *   everything else                                                   -> OTHER
 * A path that is not clean text (roam_text_is_clean(): valid UTF-8 without controls or format
 * characters such as bidi overrides) is OTHER whatever it names, without a uid: systemd escapes
 * such bytes in unit names, so only a directory a user made by hand carries them.
 * An app ID that fails app_id_is_valid() makes the path OTHER. uid is set whenever the path is
 * at or below user-UID.slice or user@UID.service (the deepest one counts).
 * Returns 0, -EINVAL for a path not starting with '/', -ENOMEM. */
int cgroup_classify(const char *path, const char *roam_slice, char *const *system_cgroups,
                    CgroupClass *ret);

/* The depth of a path: "/" -> 0, "/a" -> 1, "/a/b.slice/c" -> 3 (empty components ignored).
 * This is N in nftables' `socket cgroupv2 level N` when path is relative to the root of the
 * cgroup namespace. */
unsigned cgroup_path_level(const char *path);
