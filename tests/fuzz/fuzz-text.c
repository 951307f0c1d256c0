/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Any bytes (a peer's name, a domain, a document's text): what comes out keeps roam-text.h's
 * promises in every mode, and a stream cut anywhere cleans like the whole. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *s = (const char *)data;
        _cleanup_free_ char *clean = NULL, *mark = NULL, *strict = NULL, *lines = NULL,
                            *stream = NULL, *esc = NULL, *z = NULL;
        size_t n = 0, len, cut = size ? data[0] % (size + 1) : 0;
        int r;

        if (roam_text_clean(s, size, 0, &clean) < 0 || !roam_text_is_clean(clean, 0))
                abort();
        if (roam_text_clean(s, size, ROAM_TEXT_MARK, &mark) < 0 || strlen(mark) > size ||
            !roam_text_is_clean(mark, 0))
                abort();
        if (roam_text_clean(s, size, ROAM_TEXT_KEEP_LINES | ROAM_TEXT_MARK, &lines) < 0 ||
            !roam_text_is_clean(lines, ROAM_TEXT_KEEP_LINES))
                abort();
        r = roam_text_clean(s, size, ROAM_TEXT_STRICT, &strict);
        if (r > 0 || (r == 0 && (strlen(strict) != size || memcmp(strict, s, size) != 0)) ||
            (r < 0 && r != -EBADMSG))
                abort();
        /* Two chunks, the first cut at an arbitrary byte, as stdio flushes them. */
        stream = malloc(ROAM_TEXT_CLEAN_MAX(size) + 1);
        if (!stream)
                abort();
        r = roam_text_clean_chunk(s, cut, ROAM_TEXT_MARK, true, stream, &len);
        if (r < 0 || (size_t)r > cut || cut - (size_t)r > 3)
                abort();
        n = len;
        r = roam_text_clean_chunk(s + r, size - (size_t)r, ROAM_TEXT_MARK, false, stream + n, &len);
        if (r < 0 || n + len != strlen(mark) || memcmp(stream, mark, n + len) != 0)
                abort();
        if (roam_text_escape(clean, &esc) < 0)
                abort();
        for (const char *p = esc; *p; p++)
                if ((unsigned char)*p < 0x20)
                        abort();
        /* In place, on a NUL-terminated copy. */
        z = strndup(s, size);
        if (!z || strlen(roam_text_mark_inplace(z)) > size)
                abort();
        return 0;
}
