/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The functions roam-macro.h declares (its string tables' lookup among them). */
#include "roam-macro.h"

int free_and_strdup(char **p, const char *s)
{
        char *t = NULL;

        if (streq_ptr(*p, s))
                return 0;
        if (s) {
                t = strdup(s);
                if (!t)
                        return -ENOMEM;
        }
        free(*p);
        *p = t;
        return 1;
}

int string_table_lookup(const char *const *table, size_t n, const char *s)
{
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && streq(table[i], s))
                        return (int)i;
        return -EINVAL;
}
