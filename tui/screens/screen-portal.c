/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-bus.h"
#include "roam-browser.h"
#include "roam-portal-session.h"
#include "roam-screens.h"
#include "roam-util.h"

static int portal_browser_tui(Tui *t, const char *link, const char *url);

/* Captive portals: one block per link behind one (org.roam1.Portal, docs/portal.md) with what
 * roam knows and will do, in words. Keys approve, decline, log in (a small form: the user name,
 * then the password, shown masked), log off and forget. The sessions are read when the screen
 * opens and again on every PropertiesChanged of the portal object; calls are asynchronous and
 * their answers go to the status line. */

#define LABEL_WIDTH 15
#define FIELD_MAX   512

typedef enum EntryField {
        ENTRY_NONE,
        ENTRY_USER,
        ENTRY_PASSWORD,
} EntryField;

typedef struct PortalData {
        Tui *tui;
        RoamPortalSession *sessions;
        size_t n_sessions;
        bool loaded;
        int selected, scroll;
        sd_bus_slot *match, *get, *call;
        /* The login form, for the link in form_link. */
        EntryField entry;
        char form_link[64];
        char user[FIELD_MAX + 1];
        char password[FIELD_MAX + 1];
        /* Approved for a browser login: the browser starts once roamd says "browser". */
        char browse_link[64];
        bool browse_extend; /* ... to extend an RFC 8908 session, at its user-portal-url */
        /* What the call in flight does once roamd accepts it, for the status line. */
        char done[192];
} PortalData;

bool tui_any_portal(Tui *t)
{
        const RoamModel *m = tui_model(t);

        for (size_t i = 0; i < m->n_links; i++)
                if (streq_ptr(m->links[i]->connectivity, "portal"))
                        return true;
        return false;
}

static void form_close(PortalData *d)
{
        explicit_bzero(d->password, sizeof(d->password));
        explicit_bzero(d->user, sizeof(d->user));
        d->entry = ENTRY_NONE;
}

static const RoamPortalSession *selected_session(PortalData *d)
{
        if (d->n_sessions == 0)
                return NULL;
        if (d->selected < 0 || (size_t)d->selected >= d->n_sessions)
                d->selected = 0;
        return &d->sessions[d->selected];
}

static void start_browser(PortalData *d, const RoamPortalSession *s, const char *url)
{
        int r;

        d->browse_link[0] = 0;
        if (!url) {
                tui_message(d->tui, THEME_ERROR, "roamd knows no login page for %s.", s->link);
                return;
        }
        r = portal_browser_tui(d->tui, s->link, url);
        if (r == -ENOENT)
                tui_message(d->tui, THEME_ERROR,
                            "No text browser found: install lynx or w3m, or set "
                            "$ROAM_PORTAL_BROWSER.");
        else if (r < 0)
                tui_message(d->tui, THEME_ERROR, "Cannot start the login browser: %s.",
                            strerror(-r));
}

/* What the new sessions mean for the user: a browser to start, a link that is online. */
static void sessions_arrived(PortalData *d, const RoamPortalSession *old, size_t n_old)
{
        for (size_t i = 0; i < d->n_sessions; i++) {
                const RoamPortalSession *s = &d->sessions[i];
                const RoamPortalSession *was = NULL;

                for (size_t j = 0; j < n_old; j++)
                        if (streq_ptr(old[j].link, s->link))
                                was = &old[j];
                if (was && !streq(was->state, "open") && streq(s->state, "open"))
                        tui_message(d->tui, THEME_OK,
                                    "%s is online: the portal let you in. Every app follows its "
                                    "own policy again.",
                                    s->link);
                if (!streq(d->browse_link, s->link))
                        continue;
                if (d->browse_extend && s->browser_login)
                        start_browser(d, s, s->user_portal_url);
                else if (streq(s->state, "browser") && s->browser_login)
                        start_browser(d, s, s->portal_url);
                else if (d->browse_extend)
                        d->browse_link[0] = 0;
                else if (!streq(s->state, "discovering") && !streq(s->state, "waiting") &&
                         !streq(s->state, "browser"))
                        d->browse_link[0] = 0;
        }
}

static int on_sessions(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PortalData *d = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        RoamPortalSession *s = NULL;
        size_t n = 0;
        int r;

        d->get = sd_bus_slot_unref(d->get);
        if (e) {
                /* An older roamd without portal support: nothing to show. */
                roam_portal_sessions_free(d->sessions, d->n_sessions);
                d->sessions = NULL;
                d->n_sessions = 0;
        } else {
                r = roam_portal_sessions_read_get(m, &s, &n);
                if (r < 0) {
                        tui_message(d->tui, THEME_ERROR, "Cannot read the captive portals: %s.",
                                    strerror(-r));
                        return 0;
                }
                RoamPortalSession *old = d->sessions;
                size_t n_old = d->n_sessions;

                d->sessions = s;
                d->n_sessions = n;
                if (d->loaded)
                        sessions_arrived(d, old, n_old);
                roam_portal_sessions_free(old, n_old);
        }
        d->loaded = true;
        tui_request_redraw(d->tui);
        return 0;
}

static int load(PortalData *d)
{
        sd_bus *bus = roam_live_get_bus(tui_live(d->tui));

        if (!bus)
                return -ENOTCONN;
        d->get = sd_bus_slot_unref(d->get);
        return sd_bus_call_method_async(bus, &d->get, ROAM_BUS_NAME, ROAM_PORTAL_PATH,
                                        "org.freedesktop.DBus.Properties", "Get", on_sessions, d,
                                        "ss", ROAM_PORTAL_INTERFACE, "Sessions");
}

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        (void)load(userdata);
        return 0;
}

static int portal_enter(Tui *t, Screen *s)
{
        PortalData *d = s->data;
        sd_bus *bus = roam_live_get_bus(tui_live(t));

        d->tui = t;
        if (!bus)
                return 0;
        if (!d->match)
                (void)sd_bus_match_signal_async(bus, &d->match, ROAM_BUS_NAME, ROAM_PORTAL_PATH,
                                                "org.freedesktop.DBus.Properties",
                                                "PropertiesChanged", on_changed, NULL, d);
        (void)load(d);
        return 0;
}

static void portal_leave(Tui *t, Screen *s)
{
        PortalData *d = s->data;

        form_close(d);
        d->match = sd_bus_slot_unref(d->match);
        d->get = sd_bus_slot_unref(d->get);
        /* A call in flight still answers, to the status line. */
}

static void portal_done(Tui *t, Screen *s)
{
        PortalData *d = s->data;

        if (!d)
                return;
        form_close(d);
        d->match = sd_bus_slot_unref(d->match);
        d->get = sd_bus_slot_unref(d->get);
        d->call = sd_bus_slot_unref(d->call);
        roam_portal_sessions_free(d->sessions, d->n_sessions);
        d->sessions = NULL;
        d->n_sessions = 0;
}

static int on_call_done(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PortalData *d = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        d->call = sd_bus_slot_unref(d->call);
        if (e)
                tui_message(d->tui, THEME_ERROR, "roamd refused: %s",
                            e->message ? e->message : e->name);
        else
                tui_message(d->tui, THEME_OK, "%s", d->done);
        tui_request_redraw(d->tui);
        return 0;
}

/* What an accepted call sets going, in words: the sessions below then show how it went. */
static void done_words(PortalData *d, const char *member, const RoamPortalSession *p, bool always)
{
        const char *l = p->link;

        if (streq(member, "Approve") && !p->wispr)
                snprintf(d->done, sizeof(d->done), "Approved%s: the login browser starts for %s.",
                         always ? " for good" : "", l);
        else if (streq(member, "Approve") && p->has_saved_login)
                snprintf(d->done, sizeof(d->done),
                         "Approved%s: roamd logs in on %s with the saved login.",
                         always ? " for good" : "", l);
        else if (streq(member, "Approve"))
                snprintf(d->done, sizeof(d->done),
                         "Approved%s: no saved login for %s yet: press l to log in.",
                         always ? " for good" : "", l);
        else if (streq(member, "Decline"))
                snprintf(d->done, sizeof(d->done),
                         "Declined: roam sends nothing to the portal on %s.", l);
        else if (streq(member, "Logoff"))
                snprintf(d->done, sizeof(d->done), "Logging off %s.", l);
        else if (streq(member, "Extend"))
                snprintf(d->done, sizeof(d->done),
                         "Extending on %s: the login browser opens the network's page.", l);
        else
                snprintf(d->done, sizeof(d->done), "The saved login of %s's network is forgotten.",
                         l);
}

static int call(PortalData *d, const char *member, const RoamPortalSession *p, bool always)
{
        sd_bus *bus = roam_live_get_bus(tui_live(d->tui));
        const char *link = p->link;
        int r;

        if (!bus)
                return -ENOTCONN;
        done_words(d, member, p, always);
        d->call = sd_bus_slot_unref(d->call);
        if (streq(member, "Approve"))
                r = sd_bus_call_method_async(bus, &d->call, ROAM_BUS_NAME, ROAM_PORTAL_PATH,
                                             ROAM_PORTAL_INTERFACE, member, on_call_done, d, "sb",
                                             link, always);
        else
                r = sd_bus_call_method_async(bus, &d->call, ROAM_BUS_NAME, ROAM_PORTAL_PATH,
                                             ROAM_PORTAL_INTERFACE, member, on_call_done, d, "s",
                                             link);
        return r;
}

static int send_login(PortalData *d)
{
        sd_bus *bus = roam_live_get_bus(tui_live(d->tui));
        size_t n = strlen(d->password);
        int fd, r;

        if (!bus)
                return -ENOTCONN;
        /* As `roam portal login`: the password in a memfd, never in a message body. */
        fd = memfd_create("roam-portal-password", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, d->password, n) != (ssize_t)n) {
                r = errno ? -errno : -EIO;
                close(fd);
                return r;
        }
        snprintf(d->done, sizeof(d->done), "Sent: roamd logs in on %s; the state below follows.",
                 d->form_link);
        d->call = sd_bus_slot_unref(d->call);
        r = sd_bus_call_method_async(bus, &d->call, ROAM_BUS_NAME, ROAM_PORTAL_PATH,
                                     ROAM_PORTAL_INTERFACE, "Login", on_call_done, d, "sshbb",
                                     d->form_link, d->user, fd, true, false);
        close(fd);
        return r;
}

typedef struct AddCtx {
        TuiDoc *doc;
        int item;
        int r;
} AddCtx;

static void add_field(const char *label, const char *value, void *userdata)
{
        AddCtx *c = userdata;

        /* "Next" names roam portal commands; here the key bar says what to press. */
        if (c->r < 0 || !value || !*value || streq(label, "Next"))
                return;
        c->r = tui_doc_field(c->doc, c->item, LABEL_WIDTH, label, THEME_NORMAL, value);
}

static ThemeRole state_role(const char *state)
{
        if (streq(state, "logged-in") || streq(state, "open"))
                return THEME_OK;
        if (streq(state, "failed") || streq(state, "rejected"))
                return THEME_ERROR;
        return THEME_PORTAL;
}

static int build(Tui *t, PortalData *d, TuiDoc *doc)
{
        struct timespec ts;
        uint64_t now;
        int r = 0;

        clock_gettime(CLOCK_REALTIME, &ts);
        now = (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
        if (getenv("ROAM_TEST_NOW"))
                now = strtoull(getenv("ROAM_TEST_NOW"), NULL, 10);
        if (roam_live_get_state(tui_live(t)) != ROAM_LIVE_READY) {
                /* not "no portal": with roamd away nothing is known about portals */
                char why[256];

                if (!tui_screen_unavailable(t, &portal_screen_vtable, why, sizeof(why)))
                        snprintf(why, sizeof(why), "roamd cannot be read");
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_WARNING, 0, "Captive portals unknown: %s.",
                                          why);
                return r;
        }
        if (!d->loaded || d->n_sessions == 0) {
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_NORMAL, 0,
                                         d->loaded ? "No captive portal: no link is behind one."
                                                   : "Reading the captive portals...");
                return r;
        }
        for (size_t i = 0; r >= 0 && i < d->n_sessions; i++) {
                const RoamPortalSession *s = &d->sessions[i];
                AddCtx c = {doc, (int)i, 0};

                if (i > 0)
                        r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(doc, (int)i, 2);
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_TITLE, 0, "%s: captive portal, ", s->link);
                if (r >= 0)
                        r = tui_doc_span(doc, state_role(s->state), 0,
                                         roam_portal_state_words(s->state));
                if (r < 0)
                        break;
                roam_portal_fields(s, now, true, add_field, &c);
                r = c.r;
                if (r >= 0 && s->has_expires)
                        tui_refresh_in(t, USEC_PER_SEC);
        }
        return r;
}

static void draw_form(Tui *t, PortalData *d, int top, int height)
{
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;
        char masked[FIELD_MAX + 1];
        size_t n = strlen(d->password);
        int r, scroll = 0;

        if (tui_doc_new(&doc) < 0)
                return;
        memset(masked, '*', n);
        masked[n] = 0;
        r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_TITLE, 0, "Log in on %s", d->form_link);
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_MUTED, 0,
                                 "Tab: next field, Enter: log in, Esc: cancel. The login is "
                                 "saved for this network once it works.");
        if (r >= 0)
                r = tui_doc_field(doc, 0, 10, "User", THEME_NORMAL, d->user);
        if (r >= 0)
                /* Masked: one star per byte, never the text. */
                r = tui_doc_field(doc, 1, 10, "Password", THEME_NORMAL, masked);
        if (r < 0)
                return;
        /* The whole screen: a screen reader reads the form and nothing else. */
        tui_doc_draw(t, doc, top, height, d->entry == ENTRY_USER ? 0 : 1, &scroll);
}

static void portal_draw(Tui *t, Screen *s, int top, int height)
{
        PortalData *d = s->data;
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;

        d->tui = t;
        if (d->entry != ENTRY_NONE) {
                draw_form(t, d, top, height);
                return;
        }
        if (tui_doc_new(&doc) < 0 || build(t, d, doc) < 0)
                return;
        tui_doc_draw(t, doc, top, height, d->n_sessions ? d->selected : -1, &d->scroll);
}

static int form_key(Tui *t, PortalData *d, int key)
{
        char *f = d->entry == ENTRY_USER ? d->user : d->password;
        size_t n = strlen(f);
        int r;

        switch (key) {
        case TUI_KEY_ESCAPE:
                form_close(d);
                tui_message(t, THEME_NORMAL, "Login cancelled: nothing was sent.");
                return REACTION_REDRAW;
        case '\t':
        case TUI_KEY(KEY_BTAB):
        case TUI_KEY(KEY_UP):
        case TUI_KEY(KEY_DOWN):
                d->entry = d->entry == ENTRY_USER ? ENTRY_PASSWORD : ENTRY_USER;
                return REACTION_REDRAW;
        case '\r':
        case '\n':
        case TUI_KEY(KEY_ENTER):
                if (d->entry == ENTRY_USER) {
                        d->entry = ENTRY_PASSWORD;
                        return REACTION_REDRAW;
                }
                if (!*d->user || !*d->password) {
                        tui_message(t, THEME_WARNING, "Enter a user name and a password.");
                        return REACTION_REDRAW;
                }
                r = send_login(d);
                form_close(d);
                if (r < 0)
                        tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
                else
                        tui_message(t, THEME_NORMAL, "Logging in...");
                return REACTION_REDRAW;
        case 127:
        case 8:
        case TUI_KEY(KEY_BACKSPACE):
                /* one UTF-8 character back */
                while (n > 0 && ((unsigned char)f[n - 1] & 0xc0) == 0x80)
                        f[--n] = 0;
                if (n > 0)
                        f[--n] = 0;
                return REACTION_REDRAW;
        }
        if (key & TUI_KEY_CODE || key < 0x20 || key == 0x7f)
                return REACTION_NONE;
        {
                char buf[8];
                mbstate_t ps = {};
                size_t k = wcrtomb(buf, (wchar_t)key, &ps);
                if (k == (size_t)-1 || n + k > FIELD_MAX)
                        return REACTION_NONE;
                memcpy(f + n, buf, k);
                f[n + k] = 0;
        }
        return REACTION_REDRAW;
}

/* Forgetting a saved login cannot be undone from here (the password is gone): it asks first
 * (y/N); the answer finds the link's session again. */
static int confirmed_forget(Tui *t, void *userdata, const char *link)
{
        PortalData *d = userdata;
        int r;

        for (size_t i = 0; i < d->n_sessions; i++)
                if (streq(d->sessions[i].link, link)) {
                        r = call(d, "Forget", &d->sessions[i], false);
                        if (r < 0)
                                tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
                        return REACTION_REDRAW;
                }
        tui_message(t, THEME_WARNING, "%s is no longer behind a portal.", link);
        return REACTION_REDRAW;
}

static int portal_key(Tui *t, Screen *s, int key)
{
        PortalData *d = s->data;
        const RoamPortalSession *p;
        bool handled;
        int i, r;

        d->tui = t;
        if (d->entry != ENTRY_NONE)
                return form_key(t, d, key);
        i = tui_list_key(key, d->selected, (int)d->n_sessions, &handled);
        if (handled) {
                if (i >= 0)
                        d->selected = i;
                return REACTION_REDRAW;
        }
        if (!strchr("aAbdelof", key) || key & TUI_KEY_CODE || key == 0)
                return REACTION_UNHANDLED;
        p = selected_session(d);
        if (!p) {
                tui_message(t, THEME_WARNING, "No link is behind a captive portal.");
                return REACTION_REDRAW;
        }
        /* Past the portal (open, logged in) or roamd at it: approving, declining or logging
         * in again would contradict what the screen says. */
        if (strchr("aAbdl", key) && !roam_portal_needs_you(p)) {
                tui_message(t, THEME_WARNING, "Nothing to do on %s: %s.", p->link,
                            roam_portal_state_words(p->state));
                return REACTION_REDRAW;
        }
        switch (key) {
        case 'l':
                if (!p->wispr) {
                        tui_message(t, THEME_WARNING,
                                    "%s offers no automatic login: press b for the login browser.",
                                    p->link);
                        return REACTION_REDRAW;
                }
                form_close(d);
                snprintf(d->form_link, sizeof(d->form_link), "%s", p->link);
                d->entry = ENTRY_USER;
                return REACTION_REDRAW;
        case 'b':
                if (p->wispr) {
                        tui_message(t, THEME_WARNING,
                                    "%s offers automatic login: press l to log in.", p->link);
                        return REACTION_REDRAW;
                }
                if (streq(p->state, "browser") && p->browser_login) {
                        start_browser(d, p, p->portal_url);
                        return REACTION_REDRAW;
                }
                /* Approve first; the browser starts when roamd says so. */
                snprintf(d->browse_link, sizeof(d->browse_link), "%s", p->link);
                d->browse_extend = false;
                r = call(d, "Approve", p, false);
                break;
        case 'e':
                if (!p->can_extend) {
                        tui_message(t, THEME_WARNING,
                                    "The network does not offer to extend the session on %s.",
                                    p->link);
                        return REACTION_REDRAW;
                }
                /* roamd lets the browser reach the link; it starts when the sessions say so. */
                snprintf(d->browse_link, sizeof(d->browse_link), "%s", p->link);
                d->browse_extend = true;
                r = call(d, "Extend", p, false);
                break;
        case 'a':
        case 'A':
                if (!roam_portal_can_approve(p)) {
                        tui_message(t, THEME_WARNING,
                                    "%s is approved: press b for the login browser.", p->link);
                        return REACTION_REDRAW;
                }
                /* Approving a portal without WISPr is asking for the login browser. */
                if (!p->wispr) {
                        snprintf(d->browse_link, sizeof(d->browse_link), "%s", p->link);
                        d->browse_extend = false;
                }
                r = call(d, "Approve", p, key == 'A');
                break;
        case 'd':
                if (!roam_portal_can_decline(p)) {
                        tui_message(t, THEME_WARNING, "%s is declined already.", p->link);
                        return REACTION_REDRAW;
                }
                r = call(d, "Decline", p, false);
                break;
        case 'o':
                r = call(d, "Logoff", p, false);
                break;
        default: {
                _cleanup_free_ char *q = NULL, *no = NULL;

                if (asprintf(&q,
                             "Forget the saved login of the network on %s? Its password is "
                             "deleted.",
                             p->link) < 0 ||
                    asprintf(&no, "Not done: the login of the network on %s stays saved.",
                             p->link) < 0)
                        return -ENOMEM;
                return tui_confirm(t, p->link, confirmed_forget, d, q, no);
        }
        }
        if (r < 0)
                tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
        return REACTION_REDRAW;
}

static int portal_roamd_gone(Tui *t, Screen *s)
{
        form_close(s->data);
        return REACTION_BACK;
}

static int portal_roamd_appeared(Tui *t, Screen *s)
{
        PortalData *d = s->data;

        if (tui_current_screen(t) != s->vtable)
                return REACTION_NONE;
        /* roamd came back: a new connection, so new matches. */
        d->match = sd_bus_slot_unref(d->match);
        (void)portal_enter(t, s);
        return REACTION_REDRAW;
}

static const KeyHelp portal_keys[] = {
    {"a", "approve", "Approve: let roam log in (with the saved login, if any)"},
    {"A", NULL, "Approve, and always log in on this network from now on"},
    {"l", "log in", "Log in with a user name and password (WISPr); the password is masked"},
    {"b", "browser",
     "Log in with a text browser in this terminal (lynx, w3m, $BROWSER; $ROAM_PORTAL_BROWSER "
     "names one) that reaches this link only; roam comes back when you quit it"},
    {"d", "decline", "Decline: roam sends nothing to this portal"},
    {"e", "extend",
     "Extend the session (when the network offers it, RFC 8908): its page in the login "
     "browser"},
    {"o", "log off", "Log off (when the portal gave a log off address)"},
    {"f", "forget", "Forget the saved login of this network"},
    {"Up/Down", NULL, "Select the previous or next link (also k and j)"},
    {"Esc", NULL, "Back to the overview"},
    {"Tab", "next field", "In the login form: the other field"},
    {"Enter", "log in", "In the login form: send the login to roamd"},
    {"Esc", "cancel", "In the login form: close it, nothing is sent"},
    {},
};
/* The list's keys come first, then the form's. */
#define PORTAL_LIST_KEYS 10

static bool portal_key_active(Tui *t, Screen *s, const KeyHelp *k)
{
        PortalData *d = s->data;
        const RoamPortalSession *p = selected_session(d);

        if (k - portal_keys >= PORTAL_LIST_KEYS)
                return d->entry != ENTRY_NONE;
        if (d->entry != ENTRY_NONE)
                return false;
        if (!p)
                return streq(k->keys, "Esc");
        if (streq(k->keys, "o"))
                return p->can_logoff;
        if (streq(k->keys, "f"))
                return p->has_saved_login || p->always;
        if (streq(k->keys, "l"))
                return roam_portal_can_login(p);
        if (streq(k->keys, "b"))
                return roam_portal_can_browse(p);
        if (streq(k->keys, "a") || streq(k->keys, "A"))
                return roam_portal_can_approve(p);
        if (streq(k->keys, "d"))
                return roam_portal_can_decline(p);
        if (streq(k->keys, "e"))
                return p->can_extend;
        return true;
}

static const char *portal_available(Tui *t, Screen *s, char *why, size_t size)
{
        const PortalData *d = s ? s->data : NULL;

        /* A session past its portal (logged in, time left, extend) is something to show too:
         * the tab must not say "none" beside it. */
        if (tui_any_portal(t) || (d && d->n_sessions > 0))
                return NULL;
        snprintf(why, size, "no link is behind a captive portal");
        return "none";
}

const ScreenVTable portal_screen_vtable = {
    .name = "portal",
    .title = "Portal",
    .number = 4,
    .data_size = sizeof(PortalData),
    .enter = portal_enter,
    .leave = portal_leave,
    .draw = portal_draw,
    .key = portal_key,
    .roamd_appeared = portal_roamd_appeared,
    .roamd_gone = portal_roamd_gone,
    .keys = portal_keys,
    .key_active = portal_key_active,
    .about = "Links behind a captive portal: the portal's page, whether it offers automatic "
             "login (WISPr), the saved login of the network, the time and data left (RFC "
             "8908) and what roam will do. Nothing but a plain look at the portal's page is "
             "sent before you approve. Changes need root, group netdev or polkit "
             "authorization; the status line says whether they were done.",
    .available = portal_available,
    .done = portal_done,
};

/* ---- the login browser (roam-browser.c), the TUI's way: suspends the screen (stops reading
 * the keyboard), runs the browser in the foreground, and resumes and redraws when it ends;
 * the link is checked again then. ---- */

/* What the TUI keeps of the browser's stderr: its end, where the reason it failed is. */
#define TAIL_MAX 4096

typedef struct TuiBrowser {
        Tui *tui;
        char *link;
        char *name; /* the browser's command, for messages */
        pid_t pid;
        sd_event_source *source;
        /* the read end of the browser's stderr, and the last TAIL_MAX bytes read from it */
        sd_event_source *err_source;
        char tail[TAIL_MAX];
        size_t tail_len;
} TuiBrowser;

static TuiBrowser *tui_browser_free(TuiBrowser *b)
{
        if (!b)
                return NULL;
        sd_event_source_disable_unref(b->err_source);
        free(b->link);
        free(b->name);
        free(b);
        return NULL;
}

static void tui_browser_destroy(void *userdata)
{
        tui_browser_free(userdata);
}

/* Reads what the browser wrote to stderr so far, keeping the end. */
static void read_stderr(TuiBrowser *b)
{
        char buf[1024]; /* less than TAIL_MAX: one read never fills the tail alone */
        int fd;

        if (!b->err_source)
                return;
        fd = sd_event_source_get_io_fd(b->err_source);
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        /* EOF (every writer gone) or an error: nothing more to read */
                        if (n == 0 || errno != EAGAIN)
                                b->err_source = sd_event_source_disable_unref(b->err_source);
                        return;
                }
                if (b->tail_len + (size_t)n > TAIL_MAX) {
                        size_t drop = b->tail_len + (size_t)n - TAIL_MAX;
                        memmove(b->tail, b->tail + drop, b->tail_len - drop);
                        b->tail_len -= drop;
                }
                memcpy(b->tail + b->tail_len, buf, (size_t)n);
                b->tail_len += (size_t)n;
        }
}

static void close_pair(int fd[2])
{
        for (int i = 0; i < 2; i++)
                if (fd[i] >= 0) {
                        close(fd[i]);
                        fd[i] = -1;
                }
}

static int on_browser_stderr(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
        read_stderr(userdata);
        return 0;
}

static int on_browser_exit(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
        TuiBrowser *b = userdata;
        Tui *t = b->tui;
        const RoamModel *m = tui_model(t);
        _cleanup_free_ char *last = NULL;
        const char *path = NULL, *end = NULL;
        char words[96];
        int status = 0;
        pid_t r;

        while ((r = waitpid(b->pid, &status, WNOHANG)) < 0 && errno == EINTR)
                ;
        if (r == 0)
                return 0; /* not yet */
        tui_resume(t);
        for (size_t i = 0; i < m->n_links; i++)
                if (streq_ptr(m->links[i]->name, b->link))
                        path = m->links[i]->path;
        if (r > 0)
                end = portal_browser_end_words(status, words, sizeof(words));
        if (end) {
                /* It failed: what it said last is why (a name that does not resolve, roamd
                 * refusing the app); a probe round would only hide that. */
                read_stderr(b);
                (void)portal_browser_last_words(b->tail, b->tail_len, &last);
                tui_message(t, THEME_ERROR, "The login browser %s %s%s%s", b->name, end,
                            last ? ": " : ".", strempty(last));
        } else if (!path || roam_live_reprobe(tui_live(t), path) < 0)
                tui_message(t, THEME_WARNING, "Browser closed; roamd checks %s at its next round.",
                            b->link);
        else
                tui_message(t, THEME_STATUS, "Browser closed: checking %s again%s", b->link,
                            tui_glyph_ellipsis(t));
        /* The event loop's reference was the only one: this frees the watch, and b with it
         * (the destroy callback). */
        (void)sd_event_source_set_enabled(es, SD_EVENT_OFF);
        (void)sd_event_source_set_floating(es, false);
        return 0;
}

static int portal_browser_tui(Tui *t, const char *link, const char *url)
{
        TuiBrowser *b;
        char **argv = NULL;
        int pidfd, r, err[2] = {-1, -1};

        r = portal_browser_argv(NULL, url, &argv);
        if (r < 0)
                return r;
        b = calloc(1, sizeof(*b));
        /* the command's name, not its directory: the message has three rows at most */
        if (!b || !(b->link = strdup(link)) ||
            !(b->name = strdup(strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]))) {
                strv_free(argv);
                tui_browser_free(b);
                return -ENOMEM;
        }
        b->tui = t;
        /* The browser's stderr goes to a pipe the event loop reads (bounded), so a browser
         * that fails at once leaves its reason on the screen rather than under it. */
        if (pipe2(err, O_CLOEXEC) < 0 || fcntl(err[0], F_SETFL, O_NONBLOCK) < 0)
                r = -errno;
        else if ((r = sd_event_add_io(tui_event(t), &b->err_source, err[0], EPOLLIN,
                                      on_browser_stderr, b)) >= 0) {
                r = sd_event_source_set_io_fd_own(b->err_source, true);
                if (r >= 0)
                        err[0] = -1;
        }
        if (r < 0) {
                close_pair(err);
                strv_free(argv);
                tui_browser_free(b);
                return r;
        }
        r = tui_suspend(t);
        if (r < 0) {
                close_pair(err);
                strv_free(argv);
                tui_browser_free(b);
                return r;
        }
        printf("roam: %s in %s as app %s (the captive link %s only). Quit it to come back.\n", url,
               argv[0], ROAM_APP_PORTAL_LOGIN, link);
        r = portal_browser_spawn(argv, err[1], &b->pid, &pidfd);
        strv_free(argv);
        close_pair(err); /* the write end is the browser's alone */
        if (r >= 0) {
                /* A pidfd turns readable when the child ends: no SIGCHLD handling needed. */
                r = sd_event_add_io(tui_event(t), &b->source, pidfd, EPOLLIN, on_browser_exit, b);
                if (r >= 0)
                        r = sd_event_source_set_io_fd_own(b->source, true);
                if (r < 0) {
                        b->source = sd_event_source_disable_unref(b->source);
                        close(pidfd);
                        (void)kill(b->pid, SIGTERM);
                        (void)waitpid(b->pid, NULL, 0);
                }
        }
        if (r < 0) {
                tui_resume(t);
                tui_browser_free(b);
                return r;
        }
        /* The event loop owns the watch from here (and b with it): the TUI may end while the
         * browser runs. */
        (void)sd_event_source_set_destroy_callback(b->source, tui_browser_destroy);
        (void)sd_event_source_set_floating(b->source, true);
        b->source = sd_event_source_unref(b->source);
        return 0;
}
