/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "roam-enforcement.h"
#include "roam-format.h"
#include "roam-util.h"

int roam_enforcement_notes(const RoamModel *m, char ***ret)
{
        _cleanup_strv_free_ char **notes = NULL;
        int r;

        if (m->degraded && *m->degraded) {
                char at[32] = "";

                if (m->degraded_since)
                        roam_format_clock(m->degraded_since, at, sizeof(at));
                r = roam_strv_extendf(&notes,
                                      "Enforcement degraded%s%s: %s. The last good state stays in "
                                      "force.",
                                      *at ? " since " : "", at, m->degraded);
                if (r < 0)
                        return r;
        }
        STRV_FOREACH (c, m->mark_conflicts) {
                r = roam_strv_extendf(&notes, "Mark conflict: %s.", *c);
                if (r < 0)
                        return r;
        }
        if (m->mark_conflicts && m->mark_conflicts[0]) {
                if (m->mask_suggestion && *m->mask_suggestion)
                        r = roam_strv_extendf(&notes,
                                              "Nobody else uses FirewallMask=%s: set it in "
                                              "roamd.conf.",
                                              m->mask_suggestion);
                else
                        r = roam_strv_extendf(&notes, "No free mask as wide as roamd's is left.");
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(notes);
        return 0;
}

int roam_enforcement_summary(const RoamModel *m, char ***ret)
{
        _cleanup_strv_free_ char **notes = NULL;
        size_t n = strv_length(m->mark_conflicts);
        int r;

        if (m->degraded && *m->degraded) {
                char at[32] = "";

                if (m->degraded_since)
                        roam_format_clock(m->degraded_since, at, sizeof(at));
                r = roam_strv_extendf(&notes,
                                      "Enforcement degraded%s%s; the last good state stays.",
                                      *at ? " since " : "", at);
                if (r < 0)
                        return r;
        }
        if (n > 0) {
                r = roam_strv_extendf(&notes, "%zu mark conflict%s: see roam status.", n,
                                      n == 1 ? "" : "s");
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(notes);
        return 0;
}
