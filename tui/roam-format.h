/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Text cut to fit, shared by the CLI's tables and the full-screen interface. */

/* Whether the locale's character set is UTF-8 (LC_CTYPE as set by setlocale). */
bool roam_locale_is_utf8(void);

/* How many terminal columns s takes: UTF-8 decoded when utf8 (wide characters count two),
 * one column a byte otherwise; a byte that is no valid UTF-8 counts one (it is shown as
 * '?'). */
size_t roam_text_columns(const char *s, bool utf8);

/* s in at most width columns, in a new string (*ret): s itself when it fits, else its start
 * and its end around an ellipsis ("…" when utf8, "..." otherwise), so that long IDs that
 * share a prefix (org.example.AAAA...) still differ where they differ at the end. The end
 * gets the larger half. Characters are never split. Returns 0 or -ENOMEM. */
int roam_text_cut_middle(const char *s, size_t width, bool utf8, char **ret);
