/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the zone tests share: the MCC fixture database and a list as one line. */

#include <stdio.h>
#include <stdlib.h>

#include "roam-util.h"
#include "roamd-tzdb.h"
#include "test.h"

#define S         USEC_PER_SEC
#define JULY_2024 ((usec_t)1719835200 * S) /* 2024-07-01T12:00:00Z */

static inline TzDb *fixture(void)
{
        char path[4096];
        TzDb *db = NULL;

        snprintf(path, sizeof(path), "%s/tz/serviceproviders.xml", test_fixture_dir);
        if (tzdb_new(path, NULL, &db) < 0)
                abort();
        return db;
}

static inline char *joined(char **l)
{
        static char buf[2048];
        size_t o = 0;
        buf[0] = 0;
        STRV_FOREACH (s, l)
                o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", o ? " " : "", *s);
        return buf;
}
