/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A QR code for a terminal (libqrencode encodes; this only draws). Light modules are drawn and
 * dark ones left blank, as `qrencode -t UTF8` does: on the usual light-on-dark terminal the
 * code reads dark on light, as cameras expect. A quiet zone of 4 modules goes round it. With
 * utf8, two module rows a line in half blocks (▀ ▄ █); otherwise "##" a module, a row a line.
 * Returns the lines (a NULL-terminated strv, *ret_n of them), -EINVAL when text does not fit a
 * QR code, -ENOMEM. */
int roam_qr_lines(const char *text, bool utf8, char ***ret, size_t *ret_n);
