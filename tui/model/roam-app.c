/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-app.h"
#include "roam-format.h"
#include "roam-util.h"
#include "roam-verdict.h"
#include "roam-words.h"

typedef struct Words {
        const char *value;
        const char *words;
} Words;

static const Words source_words[] = {
    {"builtin", "built in"},
    {"config", "the configuration (apps.d)"},
    {"runtime", "a change at runtime (kept in /var/lib/roam)"},
};

static const char *lookup(const Words *table, size_t n, const char *value)
{
        for (size_t i = 0; i < n; i++)
                if (streq(table[i].value, value))
                        return table[i].words;
        return value;
}

const char *roam_app_access_words(const char *access)
{
        return roam_access_words(access);
}

const char *roam_app_vpn_words(const char *vpn)
{
        return roam_vpn_words(vpn);
}

const char *roam_app_handover_words(const char *handover)
{
        return roam_handover_words(handover);
}

const char *roam_app_source_words(const char *source)
{
        return lookup(source_words, ELEMENTSOF(source_words), source);
}

/* The value after this one in a shared table, in turn (the first for an unknown value). */
static const char *next(const char *const *table, size_t n, const char *value)
{
        int i = string_table_lookup(table, n, value);

        return table[i < 0 ? 0 : ((size_t)i + 1) % n];
}

const char *roam_app_next_access(const char *access)
{
        return next(roam_access_table, _ROAM_ACCESS_MAX, access);
}

const char *roam_app_next_vpn(const char *vpn)
{
        return next(roam_vpn_table, _ROAM_VPN_MAX, vpn);
}

const char *roam_app_next_handover(const char *handover)
{
        return next(roam_handover_table, _ROAM_HANDOVER_MAX, handover);
}

int roam_app_parse_duration(const char *s, uint64_t *ret)
{
        uint64_t total = 0;
        const char *p = s;

        if (streq(s, "until-released")) {
                *ret = ROAM_APP_UNTIL_RELEASED;
                return 0;
        }
        if (!*p)
                return -EINVAL;
        while (*p) {
                uint64_t n = 0, unit;
                size_t digits = 0;

                for (; *p >= '0' && *p <= '9'; p++, digits++) {
                        if (digits >= 9) /* a billion of anything is more than a day */
                                return -ERANGE;
                        n = n * 10 + (uint64_t)(*p - '0');
                }
                if (digits == 0)
                        return -EINVAL;
                switch (*p) {
                case 's':
                        unit = USEC_PER_SEC;
                        break;
                case 'm':
                        unit = 60 * USEC_PER_SEC;
                        break;
                case 'h':
                        unit = 3600 * USEC_PER_SEC;
                        break;
                default:
                        return -EINVAL; /* no unit, or an unknown one */
                }
                p++;
                total += n * unit;
                if (total > ROAM_APP_ONLINE_FOR_MAX_USEC)
                        return -ERANGE;
        }
        if (total == 0)
                return -EDOM;
        *ret = total;
        return 0;
}

void roam_app_duration_error(int r, const char *s, char *buf, size_t size)
{
        if (r == -ERANGE)
                snprintf(buf, size, "'%s' is longer than a day: at most 24h, or until-released", s);
        else if (r == -EDOM)
                snprintf(buf, size, "'%s' is no time at all: give at least 1s", s);
        else
                snprintf(buf, size,
                         "'%s' is not a duration: use a number and a unit (s, m, h) like 90s, "
                         "10m, 1h or 1h30m, or until-released",
                         s);
}

static size_t append_unit(char *buf, size_t size, size_t len, uint64_t n, const char *unit)
{
        int k;

        if (n == 0 || len >= size)
                return len;
        k = snprintf(buf + len, size - len, "%s%" PRIu64 " %s%s", len > 0 ? " " : "", n, unit,
                     n == 1 ? "" : "s");
        return k < 0 ? len : MIN(size - 1, len + (size_t)k);
}

void roam_app_format_duration(uint64_t usec, char *buf, size_t size)
{
        uint64_t sec = usec / USEC_PER_SEC;
        size_t len = 0;

        if (size == 0)
                return;
        buf[0] = 0;
        if (usec == ROAM_APP_UNTIL_RELEASED) {
                snprintf(buf, size, "until released");
                return;
        }
        len = append_unit(buf, size, len, sec / 3600, "hour");
        len = append_unit(buf, size, len, sec / 60 % 60, "minute");
        len = append_unit(buf, size, len, sec % 60, "second");
        if (len == 0)
                snprintf(buf, size, "less than a second");
}

char *roam_app_bearers_text(const RoamApp *a, const char *sep)
{
        size_t len = 0, n = 0;
        char *s;

        if (!a->bearers[0])
                return strdup("all");
        STRV_FOREACH (b, a->bearers)
                len += strlen(*b) + strlen(sep), n++;
        s = malloc(len + 1);
        if (!s)
                return NULL;
        s[0] = 0;
        STRV_FOREACH (b, a->bearers) {
                if (b != a->bearers)
                        strcat(s, sep);
                strcat(s, *b);
        }
        return s;
}

char *roam_app_route_text(const RoamModel *m, const RoamApp *a)
{
        char *s;

        /* No uplink route: a LAN-only app still reaches its local networks; say so. */
        if (!*a->route4 && !*a->route6)
                return strdup(streq(a->access, "lan") ? "local networks only" : "none");
        if (asprintf(&s, "v4 %s, v6 %s", *a->route4 ? roam_model_route_name(m, a->route4) : "none",
                     *a->route6 ? roam_model_route_name(m, a->route6) : "none") < 0)
                return NULL;
        return s;
}

void roam_app_until_text(const RoamApp *a, char *buf, size_t size)
{
        char clock[16];

        if (a->online_until == 0)
                snprintf(buf, size, "%s", "");
        else if (a->online_until == ROAM_APP_UNTIL_RELEASED)
                snprintf(buf, size, "until released");
        else {
                roam_format_clock(a->online_until, clock, sizeof(clock));
                snprintf(buf, size, "until %s", clock);
        }
}

char *roam_app_state_text(const RoamApp *a)
{
        char until[32];
        char *s;

        roam_app_until_text(a, until, sizeof(until));
        /* "blocked: VPN down until 15:58" would read as blocked until then: the time belongs to
         * the grant, which a VPN rule may still hold back. */
        /* A wake-listed app: where it is in the ordered wake-up, in words (docs/wake.md). */
        if (asprintf(&s, "%s%s%s%s%s", *a->state ? a->state : "unknown",
                     !*until                                ? ""
                     : streq(a->state, "online for a task") ? " "
                                                            : "; online for a task ",
                     until, *a->wake_state ? "; wake: " : "",
                     *a->wake_state ? roam_wake_words(a->wake_state) : "") < 0)
                return NULL;
        return s;
}

void roam_app_wake_text(const RoamApp *a, char *buf, size_t size)
{
        char slice[32] = "", bytes[32] = "";

        if (a->wake < 0) {
                snprintf(buf, size, "not wake-listed");
                return;
        }
        if (a->wake_slice > 0)
                roam_format_duration(a->wake_slice, slice, sizeof(slice));
        if (a->wake_bytes > 0)
                roam_format_bytes(a->wake_bytes, bytes, sizeof(bytes));
        snprintf(buf, size, "priority %d%s%s%s%s", a->wake, *slice ? ", turns of at most " : "",
                 slice, *bytes ? ", fetching about " : "", bytes);
}

char *roam_app_policy_text(const RoamApp *a)
{
        _cleanup_free_ char *bearers = roam_app_bearers_text(a, ",");
        char *s;

        if (!bearers || asprintf(&s, "access %s, bearers %s, VPN %s, handover %s", a->access,
                                 bearers, a->vpn, a->handover) < 0)
                return NULL;
        return s;
}

int roam_app_state_kind(const RoamApp *a)
{
        if (strncmp(a->state, "blocked", 7) == 0)
                return -1;
        if (a->online_until != 0 || streq(a->state, "online for a task"))
                return 2;
        if (streq(a->state, "online"))
                return 1;
        return 0;
}

int roam_app_check_settings(char *const *args, char *buf, size_t size)
{
        for (size_t i = 0; args && args[i]; i++) {
                const char *eq = strchr(args[i], '=');

                if (!eq || eq == args[i]) {
                        snprintf(buf, size, "'%s' is not a setting: give key=value (keys: %s)",
                                 args[i], roam_app_settings_keys());
                        return -EINVAL;
                }
                for (size_t j = 0; j < i; j++)
                        if (strncmp(args[j], args[i], (size_t)(eq - args[i]) + 1) == 0) {
                                snprintf(buf, size, "'%.*s' is given twice", (int)(eq - args[i]),
                                         args[i]);
                                return -EINVAL;
                        }
        }
        return 0;
}
