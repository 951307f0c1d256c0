/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "roamd-cgroup-path.h"

/* The live cgroup v2 tree as roamd sees it: the app, system and user cgroups, each with the id
 * that nftables' `socket cgroupv2` yields, kept current with inotify. */

typedef struct CgroupNode {
        uint64_t id;    /* cgroup id = the directory's inode number = what nftables matches */
        char *path;     /* relative to the root of roamd's cgroup namespace */
        unsigned level; /* cgroup_path_level(path): N in `socket cgroupv2 level N` */
        CgroupClass cls;
} CgroupNode;

typedef enum CgroupEvent {
        CGROUP_EVENT_ADDED,
        CGROUP_EVENT_REMOVED,
        _CGROUP_EVENT_MAX,
        _CGROUP_EVENT_INVALID = -EINVAL,
} CgroupEvent;

const char *cgroup_event_to_string(CgroupEvent e);
CgroupEvent cgroup_event_from_string(const char *s);

typedef struct CgroupTree CgroupTree;

/* Called for each ADDED (parents before children) and REMOVED (children before parents). n is
 * valid during the call only (a REMOVED node is freed right after). The callback must not
 * change the tree (no make/remove/free from inside it). */
typedef void (*CgroupTreeFn)(CgroupTree *t, CgroupEvent ev, const CgroupNode *n, void *userdata);

/* Finds the cgroup2 mount in /proc/self/mountinfo and roamd's own cgroup in /proc/self/cgroup,
 * creates <own cgroup>/roam.slice, scans the hierarchy reporting ADDED for every APP, SYSTEM
 * and USER node (fn is called from in here already), and keeps watching with inotify on e.
 * Watched are the root, every *.slice, user@UID.service, and the ancestors of roamd's own
 * cgroup; APP nodes are not descended into. roamd's own cgroup always counts as SYSTEM, and so
 * does each path in system_cgroups (may be NULL).
 * Returns -ENOMEDIUM when there is no cgroup2 hierarchy (or roamd's cgroup is outside it). */
int cgroup_tree_new(sd_event *e, char *const *system_cgroups, CgroupTreeFn fn, void *userdata,
                    CgroupTree **ret);
/* NULL-safe; stops watching, reports nothing and removes no cgroup. */
CgroupTree *cgroup_tree_free(CgroupTree *t);

const char *cgroup_tree_mount(CgroupTree *t);      /* e.g. "/sys/fs/cgroup/unified" */
const char *cgroup_tree_own_path(CgroupTree *t);   /* e.g. "/system.slice/roamd.service" */
const char *cgroup_tree_roam_slice(CgroupTree *t); /* <own path>/roam.slice */

/* The live APP, SYSTEM or USER node with that id, or NULL. */
const CgroupNode *cgroup_tree_get(CgroupTree *t, uint64_t id);
/* Replays ADDED for every live node, parents first. */
int cgroup_tree_foreach(CgroupTree *t, CgroupTreeFn fn, void *userdata);

/* Creates <roam slice>/app-<ID>.scope if missing (ID must pass app_id_is_valid, else -EINVAL)
 * and registers it at once: ADDED is fired synchronously, exactly once even when inotify
 * reports the directory later. *ret (may be NULL) is valid until the node is REMOVED. */
int cgroup_tree_make_app(CgroupTree *t, const char *app_id, const CgroupNode **ret);

/* 0 when pidfd is a pidfd of the live process expected_pid (the D-Bus caller's, as the bus
 * says) and that process is caller_uid's (its real or saved uid, as kill(2) would decide; any
 * for root): -EBADF for no pidfd, -EPERM for another process or another user's, -ESRCH once
 * it exited. Sends no signal (roamd's unit has no CAP_KILL). */
int pidfd_check_caller(int pidfd, pid_t expected_pid, uid_t caller_uid);
/* 0 while pidfd still names the live process pid, -ESRCH once it exited. */
int pidfd_still(int pidfd, pid_t pid);

/* Moves the process of pidfd into n (a live node of t): reads its pid from
 * /proc/self/fdinfo/<pidfd>, refuses with -EPERM when that is not expected_pid (the D-Bus
 * caller), writes it to cgroup.procs and then checks that the pidfd's process is still alive,
 * so that a recycled pid cannot have been moved instead (-ESRCH otherwise; also when it had
 * exited before). -EBADF when pidfd is no pidfd, -ENOENT when the cgroup was deleted. */
int cgroup_tree_move_pidfd(CgroupTree *t, const CgroupNode *n, int pidfd, pid_t expected_pid,
                           uid_t caller_uid);

/* Removes <roam slice>/app-<ID>.scope when it is empty: -EBUSY while it is populated, -ENOENT
 * when there is none, -EINVAL for an invalid ID. REMOVED is fired synchronously. */
int cgroup_tree_remove_app(CgroupTree *t, const char *app_id);

/* Registers the cgroup at path (made by someone else, e.g. systemd for a transient scope) at
 * once, without waiting for inotify: ADDED fires synchronously, exactly once. -ENOENT when it
 * does not exist, -ENOTDIR when it is neither an app, a system service nor a user. */
int cgroup_tree_adopt(CgroupTree *t, const char *path, const CgroupNode **ret);
