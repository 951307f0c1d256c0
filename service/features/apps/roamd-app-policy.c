/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "roam-conf.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-words.h"
#include "roam-app-id.h"
#include "roamd-app-policy.h"

/* The words are the shared table's (shared/roam-words.c), which roam uses too. */
_Static_assert((int)_APP_ACCESS_MAX == (int)_ROAM_ACCESS_MAX &&
                   (int)_APP_VPN_MAX == (int)_ROAM_VPN_MAX &&
                   (int)_APP_HANDOVER_MAX == (int)_ROAM_HANDOVER_MAX,
               "access, VPN rules, handovers and their shared words differ");
#define app_access_table   roam_access_table
#define app_vpn_table      roam_vpn_table
#define app_handover_table roam_handover_table
DEFINE_STRING_TABLE_LOOKUP(app_access, AppAccess)
DEFINE_STRING_TABLE_LOOKUP(app_vpn, AppVpn)
DEFINE_STRING_TABLE_LOOKUP(app_handover, AppHandover)

static const char *const app_policy_source_table[_APP_POLICY_SOURCE_MAX] = {
    [APP_POLICY_SOURCE_BUILTIN] = "builtin",
    [APP_POLICY_SOURCE_CONFIG] = "config",
    [APP_POLICY_SOURCE_RUNTIME] = "runtime",
};
DEFINE_STRING_TABLE_LOOKUP(app_policy_source, AppPolicySource)

/* The keys, indexed by bit number: as given over D-Bus, and as written in files (the shared
 * table's, which roam uses too; the file names are the App object's property names). */
enum { N_APP_KEYS = _ROAM_APP_KEY_MAX };
#define app_key_table      roam_app_key_table
#define app_key_file_table roam_app_key_property_table
_Static_assert(APP_KEY_ACCESS == 1u << ROAM_APP_KEY_ACCESS &&
                   APP_KEY_HANDOVER == 1u << ROAM_APP_KEY_HANDOVER &&
                   APP_KEY_WAKE == 1u << ROAM_APP_KEY_WAKE &&
                   APP_KEY_WAKE_BYTES == 1u << ROAM_APP_KEY_WAKE_BYTES &&
                   APP_KEY_VALID == (1u << _ROAM_APP_KEY_MAX) - 1,
               "the policy's key bits and the shared key table differ");

/* Values shown in messages: at most this many bytes of the original. */
#define QUOTE_MAX 64

/* The value as it goes into a message: printable ASCII as is, other bytes as \xNN (a message
 * must stay valid UTF-8 for D-Bus and readable in the journal), cut after QUOTE_MAX bytes. */
static const char *quote(const char *v, char buf[static QUOTE_MAX * 4 + 4])
{
        char *o = buf;
        size_t i;

        v = strempty(v);
        for (i = 0; v[i] && i < QUOTE_MAX; i++) {
                unsigned char c = (unsigned char)v[i];

                if (c >= ' ' && c < 0x7f)
                        *o++ = (char)c;
                else
                        o += sprintf(o, "\\x%02x", c);
        }
        if (v[i])
                o = stpcpy(o, "...");
        *o = 0;
        return buf;
}

/* "a, b, c" from the non-NULL entries of a table whose index bit is in mask. */
static const char *join_table(const char *const *table, size_t n, uint32_t mask, char *buf,
                              size_t size)
{
        size_t len = 0;

        buf[0] = 0;
        for (size_t i = 0; i < n; i++) {
                if (!table[i] || !(mask & (1u << i)))
                        continue;
                len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
                                        len > 0 ? ", " : "", table[i]);
        }
        return buf;
}

static const char *bearer_names(char *buf, size_t size)
{
        const char *names[_BEARER_MAX];

        for (Bearer b = 0; b < _BEARER_MAX; b++)
                names[b] = bearer_to_string(b);
        return join_table(names, _BEARER_MAX, APP_BEARERS_VALID, buf, size);
}

/* Sets *ret_error (when wanted) and returns -EINVAL, or -ENOMEM when the message cannot be
 * made. */
_printf_(2, 3) static int fail(char **ret_error, const char *fmt, ...)
{
        va_list ap;
        int r;

        if (!ret_error)
                return -EINVAL;
        va_start(ap, fmt);
        r = vasprintf(ret_error, fmt, ap);
        va_end(ap);
        if (r < 0) {
                *ret_error = NULL;
                return -ENOMEM;
        }
        return -EINVAL;
}

void app_policy_init_builtin(AppPolicy *p)
{
        *p = (AppPolicy){
            .set = APP_KEY_ALL,
            .access = APP_ACCESS_ALLOW,
            .bearers = 0,
            .vpn = APP_VPN_ANY,
            .handover = APP_HANDOVER_STICKY,
        };
}

void app_policy_layer(AppPolicy *base, const AppPolicy *over)
{
        if (over->set & APP_KEY_ACCESS)
                base->access = over->access;
        if (over->set & APP_KEY_BEARERS)
                base->bearers = over->bearers;
        if (over->set & APP_KEY_VPN)
                base->vpn = over->vpn;
        if (over->set & APP_KEY_HANDOVER)
                base->handover = over->handover;
        if (over->set & APP_KEY_WAKE)
                base->wake = over->wake;
        if (over->set & APP_KEY_WAKE_SLICE)
                base->wake_slice_usec = over->wake_slice_usec;
        if (over->set & APP_KEY_WAKE_BYTES)
                base->wake_bytes = over->wake_bytes;
        base->set |= over->set & APP_KEY_VALID;
}

int app_policy_wake_priority(const AppPolicy *p)
{
        return p->set & APP_KEY_WAKE ? p->wake : APP_WAKE_NONE;
}

uint64_t app_policy_wake_slice(const AppPolicy *p)
{
        return p->set & APP_KEY_WAKE_SLICE ? p->wake_slice_usec : APP_WAKE_SLICE_DEFAULT;
}

uint64_t app_policy_wake_bytes(const AppPolicy *p)
{
        return p->set & APP_KEY_WAKE_BYTES ? p->wake_bytes : 0;
}

bool app_policy_equal(const AppPolicy *a, const AppPolicy *b)
{
        if (a->set != b->set)
                return false;
        if ((a->set & APP_KEY_ACCESS) && a->access != b->access)
                return false;
        if ((a->set & APP_KEY_BEARERS) && a->bearers != b->bearers)
                return false;
        if ((a->set & APP_KEY_VPN) && a->vpn != b->vpn)
                return false;
        if ((a->set & APP_KEY_HANDOVER) && a->handover != b->handover)
                return false;
        if ((a->set & APP_KEY_WAKE) && a->wake != b->wake)
                return false;
        if ((a->set & APP_KEY_WAKE_SLICE) && a->wake_slice_usec != b->wake_slice_usec)
                return false;
        if ((a->set & APP_KEY_WAKE_BYTES) && a->wake_bytes != b->wake_bytes)
                return false;
        return true;
}

bool app_policy_allows_bearer(const AppPolicy *p, Bearer b)
{
        if ((int)b < 0 || b >= _BEARER_MAX)
                return false;
        if (!(p->set & APP_KEY_BEARERS) || p->bearers == 0)
                return true;
        return p->bearers & (1u << b);
}

/* Whether every key set holds a value that can be written out and read back. */
static bool app_policy_is_valid(const AppPolicy *p)
{
        if (p->set & ~(unsigned)APP_KEY_VALID)
                return false;
        if ((p->set & APP_KEY_WAKE) && (p->wake < APP_WAKE_NONE || p->wake > APP_WAKE_PRIORITY_MAX))
                return false;
        if ((p->set & APP_KEY_WAKE_SLICE) &&
            (p->wake_slice_usec < APP_WAKE_SLICE_MIN || p->wake_slice_usec > APP_WAKE_SLICE_MAX))
                return false;
        if ((p->set & APP_KEY_WAKE_BYTES) && p->wake_bytes > APP_WAKE_BYTES_MAX)
                return false;
        if ((p->set & APP_KEY_ACCESS) && !app_access_to_string(p->access))
                return false;
        if ((p->set & APP_KEY_BEARERS) && (p->bearers & ~APP_BEARERS_VALID))
                return false;
        if ((p->set & APP_KEY_VPN) && !app_vpn_to_string(p->vpn))
                return false;
        if ((p->set & APP_KEY_HANDOVER) && !app_handover_to_string(p->handover))
                return false;
        return true;
}

static int parse_bearers(const char *name, const char *value, uint32_t *ret, char **ret_error)
{
        _cleanup_strv_free_ char **l = NULL;
        char q[QUOTE_MAX * 4 + 4], names[256];
        uint32_t mask = 0;

        if (strv_split(value, " \t,", &l) < 0)
                return -ENOMEM;
        if (!l[0])
                return fail(ret_error, "empty value for %s (all, or a list of: %s)", name,
                            bearer_names(names, sizeof(names)));
        if (streq(l[0], "all") && !l[1]) {
                *ret = 0;
                return 0;
        }
        STRV_FOREACH (s, l) {
                Bearer b;

                if (streq(*s, "all"))
                        return fail(ret_error, "'all' cannot be combined with other bearers in %s",
                                    name);
                b = bearer_from_string(*s);
                if (b < 0 || !(APP_BEARERS_VALID & (1u << b)))
                        return fail(ret_error, "unknown bearer '%s' in %s (%s)", quote(*s, q), name,
                                    bearer_names(names, sizeof(names)));
                if (mask & (1u << b))
                        return fail(ret_error, "bearer '%s' listed twice in %s", *s, name);
                mask |= 1u << b;
        }
        *ret = mask;
        return 0;
}

/* Digits only (no sign, no spaces), then the rest in *ret_rest. -ERANGE past UINT64_MAX. */
static int parse_digits(const char *v, uint64_t *ret, const char **ret_rest)
{
        uint64_t n = 0;

        if (*v < '0' || *v > '9')
                return -EINVAL;
        for (; *v >= '0' && *v <= '9'; v++) {
                if (n > (UINT64_MAX - (uint64_t)(*v - '0')) / 10)
                        return -ERANGE;
                n = n * 10 + (uint64_t)(*v - '0');
        }
        *ret = n;
        *ret_rest = v;
        return 0;
}

static int parse_wake(const char *name, const char *value, int *ret, char **ret_error)
{
        char q[QUOTE_MAX * 4 + 4];
        const char *rest;
        uint64_t n;

        if (streq(value, "no")) {
                *ret = APP_WAKE_NONE;
                return 0;
        }
        if (parse_digits(value, &n, &rest) < 0 || *rest)
                return fail(ret_error, "invalid value '%s' for %s (no, or a priority 0-100)",
                            quote(value, q), name);
        if (n > APP_WAKE_PRIORITY_MAX)
                return fail(ret_error, "priority '%s' out of range for %s (0-100)", quote(value, q),
                            name);
        *ret = (int)n;
        return 0;
}

/* 10s, 500ms, 2min, 1h; a bare number is seconds. */
static int parse_wake_slice(const char *name, const char *value, uint64_t *ret, char **ret_error)
{
        static const struct {
                const char *unit;
                uint64_t usec;
        } units[] = {
            {"", 1000000}, {"s", 1000000}, {"ms", 1000}, {"min", 60000000}, {"h", 3600000000ULL}};
        char q[QUOTE_MAX * 4 + 4];
        const char *rest;
        uint64_t n;

        if (parse_digits(value, &n, &rest) >= 0)
                for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                        if (!streq(rest, units[i].unit))
                                continue;
                        if (n > APP_WAKE_SLICE_MAX / units[i].usec ||
                            n * units[i].usec < APP_WAKE_SLICE_MIN ||
                            n * units[i].usec > APP_WAKE_SLICE_MAX)
                                return fail(ret_error, "%s '%s' out of range (100ms to 1h)", name,
                                            quote(value, q));
                        *ret = n * units[i].usec;
                        return 0;
                }
        return fail(ret_error, "invalid value '%s' for %s (a duration: 10s, 500ms, 2min)",
                    quote(value, q), name);
}

/* 500K, 2M, 1G (IEC: K is 1024); a bare number is bytes. */
static int parse_wake_bytes(const char *name, const char *value, uint64_t *ret, char **ret_error)
{
        static const struct {
                const char *unit;
                uint64_t mul;
        } units[] = {{"", 1}, {"K", 1ULL << 10}, {"M", 1ULL << 20}, {"G", 1ULL << 30}};
        char q[QUOTE_MAX * 4 + 4];
        const char *rest;
        uint64_t n;

        if (parse_digits(value, &n, &rest) >= 0)
                for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                        if (!streq(rest, units[i].unit))
                                continue;
                        if (n > APP_WAKE_BYTES_MAX / units[i].mul)
                                return fail(ret_error, "%s '%s' out of range (at most 1024G)", name,
                                            quote(value, q));
                        *ret = n * units[i].mul;
                        return 0;
                }
        return fail(ret_error, "invalid value '%s' for %s (a size: 500K, 2M, 1G)", quote(value, q),
                    name);
}

/* Parses value for the key with index k (bit 1 << k) into p. name is the key as the user wrote
 * it, for messages. p is left alone on error. */
static int policy_set_key(AppPolicy *p, unsigned k, const char *name, const char *value,
                          char **ret_error)
{
        char q[QUOTE_MAX * 4 + 4], values[128];
        unsigned bit = 1u << k;
        int v;

        switch (bit) {
        case APP_KEY_ACCESS:
                v = app_access_from_string(value);
                if (v < 0)
                        return fail(ret_error, "invalid value '%s' for %s (%s)", quote(value, q),
                                    name,
                                    join_table(app_access_table, _APP_ACCESS_MAX, UINT32_MAX,
                                               values, sizeof(values)));
                p->access = v;
                break;
        case APP_KEY_BEARERS: {
                uint32_t mask = 0;

                v = parse_bearers(name, value, &mask, ret_error);
                if (v < 0)
                        return v;
                p->bearers = mask;
                break;
        }
        case APP_KEY_VPN:
                v = app_vpn_from_string(value);
                if (v < 0)
                        return fail(ret_error, "invalid value '%s' for %s (%s)", quote(value, q),
                                    name,
                                    join_table(app_vpn_table, _APP_VPN_MAX, UINT32_MAX, values,
                                               sizeof(values)));
                p->vpn = v;
                break;
        case APP_KEY_HANDOVER:
                v = app_handover_from_string(value);
                if (v < 0)
                        return fail(ret_error, "invalid value '%s' for %s (%s)", quote(value, q),
                                    name,
                                    join_table(app_handover_table, _APP_HANDOVER_MAX, UINT32_MAX,
                                               values, sizeof(values)));
                p->handover = v;
                break;
        case APP_KEY_WAKE: {
                int w = 0;

                v = parse_wake(name, value, &w, ret_error);
                if (v < 0)
                        return v;
                p->wake = w;
                break;
        }
        case APP_KEY_WAKE_SLICE: {
                uint64_t u = 0;

                v = parse_wake_slice(name, value, &u, ret_error);
                if (v < 0)
                        return v;
                p->wake_slice_usec = u;
                break;
        }
        case APP_KEY_WAKE_BYTES: {
                uint64_t u = 0;

                v = parse_wake_bytes(name, value, &u, ret_error);
                if (v < 0)
                        return v;
                p->wake_bytes = u;
                break;
        }
        default:
                return -EINVAL;
        }
        p->set |= bit;
        return 0;
}

int app_policy_assign(AppPolicy *p, const char *key, const char *value, char **ret_error)
{
        char q[QUOTE_MAX * 4 + 4], keys[128];
        AppPolicy t = *p;
        int k, r;

        k = string_table_lookup(app_key_table, N_APP_KEYS, key);
        if (k < 0)
                return fail(ret_error, "unknown key '%s' (known: %s)", quote(key, q),
                            join_table(app_key_table, N_APP_KEYS, UINT32_MAX, keys, sizeof(keys)));
        r = policy_set_key(&t, (unsigned)k, app_key_table[k], strempty(value), ret_error);
        if (r < 0)
                return r;
        *p = t;
        return 0;
}

int app_policy_bearers_to_string(uint32_t bearers, const char *sep, char **ret)
{
        _cleanup_free_ char *s = NULL;
        size_t len = 0;

        if (bearers & ~APP_BEARERS_VALID)
                return -EINVAL;
        if (bearers == 0) {
                s = strdup("all");
                if (!s)
                        return -ENOMEM;
                *ret = TAKE_PTR(s);
                return 0;
        }
        for (Bearer b = 0; b < _BEARER_MAX; b++) {
                const char *name = bearer_to_string(b);
                size_t need;
                char *n;

                if (!(bearers & (1u << b)))
                        continue;
                need = len + (len > 0 ? strlen(sep) : 0) + strlen(name) + 1;
                n = realloc(s, need);
                if (!n)
                        return -ENOMEM;
                s = n;
                len += (size_t)sprintf(s + len, "%s%s", len > 0 ? sep : "", name);
        }
        *ret = TAKE_PTR(s);
        return 0;
}

/* Appends the keys set in p to f, as "access=allow" (file_style false, joined by spaces) or
 * "Access=allow\n" lines. */
static int policy_write(const AppPolicy *p, bool file_style, FILE *f)
{
        const char *const *names = file_style ? app_key_file_table : app_key_table;
        bool first = true;

        if (!app_policy_is_valid(p))
                return -EINVAL;
        for (unsigned k = 0; k < N_APP_KEYS; k++) {
                _cleanup_free_ char *bearers = NULL;
                const char *v = NULL;
                char num[32];

                switch (1u << k) {
                case APP_KEY_ACCESS:
                        v = app_access_to_string(p->access);
                        break;
                case APP_KEY_BEARERS:
                        if (p->set & APP_KEY_BEARERS) {
                                int r = app_policy_bearers_to_string(
                                    p->bearers, file_style ? " " : ",", &bearers);
                                if (r < 0)
                                        return r;
                        }
                        v = bearers;
                        break;
                case APP_KEY_VPN:
                        v = app_vpn_to_string(p->vpn);
                        break;
                case APP_KEY_HANDOVER:
                        v = app_handover_to_string(p->handover);
                        break;
                case APP_KEY_WAKE:
                        if (p->wake == APP_WAKE_NONE)
                                v = "no";
                        else {
                                snprintf(num, sizeof(num), "%d", p->wake);
                                v = num;
                        }
                        break;
                case APP_KEY_WAKE_SLICE:
                        if (p->wake_slice_usec % 1000000 == 0)
                                snprintf(num, sizeof(num), "%" PRIu64 "s",
                                         p->wake_slice_usec / 1000000);
                        else
                                snprintf(num, sizeof(num), "%" PRIu64 "ms",
                                         p->wake_slice_usec / 1000);
                        v = num;
                        break;
                case APP_KEY_WAKE_BYTES:
                        snprintf(num, sizeof(num), "%" PRIu64, p->wake_bytes);
                        v = num;
                        break;
                default:
                        return -EINVAL;
                }
                if (!(p->set & (1u << k)))
                        continue;
                if (file_style)
                        fprintf(f, "%s=%s\n", names[k], v);
                else
                        fprintf(f, "%s%s=%s", first ? "" : " ", names[k], v);
                first = false;
        }
        return 0;
}

static int memstream_finish(FILE **f, char **buf, int r, char **ret)
{
        if (fclose(*f) != 0 && r >= 0)
                r = -ENOMEM;
        *f = NULL;
        if (r < 0) {
                free(*buf);
                *buf = NULL;
                return r;
        }
        *ret = TAKE_PTR(*buf);
        return 0;
}

int app_policy_to_string(const AppPolicy *p, char **ret)
{
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        return memstream_finish(&f, &buf, policy_write(p, false, f), ret);
}

/* ---- sets ---- */

static void entry_done(AppPolicyEntry *e)
{
        free(e->id);
        free(e->file);
        *e = (AppPolicyEntry){};
}

void app_policy_set_done(AppPolicySet *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++)
                entry_done(&s->entries[i]);
        free(s->entries);
        *s = (AppPolicySet){};
}

int app_policy_set_find(const AppPolicySet *s, const char *id)
{
        if (!id)
                return -ENOENT;
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->entries[i].id, id))
                        return (int)i;
        return -ENOENT;
}

/* Room for n more entries without changing s->n. */
static int set_reserve(AppPolicySet *s, size_t n)
{
        AppPolicyEntry *e;

        if (n == 0)
                return 0;
        if (s->n + n > INT_MAX)
                return -E2BIG;
        e = reallocarray(s->entries, s->n + n, sizeof(*e));
        if (!e)
                return -ENOMEM;
        s->entries = e;
        return 0;
}

int app_policy_set_put(AppPolicySet *s, const char *id, const AppPolicy *p)
{
        char *copy;
        int k, r;

        if (!app_policy_id_is_valid(id) || !app_policy_is_valid(p))
                return -EINVAL;
        k = app_policy_set_find(s, id);
        if (k >= 0) {
                app_policy_layer(&s->entries[k].policy, p);
                return 0;
        }
        copy = strdup(id);
        if (!copy)
                return -ENOMEM;
        r = set_reserve(s, 1);
        if (r < 0) {
                free(copy);
                return r;
        }
        s->entries[s->n++] = (AppPolicyEntry){.id = copy, .policy = *p};
        return 0;
}

int app_policy_set_remove(AppPolicySet *s, const char *id)
{
        int k = app_policy_set_find(s, id);

        if (k < 0)
                return k;
        entry_done(&s->entries[k]);
        memmove(&s->entries[k], &s->entries[k + 1],
                sizeof(AppPolicyEntry) * (s->n - (size_t)k - 1));
        s->n--;
        return 0;
}

/* Moves every entry of from into into, layering over entries with the same ID (their file and
 * line become from's). Nothing changes on failure; from is emptied on success. */
static int set_merge(AppPolicySet *into, AppPolicySet *from)
{
        int r;

        r = set_reserve(into, from->n);
        if (r < 0)
                return r;
        /* From here on nothing can fail. */
        for (size_t i = 0; i < from->n; i++) {
                AppPolicyEntry *f = &from->entries[i];
                int k = app_policy_set_find(into, f->id);

                if (k < 0) {
                        into->entries[into->n++] = *f;
                        continue;
                }
                app_policy_layer(&into->entries[k].policy, &f->policy);
                free(into->entries[k].file);
                into->entries[k].file = TAKE_PTR(f->file);
                into->entries[k].line = f->line;
                free(f->id);
        }
        free(from->entries);
        *from = (AppPolicySet){};
        return 0;
}

/* ---- drop-ins ---- */

typedef struct DropinParser {
        AppPolicySet parsed; /* this file's finished sections */
        bool in_app;         /* inside an [App] section */
        unsigned line;       /* its header */
        char *id;            /* its last valid ID=, or NULL */
        unsigned id_line;
        bool id_seen; /* an ID= was given, valid or not */
        AppPolicy policy;
        unsigned errors; /* errors the parser did not count (the end of a section) */
        bool oom;
} DropinParser;

static void dropin_parser_done(DropinParser *d)
{
        app_policy_set_done(&d->parsed);
        free(d->id);
}

/* Ends the current [App] section: checks its ID and keeps it. */
static int dropin_end_section(DropinParser *d, const char *file)
{
        _cleanup_free_ char *id = TAKE_PTR(d->id), *f = NULL;
        int k, r;

        if (!d->in_app)
                return 0;
        d->in_app = false;
        if (!d->id_seen)
                return conf_log_error(file, d->line, "[App] section without ID=.");
        if (!id)
                return 0; /* the invalid ID was reported where it stood */
        k = app_policy_set_find(&d->parsed, id);
        if (k >= 0)
                return conf_log_error(file, d->id_line,
                                      "ID=%s is already configured in this file, at line %u.", id,
                                      d->parsed.entries[k].line);
        f = strdup(file);
        r = f ? set_reserve(&d->parsed, 1) : -ENOMEM;
        if (r < 0) {
                d->oom = true;
                return log_oom();
        }
        d->parsed.entries[d->parsed.n++] = (AppPolicyEntry){
            .id = TAKE_PTR(id),
            .policy = d->policy,
            .file = TAKE_PTR(f),
            .line = d->line,
        };
        return 0;
}

static int dropin_section(const char *file, unsigned line, const char *section, void *userdata)
{
        DropinParser *d = userdata;

        if (dropin_end_section(d, file) < 0)
                d->errors++;
        if (!streq(section, "App"))
                return conf_log_error(file, line, "Unknown section [%s] (expected [App]).",
                                      section);
        d->in_app = true;
        d->line = line;
        d->id_seen = false;
        d->id_line = 0;
        d->policy = (AppPolicy){};
        return 0;
}

static int dropin_assign(const char *file, unsigned line, const char *section, const char *key,
                         const char *value, void *userdata)
{
        DropinParser *d = userdata;
        _cleanup_free_ char *error = NULL;
        char q[QUOTE_MAX * 4 + 4], name[16];
        int k, r;

        if (!d->in_app)
                return 0; /* an unknown section, reported at its header */

        if (streq(key, "ID")) {
                d->id_seen = true;
                if (!app_policy_id_is_valid(value)) {
                        free(d->id);
                        d->id = NULL;
                        return conf_log_error(file, line,
                                              "Invalid app ID '%s' (1-255 characters of A-Z, a-z, "
                                              "0-9, '.', '_', '-', starting with a letter or "
                                              "digit, no '..'; or user:UID).",
                                              quote(value, q));
                }
                if (free_and_strdup(&d->id, value) < 0) {
                        d->oom = true;
                        return log_oom();
                }
                d->id_line = line;
                return 0;
        }

        k = string_table_lookup(app_key_file_table, N_APP_KEYS, key);
        if (k < 0) {
                char keys[128];

                return conf_log_error(
                    file, line, "Unknown key %s= in section [App] (known: ID, %s).", key,
                    join_table(app_key_file_table, N_APP_KEYS, UINT32_MAX, keys, sizeof(keys)));
        }
        snprintf(name, sizeof(name), "%s=", key);
        r = policy_set_key(&d->policy, (unsigned)k, name, value, &error);
        if (r == -ENOMEM) {
                d->oom = true;
                return log_oom();
        }
        if (r < 0) {
                /* The same words as over D-Bus, as a sentence. */
                error[0] =
                    (char)(error[0] >= 'a' && error[0] <= 'z' ? error[0] - 'a' + 'A' : error[0]);
                return conf_log_error(file, line, "%s.", error);
        }
        return 0;
}

static int parse_dropin_at(const char *file, unsigned first_line, const char *text, size_t size,
                           AppPolicySet *into, unsigned *ret_errors)
{
        _cleanup_(dropin_parser_done) DropinParser d = {};
        unsigned errors = 0;
        int r;

        r = conf_parse_string_at(file, first_line, text, size, dropin_section, dropin_assign, &d,
                                 &errors);
        if (r < 0 && r != -EINVAL)
                return r;
        if (dropin_end_section(&d, file) < 0)
                d.errors++;
        errors += d.errors;
        if (ret_errors)
                *ret_errors = errors;
        if (d.oom)
                return -ENOMEM;
        if (errors > 0)
                return -EINVAL;
        return set_merge(into, &d.parsed);
}

int app_policy_parse_dropin(const char *file, const char *text, size_t size, AppPolicySet *into,
                            unsigned *ret_errors)
{
        return parse_dropin_at(file, 1, text, size, into, ret_errors);
}

static int strcmp_ptr(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dropin_name(const char *name)
{
        size_t n = strlen(name);

        return name[0] != '.' && n > 5 && streq(name + n - 5, ".conf");
}

/* Reads one drop-in into s. Returns 0, -EINVAL when the file was skipped (its errors logged
 * and added to *errors), or -ENOMEM. */
static int load_one(const char *path, AppPolicySet *s, unsigned *errors)
{
        _cleanup_free_ char *text = NULL;
        struct stat st;
        unsigned n = 0;
        size_t size;
        int r;

        if (stat(path, &st) < 0) {
                (*errors)++;
                log_error_errno(errno, "%s: cannot read: %m; skipped.", path);
                return -EINVAL;
        }
        if (!S_ISREG(st.st_mode)) {
                (*errors)++;
                log_error("%s: not a regular file; skipped.", path);
                return -EINVAL;
        }
        r = read_full_file(path, APP_POLICY_FILE_MAX, &text, &size);
        if (r == -ENOMEM)
                return log_oom();
        if (r == -EFBIG) {
                (*errors)++;
                log_error("%s: larger than 1 MiB; skipped.", path);
                return -EINVAL;
        }
        if (r < 0) {
                (*errors)++;
                log_error_errno(r, "%s: cannot read: %m; skipped.", path);
                return -EINVAL;
        }
        r = app_policy_parse_dropin(path, text, size, s, &n);
        *errors += n;
        if (r == -EINVAL)
                log_error("%s: %u error%s; the whole file is skipped.", path, n, n == 1 ? "" : "s");
        return r;
}

int app_policy_load_dir(const char *dir, AppPolicySet *ret, unsigned *ret_errors)
{
        _cleanup_(app_policy_set_done) AppPolicySet s = {};
        _cleanup_strv_free_ char **names = NULL;
        _cleanup_closedir_ DIR *d = NULL;
        unsigned errors = 0;
        bool skipped = false;
        size_t n;
        int r;

        *ret = (AppPolicySet){};
        if (ret_errors)
                *ret_errors = 0;

        d = opendir(dir);
        if (!d) {
                if (errno == ENOENT)
                        return 0;
                return log_error_errno(errno, "%s: cannot open directory: %m", dir);
        }
        names = calloc(1, sizeof(char *));
        if (!names)
                return log_oom();
        for (;;) {
                struct dirent *de;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return log_error_errno(errno, "%s: cannot read directory: %m", dir);
                        break;
                }
                if (!is_dropin_name(de->d_name))
                        continue;
                if (strv_extend(&names, de->d_name) < 0)
                        return log_oom();
        }
        n = strv_length(names);
        qsort(names, n, sizeof(char *), strcmp_ptr);

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *path = NULL;
                size_t l = strlen(dir);

                if (asprintf(&path, "%s%s%s", dir, l > 0 && dir[l - 1] == '/' ? "" : "/",
                             names[i]) < 0)
                        return log_oom();
                r = load_one(path, &s, &errors);
                if (r == -EINVAL)
                        skipped = true;
                else if (r < 0)
                        return r;
        }

        if (ret_errors)
                *ret_errors = errors;
        *ret = s;
        s = (AppPolicySet){};
        return skipped ? -EINVAL : 0;
}

/* ---- runtime state ---- */

void app_policy_state_damage_done(AppPolicyStateDamage *d)
{
        if (!d)
                return;
        strv_free(d->denied);
        *d = (AppPolicyStateDamage){};
}

/* Every valid ID= in a damaged part: the apps whose policy was lost (a part may hold more than
 * one section when a header was damaged). */
static int part_ids(const char *text, size_t size, char ***ret)
{
        _cleanup_strv_free_ char **ids = NULL;
        const char *p = text, *end = text + size;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                _cleanup_free_ char *line = strndup(p, len);
                char *l, *eq;

                p += len + (nl ? 1 : 0);
                if (!line)
                        return -ENOMEM;
                l = strstrip(line);
                eq = strchr(l, '=');
                if (!eq)
                        continue;
                *eq = 0;
                if (!streq(strstrip(l), "ID"))
                        continue;
                l = strstrip(eq + 1);
                if (app_id_is_valid(l) && !strv_contains(ids, l) && strv_extend(&ids, l) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(ids);
        return 0;
}

/* Whether a part holds anything but blank lines and comments. */
static bool has_content(const char *text, size_t size)
{
        bool line_start = true, comment = false;

        for (size_t i = 0; i < size; i++) {
                char c = text[i];

                if (c == '\n') {
                        line_start = true;
                        comment = false;
                        continue;
                }
                if (comment || c == ' ' || c == '\t' || c == '\r')
                        continue;
                if (line_start && (c == '#' || c == ';')) {
                        comment = true;
                        continue;
                }
                return true;
        }
        return false;
}

static int damage_note(AppPolicyStateDamage *d, const char *file, unsigned line, const char *text,
                       size_t size)
{
        _cleanup_strv_free_ char **ids = NULL;

        if (part_ids(text, size, &ids) < 0)
                return -ENOMEM;
        d->n_damaged++;
        if (!ids || !ids[0]) {
                log_error("%s:%u: a damaged part whose app cannot be told; apps without a policy "
                          "of their own are denied (the default's access is deny) until \"roam "
                          "app default set\" or \"roam app default reset\".",
                          file, line);
                d->default_denied = true;
                return 0;
        }
        STRV_FOREACH (id, ids) {
                if (streq(*id, APP_ID_SYSTEM)) {
                        /* denying the system policy would cut a headless box off its SSH */
                        log_error("%s:%u: the runtime change of the system policy is damaged; the "
                                  "system policy stays as configured.",
                                  file, line);
                        d->system_lost = true;
                        continue;
                }
                log_error("%s:%u: the runtime policy of %s is damaged; %s is denied until \"roam "
                          "app %s set\" or \"roam app %s reset\".",
                          file, line, *id, *id, *id, *id);
                if (streq(*id, APP_ID_DEFAULT))
                        d->default_denied = true;
                else if (!strv_contains(d->denied, *id) && strv_extend(&d->denied, *id) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Parses one part (a section, or text before the first) into s, or notes its damage. */
static int state_part(const char *file, unsigned line, const char *text, size_t size,
                      AppPolicySet *s, AppPolicyStateDamage *d)
{
        _cleanup_(app_policy_set_done) AppPolicySet one = {};
        unsigned errors = 0;
        int r;

        if (!has_content(text, size))
                return 0; /* the comment header, blank lines */
        r = parse_dropin_at(file, line, text, size, &one, &errors);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && one.n != 1)
                r = -EINVAL; /* not one [App] section */
        if (r >= 0 && app_policy_set_find(s, one.entries[0].id) >= 0)
                r = conf_log_error(file, line, "ID=%s is already configured in this file.",
                                   one.entries[0].id);
        if (r >= 0)
                return set_merge(s, &one);
        return damage_note(d, file, line, text, size);
}

static int deny_entry(AppPolicySet *s, const char *id)
{
        AppPolicy deny = {.set = APP_KEY_ACCESS, .access = APP_ACCESS_DENY};

        /* layered over what the section said, if anything: deny wins */
        return app_policy_set_put(s, id, &deny);
}

int app_policy_state_parse(const char *file, const char *text, size_t size, AppPolicySet *ret,
                           AppPolicyStateDamage *ret_damage)
{
        _cleanup_(app_policy_set_done) AppPolicySet s = {};
        _cleanup_(app_policy_state_damage_done) AppPolicyStateDamage d = {};
        const char *p = text, *end = text + size, *part = text;
        unsigned line = 1, part_line = 1;

        *ret = (AppPolicySet){};
        *ret_damage = (AppPolicyStateDamage){};
        /* Each [App] section on its own: a damaged section costs its app's runtime policy
         * only, never the others' (a deny must not become an allow because of a neighbour). */
        while (p < end) {
                const char *q = p, *nl;

                while (q < end && (*q == ' ' || *q == '\t'))
                        q++;
                if (q < end && *q == '[' && p > part) {
                        if (state_part(file, part_line, part, (size_t)(p - part), &s, &d) < 0)
                                return log_oom();
                        part = p;
                        part_line = line;
                }
                nl = memchr(p, '\n', (size_t)(end - p));
                p = nl ? nl + 1 : end;
                line++;
        }
        if (state_part(file, part_line, part, (size_t)(end - part), &s, &d) < 0)
                return log_oom();
        /* What could not be read fails closed. */
        STRV_FOREACH (id, d.denied)
                if (deny_entry(&s, *id) < 0)
                        return log_oom();
        if (d.default_denied && deny_entry(&s, APP_ID_DEFAULT) < 0)
                return log_oom();
        *ret = s;
        s = (AppPolicySet){};
        *ret_damage = d;
        d = (AppPolicyStateDamage){};
        return (int)ret_damage->n_damaged;
}

int app_policy_state_load(const char *path, AppPolicySet *ret, AppPolicyStateDamage *ret_damage)
{
        _cleanup_free_ char *text = NULL, *damaged = NULL;
        size_t size;
        int r;

        *ret = (AppPolicySet){};
        *ret_damage = (AppPolicyStateDamage){};
        if (asprintf(&damaged, "%s.damaged", path) < 0)
                return log_oom();
        r = read_full_file(path, APP_POLICY_FILE_MAX, &text, &size);
        if (r == -ENOENT)
                return 0;
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0) {
                /* Nothing can be told: every app without a policy of its own is denied. */
                if (r == -EFBIG) {
                        log_error("%s: larger than 1 MiB; kept as %s, apps without a policy of "
                                  "their own are denied (the default's access is deny) until "
                                  "\"roam app default set\" or \"roam app default reset\".",
                                  path, damaged);
                        (void)rename(path, damaged);
                } else
                        log_error_errno(r,
                                        "%s: cannot read: %m; apps without a policy of their own "
                                        "are denied (the default's access is deny) until \"roam "
                                        "app default set\" or \"roam app default reset\".",
                                        path);
                ret_damage->n_damaged = 1;
                ret_damage->default_denied = true;
                if (deny_entry(ret, APP_ID_DEFAULT) < 0)
                        return log_oom();
                return r;
        }
        r = app_policy_state_parse(path, text, size, ret, ret_damage);
        if (r <= 0)
                return r;
        r = write_file_atomic(damaged, text, size);
        if (r < 0)
                log_error_errno(r, "%s: cannot keep a copy of the damaged file: %m", damaged);
        else
                log_error("%s: %u damaged part(s); the rest is in force, the file as it was is "
                          "kept as %s.",
                          path, ret_damage->n_damaged, damaged);
        return (int)ret_damage->n_damaged;
}

int app_policy_state_format(const AppPolicySet *s, char **ret)
{
        char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r = 0;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fputs(
            "# Written by roamd: app policies changed at runtime (SetAppPolicy, \"roam app ID\n"
            "# set\"). roamd rewrites this file on every change and reads it at start; it layers\n"
            "# over " APP_POLICY_DIR_DEFAULT "/*.conf.\n",
            f);
        for (size_t i = 0; i < s->n && r >= 0; i++) {
                if (!app_policy_id_is_valid(s->entries[i].id)) {
                        r = -EINVAL;
                        break;
                }
                fprintf(f, "\n[App]\nID=%s\n", s->entries[i].id);
                r = policy_write(&s->entries[i].policy, true, f);
        }
        return memstream_finish(&f, &buf, r, ret);
}

int app_policy_state_save(const char *path, const AppPolicySet *s)
{
        _cleanup_free_ char *text = NULL;
        int r;

        r = app_policy_state_format(s, &text);
        if (r < 0)
                return r;
        return write_file_atomic(path, text, strlen(text));
}
