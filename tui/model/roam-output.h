/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Everything roam prints outside the full-screen TUI (every command, --plain) passes one
 * cleaner: names, URLs, reasons and events come from the network through roamd, and the
 * input line is echoed in errors. Broken UTF-8 and control characters (ESC and with it every
 * CSI/OSC sequence, C1 controls such as CSI U+009B) become '?'; bidi controls and zero-width
 * format characters (U+202A-U+202E, U+2066-U+2069, U+200B-U+200F, ...) are dropped
 * (shared/roam-text.c); newlines and tabs stay. */

/* Replaces stdout with the cleaning stream (once; later calls do nothing). 0 or -ENOMEM. */
int roam_output_clean_stdout(void);
