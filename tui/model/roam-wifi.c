/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-macro.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roam-wifi.h"
#include "roam-words.h"

static const char *const wifi_join_result_table[_WIFI_JOIN_RESULT_MAX] = {
    [WIFI_JOIN_CONNECTED] = "connected",
    [WIFI_JOIN_PORTAL] = "portal",
    [WIFI_JOIN_WRONG_KEY] = "wrong-key",
    [WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE] = "wrong-key-or-out-of-range",
    [WIFI_JOIN_AUTH_FAILED] = "auth-failed",
    [WIFI_JOIN_NOT_FOUND] = "not-found",
    [WIFI_JOIN_TIMEOUT] = "timeout",
    [WIFI_JOIN_CANCELED] = "canceled",
    [WIFI_JOIN_SHARED] = "shared",
    [WIFI_JOIN_REFUSED] = "refused",
};

DEFINE_STRING_TABLE_LOOKUP(wifi_join_result, WifiJoinResult);

int wifi_join_result_exit_status(WifiJoinResult r)
{
        switch (r) {
        case WIFI_JOIN_CONNECTED:
        case WIFI_JOIN_PORTAL:
        case WIFI_JOIN_SHARED:
                return 0;
        case WIFI_JOIN_WRONG_KEY:
        case WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE:
        case WIFI_JOIN_AUTH_FAILED:
                return WIFI_EXIT_WRONG_KEY;
        case WIFI_JOIN_NOT_FOUND:
                return WIFI_EXIT_NOT_FOUND;
        case WIFI_JOIN_REFUSED:
                return WIFI_EXIT_REFUSED;
        case WIFI_JOIN_TIMEOUT:
        case WIFI_JOIN_CANCELED:
        case _WIFI_JOIN_RESULT_MAX:
        case _WIFI_JOIN_RESULT_INVALID:
                break;
        }
        return 1;
}

void wifi_networks_free(WifiNetwork *n, size_t count)
{
        for (size_t i = 0; n && i < count; i++) {
                free(n[i].name);
                free(n[i].security);
                free(n[i].band);
        }
        free(n);
}

void wifi_link_done(WifiLink *l)
{
        if (!l)
                return;
        free(l->path);
        free(l->name);
        free(l->backend);
        free(l->backend_why);
        free(l->radio);
        free(l->join_step);
        wifi_networks_free(l->networks, l->n_networks);
        *l = (WifiLink){};
}

void wifi_links_free(WifiLink *l, size_t n)
{
        for (size_t i = 0; l && i < n; i++)
                wifi_link_done(&l[i]);
        free(l);
}

int wifi_ssid_display(const uint8_t *ssid, size_t len, char **ret)
{
        const char *s = (const char *)ssid;
        char *out, *p;

        if (len == 0)
                return (*ret = strdup("(hidden network)")) ? 0 : -ENOMEM;
        /* at most 4 bytes out for each byte in ("\xNN"), and a character stays as long */
        out = p = malloc(4 * len + 1);
        if (!out)
                return -ENOMEM;
        while (len > 0) {
                uint32_t c;
                int l = roam_utf8_decode(s, len, &c);

                if (l <= 0) {
                        p += sprintf(p, "\\x%02x", (uint8_t)*s);
                        s++;
                        len--;
                        continue;
                }
                if (roam_char_is_control(c) || roam_char_is_format(c))
                        *p++ = '?';
                else {
                        memcpy(p, s, (size_t)l);
                        p += l;
                }
                s += l;
                len -= (size_t)l;
        }
        *p = 0;
        *ret = out;
        return 0;
}

/* The bars follow roam_signal_word()'s steps, so bars and words never disagree: excellent 4,
 * good 3, fair 2, weak and very weak 1. */
static unsigned signal_bar_count(int dbm)
{
        if (dbm == 0)
                return 0;
        if (dbm >= -50)
                return 4;
        if (dbm >= -60)
                return 3;
        if (dbm >= -70)
                return 2;
        return 1;
}

void wifi_signal_bars(int dbm, bool utf8, char *buf, size_t size)
{
        static const char *const bars[] = {"\u2582", "\u2584", "\u2586", "\u2588"};
        unsigned n = signal_bar_count(dbm);
        size_t off = 0;

        if (size == 0)
                return;
        buf[0] = 0;
        for (unsigned i = 0; i < 4; i++) {
                const char *s = dbm == 0 ? " " : i < n ? (utf8 ? bars[i] : "|") : "_";
                int k = snprintf(buf + off, size - off, "%s", s);

                if (k < 0 || (size_t)k >= size - off)
                        return;
                off += (size_t)k;
        }
}

void wifi_signal_words(int dbm, bool in_range, char *buf, size_t size)
{
        const char *w = roam_signal_word(dbm);

        if (!in_range || !w)
                snprintf(buf, size, "%s", in_range ? "unknown" : "out of range");
        else
                snprintf(buf, size, "%s %d", w, dbm);
}

const char *wifi_security_words(const char *security)
{
        static const struct {
                const char *key, *words;
        } table[] = {
            {"open", "open"},
            {"owe", "open, encrypted (OWE)"},
            {"wpa", "WPA"},
            {"wpa2", "WPA2"},
            {"wpa3", "WPA3"},
            {"wpa2/wpa3", "WPA2/WPA3"},
            {"enterprise", "enterprise (802.1X)"},
            {"wep", "WEP (insecure)"},
            {"psk", "password"},
        };

        /* a saved network out of range: the owner may not say (wpa_supplicant) */
        if (!security || !*security)
                return "";
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(table[i].key, security))
                        return table[i].words;
        return "unknown security";
}

const char *wifi_backend_words(const char *backend)
{
        if (streq_ptr(backend, "networkmanager"))
                return "NetworkManager";
        if (streq_ptr(backend, "iwd"))
                return "iwd";
        if (streq_ptr(backend, "wpa_supplicant"))
                return "wpa_supplicant";
        return NULL;
}

bool wifi_backend_has_priority(const char *backend)
{
        return streq_ptr(backend, "networkmanager") || streq_ptr(backend, "wpa_supplicant");
}

void wifi_backend_priority_range(const char *backend, int32_t *lo, int32_t *hi)
{
        bool nm = streq_ptr(backend, "networkmanager");

        *lo = nm ? -999 : 0;
        *hi = nm ? 999 : 1000000;
}

bool wifi_security_needs_secret(const char *security)
{
        return security && !streq(security, "open") && !streq(security, "owe");
}

/* Join (us): the join under way and its step in words; field is the WifiLink. */
static int map_join(sd_bus_message *m, const char *key, void *field)
{
        WifiLink *l = field;
        const char *step;
        uint32_t id;
        int r;

        r = sd_bus_message_read(m, "(us)", &id, &step);
        if (r < 0)
                return r;
        l->join_id = id;
        return free_and_strdup(&l->join_step, step) < 0 ? -ENOMEM : 0;
}

static const BusMapEntry wifi_link_map[] = {
    {"WiFiBackend", "s", bus_map_string, offsetof(WifiLink, backend)},
    {"WiFiBackendWhy", "s", bus_map_string, offsetof(WifiLink, backend_why)},
    {"WiFiRadio", "s", bus_map_string, offsetof(WifiLink, radio)},
    {"Scanning", "b", bus_map_bool, offsetof(WifiLink, scanning)},
    {"LastScan", "t", bus_map_u64, offsetof(WifiLink, last_scan)},
    {"Join", "(us)", map_join, 0},
    {},
};

int wifi_link_read_properties(sd_bus_message *m, WifiLink *l)
{
        int r = bus_map_read_flags(m, wifi_link_map, BUS_MAP_SKIP_WRONG_TYPE, l, NULL);

        return r < 0 ? r : 0;
}

typedef struct NetProps {
        int32_t signal;
        char *security, *band;
        uint32_t bssids;
        bool known, connected, autoconnect, in_range;
        int32_t priority;
        uint64_t last_connected;
} NetProps;

static const BusMapEntry net_map[] = {
    {"signal", "i", bus_map_i32, offsetof(NetProps, signal)},
    {"security", "s", bus_map_string, offsetof(NetProps, security)},
    {"band", "s", bus_map_string, offsetof(NetProps, band)},
    {"bssids", "u", bus_map_u32, offsetof(NetProps, bssids)},
    {"known", "b", bus_map_bool, offsetof(NetProps, known)},
    {"connected", "b", bus_map_bool, offsetof(NetProps, connected)},
    {"autoconnect", "b", bus_map_bool, offsetof(NetProps, autoconnect)},
    {"in-range", "b", bus_map_bool, offsetof(NetProps, in_range)},
    {"priority", "i", bus_map_i32, offsetof(NetProps, priority)},
    {"last-connected", "t", bus_map_u64, offsetof(NetProps, last_connected)},
    {},
};

/* The reading order: connected, known in range, the others by signal, known out of range. */
static int network_rank(const WifiNetwork *n)
{
        if (n->connected)
                return 0;
        if (!n->in_range)
                return 3;
        return n->known ? 1 : 2;
}

static int network_compare(const void *a, const void *b)
{
        const WifiNetwork *x = a, *y = b;
        int rx = network_rank(x), ry = network_rank(y);
        unsigned bx = signal_bar_count(x->signal), by = signal_bar_count(y->signal);
        int c;

        if (rx != ry)
                return rx - ry;
        /* by bar count, not dBm: a row moves only when its bars change */
        if (bx != by)
                return bx > by ? -1 : 1;
        c = memcmp(x->ssid, y->ssid, MIN(x->ssid_len, y->ssid_len));
        if (c != 0)
                return c;
        return x->ssid_len < y->ssid_len ? -1 : x->ssid_len > y->ssid_len;
}

int wifi_link_read_networks(sd_bus_message *m, WifiLink *l)
{
        WifiNetwork *list = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(aysa{sv})");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'r', "aysa{sv}")) > 0) {
                NetProps p = {.in_range = true};
                const void *ssid;
                const char *name;
                size_t len;
                WifiNetwork *grown;

                r = sd_bus_message_read_array(m, 'y', &ssid, &len);
                if (r >= 0)
                        r = sd_bus_message_read(m, "s", &name);
                if (r >= 0)
                        r = bus_map_read_flags(m, net_map, BUS_MAP_SKIP_WRONG_TYPE, &p, NULL);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0 && len > WIFI_SSID_MAX)
                        r = -EBADMSG;
                grown = r >= 0 ? realloc(list, sizeof(*list) * (n + 1)) : NULL;
                if (r >= 0 && !grown)
                        r = -ENOMEM;
                if (r < 0) {
                        free(p.security);
                        free(p.band);
                        wifi_networks_free(list, n);
                        return r;
                }
                list = grown;
                list[n] = (WifiNetwork){
                    .ssid_len = len,
                    .signal = p.signal,
                    .security = p.security,
                    .band = p.band,
                    .bssids = p.bssids,
                    .known = p.known,
                    .connected = p.connected,
                    .autoconnect = p.autoconnect,
                    .in_range = p.in_range,
                    .priority = p.priority,
                    .last_connected = p.last_connected,
                };
                if (len > 0)
                        memcpy(list[n].ssid, ssid, len);
                /* roamd's display name is not trusted for the terminal: ours, from the
                 * bytes */
                r = wifi_ssid_display(list[n].ssid, len, &list[n].name);
                n++;
                if (r < 0) {
                        wifi_networks_free(list, n);
                        return r;
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                wifi_networks_free(list, n);
                return r;
        }
        if (n > 1)
                qsort(list, n, sizeof(*list), network_compare);
        wifi_networks_free(l->networks, l->n_networks);
        l->networks = list;
        l->n_networks = n;
        return 0;
}

WifiNetwork *wifi_link_find(const WifiLink *l, const uint8_t *ssid, size_t len)
{
        for (size_t i = 0; i < l->n_networks; i++)
                if (l->networks[i].ssid_len == len && memcmp(l->networks[i].ssid, ssid, len) == 0)
                        return &l->networks[i];
        return NULL;
}

typedef struct LinkName {
        char *name;
} LinkName;

static const BusMapEntry link_name_map[] = {
    {"Name", "s", bus_map_string, offsetof(LinkName, name)},
    {},
};

typedef struct ObjectsRead {
        WifiLink *links;
        size_t n;
        /* the Link interface's name of the last object, for the WiFi interface after it */
        char *path;
        char *name;
} ObjectsRead;

static WifiLink *links_get(ObjectsRead *o, const char *path)
{
        WifiLink *grown;

        for (size_t i = 0; i < o->n; i++)
                if (streq(o->links[i].path, path))
                        return &o->links[i];
        grown = realloc(o->links, sizeof(*grown) * (o->n + 1));
        if (!grown)
                return NULL;
        o->links = grown;
        grown[o->n] = (WifiLink){.path = strdup(path)};
        if (!grown[o->n].path)
                return NULL;
        return &grown[o->n++];
}

static int read_interface(sd_bus_message *m, const char *path, const char *interface,
                          void *userdata)
{
        ObjectsRead *o = userdata;
        int r;

        if (streq(interface, ROAM_LINK_INTERFACE)) {
                LinkName ln = {};

                r = bus_map_read_flags(m, link_name_map, BUS_MAP_SKIP_WRONG_TYPE, &ln, NULL);
                if (r < 0) {
                        free(ln.name);
                        return r;
                }
                free(o->path);
                free(o->name);
                o->path = strdup(path);
                o->name = ln.name;
                if (!o->path)
                        return -ENOMEM;
                for (size_t i = 0; i < o->n; i++)
                        if (streq(o->links[i].path, path) && !o->links[i].name)
                                return (o->links[i].name = strdup(strempty(ln.name))) ? 0 : -ENOMEM;
                return 0;
        }
        if (streq(interface, ROAM_WIFI_INTERFACE)) {
                WifiLink *l = links_get(o, path);

                if (!l)
                        return -ENOMEM;
                if (!l->name && o->path && streq(o->path, path) &&
                    !(l->name = strdup(strempty(o->name))))
                        return -ENOMEM;
                return wifi_link_read_properties(m, l);
        }
        return sd_bus_message_skip(m, "a{sv}");
}

int wifi_links_parse_objects(sd_bus_message *m, WifiLink **ret, size_t *ret_n)
{
        ObjectsRead o = {};
        int r;

        r = bus_map_read_objects(m, read_interface, &o);
        free(o.path);
        free(o.name);
        if (r < 0) {
                wifi_links_free(o.links, o.n);
                return r;
        }
        for (size_t i = 0; i < o.n; i++)
                if (!o.links[i].name && !(o.links[i].name = strdup(""))) {
                        wifi_links_free(o.links, o.n);
                        return -ENOMEM;
                }
        *ret = o.links;
        *ret_n = o.n;
        return 0;
}
