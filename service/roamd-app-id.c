/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roamd-app-id.h"

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
        return id && (strcmp(id, APP_ID_DEFAULT) == 0 || strcmp(id, APP_ID_SYSTEM) == 0);
}
