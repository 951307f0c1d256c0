/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-fault.h"

static const char *const fault_point_table[_FAULT_POINT_MAX] = {
    [FAULT_NFT_COMMIT] = "nft-commit",
    [FAULT_ROUTE_ADD] = "route-add",
    [FAULT_RULE_ADD] = "rule-add",
    [FAULT_NFT_COMMIT_LOST] = "nft-commit-lost",
    [FAULT_NFT_COMMIT_UNSENT] = "nft-commit-unsent",
    [FAULT_NFT_ANSWER_HOLD] = "nft-answer-hold",
    [FAULT_NFT_DUMP] = "nft-dump",
    [FAULT_STATS_APPLY] = "stats-apply",
};

const char *fault_point_to_string(FaultPoint p)
{
        return p >= 0 && p < _FAULT_POINT_MAX ? fault_point_table[p] : NULL;
}

FaultPoint fault_point_from_string(const char *s)
{
        for (int i = 0; s && i < _FAULT_POINT_MAX; i++)
                if (streq(s, fault_point_table[i]))
                        return (FaultPoint)i;
        return _FAULT_POINT_INVALID;
}

#if ROAMD_FAULT_INJECTION
static char *fault_file, *fault_text;
static unsigned long fault_left[_FAULT_POINT_MAX];

bool fault_injection_built(void)
{
        return true;
}

int fault_setup(const char *file)
{
        char *f = strdup(file);

        if (!f)
                return -ENOMEM;
        free(fault_file);
        fault_file = f;
        log_warning("Fault injection from %s is on: this roamd is for tests.", file);
        return 0;
}

static void fault_reload(void)
{
        _cleanup_free_ char *text = NULL;
        char *save = NULL;

        if (read_full_file(fault_file, 4096, &text, NULL) < 0) {
                text = strdup("");
                if (!text)
                        return;
        }
        if (fault_text && streq(text, fault_text))
                return;
        free(fault_text);
        fault_text = strdup(text);
        memset(fault_left, 0, sizeof(fault_left));
        for (char *w = strtok_r(text, " \t\n,", &save); w; w = strtok_r(NULL, " \t\n,", &save)) {
                char *colon = strchr(w, ':');
                FaultPoint p;

                if (!colon)
                        continue;
                *colon = 0;
                p = fault_point_from_string(w);
                if (p >= 0)
                        fault_left[p] = strtoul(colon + 1, NULL, 10);
        }
}

const char *fault_file_path(void)
{
        return fault_file;
}

int fault_check(FaultPoint p)
{
        if (!fault_file || p < 0 || p >= _FAULT_POINT_MAX)
                return 0;
        fault_reload();
        if (fault_left[p] == 0)
                return 0;
        fault_left[p]--;
        log_notice("Fault injection: this %s fails (%lu more to come).", fault_point_to_string(p),
                   fault_left[p]);
        return -EIO;
}
#else
bool fault_injection_built(void)
{
        return false;
}

int fault_setup(const char *file)
{
        return -EOPNOTSUPP;
}

const char *fault_file_path(void)
{
        return NULL;
}

int fault_check(FaultPoint p)
{
        return 0;
}
#endif
