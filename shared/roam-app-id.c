/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-app-id.h"

#include <stdint.h>
#include <string.h>

bool app_id_is_valid(const char *id)
{
        size_t n;

        if (!id)
                return false;
        n = strlen(id);
        if (n == 0 || n > APP_ID_MAX)
                return false;
        if (!((id[0] >= 'a' && id[0] <= 'z') || (id[0] >= 'A' && id[0] <= 'Z') ||
              (id[0] >= '0' && id[0] <= '9')))
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = id[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-'))
                        return false;
        }
        return !strstr(id, "..");
}

bool app_id_is_special(const char *id)
{
        return id && (strcmp(id, APP_ID_DEFAULT) == 0 || strcmp(id, APP_ID_SYSTEM) == 0 ||
                      strcmp(id, APP_ID_USER) == 0 || app_id_user_uid(id, NULL));
}

bool uid_from_decimal(const char *s, size_t n, uid_t *ret)
{
        uint64_t v = 0;

        /* no sign, no leading zeros, not (uid_t)-1 nor the 16-bit one */
        if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
                return false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        if (v >= UINT32_MAX || v == 65535)
                return false;
        if (ret)
                *ret = (uid_t)v;
        return true;
}

bool app_id_user_uid(const char *id, uid_t *ret)
{
        const char *s;

        if (!id || strncmp(id, APP_ID_USER_PREFIX, strlen(APP_ID_USER_PREFIX)) != 0)
                return false;
        s = id + strlen(APP_ID_USER_PREFIX);
        return uid_from_decimal(s, strlen(s), ret);
}

bool app_policy_id_is_valid(const char *id)
{
        return app_id_is_valid(id) || app_id_user_uid(id, NULL);
}
