/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-app-policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(int level, const char *msg, void *userdata)
{
}

static bool sets_equal(const AppPolicySet *a, const AppPolicySet *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!streq(a->entries[i].id, b->entries[i].id) ||
                    !app_policy_equal(&a->entries[i].policy, &b->entries[i].policy))
                        return false;
        return true;
}

/* A drop-in that parsed must survive being written as state and read back. */
static void check_dropin(const char *text, size_t size)
{
        _cleanup_(app_policy_set_done) AppPolicySet s = {}, again = {};
        _cleanup_free_ char *state = NULL;
        unsigned errors = 0;

        if (app_policy_parse_dropin("fuzz.conf", text, size, &s, &errors) < 0) {
                if (s.n != 0 || errors == 0)
                        abort(); /* all or nothing, and the errors are counted */
                return;
        }
        if (errors != 0)
                abort();
        for (size_t i = 0; i < s.n; i++) {
                _cleanup_free_ char *str = NULL;
                AppPolicy p;

                if (app_policy_to_string(&s.entries[i].policy, &str) < 0)
                        abort();
                app_policy_init_builtin(&p);
                app_policy_layer(&p, &s.entries[i].policy);
                for (Bearer b = 0; b < _BEARER_MAX; b++)
                        (void)app_policy_allows_bearer(&p, b);
        }
        if (app_policy_state_format(&s, &state) < 0)
                abort();
        if (app_policy_parse_dropin("state", state, strlen(state), &again, NULL) < 0 ||
            !sets_equal(&s, &again))
                abort();
}

/* Each line as key=value, assigned in turn: a failure leaves the policy alone and says why; the
 * policy's text form, assigned again, gives the same policy. */
static void check_assign(const char *text, size_t size)
{
        _cleanup_free_ char *copy = NULL;
        char *save = NULL;
        AppPolicy p = {};

        copy = malloc(size + 1);
        if (!copy)
                return;
        memcpy(copy, text, size);
        copy[size] = 0;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                _cleanup_free_ char *error = NULL;
                char *eq = strchr(line, '=');
                AppPolicy before = p;
                int r;

                if (!eq)
                        continue;
                *eq = 0;
                r = app_policy_assign(&p, line, eq + 1, &error);
                if (r == -ENOMEM)
                        return;
                if (r < 0 && (!error || memcmp(&p, &before, sizeof(p)) != 0))
                        abort();
                if (r >= 0 && error)
                        abort();
        }

        {
                _cleanup_free_ char *str = NULL;
                char *save2 = NULL;
                AppPolicy q = {};

                if (app_policy_to_string(&p, &str) < 0)
                        abort();
                for (char *kv = strtok_r(str, " ", &save2); kv; kv = strtok_r(NULL, " ", &save2)) {
                        char *eq = strchr(kv, '=');

                        if (!eq)
                                abort();
                        *eq = 0;
                        if (app_policy_assign(&q, kv, eq + 1, NULL) < 0)
                                abort();
                }
                if (!app_policy_equal(&p, &q))
                        abort();
        }
}

/* A damaged state file: never an error but for memory; what a clean parse reads is read the
 * same; every app named by a damaged part is denied (the system policy excepted). */
static void check_state(const char *text, size_t size)
{
        _cleanup_(app_policy_set_done) AppPolicySet s = {}, clean = {};
        _cleanup_(app_policy_state_damage_done) AppPolicyStateDamage d = {};
        int r;

        r = app_policy_state_parse("state", text, size, &s, &d);
        if (r == -ENOMEM)
                return;
        if (r < 0 || (unsigned)r != d.n_damaged)
                abort();
        STRV_FOREACH (id, d.denied) {
                int k = app_policy_set_find(&s, *id);
                if (k < 0 || !(s.entries[k].policy.set & APP_KEY_ACCESS) ||
                    s.entries[k].policy.access != APP_ACCESS_DENY)
                        abort();
        }
        if (d.default_denied) {
                int k = app_policy_set_find(&s, "default");
                if (k < 0 || s.entries[k].policy.access != APP_ACCESS_DENY)
                        abort();
        }
        if (app_policy_parse_dropin("state", text, size, &clean, NULL) >= 0 &&
            (r != 0 || !sets_equal(&s, &clean)))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        log_set_sink(quiet, NULL);
        check_dropin((const char *)data, size);
        check_state((const char *)data, size);
        check_assign((const char *)data, size);
        return 0;
}
