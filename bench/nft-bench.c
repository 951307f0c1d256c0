/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Benchmark driver for roamd's nftables engine, run inside the network namespace to measure
 * (bench/bench_apps.py runs it through nsenter).
 *
 * Installs table inet roam as roamd would with N app elements in one transaction: N-1 elements
 * whose ids are not real cgroups, spread over level 2 (services: system.slice/foo.service) and
 * level 5 (user apps: user.slice/user-1000.slice/user@1000.service/app.slice/app-foo.scope), in
 * four classes, plus the real cgroup of the measured "allowed app" in a ROUTE class that marks
 * its traffic for slot 1 when the main table sends it out of --oif, and the root cgroup at
 * level 0 in the default policy's class (as roamd's full build). Then, with --changes R,
 * applies R single policy changes (one element moved to another class, one transaction each)
 * and times each with CLOCK_MONOTONIC, from building the transaction to the kernel's answer.
 *
 * Prints one JSON object on stdout. Exit status 0 on success. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-cgroup-path.h"
#include "roamd-nft.h"

#define MARK_MASK 0x7f000000u
/* Fake cgroup ids: far above any inode number a real cgroup2 file system hands out. */
#define FAKE_ID_BASE (UINT64_C(1) << 40)
#define SLOT         1
/* Elements per transaction when one transaction is too large for the engine's socket. */
#define INSTALL_CHUNK 1000

enum { C_DENY, C_LAN, C_ACCEPT, C_ROUTE, N_CLASSES };
static const char *const class_names[N_CLASSES] = {"c_deny", "c_lan", "c_accept", "c_route"};

static unsigned fake_level(size_t i)
{
        return i % 4 == 0 ? 2 : 5; /* a quarter services, the rest user apps */
}

static int fake_class(size_t i)
{
        return (int)((i + i / 4) % N_CLASSES); /* every class at every level */
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* The mount point of the cgroup2 file system, from /proc/self/mountinfo. */
static int cgroup2_mount(char *buf, size_t size)
{
        _cleanup_(fclosep) FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[4096];

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                char mnt[PATH_MAX], fstype[64];
                const char *sep = strstr(line, " - ");

                if (!sep || sscanf(sep, " - %63s", fstype) != 1 || !streq(fstype, "cgroup2"))
                        continue;
                if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
                        continue;
                snprintf(buf, size, "%s", mnt);
                return 0;
        }
        return -ENOENT;
}

static int commit(NftTxn *t)
{
        int r = nft_txn_commit(t);
        nft_txn_free(t);
        return r;
}

/* The element the changes move: a level-5 one in the middle of the range that starts in
 * c_deny; with --moved-cgroup it is that real cgroup instead of a fake id (nft's text syntax
 * in 1.0.6 only takes cgroupsv2 values as paths, so bench_apps.py needs a real one for the same
 * change through `nft -f`). */
typedef struct Setup {
        const NftClass *classes;
        const bool *levels;
        const uint32_t *slots; /* the link of each slot */
        size_t n_slots;
        unsigned long apps;
        unsigned app_level;
        uint64_t app_id;
        uint64_t root_id;     /* the root cgroup: level 0, the default policy (c_accept) */
        size_t moved;         /* index of the moved element among the fakes */
        uint64_t moved_id;    /* its id */
        unsigned moved_level; /* and level */
} Setup;

static uint64_t elem_id(const Setup *s, size_t i)
{
        return i == s->moved ? s->moved_id : FAKE_ID_BASE + i;
}

static unsigned elem_level(const Setup *s, size_t i)
{
        return i == s->moved ? s->moved_level : fake_level(i);
}

/* Table, classes, levels and elements; chunk 0: all in one transaction, else at most chunk
 * elements in each. */
static int install(NftEngine *e, const Setup *s, size_t chunk, size_t *ret_msgs, unsigned *ret_txns)
{
        NftTxn *t = NULL;
        size_t msgs = 0;
        unsigned txns = 0;
        int r;

        if ((r = nft_txn_new(e, &t)) < 0 || (r = nft_txn_replace_table(t)) < 0 ||
            (r = nft_txn_set_slots(t, s->slots, s->n_slots)) < 0)
                goto fail;
        for (int k = 0; k < N_CLASSES; k++)
                if ((r = nft_txn_put_class(t, class_names[k], &s->classes[k], false)) < 0)
                        goto fail;
        if ((r = nft_txn_set_levels(t, s->levels)) < 0 ||
            (r = nft_txn_elem(t, s->app_level, s->app_id, class_names[C_ROUTE], true)) < 0)
                goto fail;
        for (size_t i = 0, in_txn = 1; i < s->apps - 1; i++, in_txn++) {
                if (chunk > 0 && in_txn >= chunk) {
                        msgs += nft_txn_size(t);
                        txns++;
                        r = commit(t);
                        t = NULL;
                        if (r < 0 || (r = nft_txn_new(e, &t)) < 0)
                                goto fail;
                        in_txn = 0;
                }
                r = nft_txn_elem(t, elem_level(s, i), elem_id(s, i), class_names[fake_class(i)],
                                 true);
                if (r < 0)
                        goto fail;
        }
        r = nft_txn_elem(t, 0, s->root_id, class_names[C_ACCEPT], true);
        if (r < 0)
                goto fail;
        msgs += nft_txn_size(t);
        txns++;
        r = commit(t);
        if (r < 0)
                return r;
        *ret_msgs = msgs;
        *ret_txns = txns;
        return 0;
fail:
        nft_txn_free(t);
        return r;
}

/* A cgroup's id (the inode number of its directory) and level; path relative to the cgroup2
 * root. */
static int resolve_cgroup(const char *mnt, const char *cgroup, uint64_t *ret_id,
                          unsigned *ret_level)
{
        char path[PATH_MAX * 2];
        struct stat st;

        if (!cgroup || cgroup[0] != '/') {
                fprintf(stderr, "nft-bench: cgroup paths start with '/'\n");
                return -EINVAL;
        }
        snprintf(path, sizeof(path), "%s%s", mnt, cgroup);
        if (stat(path, &st) < 0) {
                fprintf(stderr, "nft-bench: %s: %m\n", path);
                return -errno;
        }
        *ret_id = st.st_ino;
        *ret_level = cgroup_path_level(cgroup);
        if (*ret_level >= NFT_LEVEL_MAX) {
                fprintf(stderr, "nft-bench: %s: too deep\n", cgroup);
                return -ERANGE;
        }
        return 0;
}

static void usage(void)
{
        printf("Usage: nft-bench [OPTIONS]\n"
               "  --apps N              app elements in all, the allowed app included (default "
               "10000)\n"
               "  --cgroup PATH         the allowed app's cgroup, relative to the cgroup2 root\n"
               "                        (e.g. /roam-bench-1/user.slice/.../app-bench.scope)\n"
               "  --oif IFINDEX         the link whose traffic the ROUTE class marks for slot 1\n"
               "  --changes R           time R single policy changes after the install\n"
               "  --moved-cgroup PATH   a real (empty) cgroup as the element the changes move\n");
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
            {"apps", required_argument, NULL, 'n'},
            {"cgroup", required_argument, NULL, 'c'},
            {"oif", required_argument, NULL, 'o'},
            {"changes", required_argument, NULL, 'r'},
            {"moved-cgroup", required_argument, NULL, 'm'},
            {"help", no_argument, NULL, 'h'},
            {},
        };
        NftConfig cfg = {.mark_mask = MARK_MASK};
        NftClass classes[N_CLASSES] = {
            [C_DENY] = {.kind = NFT_CLASS_REJECT},
            [C_LAN] = {.kind = NFT_CLASS_LAN},
            [C_ACCEPT] = {.kind = NFT_CLASS_ACCEPT},
            [C_ROUTE] = {.kind = NFT_CLASS_ROUTE, .sticky = true},
        };
        bool levels[NFT_LEVEL_MAX] = {};
        uint32_t slots[2] = {0, 0};
        const char *cgroup = NULL, *moved_cgroup = NULL;
        unsigned long apps = 10000, changes = 0;
        uint32_t oif = 0;
        uint64_t t0, install_ns;
        size_t install_msgs = 0, change_msgs = 0;
        unsigned install_txns = 0;
        int c, r, single_error = 0, moved_class = C_DENY;
        char mnt[PATH_MAX];
        Setup s = {.classes = classes, .levels = levels, .slots = slots, .n_slots = 2};
        _cleanup_free_ uint64_t *dt = NULL;
        NftEngine *e = NULL;
        NftTxn *t = NULL;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
                switch (c) {
                case 'n':
                        apps = strtoul(optarg, NULL, 10);
                        break;
                case 'c':
                        cgroup = optarg;
                        break;
                case 'o':
                        oif = (uint32_t)strtoul(optarg, NULL, 10);
                        break;
                case 'r':
                        changes = strtoul(optarg, NULL, 10);
                        break;
                case 'm':
                        moved_cgroup = optarg;
                        break;
                case 'h':
                        usage();
                        return 0;
                default:
                        usage();
                        return 2;
                }
        }
        if (apps < 2 || !cgroup || oif == 0) {
                usage();
                return 2;
        }
        r = cgroup2_mount(mnt, sizeof(mnt));
        if (r < 0) {
                fprintf(stderr, "nft-bench: no cgroup2 mount: %s\n", strerror(-r));
                return 1;
        }
        if (resolve_cgroup(mnt, cgroup, &s.app_id, &s.app_level) < 0 ||
            resolve_cgroup(mnt, "/", &s.root_id, &(unsigned){0}) < 0)
                return 1;
        s.apps = apps;
        s.moved = (apps - 1) / 2;
        while (fake_level(s.moved) != 5 || fake_class(s.moved) != C_DENY)
                s.moved = s.moved > 0 ? s.moved - 1 : apps - 2;
        s.moved_id = FAKE_ID_BASE + s.moved;
        s.moved_level = 5;
        if (moved_cgroup && resolve_cgroup(mnt, moved_cgroup, &s.moved_id, &s.moved_level) < 0)
                return 1;
        if (apps - 1 <= s.moved) { /* too few apps for a fake at level 5 in c_deny */
                fprintf(stderr, "nft-bench: --apps too small\n");
                return 2;
        }

        slots[SLOT] = oif;
        for (int f = 0; f < 2; f++)
                classes[C_ROUTE].fam[f] =
                    (NftFamilyRoute){.slot = SLOT, .slot_oif = oif, .main_oif = oif};
        levels[0] = levels[2] = levels[5] = levels[s.app_level] = levels[s.moved_level] = true;

        if (nft_engine_new(&cfg, &e) < 0)
                return 1;

        /* The install: one transaction, as roamd's start. The engine does not size its socket's
         * send buffer to the batch, so a large one fails with EMSGSIZE (nothing applied); then
         * the elements go in transactions of INSTALL_CHUNK each, which the measurements below
         * do not depend on. */
        log_set_max_level(LOG_CRIT);
        t0 = now_ns();
        r = install(e, &s, 0, &install_msgs, &install_txns);
        log_set_max_level(LOG_INFO);
        if (r == -EMSGSIZE) {
                single_error = r;
                t0 = now_ns();
                r = install(e, &s, INSTALL_CHUNK, &install_msgs, &install_txns);
        }
        if (r < 0) {
                fprintf(stderr, "nft-bench: install failed: %s\n", strerror(-r));
                return 1;
        }
        install_ns = now_ns() - t0;

        /* The changes: the moved element between c_deny and c_lan, back and forth. Each one
         * is delete + add in one transaction, as roamd moves an app to another class. */
        dt = calloc(changes ? changes : 1, sizeof(uint64_t));
        if (!dt)
                return 1;
        for (unsigned long i = 0; i < changes; i++) {
                int to = moved_class == C_DENY ? C_LAN : C_DENY;

                t0 = now_ns();
                if (nft_txn_new(e, &t) < 0 ||
                    nft_txn_elem(t, s.moved_level, s.moved_id, NULL, false) < 0 ||
                    nft_txn_elem(t, s.moved_level, s.moved_id, class_names[to], true) < 0)
                        return 1;
                change_msgs = nft_txn_size(t);
                if (commit(t) < 0)
                        return 1;
                dt[i] = now_ns() - t0;
                moved_class = to;
        }
        nft_engine_free(e);

        printf("{\"apps\": %lu, \"app_id\": %" PRIu64 ", \"app_level\": %u, \"levels\": [", apps,
               s.app_id, s.app_level);
        for (int l = NFT_LEVEL_MAX - 1, first = 1; l >= 0; l--)
                if (levels[l]) {
                        printf("%s%d", first ? "" : ", ", l);
                        first = 0;
                }
        printf("], \"install_ms\": %.3f, \"install_msgs\": %zu, \"install_txns\": %u, "
               "\"install_single_txn_error\": \"%s\"",
               install_ns / 1e6, install_msgs, install_txns,
               single_error ? strerror(-single_error) : "");
        printf(", \"moved\": {\"id\": %" PRIu64 ", \"level\": %u, \"class\": \"%s\"}", s.moved_id,
               s.moved_level, class_names[moved_class]);
        if (changes > 0) {
                qsort(dt, changes, sizeof(uint64_t), cmp_u64);
                size_t p95 = (changes * 95 + 99) / 100 - 1;
                uint64_t med =
                    changes % 2 ? dt[changes / 2] : (dt[changes / 2 - 1] + dt[changes / 2]) / 2;
                printf(", \"changes\": %lu, \"change_msgs\": %zu, \"change_median_ms\": %.4f, "
                       "\"change_p95_ms\": %.4f, \"change_max_ms\": %.4f",
                       changes, change_msgs, med / 1e6, dt[p95] / 1e6, dt[changes - 1] / 1e6);
        }
        printf("}\n");
        return 0;
}
