/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "roam-log.h"
#include "roam-text.h"

static int max_level = LOG_INFO;
static const char *ident = "roam";
static int journal = -1;
static int with_time = -1;
static LogSink sink;
static void *sink_userdata;

void log_set_sink(LogSink s, void *userdata)
{
        sink = s;
        sink_userdata = userdata;
}

static const char *const level_table[] = {
    [LOG_EMERG] = "emerg",     [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit", [LOG_ERR] = "err",
    [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void log_set_max_level(int level)
{
        max_level = level;
}

int log_get_max_level(void)
{
        return max_level;
}

int log_level_from_string(const char *s)
{
        return string_table_lookup(level_table, ELEMENTSOF(level_table), s);
}

void log_set_ident(const char *i)
{
        ident = i;
}

/* stderr connected to journald: JOURNAL_STREAM names its device:inode. */
static int stderr_is_journal(void)
{
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
                return 0;
        return st.st_dev == dev && st.st_ino == ino;
}

int log_internal(int level, int error, const char *file, int line, const char *fmt, ...)
{
        int saved = errno;
        char buf[2048];
        _cleanup_free_ char *escaped = NULL;
        const char *msg = buf;
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > max_level)
                return -error;
        if (journal < 0)
                journal = stderr_is_journal();
        if (with_time < 0) {
                const char *e = getenv("ROAM_LOG_TIME");
                with_time = e && streq(e, "1");
        }

        errno = error;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        /* Messages carry names from the network: a newline would forge a journal entry of any
         * priority, ESC and bidi characters would rewrite the reader's terminal. */
        if (roam_text_escape(buf, &escaped) >= 0)
                msg = escaped;
        else
                roam_text_mark_inplace(buf);

        if (with_time && !sink && !journal) {
                /* wall clock, to line up with other programs' timestamps when timing */
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                fprintf(stderr, "%lld.%06ld ", (long long)ts.tv_sec, ts.tv_nsec / 1000);
        }
        if (sink)
                sink(level, msg, sink_userdata);
        else if (journal)
                fprintf(stderr, "<%d>%s\n", level, msg);
        else if (max_level >= LOG_DEBUG)
                fprintf(stderr, "%s: %s:%d: %s\n", ident, file, line, msg);
        else
                fprintf(stderr, "%s: %s\n", ident, msg);
        errno = saved;
        return -error;
}
