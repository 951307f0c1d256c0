/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-format.h"
#include "roam-screens.h"
#include "roam-tui-filter.h"
#include "roam-util.h"
#include "roam-verdict.h"

/* One link in full: its verdict per family, probe timing, addresses, routes, DNS, the captive
 * portal API's data, and the verdicts this client has seen (roamd keeps no history). Every line
 * is an item: the cursor walks the lines, so a screen reader reads them one by one. */

/* The label column; narrower on small terminals, where values need the room. */
#define LABEL_WIDTH        15
#define LABEL_WIDTH_NARROW 11
#define NARROW_COLUMNS     60

typedef struct LinkData {
        char *path; /* the link shown: kept here, the overview's selection may move on */
        int selected;
        int scroll;
        int n_items;
        bool section_to_top; /* Tab chose a heading: show its section, the heading on top */
        TuiFilter filter;    /* `/`: the history lines that contain the text */
} LinkData;

typedef struct Builder {
        Tui *t;
        int label_width;
        TuiDoc *doc;
        const TuiFilter *filter; /* the history's */
        int item;
        int r;
} Builder;

static void heading(Builder *b, const char *text)
{
        if (b->r < 0)
                return;
        b->r = tui_doc_line(b->doc, -1, 0);
        if (b->r >= 0)
                b->r = tui_doc_line(b->doc, b->item++, 0);
        if (b->r >= 0)
                b->r = tui_doc_span(b->doc, THEME_TITLE, 0, text);
}

static void field(Builder *b, const char *label, ThemeRole role, const char *value)
{
        char l[LABEL_WIDTH + 2];

        if (b->r < 0)
                return;
        /* A field's further lines (more addresses, servers) have no label at all. */
        if (*label)
                snprintf(l, sizeof(l), "%s:", label);
        else
                l[0] = 0;
        b->r = tui_doc_field(b->doc, b->item++, b->label_width, l, role, value);
}

static void fieldf(Builder *b, const char *label, ThemeRole role, const char *fmt, ...)
    _printf_(4, 5);
static void fieldf(Builder *b, const char *label, ThemeRole role, const char *fmt, ...)
{
        _cleanup_free_ char *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                b->r = -ENOMEM;
        va_end(ap);
        if (b->r >= 0)
                field(b, label, role, s);
}

static void family_verdict(Builder *b, const char *label, const char *verdict, const char *reason)
{
        fieldf(b, label, tui_verdict_role(verdict), "%s: %s", roam_verdict_word(verdict),
               roam_reason_long(reason));
}

static void servers(Builder *b, const char *label, const RoamServer *s, size_t n, const char *empty)
{
        if (n == 0) {
                field(b, label, THEME_NORMAL, empty);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (*s[i].address)
                        field(b, i == 0 ? label : "", THEME_NORMAL, s[i].address);
                else
                        fieldf(b, i == 0 ? label : "", THEME_NORMAL,
                               "IPv%d default route without a gateway", s[i].family);
        }
}

static void capport(Builder *b, const RoamLink *l)
{
        const RoamCapport *c = &l->capport;
        char buf[64];

        if (!*l->captive_portal_url && !c->has_captive && !c->error)
                return;
        heading(b, "Captive portal API (RFC 8908)");
        field(b, "API", THEME_NORMAL, *l->captive_portal_url ? l->captive_portal_url : "none");
        if (c->error)
                field(b, "Problem", THEME_ERROR, c->error);
        if (c->has_captive)
                field(b, "Captive", c->captive ? THEME_PORTAL : THEME_OK,
                      c->captive ? "yes: log in first" : "no: the session is open");
        /* Once the session is open the same page is where it is managed, not a login. */
        if (c->user_portal_url && c->has_captive && !c->captive)
                field(b, "Session page", THEME_NORMAL, c->user_portal_url);
        else if (c->user_portal_url)
                field(b, "Log in at", THEME_PORTAL, c->user_portal_url);
        if (c->venue_info_url)
                field(b, "Venue", THEME_NORMAL, c->venue_info_url);
        if (c->has_seconds_remaining) {
                uint64_t sec = c->seconds_remaining;

                if (sec >= 3600)
                        snprintf(buf, sizeof(buf), "%" PRIu64 " h %" PRIu64 " min", sec / 3600,
                                 sec % 3600 / 60);
                else
                        snprintf(buf, sizeof(buf), "%" PRIu64 " min %" PRIu64 " s", sec / 60,
                                 sec % 60);
                field(b, "Time left", THEME_NORMAL, buf);
        }
        if (c->has_bytes_remaining) {
                snprintf(buf, sizeof(buf), "%" PRIu64 " bytes", c->bytes_remaining);
                field(b, "Data left", THEME_NORMAL, buf);
        }
        if (c->has_can_extend_session)
                field(b, "Extendable", THEME_NORMAL, c->can_extend_session ? "yes" : "no");
}

static const char *const history_order[] = {"newest first"};

static void history(Builder *b, const RoamLink *l, const TuiFilter *filter)
{
        const RoamHistoryEntry *e;
        size_t total = 0, shown = 0;

        b->filter = filter;
        heading(b, "History (seen by this roam, newest first)");
        for (size_t i = 0; (e = roam_link_history_get(l, i)); i++)
                total++;
        for (size_t i = 0; (e = roam_link_history_get(l, i)); i++) {
                const char *fields[] = {roam_verdict_word(e->verdict), roam_reason_short(e->reason),
                                        NULL};

                shown += tui_filter_match(b->filter, fields);
        }
        if (b->r >= 0 &&
            tui_filter_line(b->t, b->filter, b->doc, shown, total, "entries", history_order) < 0)
                b->r = -ENOMEM;
        for (size_t i = 0; (e = roam_link_history_get(l, i)); i++) {
                char clock[16], took[32] = "no probe round";
                const char *fields[] = {roam_verdict_word(e->verdict), roam_reason_short(e->reason),
                                        NULL};

                if (b->r < 0)
                        return;
                if (!tui_filter_match(b->filter, fields))
                        continue;
                roam_format_clock(e->seen, clock, sizeof(clock));
                if (e->last_probe) {
                        char d[24];

                        roam_format_duration(e->probe_duration, d, sizeof(d));
                        snprintf(took, sizeof(took), "probe took %s", d);
                }
                b->r = tui_doc_line(b->doc, b->item++, 11);
                if (b->r >= 0)
                        b->r = tui_doc_spanf(b->doc, THEME_NORMAL, 10, "%s", clock);
                if (b->r >= 0)
                        b->r = tui_doc_span(b->doc, tui_verdict_role(e->verdict), 9,
                                            roam_verdict_word(e->verdict));
                if (b->r >= 0)
                        b->r = tui_doc_spanf(b->doc, THEME_NORMAL, 0, "%s; %s",
                                             roam_reason_short(e->reason), took);
                if (b->r >= 0 && e->count > 1) {
                        /* Rechecks that changed nothing: one line with a count. */
                        roam_format_clock(e->last_seen, clock, sizeof(clock));
                        b->r = tui_doc_spanf(b->doc, THEME_MUTED, 0, " (%s%u, last %s)",
                                             tui_utf8(b->t) ? "\u00d7" : "x", e->count, clock);
                }
        }
}

static int build(Tui *t, const RoamLink *l, const TuiFilter *filter, TuiDoc *doc, int *ret_items)
{
        _cleanup_free_ char *title = NULL;
        const char *url = roam_link_portal_url(l);
        Builder b = {
            .t = t,
            .doc = doc,
            .label_width = tui_columns(t) < NARROW_COLUMNS ? LABEL_WIDTH_NARROW : LABEL_WIDTH,
        };
        char age[32], clock[16], took[24];
        uint64_t next;

        if (asprintf(&title, "%s (%s): %s", *l->name ? l->name : l->path, l->bearer,
                     roam_verdict_word(l->connectivity)) < 0)
                return -ENOMEM;
        b.r = tui_doc_line(doc, b.item++, 0);
        if (b.r >= 0)
                b.r = tui_doc_span(doc, THEME_TITLE, 0, title);

        heading(&b, "Connectivity");
        family_verdict(&b, "Verdict", l->connectivity, l->connectivity_reason);
        family_verdict(&b, "IPv4", l->connectivity4, l->connectivity_reason4);
        family_verdict(&b, "IPv6", l->connectivity6, l->connectivity_reason6);
        if (url)
                field(&b, "Log in at", THEME_PORTAL, url);
        {
                char mtu[80];
                roam_link_working_mtu_text(l, mtu, sizeof(mtu));
                if (*mtu)
                        field(&b, "Path MTU", THEME_NORMAL, mtu);
        }
        if (l->last_probe) {
                roam_format_age(l->last_probe, roam_now(), age, sizeof(age), &next);
                tui_refresh_in(t, next);
                roam_format_clock(l->last_probe, clock, sizeof(clock));
                roam_format_duration(l->probe_duration, took, sizeof(took));
                fieldf(&b, "Last probe", THEME_NORMAL, "%s (%s), took %s", clock, age, took);
        } else
                field(&b, "Last probe", THEME_NORMAL, "none yet");

        heading(&b, "Link");
        fieldf(&b, "State", THEME_NORMAL, "%s, carrier %s, interface %s (%s)", l->state,
               l->carrier ? "yes" : "no", l->admin_up ? "up" : "down", l->oper_state);
        fieldf(&b, "Device", THEME_NORMAL, "%s%s%s%s%sMTU %" PRIu32, l->kind, *l->kind ? ", " : "",
               *l->driver ? "driver " : "", l->driver, *l->driver ? ", " : "", l->mtu);
        if (*l->hwaddr)
                field(&b, "Hardware", THEME_NORMAL, l->hwaddr);
        fieldf(&b, "Bearer", THEME_NORMAL, "%s (from %s)%s", l->bearer,
               streq(l->bearer_source, "config") ? "the configuration" : "sysfs",
               roam_link_is_virtual(l) ? "; virtual links never count" : "");
        {
                char wifi[160];
                roam_link_wifi_text(l, wifi, sizeof(wifi));
                if (*wifi)
                        field(&b, "WiFi", THEME_NORMAL, wifi);
        }
        if (*l->network_id) {
                _cleanup_free_ char *where = NULL, *network = NULL;

                /* The firewall's location and the network's identity (screen-firewall.c). */
                if (screen_location_text(l, &where) >= 0 && screen_network_text(l, &network) >= 0) {
                        field(&b, "Location", THEME_NORMAL, where);
                        field(&b, "Network", THEME_NORMAL, network);
                }
        }

        heading(&b, "Addresses and routes");
        if (l->n_addresses == 0)
                field(&b, "Addresses", THEME_NORMAL, "none");
        for (size_t i = 0; i < l->n_addresses; i++) {
                const RoamAddress *a = &l->addresses[i];

                fieldf(&b, i == 0 ? "Addresses" : "", THEME_NORMAL, "%s/%" PRIu32 " (%s)",
                       a->address, a->prefix, streq(a->scope, "link") ? "link-local" : a->scope);
        }
        servers(&b, "Gateways", l->gateways, l->n_gateways, "none");

        heading(&b, "DNS");
        servers(&b, "Servers", l->dns, l->n_dns, "none");
        field(&b, "Source", THEME_NORMAL, l->dns_source);
        if (l->domains[0]) {
                STRV_FOREACH (d, l->domains)
                        field(&b, d == l->domains ? "Domains" : "", THEME_NORMAL, *d);
        }
        STRV_FOREACH (s, l->ntp_servers)
                field(&b, s == l->ntp_servers ? "NTP (DHCP)" : "", THEME_NORMAL, *s);

        capport(&b, l);
        history(&b, l, filter);

        *ret_items = b.item;
        return b.r;
}

static int link_enter(Tui *t, Screen *s)
{
        LinkData *d = s->data;
        const char *path = tui_selected_link(t);

        if (!path || !roam_model_find_link(tui_model(t), path))
                return -ENOENT;
        if (free_and_strdup(&d->path, path) < 0)
                return -ENOMEM;
        d->selected = 0;
        d->scroll = 0;
        return 0;
}

static void link_leave(Tui *t, Screen *s)
{
        LinkData *d = s->data;

        free(d->path);
        d->path = NULL;
}

static void link_draw(Tui *t, Screen *s, int top, int height)
{
        LinkData *d = s->data;
        const RoamLink *l = d->path ? roam_model_find_link(tui_model(t), d->path) : NULL;
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;

        if (!l || tui_doc_new(&doc) < 0)
                return;
        if (build(t, l, &d->filter, doc, &d->n_items) < 0)
                return;
        d->selected = MAX(0, MIN(d->selected, d->n_items - 1));
        if (d->section_to_top) {
                /* Scrolled as far as it goes, the selection pulls it back to the heading. */
                d->scroll = INT_MAX / 2;
                d->section_to_top = false;
        }
        tui_doc_draw(t, doc, top, height, d->selected, &d->scroll);
}

/* Tab: the next section's heading; built afresh, since the sections depend on the model. */
static int jump_section(Tui *t, LinkData *d, int direction)
{
        const RoamLink *l = roam_model_find_link(tui_model(t), d->path);
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;
        int n, next;

        if (!l || tui_doc_new(&doc) < 0 || build(t, l, &d->filter, doc, &n) < 0)
                return REACTION_NONE;
        next = tui_doc_next_heading_item(doc, d->selected, direction);
        if (next < 0) /* wrap around */
                next = tui_doc_next_heading_item(doc, direction > 0 ? -1 : n, direction);
        if (next >= 0) {
                d->selected = next;
                d->section_to_top = true;
        }
        return REACTION_REDRAW;
}

static int link_key(Tui *t, Screen *s, int key)
{
        LinkData *d = s->data;
        int page = MAX(1, tui_lines(t) - 5);
        int r;

        if (key != 's' || d->filter.editing) {
                r = tui_filter_key(t, &d->filter, key, 1, history_order);
                if (r != REACTION_UNHANDLED)
                        return r;
        }
        switch (key) {
        case TUI_KEY(KEY_UP):
        case 'k':
                d->selected--;
                break;
        case TUI_KEY(KEY_DOWN):
        case 'j':
                d->selected++;
                break;
        case TUI_KEY(KEY_PPAGE):
                d->selected -= page;
                break;
        case TUI_KEY(KEY_NPAGE):
        case ' ':
                d->selected += page;
                break;
        case TUI_KEY(KEY_HOME):
        case 'g':
                d->selected = 0;
                break;
        case TUI_KEY(KEY_END):
        case 'G':
                d->selected = d->n_items - 1;
                break;
        case '\t':
                return jump_section(t, d, 1);
        case TUI_KEY(KEY_BTAB):
                return jump_section(t, d, -1);
        case TUI_KEY(KEY_LEFT):
        case 'h':
                return REACTION_BACK;
        case 'r':
                return screen_reprobe(t, d->path);
        case 'c':
                return screen_copy_url(t, d->path);
        case 'w': {
                const RoamLink *l = d->path ? roam_model_find_link(tui_model(t), d->path) : NULL;

                /* a Wi-Fi link's networks; elsewhere w is the wake queue's */
                if (!l || !streq_ptr(l->bearer, "wifi"))
                        return REACTION_UNHANDLED;
                tui_select_link(t, d->path);
                (void)tui_show(t, &wifi_screen_vtable);
                return REACTION_REDRAW;
        }
        default:
                return REACTION_UNHANDLED;
        }
        d->selected = MAX(0, MIN(d->selected, d->n_items - 1));
        return REACTION_REDRAW;
}

static bool link_key_active(Tui *t, Screen *s, const KeyHelp *k)
{
        LinkData *d = s->data;
        const RoamLink *l = d->path ? roam_model_find_link(tui_model(t), d->path) : NULL;

        if (streq(k->keys, "c"))
                return l && roam_link_portal_url(l);
        if (streq(k->keys, "w"))
                return l && streq_ptr(l->bearer, "wifi");
        return true;
}

static int link_click(Tui *t, Screen *s, int item)
{
        LinkData *d = s->data;

        d->selected = MAX(0, MIN(item, d->n_items - 1));
        return REACTION_REDRAW;
}

static int link_model_changed(Tui *t, Screen *s, const RoamLiveEvent *ev)
{
        LinkData *d = s->data;

        if (ev->type == ROAM_LIVE_EVENT_LINK_REMOVED && streq_ptr(ev->link->path, d->path)) {
                tui_message(t, THEME_WARNING, "%s vanished.", ev->link->name);
                return REACTION_BACK;
        }
        return REACTION_REDRAW;
}

static int link_roamd_gone(Tui *t, Screen *s)
{
        return REACTION_BACK;
}

static const KeyHelp link_keys[] = {
    {"r", "re-probe", "Ask roamd to probe this link now"},
    {"Esc", "back", "Back to the overview (also Left or h)"},
    {"c", "copy URL", "Copy the login page to the clipboard (OSC 52)"},
    {"w", "Wi-Fi", "A Wi-Fi link's networks: join, forget, autoconnect (the Wi-Fi screen)"},
    {"Tab", "next section", "Jump to the next section (Shift-Tab: previous)"},
    {"Up/Down", NULL, "Move line by line (also k and j)"},
    {"PgUp/PgDn", NULL, "Move a page (also Space)"},
    {"Home/End", NULL, "First or last line (also g and G)"},
    {"/", NULL,
     "Show only the history lines whose verdict or reason contains what you type (Enter keeps "
     "it, Esc clears it, Ctrl-U clears the text typed)"},
    {},
};

static const char *link_available(Tui *t, Screen *s, char *why, size_t size)
{
        const char *path = tui_selected_link(t);

        if (path && roam_model_find_link(tui_model(t), path))
                return NULL;
        snprintf(why, size, "roamd has no links");
        return "none";
}

const ScreenVTable link_screen_vtable = {
    .name = "link",
    .title = "Link",
    .number = 2,
    .data_size = sizeof(LinkData),
    .enter = link_enter,
    .leave = link_leave,
    .draw = link_draw,
    .key = link_key,
    .model_changed = link_model_changed,
    .roamd_gone = link_roamd_gone,
    .keys = link_keys,
    .typing_keys = tui_filter_typing_keys,
    .key_active = link_key_active,
    .click = link_click,
    .about = "One link in full: its verdict for IPv4 and IPv6 and why, when it was last "
             "probed and how long the probes took, addresses, gateways, DNS servers and "
             "where they came from, what the network's captive portal API says, and every "
             "verdict this roam has seen since it started.",
    .available = link_available,
};
