/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "roam-conf.h"
#include "roam-log.h"
#include "roam-util.h"

static ConfErrorHook error_hook;
static void *error_hook_userdata;

void conf_set_error_hook(ConfErrorHook hook, void *userdata)
{
        error_hook = hook;
        error_hook_userdata = userdata;
}

int conf_log_error(const char *file, unsigned line, const char *fmt, ...)
{
        char buf[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        log_error("%s:%u: %s", file, line, buf);
        if (error_hook)
                error_hook(file, line, buf, error_hook_userdata);
        return -EINVAL;
}

static bool valid_section_name(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
                      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
                        return false;
        return true;
}

static bool valid_key(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if ((unsigned char)*s <= ' ' || *s == 0x7f || *s == '[' || *s == ']')
                        return false;
        return true;
}

int conf_parse_string_full(const char *file, const char *text, size_t size,
                           ConfSectionFn section_fn, ConfAssignFn fn, void *userdata,
                           unsigned *ret_errors)
{
        return conf_parse_string_at(file, 1, text, size, section_fn, fn, userdata, ret_errors);
}

int conf_parse_string_at(const char *file, unsigned first_line, const char *text, size_t size,
                         ConfSectionFn section_fn, ConfAssignFn fn, void *userdata,
                         unsigned *ret_errors)
{
        _cleanup_free_ char *section = NULL;
        unsigned errors = 0, lineno = first_line > 0 ? first_line - 1 : 0;
        const char *p = text, *end = text + size;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                char buf[CONF_LINE_MAX + 1];
                char *l, *eq;
                bool bad = false;

                lineno++;
                if (len > CONF_LINE_MAX) {
                        errors++;
                        conf_log_error(file, lineno, "Line too long (more than %d bytes).",
                                       CONF_LINE_MAX);
                        p += len + (nl ? 1 : 0);
                        continue;
                }
                memcpy(buf, p, len);
                buf[len] = 0;
                p += len + (nl ? 1 : 0);

                for (size_t i = 0; i < len; i++) {
                        unsigned char c = (unsigned char)buf[i];
                        if ((c < ' ' && c != '\t' && c != '\r') || c == 0x7f) {
                                bad = true;
                                break;
                        }
                }
                if (bad) {
                        errors++;
                        conf_log_error(file, lineno, "Control character or NUL byte in line.");
                        continue;
                }

                l = strstrip(buf);
                if (!*l || *l == '#' || *l == ';')
                        continue;

                if (*l == '[') {
                        char *e = strchr(l, ']');
                        if (!e || e[1] != 0) {
                                errors++;
                                conf_log_error(file, lineno, "Malformed section header: %s", l);
                                free(section);
                                section = NULL;
                                continue;
                        }
                        *e = 0;
                        if (!valid_section_name(l + 1)) {
                                errors++;
                                conf_log_error(file, lineno, "Invalid section name: [%s]", l + 1);
                                free(section);
                                section = NULL;
                                continue;
                        }
                        if (free_and_strdup(&section, l + 1) < 0)
                                return log_oom();
                        if (section_fn && section_fn(file, lineno, section, userdata) < 0)
                                errors++;
                        continue;
                }

                eq = strchr(l, '=');
                if (!eq) {
                        errors++;
                        conf_log_error(file, lineno, "Expected Key=Value, got: %s", l);
                        continue;
                }
                *eq = 0;
                {
                        char *key = strstrip(l), *value = strstrip(eq + 1);

                        if (!valid_key(key)) {
                                errors++;
                                conf_log_error(file, lineno, "Invalid or empty key.");
                                continue;
                        }
                        if (!section) {
                                errors++;
                                conf_log_error(file, lineno,
                                               "Assignment %s= outside of any section.", key);
                                continue;
                        }
                        if (fn(file, lineno, section, key, value, userdata) < 0)
                                errors++;
                }
        }

        if (ret_errors)
                *ret_errors = errors;
        return errors > 0 ? -EINVAL : 0;
}

int conf_parse_string(const char *file, const char *text, size_t size, ConfAssignFn fn,
                      void *userdata, unsigned *ret_errors)
{
        return conf_parse_string_full(file, text, size, NULL, fn, userdata, ret_errors);
}

int conf_parse_file(const char *path, ConfAssignFn fn, void *userdata, unsigned *ret_errors)
{
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r;

        r = read_full_file(path, 1024 * 1024, &text, &size);
        if (r < 0)
                return log_error_errno(r, "%s: cannot read configuration: %m", path);
        return conf_parse_string(path, text, size, fn, userdata, ret_errors);
}

int conf_parse_boolean(const char *v, bool *ret)
{
        static const char *const yes[] = {"1", "yes", "true", "on"};
        static const char *const no[] = {"0", "no", "false", "off"};

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (strcasecmp(v, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                if (strcasecmp(v, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}
