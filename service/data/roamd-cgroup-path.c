/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roam-app-id.h"
#include "roamd-cgroup-path.h"

static const char *const cgroup_kind_table[_CGROUP_KIND_MAX] = {
    [CGROUP_KIND_APP] = "app",
    [CGROUP_KIND_SYSTEM] = "system",
    [CGROUP_KIND_USER] = "user",
    [CGROUP_KIND_OTHER] = "other",
};
DEFINE_STRING_TABLE_LOOKUP(cgroup_kind, CgroupKind)

void cgroup_class_done(CgroupClass *c)
{
        if (!c)
                return;
        free(c->app_id);
        *c = (CgroupClass){.kind = _CGROUP_KIND_INVALID, .uid = UID_INVALID};
}

/* One path component: not NUL-terminated. */
typedef struct Comp {
        const char *s;
        size_t n;
} Comp;

/* Steps to the next component of *p (skipping slashes); false at the end. */
static bool next_comp(const char **p, Comp *ret)
{
        const char *s = *p;

        while (*s == '/')
                s++;
        if (!*s) {
                *p = s;
                return false;
        }
        ret->s = s;
        ret->n = strcspn(s, "/");
        *p = s + ret->n;
        return true;
}

unsigned cgroup_path_level(const char *path)
{
        unsigned level = 0;
        Comp c;

        if (!path)
                return 0;
        while (next_comp(&path, &c))
                level++;
        return level;
}

static bool comp_is(const Comp *c, const char *s)
{
        return c->n == strlen(s) && memcmp(c->s, s, c->n) == 0;
}

static bool comp_has_prefix(const Comp *c, const char *prefix)
{
        size_t k = strlen(prefix);

        return c->n >= k && memcmp(c->s, prefix, k) == 0;
}

static bool comp_has_suffix(const Comp *c, const char *suffix)
{
        size_t k = strlen(suffix);

        return c->n >= k && memcmp(c->s + c->n - k, suffix, k) == 0;
}

/* Whether the n components in c are exactly the components of path. */
static bool comps_equal_path(const Comp *c, size_t n, const char *path)
{
        Comp x;
        size_t i = 0;

        if (!path || path[0] != '/')
                return false;
        while (next_comp(&path, &x)) {
                if (i >= n || x.n != c[i].n || memcmp(x.s, c[i].s, x.n) != 0)
                        return false;
                i++;
        }
        return i == n;
}

/* "user-UID.slice" or "user@UID.service" */
static bool comp_user_uid(const Comp *c, const char *prefix, const char *suffix, uid_t *ret)
{
        size_t p = strlen(prefix), s = strlen(suffix);

        if (!comp_has_prefix(c, prefix) || !comp_has_suffix(c, suffix) || c->n < p + s)
                return false;
        return uid_from_decimal(c->s + p, c->n - p - s, ret);
}

static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -EINVAL;
}

/* Undoes systemd's unit name escaping (\xNN). *ret is NULL for a malformed escape or an
 * escaped NUL. */
static int unescape(const char *s, size_t n, char **ret)
{
        _cleanup_free_ char *out = NULL;
        size_t k = 0;

        *ret = NULL;
        out = malloc(n + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int hi, lo;

                if (s[i] != '\\') {
                        out[k++] = s[i];
                        continue;
                }
                if (i + 3 >= n || s[i + 1] != 'x')
                        return 0;
                hi = hex_digit(s[i + 2]);
                lo = hex_digit(s[i + 3]);
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                        return 0;
                out[k++] = (char)(hi << 4 | lo);
                i += 3;
        }
        out[k] = 0;
        *ret = TAKE_PTR(out);
        return 0;
}

/* The XDG/systemd desktop naming of apps below app.slice:
 *   app[-<launcher>]-<AppID>@<rand>.service|.scope
 *   app[-<launcher>]-<AppID>.service
 *   app[-<launcher>]-<AppID>-<rand>.scope
 * '-' only separates (systemd escapes one inside an AppID), so the launcher is what comes
 * before the first '-' of the part before '@' or the last '-'. Returns 1 and the unescaped,
 * valid app ID, 0 when the name does not fit, or -ENOMEM. */
static int parse_desktop_app(const Comp *c, char **ret)
{
        const char *body, *end, *at, *dash, *id;
        _cleanup_free_ char *unescaped = NULL;
        bool scope;
        int r;

        if (!comp_has_prefix(c, "app-"))
                return 0;
        if (comp_has_suffix(c, ".scope"))
                scope = true;
        else if (comp_has_suffix(c, ".service"))
                scope = false;
        else
                return 0;
        body = c->s + strlen("app-");
        end = c->s + c->n - strlen(scope ? ".scope" : ".service");
        if (end <= body)
                return 0;

        at = memchr(body, '@', end - body);
        if (at) {
                if (at + 1 == end) /* no random part */
                        return 0;
                end = at;
        } else if (scope) {
                dash = memrchr(body, '-', end - body);
                if (!dash || dash + 1 == end)
                        return 0;
                end = dash;
        }

        dash = memchr(body, '-', end - body);
        if (dash == body) /* an empty launcher */
                return 0;
        id = dash ? dash + 1 : body;
        if (end <= id)
                return 0;

        r = unescape(id, end - id, &unescaped);
        if (r < 0)
                return r;
        if (!unescaped || !app_id_is_valid(unescaped))
                return 0;
        *ret = TAKE_PTR(unescaped);
        return 1;
}

/* <name>.service whose parent is system.slice or a slice below it. */
static bool is_system_service(const Comp *c, size_t n)
{
        const Comp *last = &c[n - 1];

        if (!comp_has_suffix(last, ".service") || last->n <= strlen(".service"))
                return false;
        for (size_t i = n - 1; i > 0; i--) {
                const Comp *p = &c[i - 1];

                if (comp_is(p, "system.slice"))
                        return true;
                if (!comp_has_suffix(p, ".slice"))
                        return false;
        }
        return false;
}

int cgroup_classify(const char *path, const char *roam_slice, char *const *system_cgroups,
                    CgroupClass *ret)
{
        _cleanup_free_ Comp *comps = NULL;
        CgroupClass cls = {.kind = CGROUP_KIND_OTHER, .uid = UID_INVALID};
        bool below_user = false;
        const char *p;
        size_t n = 0, i = 0;
        Comp c;
        int r;

        if (!path || path[0] != '/' || !ret)
                return -EINVAL;
        /* A user names directories in its delegated subtree freely: a path that is not clean
         * text (not UTF-8, controls, bidi) would fail every bus reply that carries it, or
         * forge what other clients show. It is nothing to roamd: what runs there meets the
         * policy of the cgroups above it. */
        if (!roam_text_is_clean(path, 0))
                goto done;

        p = path;
        while (next_comp(&p, &c))
                n++;
        if (n > 0) {
                comps = calloc(n, sizeof(Comp));
                if (!comps)
                        return -ENOMEM;
        }
        p = path;
        while (next_comp(&p, &c))
                comps[i++] = c;

        for (i = 0; i < n; i++) {
                uid_t uid;

                if (comp_user_uid(&comps[i], "user-", ".slice", &uid) ||
                    comp_user_uid(&comps[i], "user@", ".service", &uid)) {
                        cls.uid = uid;
                        if (i + 1 < n)
                                below_user = true;
                } else if (i + 1 < n && comp_is(&comps[i], "user.slice"))
                        below_user = true;
        }

        STRV_FOREACH (s, (char **)system_cgroups)
                if (comps_equal_path(comps, n, *s)) {
                        cls.kind = CGROUP_KIND_SYSTEM;
                        goto done;
                }
        if (n == 0)
                goto done;

        if (roam_slice && comps_equal_path(comps, n - 1, roam_slice)) {
                const Comp *last = &comps[n - 1];
                size_t k;

                /* Verbatim: IDs made by roamd use the safe alphabet, so nothing is escaped. */
                if (!comp_has_prefix(last, "app-") || !comp_has_suffix(last, ".scope"))
                        goto done;
                k = last->n - strlen("app-") - strlen(".scope");
                if (k == 0 || k > APP_ID_MAX)
                        goto done;
                cls.app_id = strndup(last->s + strlen("app-"), k);
                if (!cls.app_id)
                        return -ENOMEM;
                if (!app_id_is_valid(cls.app_id)) {
                        free(cls.app_id);
                        cls.app_id = NULL;
                        goto done;
                }
                cls.kind = CGROUP_KIND_APP;
                goto done;
        }

        if (n >= 2 && comp_is(&comps[n - 2], "app.slice")) {
                r = parse_desktop_app(&comps[n - 1], &cls.app_id);
                if (r < 0)
                        return r;
                if (r > 0) {
                        cls.kind = CGROUP_KIND_APP;
                        goto done;
                }
        }

        if ((n == 1 && comp_is(&comps[0], "init.scope")) ||
            (!below_user && is_system_service(comps, n))) {
                cls.kind = CGROUP_KIND_SYSTEM;
                goto done;
        }

        if (comp_user_uid(&comps[n - 1], "user-", ".slice", &(uid_t){0}) ||
            comp_user_uid(&comps[n - 1], "user@", ".service", &(uid_t){0}))
                cls.kind = CGROUP_KIND_USER;
done:
        *ret = cls;
        return 0;
}
