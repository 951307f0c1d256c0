/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "roam-client-bus.h"
#include "roam-bus.h"
#include "roam-format.h"
#include "roam-peers.h"
#include "roam-plain-p2p.h"
#include "roam-util.h"
#include "roam-verdict.h"
#include "roam-words.h"

/* Plain mode's WiFi Direct part: one line per change of a peer (found, gone, asks to
 * connect, PIN to type, connected, not connected and why), and the commands to answer. The
 * peers are read again after each of roamd's signals, and compared with the last reading. */

struct PlainP2p {
        RoamLive *live;
        sd_bus *bus;
        sd_bus_slot *match, *load_slot, *call_slot;
        P2pPinLoad pins; /* a list read, said once its PINs have come (never waited for) */
        bool reload;
        bool loaded; /* the first reading is not announced peer by peer */
        P2pList list;
        char what[160];
};

const char plain_p2p_help[] =
    "  peers          WiFi Direct devices found\n"
    "  find           search for WiFi Direct devices (30 s)\n"
    "  connect NAME [pin PIN | show-pin]   connect to a device (by its button\n"
    "                 unless a PIN is given)\n"
    "  accept NAME [PIN]   accept a device that asks to connect\n"
    "  reject NAME    reject it\n"
    "  disconnect NAME   disconnect from a device\n";

static const P2pPeer *find(const P2pList *l, const char *path)
{
        for (size_t i = 0; i < l->n; i++)
                if (streq_ptr(l->peers[i].path, path))
                        return &l->peers[i];
        return NULL;
}

static void say_pin(const char *pin, char *buf, size_t size)
{
        snprintf(buf, size, "%.4s %.4s", pin, strlen(pin) > 4 ? pin + 4 : "");
}

/* One line for what changed about p (old: before, NULL when new). */
static void announce(const P2pPeer *old, const P2pPeer *p)
{
        const char *name = p2p_peer_label(p);
        char pin[16];

        if (!old) {
                roam_print_stamp();
                printf("WiFi Direct: found %s (%s).\n", name, strempty(p->type));
        }
        /* A state seen between two readings may be missed; where it ended is not. */
        if (old && streq_ptr(old->state, p->state) && streq_ptr(old->pin, p->pin) &&
            streq_ptr(old->reason, p->reason))
                return;
        if (streq_ptr(p->state, "request")) {
                roam_print_stamp();
                if (streq_ptr(p->method, "display") && p->pin && *p->pin) {
                        say_pin(p->pin, pin, sizeof(pin));
                        printf("%s asks to connect: type %s on it. Say: accept %s, or reject "
                               "%s.\n",
                               name, pin, name, name);
                } else if (streq_ptr(p->method, "keypad"))
                        printf("%s asks to connect and shows a PIN. Say: accept %s PIN, or "
                               "reject %s.\n",
                               name, name, name);
                else
                        printf("%s asks to connect. Say: accept %s, or reject %s.\n", name, name,
                               name);
        } else if (streq_ptr(p->state, "connecting") && p->pin && *p->pin) {
                say_pin(p->pin, pin, sizeof(pin));
                roam_print_stamp();
                printf("Type this PIN on %s: %s.\n", name, pin);
        } else if (streq_ptr(p->state, "connecting") && old) {
                roam_print_stamp();
                printf("Connecting to %s%s.\n", name,
                       streq_ptr(p->method, "push-button")
                           ? ": press its WiFi Direct (WPS) button or accept on its screen"
                           : "");
        } else if (streq_ptr(p->state, "connected")) {
                roam_print_stamp();
                printf("Connected to %s (%s).\n", name, strempty(p->group));
        } else if (streq_ptr(p->state, "available") && old) {
                roam_print_stamp();
                printf("Not connected to %s: %s.\n", name, p2p_reason_text(p) ?: "it ended");
        }
}

static void compare(PlainP2p *pp, P2pList *now)
{
        for (size_t i = 0; i < now->n; i++)
                announce(find(&pp->list, now->peers[i].path), &now->peers[i]);
        for (size_t i = 0; i < pp->list.n; i++)
                if (!find(now, pp->list.peers[i].path)) {
                        roam_print_stamp();
                        printf("WiFi Direct: %s is gone.\n", p2p_peer_label(&pp->list.peers[i]));
                }
}

static void load(PlainP2p *pp);

/* The list read is complete: said, and read again if a signal came meanwhile. */
static void loaded(PlainP2p *pp, bool ok)
{
        if (ok) {
                P2pList *l = &pp->pins.list;

                if (pp->loaded)
                        compare(pp, l);
                else if (l->n > 0) {
                        roam_print_stamp();
                        printf("WiFi Direct: %zu device%s known (say peers).\n", l->n,
                               l->n == 1 ? "" : "s");
                }
                p2p_list_done(&pp->list);
                pp->list = *l;
                *l = (P2pList){};
                pp->loaded = true;
        }
        p2p_pin_load_cancel(&pp->pins);
        if (pp->reload) {
                pp->reload = false;
                load(pp);
        }
}

static void on_pins(void *userdata)
{
        loaded(userdata, true);
}

static int on_objects(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        PlainP2p *pp = userdata;
        P2pList l = {};
        int r = -EIO;

        pp->load_slot = sd_bus_slot_unref(pp->load_slot);
        if (!sd_bus_message_is_method_error(m, NULL) && p2p_list_parse_objects(m, &l) >= 0)
                r = p2p_pin_load_start(&pp->pins, pp->bus, &l, on_pins, pp);
        p2p_list_done(&l);
        if (r != 0)
                loaded(pp, r > 0);
        return 0;
}

static void load(PlainP2p *pp)
{
        if (!pp->bus)
                return;
        if (pp->load_slot || pp->pins.pending) {
                pp->reload = true;
                return;
        }
        (void)sd_bus_call_method_async(pp->bus, &pp->load_slot, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                       "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
                                       on_objects, pp, NULL);
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        P2pSignalArgs s;

        /* A device that went out of reach mid-connect leaves the list: its line says why the
         * attempt failed; the other failures are said by the peer's own "Not connected". */
        if (p2p_signal_read(m, &s) == P2P_SIGNAL_CONNECTION_FAILED &&
            roam_p2p_reason_from_string(s.reason) == ROAM_P2P_REASON_PEER_LOST) {
                roam_print_stamp();
                printf("Could not connect to %s: %s.\n", *s.b ? s.b : s.a,
                       roam_p2p_reason_words(s.reason));
        }
        load(userdata);
        return 0;
}

static void drop(PlainP2p *pp)
{
        pp->match = sd_bus_slot_unref(pp->match);
        pp->load_slot = sd_bus_slot_unref(pp->load_slot);
        pp->call_slot = sd_bus_slot_unref(pp->call_slot);
        p2p_pin_load_cancel(&pp->pins);
        pp->bus = sd_bus_unref(pp->bus);
}

void plain_p2p_watch(PlainP2p *pp)
{
        sd_bus *bus = roam_live_get_bus(pp->live);

        if (bus != pp->bus) {
                drop(pp);
                pp->loaded = false;
                p2p_list_done(&pp->list);
                if (!bus)
                        return;
                pp->bus = sd_bus_ref(bus);
                (void)sd_bus_add_match_async(bus, &pp->match,
                                             "type='signal',path_namespace='" ROAM_MANAGER_PATH "'",
                                             on_signal, NULL, pp);
        }
        load(pp);
}

int plain_p2p_new(RoamLive *live, PlainP2p **ret)
{
        PlainP2p *pp = calloc(1, sizeof(*pp));

        if (!pp)
                return -ENOMEM;
        pp->live = live;
        *ret = pp;
        return 0;
}

PlainP2p *plain_p2p_free(PlainP2p *pp)
{
        if (!pp)
                return NULL;
        drop(pp);
        p2p_list_done(&pp->list);
        free(pp);
        return NULL;
}

static int on_call(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        PlainP2p *pp = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        pp->call_slot = sd_bus_slot_unref(pp->call_slot);
        roam_print_stamp();
        if (e && roam_bus_error_is_denied(e)) {
                char why[256];

                printf("Not allowed to %s: %s.\n", pp->what,
                       roam_bus_denied_reason(e, why, sizeof(why)));
        } else if (e)
                printf("Cannot %s: %s\n", pp->what, e->message ? e->message : e->name);
        else
                printf("roamd will %s.\n", pp->what);
        return 0;
}

/* A call to roamd, one at a time; its answer is printed when it comes. */
static void call(PlainP2p *pp, const char *path, const char *iface, const char *method,
                 const char *types, ...)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        if (!pp->bus) {
                printf("roamd is not there.\n");
                return;
        }
        if (pp->call_slot) {
                printf("Still waiting for roamd's last answer.\n");
                return;
        }
        r = sd_bus_message_new_method_call(pp->bus, &m, ROAM_BUS_NAME, path, iface, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_call_async(pp->bus, &pp->call_slot, m, on_call, pp, 0);
        if (r < 0)
                printf("Cannot ask roamd: %s\n", strerror(-r));
}

/* The peer named by words (joined with spaces), matched like roam p2p: address or name. */
static const P2pPeer *by_name(PlainP2p *pp, char **words, size_t n)
{
        char name[256] = "";

        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        strncat(name, " ", sizeof(name) - strlen(name) - 1);
                strncat(name, words[i], sizeof(name) - strlen(name) - 1);
        }
        for (size_t i = 0; i < pp->list.n; i++) {
                const P2pPeer *p = &pp->list.peers[i];
                if (strcasecmp(strempty(p->address), name) == 0 ||
                    (p->name && strcasecmp(p->name, name) == 0))
                        return p;
        }
        printf("No WiFi Direct device '%s' (say peers).\n", name);
        return NULL;
}

static bool is_pin(const char *s)
{
        size_t n = strlen(s);

        if (n != 4 && n != 8)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] < '0' || s[i] > '9')
                        return false;
        return true;
}

int plain_p2p_command(PlainP2p *pp, char **words)
{
        const char *w = words[0];
        size_t n = strv_length(words);
        const P2pPeer *p;

        if (streq(w, "peers") && n == 1) {
                if (pp->list.n == 0)
                        printf("No WiFi Direct devices found (say find).\n");
                for (size_t i = 0; i < pp->list.n; i++) {
                        _cleanup_free_ char *m = p2p_methods_text(&pp->list.peers[i]);
                        printf("%s (%s): %s; connect by %s\n", p2p_peer_label(&pp->list.peers[i]),
                               strempty(pp->list.peers[i].type), p2p_state_text(&pp->list.peers[i]),
                               m ? m : "-");
                }
                return 1;
        }
        if (streq(w, "find") && n == 1) {
                snprintf(pp->what, sizeof(pp->what), "search for WiFi Direct devices");
                call(pp, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE, "P2PFind", "u", (uint32_t)30);
                return 1;
        }
        if (!streq(w, "connect") && !streq(w, "accept") && !streq(w, "reject") &&
            !streq(w, "disconnect"))
                return 0;
        if (n < 2) {
                printf("Say: %s NAME (peers lists them).\n", w);
                return 1;
        }
        if (streq(w, "accept")) {
                bool pin = n > 2 && is_pin(words[n - 1]);
                if (!(p = by_name(pp, words + 1, n - 1 - pin)))
                        return 1;
                snprintf(pp->what, sizeof(pp->what), "accept %s", p2p_peer_label(p));
                call(pp, p->path, ROAM_PEER_INTERFACE, "Accept", "s", pin ? words[n - 1] : "");
                return 1;
        }
        if (streq(w, "connect")) {
                const char *method = "push-button", *pin = "";
                size_t k = n;
                if (n > 3 && streq(words[n - 2], "pin") && is_pin(words[n - 1])) {
                        method = "keypad";
                        pin = words[n - 1];
                        k = n - 2;
                } else if (n > 2 && streq(words[n - 1], "show-pin")) {
                        method = "display";
                        k = n - 1;
                }
                if (!(p = by_name(pp, words + 1, k - 1)))
                        return 1;
                snprintf(pp->what, sizeof(pp->what), "connect to %s", p2p_peer_label(p));
                call(pp, p->path, ROAM_PEER_INTERFACE, "Connect", "ss", method, pin);
                return 1;
        }
        if (!(p = by_name(pp, words + 1, n - 1)))
                return 1;
        snprintf(pp->what, sizeof(pp->what), "%s %s", w, p2p_peer_label(p));
        call(pp, p->path, ROAM_PEER_INTERFACE, streq(w, "reject") ? "Reject" : "Disconnect", NULL);
        return 1;
}
