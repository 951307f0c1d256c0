/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "roam-cli.h"
#include "roam-log.h"
#include "roam-util.h"

int roam_usage_error(const char *command, const char *fmt, ...)
{
        char buf[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        (void)command;
        log_error("%s Try 'roam --help'.", buf);
        return -ROAM_ERR_USAGE;
}
