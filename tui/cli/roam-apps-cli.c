/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "roam-app.h"
#include "roam-apps-cli.h"
#include "roam-bus.h"
#include "roam-client-bus.h"
#include "roam-polkit-agent.h"
#include "roam-format.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-util.h"

/* The label column of one app's block, as in `roam status`. */
#define LABEL_WIDTH 15
#define COLUMN_GAP  2
/* The ID column's widest: a longer ID is cut in the middle (roam app ID and --json have it
 * whole), so one long ID does not widen every row of the table. */
#define ID_COLUMNS_MAX 40

static const char denied_change[] = "not allowed to change apps";

static int new_call(sd_bus *bus, sd_bus_message **ret, const char *path, const char *interface,
                    const char *member)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, path, interface, member);
        if (r < 0)
                return log_error_errno(r, "Failed to build a call to roamd: %m");
        *ret = TAKE_PTR(m);
        return 0;
}

/* The object of app id (GetApp). */
static int get_app_path(sd_bus *bus, const char *id, const char *what, char **ret)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *path;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "GetApp", &error, &reply, "s", id);
        if (r < 0)
                return roam_app_log_call_error(&error, r, id, what, denied_change);
        r = sd_bus_message_read(reply, "o", &path);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        *ret = strdup(path);
        return *ret ? 0 : log_oom();
}

/* "access:" values with what they mean. */
static void print_field(FILE *f, const char *label, const char *value, const char *words)
{
        char l[LABEL_WIDTH + 2];

        snprintf(l, sizeof(l), "%s:", label);
        fprintf(f, "  %-*s %s", LABEL_WIDTH, l, value);
        if (words && !streq(words, value))
                fprintf(f, " (%s)", words);
        fputc('\n', f);
}

static int print_app_block(const RoamModel *m, const RoamApp *a, FILE *f)
{
        _cleanup_free_ char *state = roam_app_state_text(a), *route = roam_app_route_text(m, a),
                            *bearers = roam_app_bearers_text(a, ", ");
        char wake[96];

        if (!state || !route || !bearers)
                return -ENOMEM;
        fprintf(f, "%s\n", *a->id ? a->id : a->path);
        print_field(f, "State", state, NULL);
        print_field(f, "Access", a->access, roam_app_access_words(a->access));
        print_field(f, "Bearers", bearers, a->bearers[0] ? NULL : "every bearer");
        print_field(f, "VPN", a->vpn, roam_app_vpn_words(a->vpn));
        print_field(f, "Handover", a->handover, roam_app_handover_words(a->handover));
        print_field(f, "Route", route, NULL);
        print_field(f, "Policy from", roam_app_source_words(a->source), NULL);
        /* an app that is not wake-listed says nothing of it (--json has null) */
        roam_app_wake_text(a, wake, sizeof(wake));
        if (a->wake >= 0)
                print_field(f, "Wake", wake, NULL);
        if (*a->wake_state)
                print_field(f, "Wake state", roam_wake_words(a->wake_state),
                            *a->wake_reason ? roam_wake_reason_words(a->wake_reason) : NULL);
        if (!a->cgroups[0])
                print_field(f, "Cgroups", "none", NULL);
        STRV_FOREACH (c, a->cgroups)
                print_field(f, c == a->cgroups ? "Cgroups" : "", *c, NULL);
        return 0;
}

enum {
        COL_ID,
        COL_ACCESS,
        COL_BEARERS,
        COL_VPN,
        COL_HANDOVER,
        COL_ROUTE,
        COL_STATE,
        _COL_MAX,
};

static const char *const headings[_COL_MAX] = {
    "ID", "ACCESS", "BEARERS", "VPN", "HANDOVER", "ROUTE", "STATE",
};

/* The cells of one app's row; cells[i] are malloc'd. */
static int app_cells(const RoamModel *m, const RoamApp *a, char *cells[_COL_MAX])
{
        cells[COL_ID] = strdup(*a->id ? a->id : a->path);
        cells[COL_ACCESS] = strdup(a->access);
        cells[COL_BEARERS] = roam_app_bearers_text(a, ",");
        cells[COL_VPN] = strdup(a->vpn);
        cells[COL_HANDOVER] = strdup(a->handover);
        cells[COL_ROUTE] = roam_app_route_text(m, a);
        cells[COL_STATE] = roam_app_state_text(a);
        for (size_t i = 0; i < _COL_MAX; i++)
                if (!cells[i])
                        return -ENOMEM;
        return 0;
}

int roam_apps_print_text(const RoamModel *m, int columns, FILE *f)
{
        bool utf8 = roam_locale_is_utf8();
        size_t width[_COL_MAX], total = 0;
        char *(*cells)[_COL_MAX] = NULL;
        int r = 0;

        if (m->n_apps == 0) {
                fputs("No apps: roamd does not govern apps (an older roamd, or [Apps] "
                      "Enforce=no).\n",
                      f);
                return 0;
        }

        cells = calloc(m->n_apps, sizeof(*cells));
        if (!cells)
                return -ENOMEM;
        for (size_t i = 0; i < _COL_MAX; i++)
                width[i] = strlen(headings[i]);
        for (size_t k = 0; k < m->n_apps && r >= 0; k++) {
                r = app_cells(m, m->apps[k], cells[k]);
                if (r >= 0 && roam_text_columns(cells[k][COL_ID], utf8) > ID_COLUMNS_MAX) {
                        char *id = NULL;
                        r = roam_text_cut_middle(cells[k][COL_ID], ID_COLUMNS_MAX, utf8, &id);
                        if (r >= 0) {
                                free(cells[k][COL_ID]);
                                cells[k][COL_ID] = id;
                        }
                }
                for (size_t i = 0; r >= 0 && i < _COL_MAX; i++)
                        width[i] = MAX(width[i], roam_text_columns(cells[k][i], utf8));
        }
        if (r < 0)
                goto finish;
        for (size_t i = 0; i < _COL_MAX; i++)
                total += width[i] + (i > 0 ? COLUMN_GAP : 0);

        if (columns > 0 && total > (size_t)columns) {
                /* Too wide for this terminal: one block per app, as `roam app ID` shows it. */
                for (size_t k = 0; k < m->n_apps && r >= 0; k++) {
                        if (k > 0)
                                fputc('\n', f);
                        r = print_app_block(m, m->apps[k], f);
                }
                goto finish;
        }

        for (size_t k = 0; k <= m->n_apps; k++) {
                for (size_t i = 0; i < _COL_MAX; i++) {
                        const char *s = k == 0 ? headings[i] : cells[k - 1][i];

                        /* padded by columns, not bytes: an ellipsis is one column */
                        if (i + 1 < _COL_MAX)
                                fprintf(f, "%s%*s", s,
                                        (int)(width[i] - roam_text_columns(s, utf8) + COLUMN_GAP),
                                        "");
                        else
                                fprintf(f, "%s\n", s);
                }
        }

finish:
        for (size_t k = 0; k < m->n_apps; k++)
                for (size_t i = 0; i < _COL_MAX; i++)
                        free(cells[k][i]);
        free(cells);
        return r;
}

int roam_app_to_json(const RoamApp *a, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        json_object *bearers = NULL, *cgroups = NULL;
        int r;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;

        /* The order of the keys is the documented one (docs/client.md). */
        if ((r = json_add_string(o, "id", a->id)) < 0 ||
            (r = json_add_string(o, "path", a->path)) < 0 ||
            (r = json_add_string(o, "access", a->access)) < 0 ||
            (r = strv_to_json(a->bearers, &bearers)) < 0 ||
            (r = json_add(o, "bearers", bearers)) < 0 ||
            (r = json_add_string(o, "vpn", a->vpn)) < 0 ||
            (r = json_add_string(o, "handover", a->handover)) < 0 ||
            (r = json_add_string(o, "source", a->source)) < 0 ||
            (r = json_add_string(o, "route4", a->route4)) < 0 ||
            (r = json_add_string(o, "route6", a->route6)) < 0 ||
            (r = json_add_string(o, "state", a->state)) < 0)
                return r;
        r = a->online_until ? json_add_uint(o, "online_until_usec", a->online_until)
                            : json_add_null(o, "online_until_usec");
        if (r >= 0)
                r = strv_to_json(a->cgroups, &cgroups);
        if (r >= 0)
                r = json_add(o, "cgroups", cgroups);
        if (r < 0)
                return r;
        /* The wake keys (null: not wake-listed) and where the app is in the queue (null: not
         * in it). */
        bool listed = a->wake >= 0, queued = *a->wake_state;
        r = listed ? json_add_int(o, "wake", a->wake) : json_add_null(o, "wake");
        if (r >= 0)
                r = listed ? json_add_uint(o, "wake_slice_usec", a->wake_slice)
                           : json_add_null(o, "wake_slice_usec");
        if (r >= 0)
                r = listed ? json_add_uint(o, "wake_bytes", a->wake_bytes)
                           : json_add_null(o, "wake_bytes");
        if (r >= 0)
                r = queued ? json_add_string(o, "wake_state", a->wake_state)
                           : json_add_null(o, "wake_state");
        if (r >= 0)
                r = queued ? json_add_string(o, "wake_reason", a->wake_reason)
                           : json_add_null(o, "wake_reason");
        if (r >= 0)
                r = queued && a->wake_since ? json_add_uint(o, "wake_since_usec", a->wake_since)
                                            : json_add_null(o, "wake_since_usec");
        if (r < 0)
                return r;

        *ret = TAKE_PTR(o);
        return 0;
}

static int print_apps_json(const RoamModel *m, FILE *f)
{
        _cleanup_(json_object_putp) json_object *array = NULL;
        int r;

        array = json_object_new_array();
        if (!array)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_apps; i++) {
                json_object *o = NULL;

                r = roam_app_to_json(m->apps[i], &o);
                if (r >= 0)
                        r = json_append(array, o);
                if (r < 0)
                        return r;
        }
        return json_print(array, f);
}

/* The terminal's width when stdout is one ($COLUMNS wins, as in systemd), else 0: no limit. */
static int output_columns(void)
{
        const char *e = getenv("COLUMNS");
        struct winsize ws = {};
        char *end;
        long n;

        if (e && *e) {
                errno = 0;
                n = strtol(e, &end, 10);
                if (errno == 0 && *end == 0 && n > 0 && n < 100000)
                        return (int)n;
        }
        if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) >= 0 && ws.ws_col > 0)
                return ws.ws_col;
        return 0;
}

static int load(sd_bus **ret_bus, RoamModel **ret_model)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = roam_bus_connect(&bus);
        if (r < 0)
                return r;
        r = roam_model_load(bus, ret_model);
        if (r < 0)
                return r;
        if (ret_bus)
                *ret_bus = TAKE_PTR(bus);
        return 0;
}

int roam_apps_run(bool json)
{
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        int r;

        r = load(NULL, &m);
        if (r < 0)
                return r;
        r = json ? print_apps_json(m, stdout) : roam_apps_print_text(m, output_columns(), stdout);
        if (r == -ENOMEM)
                return log_oom();
        return r;
}

/* Whether the app's GLib processes hear roamd (docs/apps-hear.md): how many of its
 * connections listen to org.roam1.AppMonitor; a roamd without it answers none. */
static void print_monitor(sd_bus *bus, const char *id, FILE *f)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        char text[64];
        uint32_t n = 0;

        if (sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MONITOR_PATH, ROAM_MONITOR_INTERFACE,
                               "Listeners", &error, &reply, "s", id) < 0 ||
            sd_bus_message_read(reply, "u", &n) < 0) {
                print_field(f, "Net monitor", "GLib's own (roamd answers none here)", NULL);
                return;
        }
        if (n == 0)
                snprintf(text, sizeof(text), "roam's; no process listens now");
        else
                snprintf(text, sizeof(text), "roam's; %" PRIu32 " process%s listen%s", n,
                         n == 1 ? "" : "es", n == 1 ? "s" : "");
        print_field(f, "Net monitor", text, NULL);
}

int roam_app_show_run(const char *id, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *path = NULL;
        const RoamApp *a;
        int r;

        r = roam_bus_connect(&bus);
        if (r < 0)
                return r;
        /* GetApp first: it checks the ID and says NoSuchApp in roamd's terms. */
        r = get_app_path(bus, id, "show", &path);
        if (r < 0)
                return r;
        r = roam_model_load(bus, &m);
        if (r < 0)
                return r;
        a = roam_model_find_app(m, path);
        if (!a) /* gone between the two calls */
                return log_error_errno(ENOENT, "no app '%s' (roam apps lists them)", id);

        if (json) {
                r = roam_app_to_json(a, &o);
                if (r >= 0)
                        r = json_print(o, stdout);
        } else {
                r = print_app_block(m, a, stdout);
                if (r >= 0)
                        print_monitor(bus, id, stdout);
        }
        if (r == -ENOMEM)
                return log_oom();
        return r;
}

int roam_app_set_run(const char *id, char *const *settings)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = roam_bus_connect(&bus);
        if (r >= 0)
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        r = new_call(bus, &m, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE, "SetAppPolicy");
        if (r < 0)
                return r;
        /* All pairs in one call: roamd applies all of them or none. */
        r = sd_bus_message_append(m, "s", id);
        if (r >= 0)
                r = sd_bus_message_open_container(m, SD_BUS_TYPE_ARRAY, "{ss}");
        for (size_t i = 0; r >= 0 && settings[i]; i++) {
                const char *eq = strchr(settings[i], '=');
                _cleanup_free_ char *key = strndup(settings[i], (size_t)(eq - settings[i]));

                if (!key)
                        return log_oom();
                r = sd_bus_message_append(m, "{ss}", key, eq + 1);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return log_error_errno(r, "Failed to build the call to roamd: %m");

        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0)
                return roam_app_log_call_error(&error, r, id, "change", denied_change);
        return 0;
}

int roam_app_reset_run(const char *id)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = roam_bus_connect(&bus);
        if (r >= 0)
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "ResetAppPolicy", &error, NULL, "s", id);
        if (r < 0)
                return roam_app_log_call_error(&error, r, id, "reset", denied_change);
        return 0;
}

/* OnlineFor or Release on the app's object. */
static int call_on_app(const char *id, const char *member, const char *what, bool has_usec,
                       uint64_t usec)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *path = NULL;
        int r;

        r = roam_bus_connect(&bus);
        if (r >= 0)
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        r = get_app_path(bus, id, what, &path);
        if (r < 0)
                return r;
        if (has_usec)
                r = sd_bus_call_method(bus, ROAM_BUS_NAME, path, ROAM_APP_INTERFACE, member, &error,
                                       NULL, "t", usec);
        else
                r = sd_bus_call_method(bus, ROAM_BUS_NAME, path, ROAM_APP_INTERFACE, member, &error,
                                       NULL, NULL);
        if (r < 0)
                return roam_app_log_call_error(&error, r, id, what, denied_change);
        return 0;
}

int roam_app_online_for_run(const char *id, uint64_t usec)
{
        return call_on_app(id, "OnlineFor", "change", true, usec);
}

int roam_app_release_run(const char *id)
{
        return call_on_app(id, "Release", "change", false, 0);
}
