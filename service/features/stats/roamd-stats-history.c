/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "roam-macro.h"
#include "roamd-stats-history.h"

#define HEADER     "ROAMSTA1"
#define HEADER_LEN 8
#define MAGIC      "RSB1"
#define FRAME_LEN  13 /* magic 4, type 1, length 4, crc 4 */
#define BLOCK_MAX  (64u * 1024 * 1024)

enum {
        BLOCK_SERIES = 1,
        BLOCK_BASELINE = 2,
        BLOCK_BUDGET = 3,
};

static void series_done(StatsSeries *s)
{
        free(s->owner);
        free(s->link);
        free(s->buckets);
}

static void base_done(StatsBaselineEntry *e, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(e[i].owner);
                free(e[i].link);
        }
        free(e);
}

static void budgets_done(StatsBudgetUse *u, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(u[i].key);
        free(u);
}

void stats_history_done(StatsHistory *h)
{
        for (size_t i = 0; i < h->n_series; i++)
                series_done(&h->series[i]);
        free(h->series);
        free(h->epoch);
        base_done(h->base, h->n_base);
        budgets_done(h->budgets, h->n_budgets);
        *h = (StatsHistory){};
}

void stats_count_add(StatsCount *a, const StatsCount *b)
{
        a->bytes_in += b->bytes_in;
        a->bytes_out += b->bytes_out;
        a->packets_in += b->packets_in;
        a->packets_out += b->packets_out;
}

bool stats_count_is_zero(const StatsCount *c)
{
        return !c->bytes_in && !c->bytes_out && !c->packets_in && !c->packets_out;
}

static int key_cmp(const char *o1, const char *l1, bool r1, const StatsSeries *s)
{
        int k = strcmp(o1, s->owner);
        if (k == 0)
                k = strcmp(l1, s->link);
        if (k == 0)
                k = (int)r1 - (int)s->roaming;
        return k;
}

static size_t series_pos(const StatsHistory *h, const char *owner, const char *link, bool roaming,
                         bool *found)
{
        size_t lo = 0, hi = h->n_series;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (key_cmp(owner, link, roaming, &h->series[mid]) > 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < h->n_series && key_cmp(owner, link, roaming, &h->series[lo]) == 0;
        return lo;
}

const StatsSeries *stats_history_find(const StatsHistory *h, const char *owner, const char *link,
                                      bool roaming)
{
        bool found;
        size_t p = series_pos(h, owner, link, roaming, &found);
        return found ? &h->series[p] : NULL;
}

static int series_add(StatsSeries *s, uint32_t hour, const StatsCount *c)
{
        size_t lo = 0, hi = s->n;

        /* the newest hour is the usual case */
        if (s->n > 0 && s->buckets[s->n - 1].hour <= hour)
                lo = s->n - 1;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (s->buckets[mid].hour < hour)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < s->n && s->buckets[lo].hour == hour) {
                stats_count_add(&s->buckets[lo].c, c);
                return 0;
        }
        if (s->n == s->allocated) {
                size_t na = MAX(s->allocated * 2, (size_t)8);
                StatsBucket *nb = realloc(s->buckets, sizeof(StatsBucket) * na);
                if (!nb)
                        return -ENOMEM;
                s->buckets = nb, s->allocated = na;
        }
        memmove(&s->buckets[lo + 1], &s->buckets[lo], sizeof(StatsBucket) * (s->n - lo));
        s->buckets[lo] = (StatsBucket){.hour = hour, .c = *c};
        s->n++;
        return 0;
}

int stats_history_reserve(StatsHistory *h, const char *owner, const char *link, bool roaming,
                          uint32_t hour)
{
        /* adding nothing makes the series and its bucket: a later add only sums */
        return stats_history_add(h, owner, link, roaming, hour, &(StatsCount){});
}

void stats_history_baseline_take(StatsHistory *h, char *epoch, StatsBaselineEntry *e, size_t n)
{
        base_done(h->base, h->n_base);
        free(h->epoch);
        h->base = e;
        h->n_base = n;
        h->epoch = epoch;
}

int stats_history_add(StatsHistory *h, const char *owner, const char *link, bool roaming,
                      uint32_t hour, const StatsCount *c)
{
        bool found;
        size_t p = series_pos(h, owner, link, roaming, &found);

        if (!found) {
                StatsSeries *ns = realloc(h->series, sizeof(StatsSeries) * (h->n_series + 1));
                if (!ns)
                        return -ENOMEM;
                h->series = ns;
                _cleanup_free_ char *o = strdup(owner), *l = strdup(link);
                if (!o || !l)
                        return -ENOMEM;
                memmove(&ns[p + 1], &ns[p], sizeof(StatsSeries) * (h->n_series - p));
                ns[p] =
                    (StatsSeries){.owner = TAKE_PTR(o), .link = TAKE_PTR(l), .roaming = roaming};
                h->n_series++;
        }
        return series_add(&h->series[p], hour, c);
}

size_t stats_history_prune(StatsHistory *h, uint32_t min_hour)
{
        size_t dropped = 0, k = 0;

        for (size_t i = 0; i < h->n_series; i++) {
                StatsSeries *s = &h->series[i];
                size_t j = 0;
                while (j < s->n && s->buckets[j].hour < min_hour)
                        j++;
                if (j > 0) {
                        memmove(s->buckets, s->buckets + j, sizeof(StatsBucket) * (s->n - j));
                        s->n -= j;
                        dropped += j;
                }
                if (s->n == 0) {
                        series_done(s);
                        continue;
                }
                h->series[k++] = *s;
        }
        h->n_series = k;
        return dropped;
}

StatsCount stats_history_sum(const StatsHistory *h, const char *owner, const char *link,
                             int roaming, uint32_t since)
{
        StatsCount sum = {};

        for (size_t i = 0; i < h->n_series; i++) {
                const StatsSeries *s = &h->series[i];
                if ((owner && !streq(owner, s->owner)) || (link && !streq(link, s->link)) ||
                    (roaming >= 0 && (bool)roaming != s->roaming))
                        continue;
                for (size_t j = 0; j < s->n; j++)
                        if (s->buckets[j].hour >= since)
                                stats_count_add(&sum, &s->buckets[j].c);
        }
        return sum;
}

static bool owner_is_app(const char *owner, const char *app_id)
{
        const char *slash = strchr(owner, '/');

        if (strncmp(owner, "user:", 5) == 0 && slash)
                owner = slash + 1;
        return strncmp(owner, "app:", 4) == 0 && streq(owner + 4, app_id);
}

StatsCount stats_history_sum_app(const StatsHistory *h, const char *app_id)
{
        StatsCount sum = {};

        for (size_t i = 0; i < h->n_series; i++)
                if (owner_is_app(h->series[i].owner, app_id))
                        for (size_t j = 0; j < h->series[i].n; j++)
                                stats_count_add(&sum, &h->series[i].buckets[j].c);
        return sum;
}

int stats_history_set_baseline(StatsHistory *h, const char *epoch, const StatsBaselineEntry *e,
                               size_t n)
{
        StatsBaselineEntry *nb = calloc(n + 1, sizeof(StatsBaselineEntry));
        char *ne = strdup(epoch);

        if (!nb || !ne) {
                free(nb);
                free(ne);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                nb[i] = e[i];
                nb[i].owner = strdup(e[i].owner);
                nb[i].link = strdup(e[i].link);
                if (!nb[i].owner || !nb[i].link) {
                        base_done(nb, i + 1);
                        free(ne);
                        return -ENOMEM;
                }
        }
        base_done(h->base, h->n_base);
        free(h->epoch);
        h->base = nb;
        h->n_base = n;
        h->epoch = ne;
        return 0;
}

const StatsBaselineEntry *stats_history_baseline_find(const StatsHistory *h, uint8_t dir,
                                                      uint64_t cgroup, uint32_t ifindex,
                                                      uint32_t mark)
{
        /* linear: the baseline is searched once per restart per entry, and callers that
         * search often keep their own index */
        for (size_t i = 0; i < h->n_base; i++) {
                const StatsBaselineEntry *b = &h->base[i];
                if (b->dir == dir && b->cgroup == cgroup && b->ifindex == ifindex &&
                    b->mark == mark)
                        return b;
        }
        return NULL;
}

int stats_history_set_budgets(StatsHistory *h, const StatsBudgetUse *u, size_t n)
{
        StatsBudgetUse *nu = calloc(n + 1, sizeof(StatsBudgetUse));

        if (!nu)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                nu[i] = u[i];
                nu[i].key = strdup(u[i].key);
                if (!nu[i].key) {
                        budgets_done(nu, i + 1);
                        return -ENOMEM;
                }
        }
        budgets_done(h->budgets, h->n_budgets);
        h->budgets = nu;
        h->n_budgets = n;
        return 0;
}

const StatsBudgetUse *stats_history_budget_find(const StatsHistory *h, const char *key)
{
        for (size_t i = 0; i < h->n_budgets; i++)
                if (strcmp(h->budgets[i].key, key) == 0)
                        return &h->budgets[i];
        return NULL;
}

/* ---- encoding ---- */

typedef struct Buf {
        uint8_t *data;
        size_t size, allocated;
        bool oom;
} Buf;

static void buf_put(Buf *b, const void *p, size_t n)
{
        if (b->oom)
                return;
        if (b->size + n > b->allocated) {
                size_t na = MAX(b->allocated * 2, b->size + n + 4096);
                uint8_t *nd = realloc(b->data, na);
                if (!nd) {
                        b->oom = true;
                        return;
                }
                b->data = nd, b->allocated = na;
        }
        memcpy(b->data + b->size, p, n);
        b->size += n;
}

static void put_varint(Buf *b, uint64_t v)
{
        uint8_t t[10];
        size_t n = 0;

        do {
                t[n] = v & 0x7f;
                v >>= 7;
                if (v)
                        t[n] |= 0x80;
                n++;
        } while (v);
        buf_put(b, t, n);
}

static void put_string(Buf *b, const char *s)
{
        size_t n = strlen(s);
        put_varint(b, n);
        buf_put(b, s, n);
}

static void put_u32le(uint8_t *p, uint32_t v)
{
        p[0] = v, p[1] = v >> 8, p[2] = v >> 16, p[3] = v >> 24;
}

static uint32_t get_u32le(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_block(Buf *out, uint8_t type, const Buf *payload)
{
        uint8_t frame[FRAME_LEN];
        uLong crc = crc32(0L, Z_NULL, 0);

        crc = crc32(crc, &type, 1);
        crc = crc32(crc, payload->data, (uInt)payload->size);
        memcpy(frame, MAGIC, 4);
        frame[4] = type;
        put_u32le(frame + 5, (uint32_t)payload->size);
        put_u32le(frame + 9, (uint32_t)crc);
        buf_put(out, frame, sizeof(frame));
        buf_put(out, payload->data, payload->size);
}

static void put_count(Buf *b, const StatsCount *c)
{
        put_varint(b, c->bytes_in);
        put_varint(b, c->bytes_out);
        put_varint(b, c->packets_in);
        put_varint(b, c->packets_out);
}

int stats_history_serialize(const StatsHistory *h, uint8_t **ret, size_t *ret_size)
{
        Buf out = {}, p = {};

        buf_put(&out, HEADER, HEADER_LEN);
        for (size_t i = 0; i < h->n_series; i++) {
                const StatsSeries *s = &h->series[i];
                uint32_t prev = 0;

                p.size = 0;
                put_string(&p, s->owner);
                put_string(&p, s->link);
                put_varint(&p, s->roaming);
                put_varint(&p, s->n);
                for (size_t j = 0; j < s->n; j++) {
                        put_varint(&p, s->buckets[j].hour - prev);
                        prev = s->buckets[j].hour;
                        put_count(&p, &s->buckets[j].c);
                }
                put_block(&out, BLOCK_SERIES, &p);
        }
        p.size = 0;
        put_string(&p, h->epoch ?: "");
        put_varint(&p, h->n_base);
        for (size_t i = 0; i < h->n_base; i++) {
                const StatsBaselineEntry *e = &h->base[i];
                put_varint(&p, e->dir);
                put_varint(&p, e->cgroup);
                put_varint(&p, e->ifindex);
                put_varint(&p, e->mark);
                put_varint(&p, e->bytes);
                put_varint(&p, e->packets);
                put_string(&p, e->owner);
                put_string(&p, e->link);
        }
        put_block(&out, BLOCK_BASELINE, &p);
        /* one block per budget: a damaged one loses only that budget's use */
        for (size_t i = 0; i < h->n_budgets; i++) {
                p.size = 0;
                put_string(&p, h->budgets[i].key);
                put_varint(&p, h->budgets[i].start);
                put_varint(&p, h->budgets[i].used);
                put_block(&out, BLOCK_BUDGET, &p);
        }
        free(p.data);
        if (out.oom || p.oom) {
                free(out.data);
                return -ENOMEM;
        }
        *ret = out.data;
        *ret_size = out.size;
        return 0;
}

/* ---- decoding ---- */

typedef struct Reader {
        const uint8_t *p;
        size_t left;
} Reader;

static int get_varint(Reader *r, uint64_t *ret)
{
        uint64_t v = 0;

        for (unsigned shift = 0; shift < 64; shift += 7) {
                if (r->left == 0)
                        return -EBADMSG;
                uint8_t b = *r->p++;
                r->left--;
                if (shift == 63 && b > 1)
                        return -EBADMSG;
                v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *ret = v;
                        return 0;
                }
        }
        return -EBADMSG;
}

static int get_u32(Reader *r, uint32_t *ret)
{
        uint64_t v;
        int k = get_varint(r, &v);
        if (k < 0 || v > UINT32_MAX)
                return -EBADMSG;
        *ret = (uint32_t)v;
        return 0;
}

/* A string of 1..STATS_STRING_MAX printable bytes (no NUL, no control characters). */
static int get_string(Reader *r, char **ret)
{
        uint64_t n;
        char *s;

        if (get_varint(r, &n) < 0 || n == 0 || n > STATS_STRING_MAX || n > r->left)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++)
                if (r->p[i] < 0x20 || r->p[i] == 0x7f)
                        return -EBADMSG;
        s = strndup((const char *)r->p, n);
        if (!s)
                return -ENOMEM;
        r->p += n;
        r->left -= n;
        *ret = s;
        return 0;
}

static int get_count(Reader *r, StatsCount *c)
{
        if (get_varint(r, &c->bytes_in) < 0 || get_varint(r, &c->bytes_out) < 0 ||
            get_varint(r, &c->packets_in) < 0 || get_varint(r, &c->packets_out) < 0)
                return -EBADMSG;
        return 0;
}

static int parse_series(StatsHistory *h, Reader *r)
{
        _cleanup_free_ char *owner = NULL, *link = NULL;
        uint64_t roaming, n;
        uint32_t hour = 0;
        int k;

        if ((k = get_string(r, &owner)) < 0 || (k = get_string(r, &link)) < 0)
                return k;
        if (get_varint(r, &roaming) < 0 || roaming > 1 || get_varint(r, &n) < 0 ||
            n > r->left / 5 || (n == 0 && r->left > 0))
                return -EBADMSG;
        /* check the whole block before taking any of it: a damaged block adds nothing */
        Reader probe = *r;
        for (uint64_t i = 0; i < n; i++) {
                uint32_t d = 0;
                StatsCount c = {};
                if (get_u32(&probe, &d) < 0 || (i > 0 && d == 0) || d > UINT32_MAX - hour ||
                    get_count(&probe, &c) < 0)
                        return -EBADMSG;
                hour += d;
        }
        if (probe.left != 0)
                return -EBADMSG;
        hour = 0;
        for (uint64_t i = 0; i < n; i++) {
                uint32_t d = 0;
                StatsCount c = {};
                (void)get_u32(r, &d);
                (void)get_count(r, &c);
                hour += d;
                k = stats_history_add(h, owner, link, roaming, hour, &c);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int parse_baseline(StatsHistory *h, Reader *r)
{
        _cleanup_free_ char *epoch = NULL;
        StatsBaselineEntry *e = NULL;
        uint64_t n, v;
        size_t i = 0;
        int k = -EBADMSG;

        /* the epoch may be empty: read it by hand */
        if (get_varint(r, &v) < 0 || v > STATS_STRING_MAX || v > r->left)
                return -EBADMSG;
        epoch = strndup((const char *)r->p, v);
        if (!epoch)
                return -ENOMEM;
        if (strlen(epoch) != v)
                return -EBADMSG;
        r->p += v, r->left -= v;
        if (get_varint(r, &n) < 0 || n > r->left / 10)
                return -EBADMSG;
        e = calloc(n + 1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        for (i = 0; i < n; i++) {
                uint64_t dir;
                if (get_varint(r, &dir) < 0 || dir > 1 || get_varint(r, &e[i].cgroup) < 0 ||
                    get_u32(r, &e[i].ifindex) < 0 || get_u32(r, &e[i].mark) < 0 ||
                    get_varint(r, &e[i].bytes) < 0 || get_varint(r, &e[i].packets) < 0)
                        goto fail;
                e[i].dir = dir;
                if ((k = get_string(r, &e[i].owner)) < 0 || (k = get_string(r, &e[i].link)) < 0)
                        goto fail;
        }
        if (r->left != 0) {
                k = -EBADMSG;
                goto fail;
        }
        base_done(h->base, h->n_base);
        free(h->epoch);
        h->base = e;
        h->n_base = n;
        h->epoch = TAKE_PTR(epoch);
        return 0;
fail:
        base_done(e, i + 1);
        return k;
}

static int parse_budget(StatsHistory *h, Reader *r)
{
        _cleanup_free_ char *key = NULL;
        StatsBudgetUse *nu;
        uint64_t start, used;
        int k;

        if ((k = get_string(r, &key)) < 0)
                return k;
        if (get_varint(r, &start) < 0 || get_varint(r, &used) < 0 || r->left != 0)
                return -EBADMSG;
        /* written once per key: a second one is damage */
        if (stats_history_budget_find(h, key))
                return -EBADMSG;
        nu = realloc(h->budgets, sizeof(StatsBudgetUse) * (h->n_budgets + 1));
        if (!nu)
                return -ENOMEM;
        h->budgets = nu;
        nu[h->n_budgets++] = (StatsBudgetUse){.key = TAKE_PTR(key), .start = start, .used = used};
        return 0;
}

static size_t find_magic(const uint8_t *data, size_t size, size_t from)
{
        for (size_t i = from; i + 4 <= size; i++)
                if (memcmp(data + i, MAGIC, 4) == 0)
                        return i;
        return size;
}

int stats_history_parse(const uint8_t *data, size_t size, StatsHistory *ret, unsigned *ret_bad)
{
        StatsHistory h = {};
        unsigned bad = 0;
        size_t pos = HEADER_LEN;
        int k;

        if (size < HEADER_LEN || memcmp(data, HEADER, HEADER_LEN) != 0)
                return -EBADMSG;
        while (pos < size) {
                size_t next = find_magic(data, size, pos);
                if (next != pos) {
                        bad++; /* bytes that are no block */
                        pos = next;
                        continue;
                }
                if (size - pos < FRAME_LEN) {
                        bad++; /* torn tail */
                        break;
                }
                uint8_t type = data[pos + 4];
                uint32_t len = get_u32le(data + pos + 5), crc = get_u32le(data + pos + 9);
                if (len > BLOCK_MAX || len > size - pos - FRAME_LEN) {
                        bad++;
                        pos = find_magic(data, size, pos + 1);
                        continue;
                }
                uLong c = crc32(0L, Z_NULL, 0);
                c = crc32(c, &type, 1);
                c = crc32(c, data + pos + FRAME_LEN, len);
                if ((uint32_t)c != crc) {
                        bad++;
                        pos = find_magic(data, size, pos + 1);
                        continue;
                }
                Reader r = {.p = data + pos + FRAME_LEN, .left = len};
                switch (type) {
                case BLOCK_SERIES:
                        k = parse_series(&h, &r);
                        break;
                case BLOCK_BASELINE:
                        k = parse_baseline(&h, &r);
                        break;
                case BLOCK_BUDGET:
                        k = parse_budget(&h, &r);
                        break;
                default:
                        k = -EBADMSG;
                }
                if (k == -ENOMEM) {
                        stats_history_done(&h);
                        return k;
                }
                if (k < 0)
                        bad++;
                pos += FRAME_LEN + len;
        }
        *ret = h;
        if (ret_bad)
                *ret_bad = bad;
        return 0;
}

int64_t stats_clock_observe(StatsClock *c, uint64_t real, uint64_t boot)
{
        int64_t jump = 0;

        if (c->last_boot != 0) {
                int64_t dr = (int64_t)(real - c->last_real), db = (int64_t)(boot - c->last_boot);
                if (dr - db > (int64_t)STATS_CLOCK_JUMP_USEC ||
                    db - dr > (int64_t)STATS_CLOCK_JUMP_USEC) {
                        jump = dr - db;
                        c->hold_prune_until = boot + STATS_CLOCK_HOLD_USEC;
                }
        }
        c->last_real = real;
        c->last_boot = boot;
        return jump;
}

uint32_t stats_clock_prune_hour(const StatsClock *c, uint64_t real, uint64_t boot,
                                unsigned retention_days)
{
        uint64_t hour = real / 1000000ULL / 3600, keep = (uint64_t)retention_days * 24;

        if (boot < c->hold_prune_until || hour <= keep)
                return 0;
        return (uint32_t)(hour - keep);
}

/* A label value as the exposition format wants it: backslash, double quote and newline
 * escaped. Interface names may hold '"' and '\' (only '/', ':' and spaces are refused by
 * the kernel): unescaped, one such name broke the whole export. */
static void put_label(FILE *f, const char *name, const char *value, bool first)
{
        fprintf(f, "%s%s=\"", first ? "" : ",", name);
        for (const char *c = value; *c; c++) {
                if (*c == '\\' || *c == '"')
                        fputc('\\', f);
                if (*c == '\n')
                        fputs("\\n", f);
                else
                        fputc(*c, f);
        }
        fputc('"', f);
}

int stats_history_prometheus(const StatsHistory *h, char **ret, size_t *ret_size)
{
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return -ENOMEM;
        fputs("# HELP roam_bytes_total Bytes at the IP layer counted by roamd in the kernel, by "
              "owner (app:ID, user:UID, user:UID/app:ID, system, other), link, direction and "
              "roaming.\n# TYPE roam_bytes_total counter\n",
              f);
        for (int k = 0; k < 2; k++) {
                if (k == 1)
                        fputs("# HELP roam_packets_total Packets counted by roamd (one per "
                              "packet as netfilter saw it: a GSO/GRO packet counts once).\n"
                              "# TYPE roam_packets_total counter\n",
                              f);
                for (size_t i = 0; i < h->n_series; i++) {
                        const StatsSeries *se = &h->series[i];
                        StatsCount c = {};

                        for (size_t j = 0; j < se->n; j++)
                                stats_count_add(&c, &se->buckets[j].c);
                        for (int d = 0; d < 2; d++) {
                                fprintf(f, "roam_%s_total{", k ? "packets" : "bytes");
                                put_label(f, "owner", se->owner, true);
                                put_label(f, "link", se->link, false);
                                put_label(f, "direction", d ? "out" : "in", false);
                                put_label(f, "roaming", se->roaming ? "yes" : "no", false);
                                fprintf(f, "} %" PRIu64 "\n",
                                        k ? (d ? c.packets_out : c.packets_in)
                                          : (d ? c.bytes_out : c.bytes_in));
                        }
                }
        }
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        *ret_size = size;
        return 0;
}
