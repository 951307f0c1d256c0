/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "roamd-http-date.h"

static const char *const days[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
static const char *const long_days[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                        "Friday", "Saturday", "Sunday"};
static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* s matches pat, where in pat '#' is a digit, '_' a digit or a space, '@' a month name and
 * every other character itself. */
static bool shape(const char *s, const char *pat)
{
        for (; *pat; pat++) {
                if (*pat == '#') {
                        if (!is_digit(*s++))
                                return false;
                } else if (*pat == '_') {
                        if (!is_digit(*s) && *s != ' ')
                                return false;
                        s++;
                } else if (*pat == '@') {
                        bool found = false;
                        for (size_t i = 0; i < 12 && !found; i++)
                                found = strncmp(s, months[i], 3) == 0;
                        if (!found)
                                return false;
                        s += 3;
                } else if (*s++ != *pat)
                        return false;
        }
        return *s == 0;
}

/* The day name the value starts with; returns what follows it, or NULL. */
static const char *skip_day(const char *s, const char *const *names)
{
        for (size_t i = 0; i < 7; i++) {
                size_t n = strlen(names[i]);
                if (strncmp(s, names[i], n) == 0)
                        return s + n;
        }
        return NULL;
}

int http_date_parse(const char *value, size_t size, uint64_t *ret_usec)
{
        char buf[64];
        const char *rest;
        bool ok = false;
        time_t t;

        /* surrounding whitespace (OWS) only; no NUL, no control bytes, nothing long */
        while (size > 0 && (*value == ' ' || *value == '\t'))
                value++, size--;
        while (size > 0 && (value[size - 1] == ' ' || value[size - 1] == '\t' ||
                            value[size - 1] == '\r' || value[size - 1] == '\n'))
                size--;
        if (size == 0 || size >= sizeof(buf))
                return -EINVAL;
        for (size_t i = 0; i < size; i++)
                if ((unsigned char)value[i] < ' ' || (unsigned char)value[i] >= 0x7f)
                        return -EINVAL;
        memcpy(buf, value, size);
        buf[size] = 0;

        if ((rest = skip_day(buf, days)) && rest[0] == ',')
                ok = shape(rest, ", ## @ #### ##:##:## GMT");
        else if (rest)
                ok = shape(rest, " @ _# ##:##:## ####");
        if (!ok && (rest = skip_day(buf, long_days)))
                ok = shape(rest, ", ##-@-## ##:##:## GMT");
        if (!ok)
                return -EINVAL;

        t = curl_getdate(buf, NULL);
        if (t < 0 || t > 253402300799) /* 9999-12-31 23:59:59 */
                return -ERANGE;
        *ret_usec = (uint64_t)t * 1000000ULL;
        return 0;
}
