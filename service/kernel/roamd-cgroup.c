/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <search.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "roam-log.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roam-app-id.h"
#include "roamd-cgroup.h"

#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID AT_REMOVEDIR /* Linux 6.5: a handle only for identification */
#endif
#ifndef MAX_HANDLE_SZ
#define MAX_HANDLE_SZ 128
#endif

#define WATCH_MASK                                                                                 \
        (IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR)

static const char *const cgroup_event_table[_CGROUP_EVENT_MAX] = {
    [CGROUP_EVENT_ADDED] = "added",
    [CGROUP_EVENT_REMOVED] = "removed",
};
DEFINE_STRING_TABLE_LOOKUP(cgroup_event, CgroupEvent)

/* A directory that is a node (APP, SYSTEM or USER), or watched, or both. Entries form a tree
 * below the mount's root; every entry's parent is watched. */
typedef struct Entry Entry;
struct Entry {
        CgroupNode node;  /* path and id are set for every entry, cls too (OTHER: no node) */
        const char *name; /* the last component of node.path ("" for the root) */
        Entry *parent, *children, *next, *prev;
        int wd;       /* -1: not watched (yet, or inotify_add_watch failed) */
        bool watched; /* a directory to watch and to descend into */
        bool added;   /* ADDED was reported (for a node) */
        bool seen;
};

struct CgroupTree {
        sd_event *event;
        sd_event_source *inotify_source;
        int inotify_fd;
        char *mount;      /* where the cgroup2 hierarchy is mounted */
        char *mount_root; /* the path, relative to our cgroup namespace, of the mount's root */
        char *own_path;
        char *roam_slice;
        char **system_cgroups; /* the caller's, and own_path */
        CgroupTreeFn fn;
        void *userdata;
        Entry *root;
        void *by_id; /* tsearch trees of Entry*, all entries */
        void *by_wd; /* ... watched entries */
        unsigned long overflows;
        uint64_t unclean_warned_usec; /* the last warning of a name that is not text */
        unsigned unclean_suppressed;  /* warnings left out since */
};

static bool entry_is_node(const Entry *e)
{
        return e->node.cls.kind == CGROUP_KIND_APP || e->node.cls.kind == CGROUP_KIND_SYSTEM ||
               e->node.cls.kind == CGROUP_KIND_USER;
}

/* The directory does not exist (anymore). */
static bool errno_is_gone(int e)
{
        return e == ENOENT || e == ENOTDIR;
}

static int entry_cmp_id(const void *a, const void *b)
{
        const Entry *x = a, *y = b;

        return (x->node.id > y->node.id) - (x->node.id < y->node.id);
}

static int entry_cmp_wd(const void *a, const void *b)
{
        const Entry *x = a, *y = b;

        return (x->wd > y->wd) - (x->wd < y->wd);
}

static Entry *find_by_id(CgroupTree *t, uint64_t id)
{
        Entry key = {.node.id = id};
        void *p = tfind(&key, &t->by_id, entry_cmp_id);

        return p ? *(Entry **)p : NULL;
}

static Entry *find_by_wd(CgroupTree *t, int wd)
{
        Entry key = {.wd = wd};
        void *p = tfind(&key, &t->by_wd, entry_cmp_wd);

        return p ? *(Entry **)p : NULL;
}

static Entry *find_child(Entry *dir, const char *name)
{
        for (Entry *c = dir->children; c; c = c->next)
                if (streq(c->name, name))
                        return c;
        return NULL;
}

/* "/" + "a" -> "/a", "/x" + "a" -> "/x/a" */
static char *path_join(const char *dir, const char *name)
{
        char *p;

        if (asprintf(&p, "%s/%s", streq(dir, "/") ? "" : dir, name) < 0)
                return NULL;
        return p;
}

/* Whether path is prefix, or a parent directory of it ("/" is a prefix of everything). */
static bool path_is_prefix(const char *prefix, const char *path)
{
        size_t n = strlen(prefix);

        if (streq(prefix, "/"))
                return path[0] == '/';
        return strncmp(path, prefix, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* The file system path of a cgroup given relative to the namespace root. */
static char *fs_path(CgroupTree *t, const char *path)
{
        const char *rel = path;
        char *p;

        if (!streq(t->mount_root, "/"))
                rel += strlen(t->mount_root);
        if (asprintf(&p, "%s%s", t->mount, rel) < 0)
                return NULL;
        return p;
}

/* On cgroup2 the file handle is the 8-byte cgroup id, which is also the inode number; that id
 * is what the kernel compares in nftables' `socket cgroupv2`. */
static int cgroup_id(const char *path, uint64_t *ret)
{
        _Alignas(struct file_handle) uint8_t buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
        struct file_handle *fh = (struct file_handle *)buf;
        struct stat st;
        int mnt_id, flags = AT_HANDLE_FID;

        for (;;) {
                fh->handle_bytes = MAX_HANDLE_SZ;
                if (name_to_handle_at(AT_FDCWD, path, fh, &mnt_id, flags) >= 0) {
                        if (fh->handle_bytes != sizeof(uint64_t))
                                break;
                        memcpy(ret, fh->f_handle, sizeof(uint64_t));
                        return 0;
                }
                if (errno == ENOENT || errno == ENOTDIR)
                        return -errno;
                if (errno != EINVAL || flags == 0) /* EINVAL: a kernel without AT_HANDLE_FID */
                        break;
                flags = 0;
        }
        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        *ret = (uint64_t)st.st_ino;
        return 0;
}

static void emit(CgroupTree *t, CgroupEvent ev, Entry *e)
{
        if (!entry_is_node(e) || e->added == (ev == CGROUP_EVENT_ADDED))
                return;
        e->added = ev == CGROUP_EVENT_ADDED;
        if (t->fn)
                t->fn(t, ev, &e->node, t->userdata);
}

static void entry_free(Entry *e)
{
        while (e->children) {
                Entry *c = e->children;

                e->children = c->next;
                entry_free(c);
        }
        cgroup_class_done(&e->node.cls);
        free(e->node.path);
        free(e);
}

static void entry_unlink(Entry *e)
{
        if (e->prev)
                e->prev->next = e->next;
        else if (e->parent)
                e->parent->children = e->next;
        if (e->next)
                e->next->prev = e->prev;
        e->prev = e->next = NULL;
}

/* The directory is gone (or replaced): REMOVED for its nodes, deepest first, and forgotten. */
static void entry_remove(CgroupTree *t, Entry *e)
{
        while (e->children)
                entry_remove(t, e->children);
        emit(t, CGROUP_EVENT_REMOVED, e);
        if (e->wd >= 0) {
                tdelete(e, &t->by_wd, entry_cmp_wd);
                (void)inotify_rm_watch(t->inotify_fd, e->wd); /* EINVAL when already gone */
        }
        tdelete(e, &t->by_id, entry_cmp_id);
        entry_unlink(e);
        if (t->root == e)
                t->root = NULL;
        entry_free(e);
}

static bool endswith(const char *s, const char *suffix)
{
        size_t n = strlen(s), k = strlen(suffix);

        return n >= k && streq(s + n - k, suffix);
}

static bool want_watch(CgroupTree *t, const char *path, const char *name, const CgroupClass *cls)
{
        if (cls->kind == CGROUP_KIND_APP)
                return false;
        if (endswith(name, ".slice"))
                return true;
        /* user@UID.service: the uid is only set when the name parses. */
        if (cls->uid != UID_INVALID && strncmp(name, "user@", strlen("user@")) == 0 &&
            endswith(name, ".service"))
                return true;
        /* The ancestors of roamd's own cgroup, itself and its roam.slice. */
        return path_is_prefix(path, t->roam_slice);
}

static int entry_reconcile(CgroupTree *t, Entry *dir, bool recursive);

/* A directory whose path is not clean text is neither adopted nor descended into (everything
 * below it carries the name too): said once per 10 s at most, escaped, as a user can make
 * such names in a loop. */
static void warn_unclean(CgroupTree *t, const char *path)
{
        _cleanup_free_ char *escaped = NULL;
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC);

        if (t->unclean_warned_usec != 0 && now - t->unclean_warned_usec < 10 * USEC_PER_SEC) {
                t->unclean_suppressed++;
                return;
        }
        if (roam_text_escape(path, &escaped) < 0)
                return (void)log_oom();
        log_warning("cgroup %s: the name is not UTF-8 text without controls, ignoring it and "
                    "what is below it: it meets the policy of the cgroups above it "
                    "(%u similar messages suppressed).",
                    escaped, t->unclean_suppressed);
        t->unclean_warned_usec = now;
        t->unclean_suppressed = 0;
}

/* Registers the directory name in dir when it is a node or to be watched; *ret is NULL when
 * it is neither (or already gone). Fires ADDED, then scans what is below. */
static int entry_add(CgroupTree *t, Entry *dir, const char *name, Entry **ret)
{
        _cleanup_free_ char *path = NULL, *fspath = NULL;
        CgroupClass cls = {};
        Entry *e, *old;
        uint64_t id;
        bool watch;
        int r;

        if (ret)
                *ret = NULL;
        path = dir ? path_join(dir->node.path, name) : strdup(name);
        if (!path)
                return -ENOMEM;
        if (dir && !roam_text_is_clean(name, 0)) {
                warn_unclean(t, path);
                return 0;
        }
        r = cgroup_classify(path, t->roam_slice, t->system_cgroups, &cls);
        if (r < 0)
                return r;
        watch = !dir || want_watch(t, path, name, &cls);
        if (!watch && cls.kind == CGROUP_KIND_OTHER)
                return 0;

        fspath = fs_path(t, path);
        if (!fspath) {
                cgroup_class_done(&cls);
                return -ENOMEM;
        }
        r = cgroup_id(fspath, &id);
        if (r < 0) {
                cgroup_class_done(&cls);
                log_debug_errno(r, "Ignoring cgroup %s: %m", path);
                return 0;
        }
        /* The same directory under another name: cgroup2 refuses renames and never reuses an id,
         * so this is only a stale entry (its removal not seen yet): it goes first. */
        old = find_by_id(t, id);
        if (old) {
                if (old == t->root || (dir && path_is_prefix(old->node.path, dir->node.path))) {
                        cgroup_class_done(&cls);
                        return 0; /* the name is stale already: its events are queued */
                }
                entry_remove(t, old);
        }

        e = calloc(1, sizeof(*e));
        if (!e) {
                cgroup_class_done(&cls);
                return -ENOMEM;
        }
        e->node.id = id;
        e->node.path = TAKE_PTR(path);
        e->node.level = cgroup_path_level(e->node.path);
        e->node.cls = cls;
        e->name = dir ? strrchr(e->node.path, '/') + 1 : "";
        e->wd = -1;
        e->watched = watch;
        e->seen = true;
        if (!tsearch(e, &t->by_id, entry_cmp_id)) {
                entry_free(e);
                return -ENOMEM;
        }
        e->parent = dir;
        if (dir) {
                e->next = dir->children;
                if (e->next)
                        e->next->prev = e;
                dir->children = e;
        } else
                t->root = e;

        if (watch) {
                int wd = inotify_add_watch(t->inotify_fd, fspath, WATCH_MASK);

                if (wd < 0 && errno_is_gone(errno)) {
                        entry_remove(t, e); /* nothing was reported */
                        return 0;
                }
                if (wd < 0)
                        log_warning_errno(errno,
                                          "Cannot watch cgroup %s, changes below it "
                                          "will be missed: %m",
                                          e->node.path);
                else {
                        Entry *other = find_by_wd(t, wd);

                        if (other && other != e)
                                entry_remove(t, other); /* never: ids are unique */
                        e->wd = wd;
                        if (!tsearch(e, &t->by_wd, entry_cmp_wd)) {
                                e->wd = -1;
                                (void)inotify_rm_watch(t->inotify_fd, wd);
                                entry_remove(t, e);
                                return -ENOMEM;
                        }
                }
        }

        emit(t, CGROUP_EVENT_ADDED, e);
        if (watch) {
                r = entry_reconcile(t, e, false);
                if (r < 0)
                        return r;
        }
        if (ret)
                *ret = e;
        return 0;
}

/* Brings dir's children in line with the directory: adds the new ones, removes the vanished
 * or replaced ones, and (recursive) does the same below the watched ones. Only allocation
 * failures are errors: an unreadable directory is logged and skipped. */
static int entry_reconcile(CgroupTree *t, Entry *dir, bool recursive)
{
        _cleanup_free_ char *fspath = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        Entry *next;
        int r = 0;

        fspath = fs_path(t, dir->node.path);
        if (!fspath)
                return -ENOMEM;
        d = opendir(fspath);
        if (!d) {
                int e = errno;

                if (e == ENOMEM)
                        return -ENOMEM;
                if (!errno_is_gone(e)) /* else its own removal is on its way */
                        log_warning_errno(e, "Cannot read cgroup %s: %m", dir->node.path);
                return 0;
        }
        for (Entry *c = dir->children; c; c = c->next)
                c->seen = false;

        while ((errno = 0, de = readdir(d))) {
                Entry *c;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (de->d_type != DT_DIR) {
                        struct stat st;

                        if (de->d_type != DT_UNKNOWN ||
                            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                            !S_ISDIR(st.st_mode))
                                continue;
                }
                c = find_child(dir, de->d_name);
                if (c) {
                        _cleanup_free_ char *p = fs_path(t, c->node.path);
                        uint64_t id;

                        if (!p)
                                return -ENOMEM;
                        if (cgroup_id(p, &id) < 0)
                                continue; /* vanished: left unseen */
                        if (id != c->node.id) {
                                entry_remove(t, c);
                                c = NULL;
                        }
                }
                if (c) {
                        c->seen = true;
                        if (recursive && c->watched) {
                                r = entry_reconcile(t, c, true);
                                if (r == -ENOMEM)
                                        return r;
                        }
                        continue;
                }
                r = entry_add(t, dir, de->d_name, NULL);
                if (r < 0)
                        return r;
        }
        if (errno != 0) {
                /* Not the whole list: what was not seen may still be there. */
                log_warning_errno(errno, "Cannot read cgroup %s: %m", dir->node.path);
                return 0;
        }

        for (Entry *c = dir->children; c; c = next) {
                next = c->next;
                if (!c->seen)
                        entry_remove(t, c);
        }
        return 0;
}

static int tree_rescan(CgroupTree *t)
{
        if (!t->root)
                return -ENOENT;
        return entry_reconcile(t, t->root, true);
}

/* A child directory appeared in dir (created, or renamed into it). */
static int on_child_added(CgroupTree *t, Entry *dir, const char *name)
{
        Entry *c = find_child(dir, name);

        if (c) {
                _cleanup_free_ char *p = fs_path(t, c->node.path);
                uint64_t id;

                if (!p)
                        return -ENOMEM;
                if (cgroup_id(p, &id) >= 0 && id == c->node.id)
                        return 0; /* known already (make_app, or the scan was first) */
                entry_remove(t, c);
        }
        return entry_add(t, dir, name, NULL);
}

/* A child directory of dir went away (deleted, or renamed away). Its name may have been taken
 * by a new directory since: then that one stays, its own creation event follows. */
static void on_child_removed(CgroupTree *t, Entry *dir, const char *name)
{
        _cleanup_free_ char *p = NULL;
        Entry *c = find_child(dir, name);
        uint64_t id;

        if (!c)
                return;
        p = fs_path(t, c->node.path);
        if (p && cgroup_id(p, &id) >= 0 && id == c->node.id)
                return;
        entry_remove(t, c);
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        CgroupTree *t = userdata;
        char buf[16 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool overflow = false;
        int r = 0;

        for (;;) {
                ssize_t len = read(fd, buf, sizeof(buf));

                if (len < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                log_warning_errno(errno, "Cannot read cgroup inotify events: %m");
                        break;
                }
                if (len == 0)
                        break;
                for (char *p = buf; p < buf + len;) {
                        struct inotify_event *ev = (struct inotify_event *)p;
                        Entry *e;

                        r = 0;
                        p += sizeof(*ev) + ev->len;
                        if (ev->mask & IN_Q_OVERFLOW) {
                                overflow = true;
                                continue;
                        }
                        e = find_by_wd(t, ev->wd);
                        if (!e)
                                continue; /* a watch already dropped */
                        if (ev->mask & IN_IGNORED) {
                                /* The kernel dropped the watch: the directory is gone. */
                                tdelete(e, &t->by_wd, entry_cmp_wd);
                                e->wd = -1;
                                if (e != t->root)
                                        entry_remove(t, e);
                                continue;
                        }
                        if (ev->mask & IN_DELETE_SELF) {
                                if (e != t->root)
                                        entry_remove(t, e);
                                continue;
                        }
                        if (!(ev->mask & IN_ISDIR) || ev->len == 0)
                                continue;
                        if (ev->mask & (IN_CREATE | IN_MOVED_TO))
                                r = on_child_added(t, e, ev->name);
                        else if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
                                on_child_removed(t, e, ev->name);
                        if (r == -ENOMEM)
                                log_oom();
                }
        }
        if (overflow) {
                t->overflows++;
                log_warning("cgroup inotify queue overflowed (#%lu), rescanning", t->overflows);
                r = tree_rescan(t);
                if (r < 0)
                        log_warning_errno(r, "Rescanning cgroups failed: %m");
        }
        return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
        char *w = s;

        for (char *r = s; *r;) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
                    r[3] >= '0' && r[3] <= '7') {
                        *w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
                        r += 4;
                } else
                        *w++ = *r++;
        }
        *w = 0;
}

static int read_own_cgroup(char **ret)
{
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t n = 0;

        f = fopen("/proc/self/cgroup", "re");
        if (!f)
                return log_error_errno(errno, "Cannot open /proc/self/cgroup: %m");
        while (getline(&line, &n, f) > 0) {
                char *p;

                if (strncmp(line, "0::", 3) != 0)
                        continue;
                line[strcspn(line, "\n")] = 0;
                if (line[3] != '/')
                        break;
                p = strdup(line + 3);
                if (!p)
                        return -ENOMEM;
                *ret = p;
                return 0;
        }
        return log_error_errno(ENOMEDIUM, "Not in a cgroup v2 hierarchy.");
}

/* The cgroup2 mount that reaches own_path, the one closest to the namespace root. */
static int find_mount(const char *own_path, char **ret_mount, char **ret_root)
{
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL, *best_mount = NULL, *best_root = NULL;
        size_t n = 0;

        f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return log_error_errno(errno, "Cannot open /proc/self/mountinfo: %m");
        while (getline(&line, &n, f) > 0) {
                _cleanup_strv_free_ char **w = NULL;
                size_t k, sep;

                line[strcspn(line, "\n")] = 0;
                if (strv_split(line, " ", &w) < 0)
                        return -ENOMEM;
                k = strv_length(w);
                /* id parent maj:min root mountpoint options [optional...] - type source super */
                for (sep = 6; sep < k && !streq(w[sep], "-"); sep++)
                        ;
                if (k < 6 || sep + 1 >= k || !streq(w[sep + 1], "cgroup2"))
                        continue;
                unescape_octal(w[3]);
                unescape_octal(w[4]);
                if (w[3][0] != '/' || !path_is_prefix(w[3], own_path))
                        continue;
                if (best_root && strlen(best_root) <= strlen(w[3]))
                        continue;
                free(best_root);
                free(best_mount);
                best_root = strdup(w[3]);
                best_mount = strdup(w[4]);
                if (!best_root || !best_mount)
                        return -ENOMEM;
        }
        if (!best_mount)
                return log_error_errno(ENOMEDIUM, "No cgroup2 mount reaches our cgroup %s.",
                                       own_path);
        /* "/sys/fs/cgroup/" would make "//x" of every path. */
        if (strlen(best_mount) > 1 && best_mount[strlen(best_mount) - 1] == '/')
                best_mount[strlen(best_mount) - 1] = 0;
        if (streq(best_mount, "/"))
                best_mount[0] = 0;
        *ret_mount = TAKE_PTR(best_mount);
        *ret_root = TAKE_PTR(best_root);
        return 0;
}

static void noop_free(void *p)
{
}

CgroupTree *cgroup_tree_free(CgroupTree *t)
{
        if (!t)
                return NULL;
        t->inotify_source = sd_event_source_disable_unref(t->inotify_source);
        tdestroy(t->by_wd, noop_free);
        tdestroy(t->by_id, noop_free);
        if (t->root)
                entry_free(t->root);
        if (t->inotify_fd >= 0)
                close(t->inotify_fd);
        sd_event_unref(t->event);
        free(t->mount);
        free(t->mount_root);
        free(t->own_path);
        free(t->roam_slice);
        strv_free(t->system_cgroups);
        free(t);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(CgroupTree *, cgroup_tree_free);

int cgroup_tree_new(sd_event *e, char *const *system_cgroups, CgroupTreeFn fn, void *userdata,
                    CgroupTree **ret)
{
        _cleanup_(cgroup_tree_freep) CgroupTree *t = NULL;
        int r;

        if (!e || !ret)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->inotify_fd = -EBADF;
        t->event = sd_event_ref(e);
        t->fn = fn;
        t->userdata = userdata;

        r = read_own_cgroup(&t->own_path);
        if (r < 0)
                return r;
        r = find_mount(t->own_path, &t->mount, &t->mount_root);
        if (r < 0)
                return r;
        t->roam_slice = path_join(t->own_path, "roam.slice");
        if (!t->roam_slice)
                return -ENOMEM;
        if (system_cgroups) {
                t->system_cgroups = strv_copy(system_cgroups);
                if (!t->system_cgroups)
                        return -ENOMEM;
        }
        if (strv_extend(&t->system_cgroups, t->own_path) < 0)
                return -ENOMEM;

        /* roam.slice is made by the first `roam run` (cgroup_tree_make_app), so a roamd that
         * never runs an app leaves the hierarchy as it found it. */

        t->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (t->inotify_fd < 0)
                return log_error_errno(errno, "inotify_init1: %m");
        r = sd_event_add_io(e, &t->inotify_source, t->inotify_fd, EPOLLIN, on_inotify, t);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the cgroup inotify fd: %m");
        (void)sd_event_source_set_description(t->inotify_source, "cgroup-tree");

        r = entry_add(t, NULL, t->mount_root, NULL);
        if (r < 0)
                return r;
        if (!t->root)
                return log_error_errno(ENOMEDIUM, "Cannot read the cgroup hierarchy at %s.",
                                       t->mount);
        log_debug("cgroup2 at %s, roamd in %s, apps in %s", t->mount, t->own_path, t->roam_slice);
        *ret = TAKE_PTR(t);
        return 0;
}

const char *cgroup_tree_mount(CgroupTree *t)
{
        return t ? t->mount : NULL;
}

const char *cgroup_tree_own_path(CgroupTree *t)
{
        return t ? t->own_path : NULL;
}

const char *cgroup_tree_roam_slice(CgroupTree *t)
{
        return t ? t->roam_slice : NULL;
}

const CgroupNode *cgroup_tree_get(CgroupTree *t, uint64_t id)
{
        Entry *e;

        if (!t)
                return NULL;
        e = find_by_id(t, id);
        return e && entry_is_node(e) ? &e->node : NULL;
}

static void entry_foreach(CgroupTree *t, Entry *e, CgroupTreeFn fn, void *userdata)
{
        if (entry_is_node(e))
                fn(t, CGROUP_EVENT_ADDED, &e->node, userdata);
        for (Entry *c = e->children; c; c = c->next)
                entry_foreach(t, c, fn, userdata);
}

int cgroup_tree_foreach(CgroupTree *t, CgroupTreeFn fn, void *userdata)
{
        if (!t || !fn)
                return -EINVAL;
        if (t->root)
                entry_foreach(t, t->root, fn, userdata);
        return 0;
}

/* The entry of path, walking down from the root. With add, missing or stale entries on the way
 * are (re)registered from the file system, as their inotify events would. */
static int entry_walk(CgroupTree *t, const char *path, bool add, Entry **ret)
{
        Entry *e = t->root;
        const char *p;
        int r;

        if (!e || !path_is_prefix(t->mount_root, path))
                return -ENOENT;
        p = path + (streq(t->mount_root, "/") ? 0 : strlen(t->mount_root));
        for (;;) {
                char name[NAME_MAX + 1];
                size_t n;
                Entry *c;

                p += strspn(p, "/");
                if (!*p)
                        break;
                n = strcspn(p, "/");
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, p, n);
                name[n] = 0;
                p += n;

                c = find_child(e, name);
                if (c && add) {
                        _cleanup_free_ char *fs = fs_path(t, c->node.path);
                        uint64_t id;

                        if (!fs)
                                return -ENOMEM;
                        if (cgroup_id(fs, &id) < 0 || id != c->node.id) {
                                entry_remove(t, c);
                                c = NULL;
                        }
                }
                if (!c && add) {
                        r = entry_add(t, e, name, &c);
                        if (r < 0)
                                return r;
                }
                if (!c)
                        return -ENOENT;
                e = c;
        }
        *ret = e;
        return 0;
}

static int app_scope_path(CgroupTree *t, const char *app_id, char **ret)
{
        _cleanup_free_ char *name = NULL;

        if (!app_id_is_valid(app_id))
                return -EINVAL;
        if (asprintf(&name, "app-%s.scope", app_id) < 0)
                return -ENOMEM;
        *ret = path_join(t->roam_slice, name);
        return *ret ? 0 : -ENOMEM;
}

int cgroup_tree_adopt(CgroupTree *t, const char *path, const CgroupNode **ret)
{
        Entry *e;
        int r;

        if (!t || !path || path[0] != '/')
                return -EINVAL;
        r = entry_walk(t, path, true, &e);
        if (r < 0)
                return r;
        if (!entry_is_node(e))
                return -ENOTDIR; /* a cgroup, but nobody's app or service */
        *ret = &e->node;
        return 0;
}

int cgroup_tree_make_app(CgroupTree *t, const char *app_id, const CgroupNode **ret)
{
        _cleanup_free_ char *path = NULL, *fs = NULL, *slice_fs = NULL;
        const CgroupNode *n;
        int r;

        if (!t)
                return -EINVAL;
        r = app_scope_path(t, app_id, &path);
        if (r < 0)
                return r;
        slice_fs = fs_path(t, t->roam_slice);
        fs = fs_path(t, path);
        if (!slice_fs || !fs)
                return -ENOMEM;
        /* roam.slice might have been removed behind our back. */
        if (mkdir(slice_fs, 0755) < 0 && errno != EEXIST)
                return log_debug_errno(errno, "Cannot create %s: %m", slice_fs);
        if (mkdir(fs, 0755) < 0 && errno != EEXIST)
                return log_debug_errno(errno, "Cannot create %s: %m", fs);

        r = cgroup_tree_adopt(t, path, &n);
        if (r < 0)
                return r;
        if (n->cls.kind != CGROUP_KIND_APP) /* listed as a system cgroup */
                return -EEXIST;
        if (ret)
                *ret = n;
        return 0;
}

int cgroup_tree_remove_app(CgroupTree *t, const char *app_id)
{
        _cleanup_free_ char *path = NULL, *fs = NULL;
        Entry *e;
        int r;

        if (!t)
                return -EINVAL;
        r = app_scope_path(t, app_id, &path);
        if (r < 0)
                return r;
        fs = fs_path(t, path);
        if (!fs)
                return -ENOMEM;
        if (rmdir(fs) < 0)
                return -errno;
        if (entry_walk(t, path, false, &e) >= 0)
                entry_remove(t, e);
        return 0;
}

/* The pid a pidfd refers to, from its fdinfo: -EBADF for no pidfd, -ESRCH once it exited. */
static int pidfd_get_pid(int pidfd, pid_t *ret)
{
        _cleanup_free_ char *info = NULL;
        char path[64], *save = NULL;
        int r;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
        r = read_full_file(path, 64 * 1024, &info, NULL);
        if (r == -ENOENT)
                return -EBADF;
        if (r < 0)
                return r;
        for (char *l = strtok_r(info, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char *end;
                long v;

                if (strncmp(l, "Pid:", 4) != 0)
                        continue;
                errno = 0;
                v = strtol(l + 4, &end, 10);
                if (errno != 0 || end == l + 4 || *end != 0 || v < -1 || v > INT32_MAX)
                        return -EBADF;
                if (v <= 0) /* -1: exited; 0: not in our pid namespace */
                        return -ESRCH;
                *ret = (pid_t)v;
                return 0;
        }
        return -EBADF;
}

int pidfd_still(int pidfd, pid_t pid)
{
        pid_t now;
        int r;

        /* The pidfd holds its struct pid: while its fdinfo names the same number, that number
         * has not been freed, so it is still that process (pids are reused only after the
         * process was reaped). No signal: roamd's unit has no CAP_KILL. */
        r = pidfd_get_pid(pidfd, &now);
        if (r < 0)
                return r;
        return now == pid ? 0 : -ESRCH;
}

/* The real and saved uid of a process, from /proc/PID/status ("Uid:\treal\teff\tsaved\tfs"). */
static int pid_get_uids(pid_t pid, uid_t *ret_real, uid_t *ret_saved)
{
        _cleanup_free_ char *status = NULL;
        char path[64], *save = NULL;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        r = read_full_file(path, 64 * 1024, &status, NULL);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        for (char *l = strtok_r(status, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                unsigned long real, eff, saved;

                if (strncmp(l, "Uid:", 4) != 0)
                        continue;
                if (sscanf(l + 4, "%lu %lu %lu", &real, &eff, &saved) != 3)
                        return -EIO;
                *ret_real = (uid_t)real;
                *ret_saved = (uid_t)saved;
                return 0;
        }
        return -EIO;
}

int pidfd_check_caller(int pidfd, pid_t expected_pid, uid_t caller_uid)
{
        uid_t real, saved;
        pid_t pid;
        int r;

        if (pidfd < 0)
                return -EBADF;
        r = pidfd_get_pid(pidfd, &pid);
        if (r < 0)
                return r;
        if (pid != expected_pid)
                return log_debug_errno(EPERM, "pidfd refers to pid %d, not to the caller %d.",
                                       (int)pid, (int)expected_pid);
        /* Whose process it is, as kill(2) would decide for the caller (its uid against the
         * target's real or saved uid; root may name any): read by pid, then the pidfd still
         * naming that pid proves the uids were that process's. */
        r = pid_get_uids(pid, &real, &saved);
        if (r < 0)
                return r;
        r = pidfd_still(pidfd, pid);
        if (r < 0)
                return r;
        if (caller_uid != 0 && caller_uid != real && caller_uid != saved)
                return log_debug_errno(EPERM, "process %d is not the caller's (uid %u).", (int)pid,
                                       (unsigned)caller_uid);
        return 0;
}

int cgroup_tree_move_pidfd(CgroupTree *t, const CgroupNode *n, int pidfd, pid_t expected_pid,
                           uid_t caller_uid)
{
        _cleanup_free_ char *fs = NULL, *procs = NULL;
        _cleanup_close_ int fd = -EBADF;
        char buf[32];
        ssize_t w;
        pid_t pid;
        int r, k;

        if (!t || !n || !n->path)
                return -EINVAL;
        r = pidfd_check_caller(pidfd, expected_pid, caller_uid);
        if (r < 0)
                return r;
        pid = expected_pid;

        fs = fs_path(t, n->path);
        if (!fs || asprintf(&procs, "%s/cgroup.procs", fs) < 0)
                return -ENOMEM;
        fd = open(procs, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        k = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
        w = write(fd, buf, k);
        if (w < 0)
                /* ENODEV: the cgroup was removed after the open. */
                return errno == ENODEV ? -ENOENT : -errno;
        if (w != k)
                return -EIO;
        /* The pid was that process as long as the pidfd still names it now: a recycled pid can
         * only exist after it died. */
        return pidfd_still(pidfd, pid);
}
