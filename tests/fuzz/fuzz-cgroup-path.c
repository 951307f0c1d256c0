/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-text.h"
#include "roam-app-id.h"
#include "roamd-cgroup-path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Line 1 is the path, line 2 the roam slice (empty: none), the other lines extra system
 * cgroups. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char **lines = NULL;
        _cleanup_free_ char *text = NULL;
        CgroupClass c = {};
        const char *slice = NULL;
        size_t n = 1;
        int r;

        if (size > 64 * 1024)
                return 0;
        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        for (size_t i = 0; i < size; i++)
                n += text[i] == '\n';
        lines = calloc(n + 1, sizeof(char *));
        if (!lines)
                return 0;
        n = 0;
        for (char *p = text; p; n++) {
                lines[n] = p;
                p = strchr(p, '\n');
                if (p)
                        *p++ = 0;
        }
        if (n > 1 && lines[1][0])
                slice = lines[1];

        (void)cgroup_path_level(lines[0]);
        r = cgroup_classify(lines[0], slice, n > 2 ? lines + 2 : NULL, &c);
        if (r < 0) {
                if (r != -EINVAL || lines[0][0] == '/')
                        abort();
                return 0;
        }
        if (lines[0][0] != '/' || !cgroup_kind_to_string(c.kind))
                abort();
        /* An app always has a valid ID, nothing else has one. */
        if ((c.kind == CGROUP_KIND_APP) != (c.app_id != NULL))
                abort();
        if (c.app_id && !app_id_is_valid(c.app_id))
                abort();
        /* A path that is not clean text is nothing, not even a user's. */
        if (!roam_text_is_clean(lines[0], 0) &&
            (c.kind != CGROUP_KIND_OTHER || c.uid != UID_INVALID))
                abort();
        /* The root is only ever system (when listed) or other. */
        if (cgroup_path_level(lines[0]) == 0 && c.kind != CGROUP_KIND_OTHER &&
            c.kind != CGROUP_KIND_SYSTEM)
                abort();
        cgroup_class_done(&c);
        return 0;
}
