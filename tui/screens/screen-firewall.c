/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-bus.h"
#include "roam-firewall.h"
#include "roam-format.h"
#include "roam-log.h"
#include "roam-screens.h"
#include "roam-tui-filter.h"
#include "roam-util.h"
#include "roam-words.h"

/* The personal firewall (key 8, docs/firewall.md): each link's location and why, then the
 * rules in force on the selected link with their counters, read with GetFirewallRules() when
 * the screen opens, when a location or the firewall's files change, and on r (the counters
 * move without a signal). l asks where the selected link's network is.
 *
 * The same question comes by itself on first join: a link on a network nobody placed yet
 * (LocationSource "default") gets a dialog over whatever screen is open, "Is this a home, work
 * or public network?", answered with h, w, p (or Enter on a choice); u or Esc keeps it
 * untrusted for this session. The answer is one SetLocation call; its refusal (polkit) goes to
 * the status line in words. */

#define DIALOG_WIDTH 56
#define WIDE_COLUMNS 70
#define COL_DIR      5
#define COL_ACTION   8
#define COL_PACKETS  10
#define COL_BYTES    10

typedef struct FirewallData {
        Tui *tui;
        bool open; /* the screen is shown: rules are followed */
        /* The items: the links, then the rules of the link whose rules show (link_selected),
         * so the cursor (and a screen reader) walks the rules too, on any terminal size. */
        int selected, link_selected, scroll;

        RoamFwRule *rules;
        size_t n_rules;
        bool loaded;
        char *load_error; /* why the rules could not be read, NULL when they could */
        sd_bus_slot *get;

        /* The question: explicitly for choose_path (l), or first join for a link that needs
         * one and whose network is not in dismissed. */
        char *choose_path;
        char **dismissed;    /* network IDs kept untrusted for this session (or answered) */
        char *asked_network; /* the network the dialog shows, to reset dialog_selected */
        int dialog_selected, dialog_scroll;

        RoamFwCall *calls; /* SetLocation in flight */
        TuiFilter filter;  /* `/`: the rules whose words contain the text */
} FirewallData;

static const char *const choice_keys = "hwpu";
/* the rules keep their evaluation order: the filter's only order */
static const char *const rule_order[] = {"evaluation order"};

static void rules_clear(FirewallData *d)
{
        roam_fw_rules_free(d->rules, d->n_rules);
        d->rules = NULL;
        d->n_rules = 0;
}

static int on_rules(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        FirewallData *d = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        RoamFwRule *rules = NULL;
        size_t n = 0;
        char buf[256];
        int r;

        d->get = sd_bus_slot_unref(d->get);
        free(d->load_error);
        d->load_error = NULL;
        rules_clear(d);
        if (e) {
                roam_fw_call_error_text(e, "read the firewall rules", NULL, buf, sizeof(buf));
                d->load_error = strdup(buf);
        } else {
                r = roam_fw_rules_read(m, &rules, &n);
                if (r < 0)
                        d->load_error = strdup("Cannot read roamd's answer: the rules are not "
                                               "shown");
                else {
                        d->rules = rules;
                        d->n_rules = n;
                }
        }
        d->loaded = true;
        tui_request_redraw(d->tui);
        return 0;
}

static int load_rules(FirewallData *d)
{
        sd_bus *bus = roam_live_get_bus(tui_live(d->tui));

        if (!bus)
                return -ENOTCONN;
        d->get = sd_bus_slot_unref(d->get);
        return sd_bus_call_method_async(bus, &d->get, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                        ROAM_MANAGER_INTERFACE, "GetFirewallRules", on_rules, d,
                                        NULL);
}

static bool firewall_screen_available(Tui *t)
{
        const RoamModel *m = tui_model(t);

        /* Only a roamd with a firewall sends locations. */
        for (size_t i = 0; i < m->n_links; i++)
                if (*m->links[i]->location || *m->links[i]->network_id)
                        return true;
        return *m->firewall_error;
}

/* The links are listed by index, as everywhere; the rules shown are those of one of them. */
static const RoamLink *selected_link(Tui *t, FirewallData *d)
{
        const RoamModel *m = tui_model(t);

        if (m->n_links == 0)
                return NULL;
        d->link_selected = MAX(0, MIN(d->link_selected, (int)m->n_links - 1));
        return m->links[d->link_selected];
}

static bool rule_on_link(const RoamFwRule *f, const RoamLink *l)
{
        return streq(f->link, l->name) || !*f->link;
}

static bool rule_shown(const FirewallData *d, const RoamFwRule *f, const RoamLink *l)
{
        const char *fields[] = {f->direction, f->action, f->match, f->app, f->source, f->id, NULL};

        return rule_on_link(f, l) && tui_filter_match(&d->filter, fields);
}

static int n_items(Tui *t, FirewallData *d)
{
        const RoamLink *l = selected_link(t, d);
        int n = (int)tui_model(t)->n_links;

        for (size_t i = 0; l && d->loaded && i < d->n_rules; i++)
                n += rule_shown(d, &d->rules[i], l);
        return n;
}

static bool first_join_allowed(const ScreenVTable *v)
{
        return v == &overview_screen_vtable || v == &link_screen_vtable ||
               v == &apps_screen_vtable || v == &firewall_screen_vtable;
}

static const RoamLink *dialog_link(Tui *t, FirewallData *d, bool *ret_first_join)
{
        const RoamModel *m = tui_model(t);

        if (roam_live_get_state(tui_live(t)) != ROAM_LIVE_READY)
                return NULL;
        if (d->choose_path) {
                const RoamLink *l = roam_model_find_link(m, d->choose_path);

                if (l && *l->network_id) {
                        *ret_first_join = false;
                        return l;
                }
                free(d->choose_path);
                d->choose_path = NULL;
        }
        /* Not over a screen where text is typed (a portal login, a PIN, the help): a key meant
         * for it must not answer the question. It comes when the user is back. */
        if (!first_join_allowed(tui_current_screen(t)) || tui_current_typing(t))
                return NULL;
        /* The question on screen stays the one answered: another link that becomes unknown
         * meanwhile waits its turn, so a key never answers for a network not shown. */
        if (d->asked_network)
                for (size_t i = 0; i < m->n_links; i++)
                        if (streq(m->links[i]->network_id, d->asked_network) &&
                            roam_link_needs_location(m->links[i]) &&
                            !strv_contains(d->dismissed, m->links[i]->network_id)) {
                                *ret_first_join = true;
                                return m->links[i];
                        }
        for (size_t i = 0; i < m->n_links; i++)
                if (roam_link_needs_location(m->links[i]) &&
                    !strv_contains(d->dismissed, m->links[i]->network_id)) {
                        *ret_first_join = true;
                        return m->links[i];
                }
        return NULL;
}

/* The location choices: the four words, then those networks.d defines. */
static size_t choices(Tui *t, const char **ret, size_t max)
{
        const RoamModel *m = tui_model(t);
        static const char *const words[] = {"home", "work", "public", "untrusted"};
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(words) && n < max; i++)
                ret[n++] = words[i];
        STRV_FOREACH (l, m->locations)
                if (n < max && !strv_contains((char **)words, *l) &&
                    roam_location_from_string(*l) < 0)
                        ret[n++] = *l;
        return n;
}

static int build_dialog(Tui *t, FirewallData *d, const RoamLink *l, bool first_join, TuiDoc *doc)
{
        /* Narrow: the choices alone, so all of them fit on 40x12. */
        bool wide = tui_columns(t) >= DIALOG_WIDTH + 2;
        const char *opts[16];
        size_t n = choices(t, opts, ELEMENTSOF(opts));
        char facts[512], ssh[64];
        int r;

        r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_TITLE, 0,
                                  first_join ? "%s: a network roam has not seen"
                                             : "Where is %s's network?",
                                  l->name);
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, 0, ROAM_LOCATION_QUESTION);
        if (r >= 0 && wide)
                r = tui_doc_line(doc, -1, 0);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const char *key = i < 4 ? (char[]){choice_keys[i], 0} : " ";
                bool not_now = i == 3 && first_join;

                r = tui_doc_line(doc, (int)i, 4);
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_KEY, 0, "%s ", key);
                if (r >= 0 && not_now)
                        r = tui_doc_span(doc, THEME_NORMAL, 0,
                                         wide ? "not now: untrusted for this session"
                                              : "not now (untrusted)");
                else if (r >= 0 && wide && streq(opts[i], "untrusted") &&
                         roam_fw_ssh_note(tui_model(t), opts[i], ssh, sizeof(ssh)))
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "%s: %s (%s)", opts[i],
                                          roam_location_words(opts[i]), ssh);
                else if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "%s%s%s", opts[i], wide ? ": " : "",
                                          wide ? roam_location_words(opts[i]) : "");
        }
        if (r >= 0 && roam_fw_identity_text(l, facts, sizeof(facts)) > 0) {
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(doc, -1, 2);
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_MUTED, 0, "Seen: %s", facts);
        }
        if (r >= 0 && wide) {
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(doc, -1, 0);
                /* "the strictest rules" may still let SSH in ([Firewall] SSH=): said so */
                if (r >= 0 && first_join &&
                    roam_fw_ssh_note(tui_model(t), "untrusted", ssh, sizeof(ssh)))
                        r = tui_doc_spanf(doc, THEME_MUTED, 0,
                                          "Until you answer: untrusted, the strictest rules "
                                          "(%s).",
                                          ssh);
                else if (r >= 0)
                        r = tui_doc_span(doc, THEME_MUTED, 0,
                                         first_join ? "Until you answer: untrusted, the "
                                                      "strictest rules."
                                                    : "Enter chooses, Esc cancels.");
        }
        return r;
}

/* Draws the dialog over rows [top, top + height): a box when there is room, else the whole
 * body, so a screen reader reads it and nothing else. */
static void draw_dialog(Tui *t, FirewallData *d, const RoamLink *l, bool first_join, int top,
                        int height)
{
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;

        if (!streq_ptr(d->asked_network, l->network_id)) {
                (void)free_and_strdup(&d->asked_network, l->network_id);
                /* A question that comes by itself starts on "not now": an Enter meant for the
                 * screen below changes nothing. */
                d->dialog_selected = first_join ? 3 : 0;
                d->dialog_scroll = 0;
                /* "wifi0: this network is now home" said before is not about this question */
                if (first_join)
                        tui_message_clear(t);
        }
        if (tui_doc_new(&doc) < 0 || build_dialog(t, d, l, first_join, doc) < 0)
                return;
        d->dialog_selected = MAX(0, MIN(d->dialog_selected, (int)tui_doc_items(doc) - 1));
        tui_doc_draw_dialog(t, doc, top, height, DIALOG_WIDTH, d->dialog_selected,
                            &d->dialog_scroll);
}

/* The first-join question comes by itself: for a moment after it shows, keys typed for the
 * screen below are not its answer. A question asked with l needs no such wait. */
static bool settling(Tui *t, const RoamLink *l, bool first_join)
{
        char id[sizeof("firewall:") + 256];

        if (!first_join)
                return false;
        snprintf(id, sizeof(id), "firewall:%s", l->network_id);
        return tui_question_settling(t, id);
}

static void firewall_prompt_draw(Tui *t, Screen *s, int top, int height)
{
        FirewallData *d = s->data;
        const RoamLink *l;
        bool first_join = false;

        d->tui = t;
        l = dialog_link(t, d, &first_join);
        if (!l)
                return;
        (void)settling(t, l, first_join);
        draw_dialog(t, d, l, first_join, top, height);
}

static void on_set_location(const char *link, const char *location, bool first_join,
                            const sd_bus_error *e, void *userdata)
{
        FirewallData *d = userdata;
        char what[96], buf[512];

        if (!e)
                tui_message(d->tui, THEME_OK, "%s: this network is now %s; its rules are in force.",
                            link, location);
        else {
                snprintf(what, sizeof(what), "make this network %s", location);
                roam_fw_call_error_text(e, what, link, buf, sizeof(buf));
                tui_message(d->tui, THEME_ERROR, "%s%s", buf,
                            first_join ? "; it stays untrusted for now" : "");
        }
        if (d->open)
                (void)load_rules(d);
        tui_request_redraw(d->tui);
}

static int set_location(Tui *t, FirewallData *d, const RoamLink *l, const char *location,
                        bool first_join)
{
        sd_bus *bus = roam_live_get_bus(tui_live(t));
        int r;

        if (!bus)
                return -ENOTCONN;
        r = roam_fw_set_location_async(bus, &d->calls, l->name, location, first_join,
                                       on_set_location, d);
        if (r >= 0)
                tui_message(t, THEME_NORMAL, "Asking roamd to make %s's network %s...", l->name,
                            location);
        return r;
}

/* The dialog is done with: the first-join question is not asked again for this network in
 * this session. */
static void dialog_close(FirewallData *d, const RoamLink *l)
{
        if (!strv_contains(d->dismissed, l->network_id) &&
            strv_extend(&d->dismissed, l->network_id) < 0)
                log_oom();
        free(d->choose_path);
        d->choose_path = NULL;
        /* The next dialog starts afresh. */
        free(d->asked_network);
        d->asked_network = NULL;
}

static int firewall_prompt_key(Tui *t, Screen *s, int key)
{
        FirewallData *d = s->data;
        const char *opts[16], *k;
        size_t n = choices(t, opts, ELEMENTSOF(opts));
        const RoamLink *l;
        bool first_join = false, handled;
        int i, r;

        d->tui = t;
        l = dialog_link(t, d, &first_join);
        if (!l)
                return REACTION_UNHANDLED;
        /* Quitting, resizing and redrawing still work; everything else answers the question. */
        if (key == 'q' || key == 'Q' || key == 12 || key == TUI_KEY(KEY_RESIZE) ||
            key == TUI_KEY(KEY_MOUSE))
                return REACTION_UNHANDLED;
        if (settling(t, l, first_join)) {
                tui_message(t, THEME_WARNING,
                            "A question just came: keys wait a moment, so none typed before "
                            "it answers it.");
                return REACTION_REDRAW;
        }

        i = tui_list_key(key, d->dialog_selected, (int)n, &handled);
        if (handled) {
                if (i >= 0)
                        d->dialog_selected = i;
                return REACTION_REDRAW;
        }
        /* In the first-join question, u (and Enter or a click on it) is "not now". */
        if (key == TUI_KEY_ESCAPE || (first_join && key == 'u') ||
            (first_join && d->dialog_selected == 3 &&
             (key == '\r' || key == '\n' || key == TUI_KEY(KEY_ENTER)))) {
                _cleanup_free_ char *name = strdup(l->name);

                dialog_close(d, l);
                if (first_join)
                        tui_message(t, THEME_WARNING,
                                    "%s stays untrusted for this session; press 8, then l, to "
                                    "choose later.",
                                    name ? name : "The link");
                return REACTION_REDRAW;
        }
        if (key == '\r' || key == '\n' || key == TUI_KEY(KEY_ENTER))
                i = d->dialog_selected;
        else if (!(key & TUI_KEY_CODE) && key > 0 && key < 0x80 && (k = strchr(choice_keys, key)))
                i = (int)(k - choice_keys);
        else {
                tui_message(t, THEME_WARNING, "Answer with h, w or p%s.",
                            first_join ? "; u or Esc: not now" : ", u; Esc cancels");
                return REACTION_REDRAW;
        }
        if (i < 0 || (size_t)i >= n)
                return REACTION_REDRAW;
        r = set_location(t, d, l, opts[i], first_join);
        dialog_close(d, l);
        if (r < 0)
                tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
        return REACTION_REDRAW;
}

static int firewall_prompt_click(Tui *t, Screen *s, int item)
{
        FirewallData *d = s->data;
        const RoamLink *l;
        bool first_join = false;

        /* A click while it settles is typed ahead too: it chooses nothing. */
        l = dialog_link(t, d, &first_join);
        if (l && !settling(t, l, first_join))
                d->dialog_selected = item;
        return firewall_prompt_key(t, s, '\r');
}

static const KeyHelp *firewall_prompt_keys(Tui *t, Screen *s)
{
        static const KeyHelp first_join_keys[] = {
            {"h", "home", NULL},
            {"w", "work", NULL},
            {"p", "public", NULL},
            {"u", "not now", NULL},
            {},
        };
        static const KeyHelp choose_keys[] = {
            {"h", "home", NULL},      {"w", "work", NULL},     {"p", "public", NULL},
            {"u", "untrusted", NULL}, {"Esc", "cancel", NULL}, {},
        };
        /* While it settles, no key answers it: none is offered. */
        static const KeyHelp settling_keys[] = {{}};
        FirewallData *d = s->data;
        const RoamLink *l;
        bool first_join = false;

        l = dialog_link(t, d, &first_join);
        if (!l)
                return NULL;
        if (settling(t, l, first_join))
                return settling_keys;
        return first_join ? first_join_keys : choose_keys;
}

static void firewall_done(Tui *t, Screen *s)
{
        FirewallData *d = s->data;

        if (!d)
                return;
        d->get = sd_bus_slot_unref(d->get);
        roam_fw_calls_free(&d->calls);
        rules_clear(d);
        free(d->load_error);
        free(d->choose_path);
        free(d->asked_network);
        strv_free(d->dismissed);
        *d = (FirewallData){};
}

int screen_location_text(const RoamLink *l, char **ret)
{
        char where[256];

        roam_fw_location_text(l, where, sizeof(where));
        if (asprintf(ret, "%s%s%s%s", where, *l->location_reason ? " (" : "", l->location_reason,
                     *l->location_reason ? ")" : "") < 0)
                return -ENOMEM;
        return 0;
}

int screen_network_text(const RoamLink *l, char **ret)
{
        char facts[512];

        if (roam_fw_identity_text(l, facts, sizeof(facts)) > 0) {
                if (asprintf(ret, "%s (%s)", l->network_id, facts) < 0)
                        return -ENOMEM;
        } else if (!(*ret = strdup(l->network_id)))
                return -ENOMEM;
        return 0;
}

static ThemeRole location_role(const RoamLink *l)
{
        if (!*l->network_id)
                return THEME_MUTED;
        if (roam_link_needs_location(l) || roam_fw_location_pending(l))
                return THEME_WARNING;
        return THEME_NORMAL;
}

static ThemeRole action_role(const char *action)
{
        switch (roam_fw_action_from_string(action)) {
        case ROAM_FW_ACTION_ACCEPT:
                return THEME_OK;
        case ROAM_FW_ACTION_DROP:
        case ROAM_FW_ACTION_REJECT:
                return THEME_ERROR;
        case _ROAM_FW_ACTION_MAX:
        case _ROAM_FW_ACTION_INVALID:
                break;
        }
        return THEME_NORMAL;
}

static int add_links(Tui *t, FirewallData *d, TuiDoc *doc)
{
        const RoamModel *m = tui_model(t);
        char where[256];
        int r = 0;

        for (size_t i = 0; r >= 0 && i < m->n_links; i++) {
                const RoamLink *l = m->links[i];

                roam_fw_location_text(l, where, sizeof(where));
                r = tui_doc_line(doc, (int)i, 4);
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "%s (%s): ", l->name, l->bearer);
                if (r >= 0)
                        r = tui_doc_span(doc, location_role(l), 0, where);
                if (r >= 0 && *l->location_reason) {
                        r = tui_doc_line(doc, (int)i, 4);
                        if (r >= 0)
                                r = tui_doc_spanf(doc, THEME_MUTED, 0, "  %s", l->location_reason);
                }
        }
        return r;
}

static int add_rules(Tui *t, FirewallData *d, const RoamLink *l, TuiDoc *doc)
{
        bool wide = tui_columns(t) >= WIDE_COLUMNS;
        int match_width = tui_columns(t) - 2 - COL_DIR - COL_ACTION - COL_PACKETS - COL_BYTES;
        char bytes[32], origin[512];
        size_t shown = 0, on_link = 0, matching = 0;
        int r;

        r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_TITLE, 0, "Rules in force on %s%s%s%s", l->name,
                                  *l->location ? " (" : "", l->location, *l->location ? ")" : "");
        if (r < 0)
                return r;
        if (!d->loaded || d->load_error) {
                r = tui_doc_line(doc, -1, 2);
                if (r >= 0)
                        r = tui_doc_span(doc, d->load_error ? THEME_ERROR : THEME_NORMAL, 0,
                                         d->load_error ?: "Reading the rules...");
                return r;
        }
        for (size_t i = 0; i < d->n_rules; i++) {
                on_link += rule_on_link(&d->rules[i], l);
                matching += rule_shown(d, &d->rules[i], l);
        }
        r = tui_filter_line(t, &d->filter, doc, matching, on_link, "rules", rule_order);
        if (r < 0)
                return r;
        if (wide) {
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_MUTED, COL_DIR, "Dir");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_MUTED, COL_ACTION, "Action");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_MUTED, match_width, "Match");
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_MUTED, COL_PACKETS, "%*s", COL_PACKETS,
                                          "Packets");
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_MUTED, COL_BYTES, "%*s", COL_BYTES, "Bytes");
        }
        for (size_t i = 0; r >= 0 && i < d->n_rules; i++) {
                const RoamFwRule *f = &d->rules[i];
                int item = (int)(tui_model(t)->n_links + shown);

                if (!rule_shown(d, f, l))
                        continue;
                shown++;
                roam_format_bytes(f->bytes, bytes, sizeof(bytes));
                roam_fw_rule_origin(f, origin, sizeof(origin));
                if (wide) {
                        r = tui_doc_line(doc, item, COL_DIR + COL_ACTION);
                        if (r >= 0)
                                r = tui_doc_span(doc, THEME_NORMAL, COL_DIR, f->direction);
                        if (r >= 0)
                                r = tui_doc_span(doc, action_role(f->action), COL_ACTION,
                                                 f->action);
                        if (r >= 0)
                                r = tui_doc_span(doc, THEME_NORMAL, match_width, f->match);
                        if (r >= 0)
                                r = tui_doc_spanf(doc, THEME_NORMAL, COL_PACKETS, "%*" PRIu64,
                                                  COL_PACKETS, f->packets);
                        if (r >= 0)
                                r = tui_doc_spanf(doc, THEME_NORMAL, COL_BYTES, "%*s", COL_BYTES,
                                                  bytes);
                        if (r >= 0)
                                r = tui_doc_line(doc, item, COL_DIR + COL_ACTION);
                        if (r >= 0)
                                r = tui_doc_spanf(doc, THEME_MUTED, 0, "%*s%s",
                                                  COL_DIR + COL_ACTION, "", origin);
                } else {
                        r = tui_doc_line(doc, item, 4);
                        if (r >= 0)
                                r = tui_doc_span(doc, action_role(f->action), 0, f->action);
                        if (r >= 0)
                                r = tui_doc_spanf(doc, THEME_NORMAL, 0, " %s: %s", f->direction,
                                                  f->match);
                        if (r >= 0)
                                r = tui_doc_line(doc, item, 4);
                        if (r >= 0)
                                r = tui_doc_spanf(doc, THEME_MUTED, 0,
                                                  "  %" PRIu64 " packets, %s; %s", f->packets,
                                                  bytes, origin);
                }
        }
        if (r >= 0 && shown == 0) {
                r = tui_doc_line(doc, -1, 2);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_NORMAL, 0,
                                         on_link > 0      ? "No rule matches the filter."
                                         : *l->network_id ? "No rules on this link."
                                                          : "No rules: the link has no network.");
        }
        return r;
}

static void firewall_draw(Tui *t, Screen *s, int top, int height)
{
        FirewallData *d = s->data;
        const RoamModel *m = tui_model(t);
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;
        const RoamLink *l;
        int r;

        d->tui = t;
        if (tui_doc_new(&doc) < 0)
                return;
        r = tui_doc_line(doc, -1, 0);
        if (r >= 0 && *m->firewall_error)
                r = tui_doc_spanf(doc, THEME_ERROR, 0, "Firewall files refused: %s",
                                  m->firewall_error);
        else if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, 0,
                                 "Where each link's network is, and the rules that follow it.");
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0 && m->n_links == 0) {
                r = tui_doc_line(doc, -1, 2);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_NORMAL, 0, "No links.");
        }
        if (r >= 0)
                r = add_links(t, d, doc);
        l = selected_link(t, d);
        if (r >= 0 && l)
                r = add_rules(t, d, l, doc);
        if (r < 0)
                return;
        d->selected = MAX(0, MIN(d->selected, n_items(t, d) - 1));
        tui_doc_draw(t, doc, top, height, l ? d->selected : -1, &d->scroll);
}

static int firewall_enter(Tui *t, Screen *s)
{
        FirewallData *d = s->data;
        const RoamModel *m = tui_model(t);
        const char *path = tui_selected_link(t);

        d->tui = t;
        d->open = true;
        d->loaded = false;
        d->scroll = 0;
        /* Start on the link the overview had selected. */
        for (size_t i = 0; path && i < m->n_links; i++)
                if (streq(m->links[i]->path, path))
                        d->selected = d->link_selected = (int)i;
        (void)load_rules(d);
        return 0;
}

static void firewall_leave(Tui *t, Screen *s)
{
        FirewallData *d = s->data;

        d->open = false;
        d->get = sd_bus_slot_unref(d->get);
        free(d->choose_path);
        d->choose_path = NULL;
}

static int firewall_key(Tui *t, Screen *s, int key)
{
        FirewallData *d = s->data;
        const RoamModel *m = tui_model(t);
        const RoamLink *l;
        bool handled;
        int i;

        d->tui = t;
        if (key != 's' || d->filter.editing) {
                i = tui_filter_key(t, &d->filter, key, 1, rule_order);
                if (i != REACTION_UNHANDLED) {
                        /* the cursor stays on the link: rules come and go under it */
                        d->selected = d->link_selected;
                        return i;
                }
        }
        i = tui_list_key(key, d->selected, n_items(t, d), &handled);
        if (handled) {
                if (i >= 0)
                        d->selected = i;
                /* On a link: its rules show; on a rule: the same link's. */
                if (i >= 0 && (size_t)i < m->n_links) {
                        d->link_selected = i;
                        tui_select_link(t, m->links[i]->path);
                }
                return REACTION_REDRAW;
        }
        switch (key) {
        case 'l':
        case '\r':
        case '\n':
        case TUI_KEY(KEY_ENTER):
                l = selected_link(t, d);
                if (!l)
                        return REACTION_NONE;
                if (!*l->network_id) {
                        tui_message(t, THEME_WARNING,
                                    "%s is on no network now: there is nothing to place.", l->name);
                        return REACTION_REDRAW;
                }
                if (free_and_strdup(&d->choose_path, l->path) < 0)
                        return -ENOMEM;
                return REACTION_REDRAW;
        case 'r':
                if (load_rules(d) < 0)
                        tui_message(t, THEME_ERROR, "Cannot ask roamd: no bus.");
                else
                        tui_message(t, THEME_NORMAL, "Reading the rules and their counters again.");
                return REACTION_REDRAW;
        }
        return REACTION_UNHANDLED;
}

/* Counters change with every packet and no signal says so: read again while shown. */
static int firewall_tick(Tui *t, Screen *s)
{
        FirewallData *d = s->data;

        if (d->open)
                (void)load_rules(d);
        return REACTION_NONE; /* the answer draws */
}

static int firewall_roamd_appeared(Tui *t, Screen *s)
{
        FirewallData *d = s->data;

        if (!d->open)
                return REACTION_NONE;
        (void)load_rules(d);
        return REACTION_REDRAW;
}

static int firewall_roamd_gone(Tui *t, Screen *s)
{
        FirewallData *d = s->data;

        return d->open ? REACTION_BACK : REACTION_NONE;
}

static int firewall_model_changed(Tui *t, Screen *s, const RoamLiveEvent *ev)
{
        FirewallData *d = s->data;

        if (!d->open)
                return REACTION_NONE;
        switch (ev->type) {
        case ROAM_LIVE_EVENT_STATE: /* firewall_roamd_appeared() and _gone() */
                break;
        case ROAM_LIVE_EVENT_MANAGER:
        case ROAM_LIVE_EVENT_LINK_ADDED:
        case ROAM_LIVE_EVENT_LINK_REMOVED:
        case ROAM_LIVE_EVENT_LINK_CHANGED:
                /* A location, a link or the files changed: the rules may have been swapped. */
                (void)load_rules(d);
                break;
        case ROAM_LIVE_EVENT_REPROBE:
        case ROAM_LIVE_EVENT_APP_ADDED:
        case ROAM_LIVE_EVENT_APP_REMOVED:
        case ROAM_LIVE_EVENT_APP_CHANGED:
        case ROAM_LIVE_EVENT_APP_CALL:
        case ROAM_LIVE_EVENT_APP_WAKE:
        case _ROAM_LIVE_EVENT_TYPE_MAX:
        case _ROAM_LIVE_EVENT_TYPE_INVALID:
                break;
        }
        return REACTION_REDRAW;
}

static int firewall_click(Tui *t, Screen *s, int item)
{
        FirewallData *d = s->data;
        const RoamModel *m = tui_model(t);

        d->selected = item;
        if ((size_t)item < m->n_links) {
                d->link_selected = item;
                tui_select_link(t, m->links[item]->path);
        }
        return REACTION_REDRAW;
}

static const KeyHelp firewall_keys[] = {
    {"l", "location", "Say where the selected link's network is: home, work, public, untrusted"},
    {"r", "refresh", "Read the rules and their counters again"},
    {"/", "filter",
     "Show only the rules whose direction, action, match, app, file or ID contains what you "
     "type (Enter keeps it, Esc clears it, Ctrl-U clears the text typed)"},
    {"Up/Down", NULL, "Select the previous or next link (also k and j)"},
    {"Enter", NULL, "The same as l"},
    {"Esc", NULL, "Back to the overview (first clears a filter)"},
    {},
};

static const char *firewall_available(Tui *t, Screen *s, char *why, size_t size)
{
        if (firewall_screen_available(t))
                return NULL;
        snprintf(why, size, "roamd sends no network locations (no firewall)");
        return "off";
}

static bool firewall_loading(Tui *t, Screen *s)
{
        FirewallData *d = s->data;

        return roam_live_get_state(tui_live(t)) == ROAM_LIVE_READY && !d->loaded;
}

const ScreenVTable firewall_screen_vtable = {
    .name = "firewall",
    .title = "Firewall",
    .short_title = "FW",
    .number = 8,
    .data_size = sizeof(FirewallData),
    .enter = firewall_enter,
    .leave = firewall_leave,
    .draw = firewall_draw,
    .key = firewall_key,
    .model_changed = firewall_model_changed,
    .roamd_appeared = firewall_roamd_appeared,
    .roamd_gone = firewall_roamd_gone,
    .keys = firewall_keys,
    .typing_keys = tui_filter_typing_keys,
    .click = firewall_click,
    .loading = firewall_loading,
    .tick = firewall_tick,
    .about = "The personal firewall: each link's location (home, work, public, untrusted, or "
             "one networks.d defines), the facts that chose it, and the rules in force on the "
             "selected link in the order they are evaluated, with their packet and byte "
             "counters (read again every 5 s, r at once). A network roam has not seen is untrusted "
             "until "
             "you answer the question that comes when a link joins it. Changing a location "
             "needs root, group netdev or polkit authorization; the status line says whether "
             "it was done.",
    .available = firewall_available,
    .done = firewall_done,
    .overlay_draw = firewall_prompt_draw,
    .overlay_key = firewall_prompt_key,
    .overlay_keys = firewall_prompt_keys,
    .overlay_click = firewall_prompt_click,
};
