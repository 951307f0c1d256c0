/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-conf.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-app-policy.h"
#include "roamd-config-check.h"
#include "roamd-firewall-conf.h"

static void on_conf_error(const char *file, unsigned line, const char *message, void *userdata)
{
        char **first = userdata;

        if (!*first && asprintf(first, "%s:%u: %s", file, line, message) < 0)
                *first = NULL;
}

static int check_main(const char *path, bool missing_ok, Config **ret, char **first)
{
        int r;

        conf_set_error_hook(on_conf_error, first);
        r = config_load(path, missing_ok, ret);
        conf_set_error_hook(NULL, NULL);
        if (r < 0 && !*first && asprintf(first, "%s: %s", path, strerror(-r)) < 0)
                *first = NULL;
        return r;
}

static int check_apps(const AppsConfig *c, char **first)
{
        _cleanup_(app_policy_set_done) AppPolicySet s = {};
        unsigned errors = 0;
        int r;

        /* all or nothing here: at start a broken drop-in is skipped (the others apply), but a
         * reload that would drop an app's policy is refused as a whole */
        conf_set_error_hook(on_conf_error, first);
        r = app_policy_load_dir(c->policy_dir, &s, &errors);
        conf_set_error_hook(NULL, NULL);
        if (r < 0 && !*first &&
            asprintf(first, "%s: %s", c->policy_dir,
                     r == -EINVAL ? "a file could not be read" : strerror(-r)) < 0)
                *first = NULL;
        return r;
}

static int check_firewall(const FirewallConfig *c, char **first)
{
        FwModel m;
        int r;

        r = fw_model_load(c->networks_dir, c->profiles_dir, &m, first);
        if (r < 0) {
                if (!*first && asprintf(first, "%s, %s: %s", c->networks_dir, c->profiles_dir,
                                        strerror(-r)) < 0)
                        *first = NULL;
                return r;
        }
        fw_model_done(&m);
        return 0;
}

int config_check_all(const char *path, bool missing_ok, Config **ret, char **ret_error,
                     ConfigPart *ret_part)
{
        _cleanup_free_ char *first = NULL;
        Config *c = NULL;
        ConfigPart part;
        int r;

        part = CONFIG_PART_MAIN;
        r = check_main(path, missing_ok, &c, &first);
        if (r >= 0 && c->apps.enforce) {
                part = CONFIG_PART_APPS;
                r = check_apps(&c->apps, &first);
        }
        if (r >= 0 && c->firewall.enable) {
                part = CONFIG_PART_FIREWALL;
                r = check_firewall(&c->firewall, &first);
        }
        if (r < 0) {
                config_free(c);
                *ret = NULL;
                *ret_error = TAKE_PTR(first);
                *ret_part = part;
                return r;
        }
        *ret = c;
        *ret_error = NULL;
        *ret_part = _CONFIG_PART_INVALID;
        return 0;
}
