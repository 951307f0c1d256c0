/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs a CgroupTree on an sd-event loop and prints its events, one line each:
 *   ADDED|REMOVED id=ID level=N kind=KIND app=APPID|- uid=UID|- path=PATH
 * and answers commands read from stdin, one a line:
 *   make APPID                  -> make APPID r=R id=ID
 *   move ID PID EXPECTED        -> move r=R           (pidfd_open(PID) into node ID)
 *   rmdir-move ID FSPATH PID    -> rmdir-move r=R     (rmdir FSPATH, then move PID into ID)
 *   remove APPID                -> remove APPID r=R
 *   get ID                      -> get ID path=PATH|-
 *   foreach                     -> FOREACH lines, then "foreach done"
 *   ping WORD                   -> pong WORD
 *   quit (or end of input)
 * R is 0 or a negative errno name (-EPERM). With --filter PATH only events at or below PATH
 * are printed (the hierarchy is scanned whole, and may be large). A node reported ADDED twice
 * or REMOVED without ADDED prints a line starting with BUG. */
#include <getopt.h>
#include <inttypes.h>
#include <search.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <systemd/sd-event.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-cgroup.h"

static const char *filter;
static void *live; /* tsearch tree of the uint64_t ids reported ADDED */
static unsigned n_live;

static int id_cmp(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return (x > y) - (x < y);
}

static const char *errname(int r)
{
        static char buf[64];
        const char *n;

        if (r >= 0)
                return "0";
        n = strerrorname_np(-r);
        snprintf(buf, sizeof(buf), "-%s", n ? n : "?");
        return buf;
}

static bool shown(const char *path)
{
        size_t n;

        if (!filter || streq(filter, "/"))
                return true;
        n = strlen(filter);
        return strncmp(path, filter, n) == 0 && (path[n] == 0 || path[n] == '/');
}

static void print_node(const char *what, const CgroupNode *n)
{
        char uid[16] = "-";

        if (!shown(n->path))
                return;
        if (n->cls.uid != UID_INVALID)
                snprintf(uid, sizeof(uid), "%u", (unsigned)n->cls.uid);
        printf("%s id=%" PRIu64 " level=%u kind=%s app=%s uid=%s path=%s\n", what, n->id, n->level,
               cgroup_kind_to_string(n->cls.kind), n->cls.app_id ? n->cls.app_id : "-", uid,
               n->path);
}

static void on_event(CgroupTree *t, CgroupEvent ev, const CgroupNode *n, void *userdata)
{
        uint64_t *key;
        void *found;

        switch (ev) {
        case CGROUP_EVENT_ADDED:
                key = malloc(sizeof(*key));
                if (!key)
                        abort();
                *key = n->id;
                found = tsearch(key, &live, id_cmp);
                if (!found)
                        abort();
                if (*(uint64_t **)found != key) {
                        printf("BUG added twice id=%" PRIu64 " path=%s\n", n->id, n->path);
                        free(key);
                } else
                        n_live++;
                if (cgroup_tree_get(t, n->id) != n)
                        printf("BUG get id=%" PRIu64 " path=%s\n", n->id, n->path);
                break;
        case CGROUP_EVENT_REMOVED:
                found = tfind(&n->id, &live, id_cmp);
                if (!found) {
                        printf("BUG removed unknown id=%" PRIu64 " path=%s\n", n->id, n->path);
                        break;
                }
                key = *(uint64_t **)found;
                tdelete(key, &live, id_cmp);
                free(key);
                n_live--;
                break;
        case _CGROUP_EVENT_MAX:
        case _CGROUP_EVENT_INVALID:
                abort();
        }
        print_node(ev == CGROUP_EVENT_ADDED ? "ADDED" : "REMOVED", n);
        fflush(stdout);
}

static void on_foreach(CgroupTree *t, CgroupEvent ev, const CgroupNode *n, void *userdata)
{
        unsigned *count = userdata;

        (*count)++;
        print_node("FOREACH", n);
}

static int move(CgroupTree *t, uint64_t id, pid_t pid, pid_t expected, uid_t caller_uid)
{
        _cleanup_close_ int pidfd = -EBADF;
        const CgroupNode *n = cgroup_tree_get(t, id);

        if (!n)
                return -ENOENT;
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
                return -errno;
        return cgroup_tree_move_pidfd(t, n, pidfd, expected, caller_uid);
}

static void command(CgroupTree *t, char *line)
{
        char arg[4096], fs[4096];
        uint64_t id;
        int pid, expected;
        unsigned uid;

        line[strcspn(line, "\n")] = 0;
        if (sscanf(line, "make %4095s", arg) == 1) {
                const CgroupNode *n = NULL;
                int r = cgroup_tree_make_app(t, arg, &n);

                printf("make %s r=%s id=%" PRIu64 "\n", arg, errname(r), r >= 0 ? n->id : 0);
        } else if (sscanf(line, "move-as %u %" SCNu64 " %d %d", &uid, &id, &pid, &expected) == 4)
                printf("move r=%s\n", errname(move(t, id, pid, expected, (uid_t)uid)));
        else if (sscanf(line, "move %" SCNu64 " %d %d", &id, &pid, &expected) == 3)
                printf("move r=%s\n", errname(move(t, id, pid, expected, 0)));
        else if (sscanf(line, "rmdir-move %" SCNu64 " %4095s %d", &id, fs, &pid) == 3) {
                int r = rmdir(fs) < 0 ? -errno : move(t, id, pid, pid, 0);

                printf("rmdir-move r=%s\n", errname(r));
        } else if (sscanf(line, "remove %4095s", arg) == 1)
                printf("remove %s r=%s\n", arg, errname(cgroup_tree_remove_app(t, arg)));
        else if (sscanf(line, "get %" SCNu64, &id) == 1) {
                const CgroupNode *n = cgroup_tree_get(t, id);

                printf("get %" PRIu64 " path=%s\n", id, n ? n->path : "-");
        } else if (streq(line, "foreach")) {
                unsigned count = 0;
                int r = cgroup_tree_foreach(t, on_foreach, &count);

                printf("foreach done r=%s count=%u live=%u\n", errname(r), count, n_live);
        } else if (sscanf(line, "ping %4095s", arg) == 1)
                printf("pong %s\n", arg);
        else if (line[0])
                printf("unknown command: %s\n", line);
        fflush(stdout);
}

typedef struct Input {
        CgroupTree *tree;
        sd_event *event;
        char buf[16384];
        size_t n;
} Input;

static int on_stdin(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        Input *in = userdata;
        ssize_t k = read(fd, in->buf + in->n, sizeof(in->buf) - in->n - 1);
        char *nl;

        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (k <= 0)
                return sd_event_exit(in->event, 0);
        in->n += k;
        in->buf[in->n] = 0;
        while ((nl = strchr(in->buf, '\n'))) {
                *nl = 0;
                if (streq(in->buf, "quit"))
                        return sd_event_exit(in->event, 0);
                command(in->tree, in->buf);
                in->n -= nl + 1 - in->buf;
                memmove(in->buf, nl + 1, in->n + 1);
        }
        if (in->n == sizeof(in->buf) - 1)
                in->n = 0; /* an overlong line: dropped */
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option options[] = {
            {"filter", required_argument, NULL, 'f'},
            {"system", required_argument, NULL, 's'},
            {"debug", no_argument, NULL, 'd'},
            {},
        };
        _cleanup_strv_free_ char **system = NULL;
        sd_event_source *input = NULL;
        sd_event *e = NULL;
        CgroupTree *t = NULL;
        Input in = {};
        int c, r;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'f':
                        filter = optarg;
                        break;
                case 's':
                        if (strv_extend(&system, optarg) < 0)
                                return 1;
                        break;
                case 'd':
                        log_set_max_level(LOG_DEBUG);
                        break;
                default:
                        fprintf(stderr, "usage: %s [--filter PATH] [--system PATH]... [--debug]\n",
                                argv[0]);
                        return 2;
                }
        log_set_ident("cgroup-tree-test");
        signal(SIGPIPE, SIG_IGN);

        r = sd_event_default(&e);
        if (r < 0)
                return 1;
        r = cgroup_tree_new(e, system, on_event, NULL, &t);
        if (r < 0) {
                fprintf(stderr, "cgroup_tree_new: %s\n", strerror(-r));
                sd_event_unref(e);
                return r == -ENOMEDIUM ? 77 : 1;
        }
        printf("mount %s\nown %s\nroam-slice %s\nready\n", cgroup_tree_mount(t),
               cgroup_tree_own_path(t), cgroup_tree_roam_slice(t));
        fflush(stdout);

        in.tree = t;
        in.event = e;
        r = sd_event_add_io(e, &input, STDIN_FILENO, EPOLLIN, on_stdin, &in);
        if (r >= 0)
                r = sd_event_loop(e);

        sd_event_source_disable_unref(input);
        cgroup_tree_free(t);
        sd_event_unref(e);
        tdestroy(live, free);
        printf("exit r=%s\n", errname(r));
        return r < 0 ? 1 : 0;
}
