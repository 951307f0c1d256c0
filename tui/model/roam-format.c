/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <wchar.h>

#include "roam-format.h"
#include "roam-util.h"

bool roam_locale_is_utf8(void)
{
        const char *codeset = nl_langinfo(CODESET);

        return codeset && (strcasecmp(codeset, "UTF-8") == 0 || strcasecmp(codeset, "utf8") == 0);
}

/* The character at s: its length in bytes (1 for a byte that starts no valid UTF-8 sequence)
 * and its width in columns (wcwidth, which knows the locale's characters; 1 when it does
 * not know one). */
static size_t next_char(const char *s, bool utf8, size_t *ret_columns)
{
        static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
        unsigned char c = (unsigned char)s[0];
        size_t len = !utf8 || c < 0x80    ? 1
                     : (c & 0xe0) == 0xc0 ? 2
                     : (c & 0xf0) == 0xe0 ? 3
                     : (c & 0xf8) == 0xf0 ? 4
                                          : 0;
        uint32_t cp;
        int w;

        if (len == 0) {
                *ret_columns = 1;
                return 1;
        }
        cp = c & lead_mask[len];
        for (size_t k = 1; k < len; k++) {
                if (((unsigned char)s[k] & 0xc0) != 0x80) {
                        *ret_columns = 1;
                        return 1;
                }
                cp = cp << 6 | ((unsigned char)s[k] & 0x3f);
        }
        w = len == 1 ? 1 : wcwidth((wchar_t)cp);
        *ret_columns = w < 0 ? 1 : (size_t)w;
        return len;
}

size_t roam_text_columns(const char *s, bool utf8)
{
        size_t n = 0, w;

        for (size_t i = 0; s[i];) {
                i += next_char(s + i, utf8, &w);
                n += w;
        }
        return n;
}

int roam_text_cut_middle(const char *s, size_t width, bool utf8, char **ret)
{
        const char *ellipsis = utf8 ? "\u2026" : "...";
        size_t ew = utf8 ? 1 : 3, total = roam_text_columns(s, utf8), head, tail, w;
        size_t head_end = 0, tail_start, cols = 0, len = strlen(s);
        char *out;

        if (total <= width) {
                *ret = strdup(s);
                return *ret ? 0 : -ENOMEM;
        }
        if (width <= ew) { /* room for nothing but the ellipsis, or part of it */
                *ret = strndup(ellipsis, utf8 ? strlen(ellipsis) : width);
                return *ret ? 0 : -ENOMEM;
        }
        head = (width - ew) / 2;
        tail = width - ew - head;

        /* The head: whole characters while they fit. */
        while (s[head_end]) {
                size_t k = next_char(s + head_end, utf8, &w);
                if (cols + w > head)
                        break;
                cols += w;
                head_end += k;
        }
        /* The tail: the shortest end that still fits, found from the start so that a
         * character is never split. */
        tail_start = head_end;
        cols = total - cols;
        while (tail_start < len && cols > tail) {
                size_t k = next_char(s + tail_start, utf8, &w);
                cols -= w;
                tail_start += k;
        }
        out = malloc(head_end + strlen(ellipsis) + (len - tail_start) + 1);
        if (!out)
                return -ENOMEM;
        memcpy(out, s, head_end);
        strcpy(out + head_end, ellipsis);
        strcat(out, s + tail_start);
        *ret = out;
        return 0;
}

void roam_format_age(uint64_t usec, uint64_t now, char *buf, size_t size, uint64_t *ret_next)
{
        static const struct {
                uint64_t unit;
                char suffix;
                uint64_t limit; /* in units: the next unit takes over from here */
        } steps[] = {
            {USEC_PER_SEC, 's', 60},
            {60 * USEC_PER_SEC, 'm', 60},
            {3600 * USEC_PER_SEC, 'h', 24},
            {86400 * USEC_PER_SEC, 'd', UINT64_MAX},
        };
        uint64_t age;

        if (ret_next)
                *ret_next = UINT64_MAX;
        if (usec == 0) {
                snprintf(buf, size, "never");
                return;
        }
        if (usec > now) {
                /* A clock step: the probe "happened in the future". Say so rather than lie. */
                snprintf(buf, size, "just now");
                if (ret_next)
                        *ret_next = usec - now + USEC_PER_SEC;
                return;
        }
        age = now - usec;
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                uint64_t n = age / steps[i].unit;

                if (n >= steps[i].limit)
                        continue;
                snprintf(buf, size, "%" PRIu64 "%c ago", n, steps[i].suffix);
                if (ret_next)
                        *ret_next = (n + 1) * steps[i].unit - age;
                return;
        }
}

void roam_format_duration(uint64_t usec, char *buf, size_t size)
{
        if (usec < USEC_PER_SEC)
                snprintf(buf, size, "%" PRIu64 " ms", (usec + USEC_PER_MSEC / 2) / USEC_PER_MSEC);
        else
                snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " s", usec / USEC_PER_SEC,
                         usec % USEC_PER_SEC / (USEC_PER_SEC / 10));
}

void roam_format_clock(uint64_t usec, char *buf, size_t size)
{
        time_t t = (time_t)(usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, size, "%H:%M:%S", &tm) == 0)
                snprintf(buf, size, "??:??:??");
}

uint64_t roam_now(void)
{
        const char *e = getenv("ROAM_TEST_NOW");
        struct timespec ts;

        if (e && *e) {
                char *end;
                unsigned long long v;

                errno = 0;
                v = strtoull(e, &end, 10);
                if (errno == 0 && end != e && !*end)
                        return v;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

void roam_format_bytes(uint64_t bytes, char *buf, size_t size)
{
        static const char *const units[] = {"kB", "MB", "GB", "TB", "PB"};
        double v = (double)bytes;
        size_t u = 0;

        if (bytes < 1000) {
                snprintf(buf, size, "%" PRIu64 " B", bytes);
                return;
        }
        v /= 1000;
        while (v >= 1000 && u + 1 < ELEMENTSOF(units)) {
                v /= 1000;
                u++;
        }
        snprintf(buf, size, "%.1f %s", v, units[u]);
}

void roam_format_utc_minute(uint64_t sec, char *buf, size_t size)
{
        time_t t = (time_t)sec;
        struct tm tm;

        if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M", &tm) == 0)
                snprintf(buf, size, "@%" PRIu64, sec);
}

void roam_print_stamp(void)
{
        char clock[16];

        roam_format_clock(roam_now(), clock, sizeof(clock));
        printf("%s ", clock);
}

const char *roam_format_bt_service(const char *uuid)
{
        /* 16-bit UUIDs of the Bluetooth SIG's Assigned Numbers (service classes, profiles),
         * the ones a phone, headset, keyboard or computer asks for. */
        static const struct {
                unsigned short id;
                const char *name;
        } names[] = {
            {0x1101, "serial port (SPP)"},
            {0x1103, "dial-up networking (DUN)"},
            {0x1105, "file push (OBEX Object Push)"},
            {0x1106, "file transfer (OBEX FTP)"},
            {0x1108, "headset (HSP)"},
            {0x110a, "audio source (A2DP)"},
            {0x110b, "audio sink (A2DP)"},
            {0x110c, "remote control target (AVRCP)"},
            {0x110e, "remote control (AVRCP)"},
            {0x1112, "headset audio gateway (HSP)"},
            {0x1115, "network user (PAN)"},
            {0x1116, "network access point (PAN NAP)"},
            {0x1117, "group network (PAN GN)"},
            {0x111e, "hands-free (HFP)"},
            {0x111f, "hands-free audio gateway (HFP)"},
            {0x1124, "keyboard, mouse or other input (HID)"},
            {0x112f, "phone book (PBAP)"},
            {0x1132, "messages (MAP)"},
            {0x1200, "device identification (PnP)"},
            {0x180a, "device information"},
            {0x180f, "battery level"},
            {0x1812, "keyboard, mouse or other input (HID over GATT)"},
        };
        static const char base[] = "-0000-1000-8000-00805f9b34fb";
        unsigned id = 0;

        if (!uuid || strlen(uuid) != 36 || strncmp(uuid, "0000", 4) != 0 ||
            strcasecmp(uuid + 8, base) != 0)
                return NULL;
        for (int i = 4; i < 8; i++) {
                char c = uuid[i];
                int v = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
                if (v < 0)
                        return NULL;
                id = id * 16 + (unsigned)v;
        }
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (names[i].id == id)
                        return names[i].name;
        return NULL;
}

int roam_strv_extendf(char ***l, const char *fmt, ...)
{
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        r = strv_push(l, s);
        if (r < 0)
                free(s);
        return r;
}
