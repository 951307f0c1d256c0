/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdarg.h>

#include "roam-bus-map.h"
#include "roam-bus-name.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-text.h"
#include "roamd-client-bluez.h"

#define ADAPTER_IFACE  "org.bluez.Adapter1"
#define DEVICE_IFACE   "org.bluez.Device1"
#define BATTERY_IFACE  "org.bluez.Battery1"
#define NETWORK_IFACE  "org.bluez.Network1"
#define NAP_UUID       "00001116-0000-1000-8000-00805f9b34fb"
#define OBJMGR_IFACE   "org.freedesktop.DBus.ObjectManager"
#define PROPS_IFACE    "org.freedesktop.DBus.Properties"
#define BLUEZ_PATH_NS  "/org/bluez"
#define BLUEZ_CALL_MAX (120 * USEC_PER_SEC)

static void *mfree(void *p)
{
        free(p);
        return NULL;
}

bool bluez_address_valid(const char *s)
{
        if (!s || strlen(s) != 17)
                return false;
        for (int i = 0; i < 17; i++)
                if (i % 3 == 2 ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
                        return false;
        return true;
}

static void adapter_free(BluezAdapter *a)
{
        if (!a)
                return;
        free(a->path);
        free(a->id);
        free(a->alias);
        free(a);
}

static void device_free(BluezDevice *d)
{
        if (!d)
                return;
        free(d->path);
        free(d->adapter);
        free(d->name);
        free(d->network_interface);
        free(d);
}

static void bluez_clear(Bluez *b)
{
        for (size_t i = 0; i < b->n_adapters; i++)
                adapter_free(b->adapters[i]);
        for (size_t i = 0; i < b->n_devices; i++)
                device_free(b->devices[i]);
        b->adapters = mfree(b->adapters);
        b->devices = mfree(b->devices);
        b->by_path = mfree(b->by_path);
        b->n_adapters = b->n_devices = 0;
}

Bluez *bluez_free(Bluez *b)
{
        if (!b)
                return NULL;
        bus_name_watch_free(b->name);
        sd_bus_slot_unref(b->added_slot);
        sd_bus_slot_unref(b->removed_slot);
        sd_bus_slot_unref(b->props_slot);
        sd_bus_slot_unref(b->objects_slot);
        bluez_clear(b);
        sd_bus_unref(b->bus);
        free(b);
        return NULL;
}

int bluez_new(sd_bus *bus, Bluez **ret)
{
        Bluez *b = calloc(1, sizeof(*b));

        if (!b)
                return -ENOMEM;
        b->bus = sd_bus_ref(bus);
        *ret = b;
        return 0;
}

BluezAdapter *bluez_get_adapter(Bluez *b, const char *s)
{
        for (size_t i = 0; s && i < b->n_adapters; i++)
                if (streq(b->adapters[i]->id, s) || streq(b->adapters[i]->path, s))
                        return b->adapters[i];
        return NULL;
}

BluezAdapter *bluez_default_adapter(Bluez *b)
{
        for (size_t i = 0; i < b->n_adapters; i++)
                if (b->adapters[i]->powered)
                        return b->adapters[i];
        return b->n_adapters > 0 ? b->adapters[0] : NULL;
}

/* Where path is, or would go, in b->by_path. */
static size_t device_pos(Bluez *b, const char *path, bool *ret_found)
{
        size_t lo = 0, hi = b->n_devices;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(b->by_path[mid]->path, path);
                if (c == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_found = false;
        return lo;
}

BluezDevice *bluez_get_device(Bluez *b, const char *s)
{
        bool found;
        size_t p;

        if (!s)
                return NULL;
        /* object paths (every signal) by index; addresses (a client's call) one by one */
        if (s[0] == '/') {
                p = device_pos(b, s, &found);
                return found ? b->by_path[p] : NULL;
        }
        for (size_t i = 0; i < b->n_devices; i++)
                if (strcasecmp(b->devices[i]->address, s) == 0)
                        return b->devices[i];
        return NULL;
}

static int device_add(Bluez *b, const char *path, BluezDevice **ret)
{
        BluezDevice **n, **idx;
        BluezDevice *d;
        bool found;
        size_t p;

        n = realloc(b->devices, sizeof(*n) * (b->n_devices + 1));
        if (!n)
                return -ENOMEM;
        b->devices = n;
        idx = realloc(b->by_path, sizeof(*idx) * (b->n_devices + 1));
        if (!idx)
                return -ENOMEM;
        b->by_path = idx;
        d = calloc(1, sizeof(*d));
        if (!d || !(d->path = strdup(path))) {
                device_free(d);
                return -ENOMEM;
        }
        d->battery = -1;
        p = device_pos(b, path, &found);
        memmove(idx + p + 1, idx + p, (b->n_devices - p) * sizeof(*idx));
        idx[p] = d;
        b->devices[b->n_devices++] = d;
        *ret = d;
        return 0;
}

static void device_drop(Bluez *b, BluezDevice *d)
{
        bool found;
        size_t p = device_pos(b, d->path, &found);

        if (found)
                memmove(b->by_path + p, b->by_path + p + 1,
                        (b->n_devices - p - 1) * sizeof(*b->by_path));
        for (size_t i = 0; i < b->n_devices; i++)
                if (b->devices[i] == d) {
                        memmove(b->devices + i, b->devices + i + 1,
                                (b->n_devices - i - 1) * sizeof(*b->devices));
                        break;
                }
        b->n_devices--;
        device_free(d);
}

const char *bluez_owner(const Bluez *b)
{
        return bus_name_watch_owner(b->name);
}

static bool from_bluez(Bluez *b, sd_bus_message *m)
{
        /* Only BlueZ's current owner speaks for org.bluez. */
        return bluez_owner(b) && streq_ptr(sd_bus_message_get_sender(m), bluez_owner(b));
}

static void notify(Bluez *b)
{
        if (b->on_changed)
                b->on_changed(b, b->userdata);
}

/* Names and aliases are whatever a device in radio range calls itself: cleaned (controls,
 * bidi and zero-width characters dropped, roam-text.c) before they reach our bus and terminals. */
static int set_clean_str(sd_bus_message *m, const char *key, void *field)
{
        _cleanup_free_ char *clean = NULL;
        const char *v;
        int r = sd_bus_message_read_basic(m, 's', &v);

        if (r < 0)
                return r;
        if (roam_text_clean_str(v, 0, &clean) < 0 || free_and_strdup(field, clean) < 0)
                return -ENOMEM;
        return 0;
}

/* Name only until an Alias came (BlueZ's Alias falls back to the address, Name to nothing). */
static int set_name(sd_bus_message *m, const char *key, void *field)
{
        return *(char **)field ? sd_bus_message_skip(m, "s") : set_clean_str(m, key, field);
}

/* into a char[18] */
static int set_address(sd_bus_message *m, const char *key, void *field)
{
        const char *v;
        int r = sd_bus_message_read_basic(m, 's', &v);

        if (r >= 0)
                snprintf(field, sizeof(((BluezDevice *)NULL)->address), "%s", v);
        return r;
}

static int set_rssi(sd_bus_message *m, const char *key, void *field)
{
        BluezDevice *d = field;
        int r = bus_map_i16(m, key, &d->rssi);

        if (r >= 0)
                d->has_rssi = true;
        return r;
}

static int set_battery(sd_bus_message *m, const char *key, void *field)
{
        BluezDevice *d = field;
        uint8_t v;
        int r = sd_bus_message_read_basic(m, 'y', &v);

        if (r >= 0)
                d->battery = v <= 100 ? v : -1;
        return r;
}

static int set_uuids(sd_bus_message *m, const char *key, void *field)
{
        BluezDevice *d = field;
        const char *u;
        int r = sd_bus_message_enter_container(m, 'a', "s");

        if (r < 0)
                return r;
        d->nap = false;
        while ((r = sd_bus_message_read(m, "s", &u)) > 0)
                if (strcasecmp(u, NAP_UUID) == 0)
                        d->nap = true;
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static const BusMapEntry adapter_map[] = {
    {"Address", "s", set_address, offsetof(BluezAdapter, address)},
    {"Alias", "s", set_clean_str, offsetof(BluezAdapter, alias)},
    {"Powered", "b", bus_map_bool, offsetof(BluezAdapter, powered)},
    {"Discoverable", "b", bus_map_bool, offsetof(BluezAdapter, discoverable)},
    {"Pairable", "b", bus_map_bool, offsetof(BluezAdapter, pairable)},
    {"Discovering", "b", bus_map_bool, offsetof(BluezAdapter, discovering)},
    {},
};

static const BusMapEntry device_map[] = {
    {"Address", "s", set_address, offsetof(BluezDevice, address)},
    {"Alias", "s", set_clean_str, offsetof(BluezDevice, name)},
    {"Name", "s", set_name, offsetof(BluezDevice, name)},
    {"Adapter", "o", bus_map_string, offsetof(BluezDevice, adapter)},
    {"Class", "u", bus_map_u32, offsetof(BluezDevice, device_class)},
    {"Appearance", "q", bus_map_u16, offsetof(BluezDevice, appearance)},
    {"RSSI", "n", set_rssi, 0},
    {"Paired", "b", bus_map_bool, offsetof(BluezDevice, paired)},
    {"Trusted", "b", bus_map_bool, offsetof(BluezDevice, trusted)},
    {"Connected", "b", bus_map_bool, offsetof(BluezDevice, connected)},
    {"Blocked", "b", bus_map_bool, offsetof(BluezDevice, blocked)},
    {"LegacyPairing", "b", bus_map_bool, offsetof(BluezDevice, legacy_pairing)},
    {"UUIDs", "as", set_uuids, 0},
    {},
};

static const BusMapEntry battery_map[] = {
    {"Percentage", "y", set_battery, 0},
    {},
};

static const BusMapEntry network_map[] = {
    {"Connected", "b", bus_map_bool, offsetof(BluezDevice, network_connected)},
    {"Interface", "s", set_clean_str, offsetof(BluezDevice, network_interface)},
    {},
};

/* Reads an a{sv} of iface into the object at path (created for Adapter1/Device1). */
static int read_props(Bluez *b, const char *path, const char *iface, sd_bus_message *m)
{
        BluezAdapter *a = NULL;
        BluezDevice *d = NULL;
        const BusMapEntry *map;
        bool created = false;
        int r;

        if (streq(iface, ADAPTER_IFACE)) {
                a = bluez_get_adapter(b, path);
                if (!a) {
                        BluezAdapter **n = realloc(b->adapters, sizeof(*n) * (b->n_adapters + 1));
                        const char *slash = strrchr(path, '/');
                        if (!n)
                                return -ENOMEM;
                        b->adapters = n;
                        a = calloc(1, sizeof(*a));
                        if (!a || !(a->path = strdup(path)) ||
                            !(a->id = strdup(slash ? slash + 1 : path))) {
                                adapter_free(a);
                                return -ENOMEM;
                        }
                        b->adapters[b->n_adapters++] = a;
                }
        } else if (streq(iface, DEVICE_IFACE) || streq(iface, BATTERY_IFACE) ||
                   streq(iface, NETWORK_IFACE)) {
                d = bluez_get_device(b, path);
                if (!d && streq(iface, DEVICE_IFACE)) {
                        r = device_add(b, path, &d);
                        if (r < 0)
                                return r;
                        created = true;
                }
                if (d && streq(iface, NETWORK_IFACE))
                        d->has_network = true;
        }
        if (!a && !d)
                return sd_bus_message_skip(m, "a{sv}");

        if (a)
                map = adapter_map;
        else if (streq(iface, BATTERY_IFACE))
                map = battery_map;
        else if (streq(iface, NETWORK_IFACE))
                map = network_map;
        else
                map = device_map;
        /* a value of another type than BlueZ documents is skipped, the others taken */
        r = bus_map_read_flags(m, map, BUS_MAP_SKIP_WRONG_TYPE, a ? (void *)a : (void *)d, NULL);
        if (r < 0)
                return r;
        if (created && b->n_devices > BLUEZ_DEVICES_MAX && !d->paired && !d->trusted &&
            !d->connected) {
                if (!b->capped)
                        log_notice("BlueZ: more than %d devices around; new ones that are not "
                                   "paired are left out until others go.",
                                   BLUEZ_DEVICES_MAX);
                b->capped = true;
                device_drop(b, d);
        } else if (b->n_devices < BLUEZ_DEVICES_MAX / 2)
                b->capped = false;
        return r;
}

/* One interface of an object in an ObjectManager answer or InterfacesAdded. Device1 first
 * would be nicer, but BlueZ sends Device1 before Battery1/Network1 in practice; a Battery1
 * seen before its Device1 is simply skipped. */
static int on_interface(sd_bus_message *m, const char *path, const char *iface, void *userdata)
{
        return read_props(userdata, path, iface, m);
}

static void remove_object(Bluez *b, const char *path, const char *iface)
{
        BluezDevice *d;

        for (size_t i = 0; i < b->n_adapters; i++)
                if (streq(b->adapters[i]->path, path) && streq(iface, ADAPTER_IFACE)) {
                        adapter_free(b->adapters[i]);
                        memmove(b->adapters + i, b->adapters + i + 1,
                                (b->n_adapters - i - 1) * sizeof(*b->adapters));
                        b->n_adapters--;
                        return;
                }
        d = bluez_get_device(b, path);
        if (!d)
                return;
        if (streq(iface, BATTERY_IFACE))
                d->battery = -1;
        else if (streq(iface, NETWORK_IFACE)) {
                d->has_network = d->network_connected = false;
                d->network_interface = mfree(d->network_interface);
        } else if (streq(iface, DEVICE_IFACE)) {
                if (b->on_device_removed)
                        b->on_device_removed(b, path, b->userdata);
                device_drop(b, d);
        }
}

static int on_objects(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        Bluez *b = userdata;
        int r;

        b->objects_slot = sd_bus_slot_unref(b->objects_slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_warning("BlueZ did not list its objects: %s",
                            sd_bus_message_get_error(m)->message);
                return 0;
        }
        bluez_clear(b);
        r = bus_map_read_objects(m, on_interface, b);
        if (r < 0)
                log_warning_errno(r, "Malformed object list from BlueZ: %m");
        log_info("BlueZ: %zu adapters, %zu devices", b->n_adapters, b->n_devices);
        if (b->on_appeared)
                b->on_appeared(b, b->userdata);
        notify(b);
        return 0;
}

/* BlueZ's owner, told by the name watch (its first answer too): the objects of the one before
 * are dropped, the new one's read. */
static int on_owner(BusNameWatch *w, const char *owner, void *userdata)
{
        Bluez *b = userdata;

        if (b->following) {
                log_info("BlueZ left the bus");
                b->following = false;
                b->objects_slot = sd_bus_slot_unref(b->objects_slot);
                bluez_clear(b);
                if (b->on_vanished)
                        b->on_vanished(b, b->userdata);
                notify(b);
        } else if (!*owner)
                log_info("BlueZ is not on the bus; Bluetooth follows when it comes");
        if (!*owner)
                return 0;
        b->following = true;
        if (sd_bus_call_method_async(b->bus, &b->objects_slot, BLUEZ_SERVICE, "/", OBJMGR_IFACE,
                                     "GetManagedObjects", on_objects, b, NULL) < 0)
                log_warning("Cannot ask BlueZ for its objects");
        return 0;
}

static int on_interfaces_added(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        Bluez *b = userdata;
        const char *path;

        if (!from_bluez(b, m) || b->objects_slot)
                return 0;
        if (sd_bus_message_read(m, "o", &path) < 0 ||
            bus_map_read_interfaces(m, path, on_interface, b) < 0) {
                log_warning("Malformed InterfacesAdded from BlueZ");
                return 0;
        }
        notify(b);
        return 0;
}

static int on_interfaces_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        Bluez *b = userdata;
        const char *path, *iface;
        int r;

        if (!from_bluez(b, m) || b->objects_slot)
                return 0;
        if (sd_bus_message_read(m, "o", &path) < 0 ||
            sd_bus_message_enter_container(m, 'a', "s") < 0)
                return 0;
        while ((r = sd_bus_message_read(m, "s", &iface)) > 0)
                remove_object(b, path, iface);
        notify(b);
        return 0;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        Bluez *b = userdata;
        const char *iface, *path = sd_bus_message_get_path(m);

        if (!from_bluez(b, m) || b->objects_slot || !path)
                return 0;
        if (sd_bus_message_read(m, "s", &iface) < 0)
                return 0;
        /* Only objects already known: a stray signal never creates one. */
        if (!bluez_get_adapter(b, path) && !bluez_get_device(b, path))
                return 0;
        if (read_props(b, path, iface, m) < 0) {
                log_warning("Malformed PropertiesChanged from BlueZ on %s", path);
                return 0;
        }
        /* BlueZ invalidates RSSI when a device is no longer seen by a scan. */
        if (streq(iface, DEVICE_IFACE) && sd_bus_message_enter_container(m, 'a', "s") > 0) {
                BluezDevice *d = bluez_get_device(b, path);
                const char *name;

                while (d && sd_bus_message_read(m, "s", &name) > 0)
                        if (streq(name, "RSSI"))
                                d->has_rssi = false;
        }
        notify(b);
        return 0;
}

int bluez_start(Bluez *b)
{
        int r;

        r = sd_bus_match_signal_async(b->bus, &b->added_slot, BLUEZ_SERVICE, "/", OBJMGR_IFACE,
                                      "InterfacesAdded", on_interfaces_added, NULL, b);
        if (r >= 0)
                r = sd_bus_match_signal_async(b->bus, &b->removed_slot, BLUEZ_SERVICE, "/",
                                              OBJMGR_IFACE, "InterfacesRemoved",
                                              on_interfaces_removed, NULL, b);
        if (r >= 0)
                r = sd_bus_add_match_async(
                    b->bus, &b->props_slot,
                    "type='signal',sender='" BLUEZ_SERVICE "',interface='" PROPS_IFACE
                    "',member='PropertiesChanged',path_namespace='" BLUEZ_PATH_NS "'",
                    on_properties_changed, NULL, b);
        if (r < 0)
                return log_error_errno(r, "Failed to follow BlueZ signals: %m");
        /* its first answer too: BlueZ is not activated, and its unique name checks senders */
        r = bus_name_watch_new_full(b->bus, BLUEZ_SERVICE, BUS_NAME_WATCH_TELL_FIRST, on_owner, b,
                                    &b->name);
        if (r < 0)
                return log_error_errno(r, "Failed to look for BlueZ: %m");
        return 0;
}

int bluez_call(Bluez *b, sd_bus_slot **ret_slot, const char *path, const char *interface,
               const char *method, uint64_t timeout_usec, sd_bus_message_handler_t callback,
               void *userdata, const char *types, ...)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        va_list ap;
        int r;

        if (!bluez_owner(b))
                return -EHOSTDOWN;
        r = sd_bus_message_new_method_call(b->bus, &call, BLUEZ_SERVICE, path, interface, method);
        if (r < 0)
                return r;
        if (types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(call, types, ap);
                va_end(ap);
                if (r < 0)
                        return r;
        }
        return sd_bus_call_async(b->bus, ret_slot, call, callback, userdata,
                                 timeout_usec ? timeout_usec : BLUEZ_CALL_MAX);
}

int bluez_set_bool(Bluez *b, sd_bus_slot **ret_slot, const char *path, const char *interface,
                   const char *property, bool value, sd_bus_message_handler_t callback,
                   void *userdata)
{
        return bluez_call(b, ret_slot, path, PROPS_IFACE, "Set", 0, callback, userdata, "ssv",
                          interface, property, "b", (int)value);
}
