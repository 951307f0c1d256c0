/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdarg.h>

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
        sd_bus_slot_unref(b->owner_slot);
        sd_bus_slot_unref(b->added_slot);
        sd_bus_slot_unref(b->removed_slot);
        sd_bus_slot_unref(b->props_slot);
        sd_bus_slot_unref(b->objects_slot);
        sd_bus_slot_unref(b->get_owner_slot);
        bluez_clear(b);
        free(b->owner);
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

static bool from_bluez(Bluez *b, sd_bus_message *m)
{
        /* Only BlueZ's current owner speaks for org.bluez. */
        return b->owner && streq_ptr(sd_bus_message_get_sender(m), b->owner);
}

static void notify(Bluez *b)
{
        if (b->on_changed)
                b->on_changed(b, b->userdata);
}

/* Reads one variant of the given basic type into *ret; skips it if it has another type. */
static int read_variant(sd_bus_message *m, char type, void *ret)
{
        char s[2] = {type, 0};
        int r = sd_bus_message_enter_container(m, 'v', s);

        if (r <= 0)
                return r == 0 ? 0 : sd_bus_message_skip(m, "v");
        r = sd_bus_message_read_basic(m, type, ret);
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 1;
}

static int read_variant_bool(sd_bus_message *m, bool *ret)
{
        int v, r = read_variant(m, 'b', &v);

        if (r > 0)
                *ret = v;
        return r;
}

/* Names and aliases are whatever a device in radio range calls itself: cleaned (controls,
 * bidi and zero-width characters dropped, roam-text.c) before they reach our bus and terminals. */
static int read_variant_str(sd_bus_message *m, char **ret)
{
        _cleanup_free_ char *clean = NULL;
        const char *v;
        int r = read_variant(m, 's', &v);

        if (r > 0 && (roam_text_clean_str(v, 0, &clean) < 0 || free_and_strdup(ret, clean) < 0))
                return -ENOMEM;
        return r;
}

static int read_uuids(sd_bus_message *m, BluezDevice *d)
{
        const char *u;
        int r = sd_bus_message_enter_container(m, 'v', "as");

        if (r <= 0)
                return r == 0 ? 0 : sd_bus_message_skip(m, "v");
        r = sd_bus_message_enter_container(m, 'a', "s");
        if (r < 0)
                return r;
        d->nap = false;
        while ((r = sd_bus_message_read(m, "s", &u)) > 0)
                if (strcasecmp(u, NAP_UUID) == 0)
                        d->nap = true;
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int adapter_prop(BluezAdapter *a, sd_bus_message *m, const char *name)
{
        if (streq(name, "Address")) {
                const char *v;
                int r = read_variant(m, 's', &v);
                if (r > 0)
                        snprintf(a->address, sizeof(a->address), "%s", v);
                return r;
        }
        if (streq(name, "Alias"))
                return read_variant_str(m, &a->alias);
        if (streq(name, "Powered"))
                return read_variant_bool(m, &a->powered);
        if (streq(name, "Discoverable"))
                return read_variant_bool(m, &a->discoverable);
        if (streq(name, "Pairable"))
                return read_variant_bool(m, &a->pairable);
        if (streq(name, "Discovering"))
                return read_variant_bool(m, &a->discovering);
        return sd_bus_message_skip(m, "v");
}

static int device_prop(BluezDevice *d, const char *iface, sd_bus_message *m, const char *name)
{
        int r;

        if (streq(iface, BATTERY_IFACE) && streq(name, "Percentage")) {
                uint8_t v;
                r = read_variant(m, 'y', &v);
                if (r > 0)
                        d->battery = v <= 100 ? v : -1;
                return r;
        }
        if (streq(iface, NETWORK_IFACE)) {
                if (streq(name, "Connected"))
                        return read_variant_bool(m, &d->network_connected);
                if (streq(name, "Interface"))
                        return read_variant_str(m, &d->network_interface);
                return sd_bus_message_skip(m, "v");
        }
        if (!streq(iface, DEVICE_IFACE))
                return sd_bus_message_skip(m, "v");
        if (streq(name, "Address")) {
                const char *v;
                r = read_variant(m, 's', &v);
                if (r > 0)
                        snprintf(d->address, sizeof(d->address), "%s", v);
                return r;
        }
        if (streq(name, "Alias") || (streq(name, "Name") && !d->name))
                return read_variant_str(m, &d->name);
        if (streq(name, "Adapter")) {
                const char *v;
                r = read_variant(m, 'o', &v);
                if (r > 0 && free_and_strdup(&d->adapter, v) < 0)
                        return -ENOMEM;
                return r;
        }
        if (streq(name, "Class"))
                return read_variant(m, 'u', &d->device_class);
        if (streq(name, "Appearance"))
                return read_variant(m, 'q', &d->appearance);
        if (streq(name, "RSSI")) {
                r = read_variant(m, 'n', &d->rssi);
                if (r > 0)
                        d->has_rssi = true;
                return r;
        }
        if (streq(name, "Paired"))
                return read_variant_bool(m, &d->paired);
        if (streq(name, "Trusted"))
                return read_variant_bool(m, &d->trusted);
        if (streq(name, "Connected"))
                return read_variant_bool(m, &d->connected);
        if (streq(name, "Blocked"))
                return read_variant_bool(m, &d->blocked);
        if (streq(name, "LegacyPairing"))
                return read_variant_bool(m, &d->legacy_pairing);
        if (streq(name, "UUIDs"))
                return read_uuids(m, d);
        return sd_bus_message_skip(m, "v");
}

/* Reads an a{sv} of iface into the object at path (created for Adapter1/Device1). */
static int read_props(Bluez *b, const char *path, const char *iface, sd_bus_message *m)
{
        BluezAdapter *a = NULL;
        BluezDevice *d = NULL;
        bool created = false;
        const char *name;
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

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &name);
                if (r < 0)
                        return r;
                r = a ? adapter_prop(a, m, name) : device_prop(d, iface, m, name);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
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

/* One object of an ObjectManager answer or InterfacesAdded: a{sa{sv}}. */
static int read_interfaces(Bluez *b, const char *path, sd_bus_message *m)
{
        const char *iface;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sa{sv}}");
        if (r < 0)
                return r;
        /* Device1 first would be nicer, but BlueZ sends Device1 before Battery1/Network1 in
         * practice; a Battery1 seen before its Device1 is simply skipped. */
        while ((r = sd_bus_message_enter_container(m, 'e', "sa{sv}")) > 0) {
                r = sd_bus_message_read(m, "s", &iface);
                if (r < 0)
                        return r;
                r = read_props(b, path, iface, m);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
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
        const char *path;
        int r;

        b->objects_slot = sd_bus_slot_unref(b->objects_slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_warning("BlueZ did not list its objects: %s",
                            sd_bus_message_get_error(m)->message);
                return 0;
        }
        bluez_clear(b);
        r = sd_bus_message_enter_container(m, 'a', "{oa{sa{sv}}}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "oa{sa{sv}}")) > 0) {
                r = sd_bus_message_read(m, "o", &path);
                if (r >= 0)
                        r = read_interfaces(b, path, m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r < 0)
                log_warning_errno(r, "Malformed object list from BlueZ: %m");
        log_info("BlueZ: %zu adapters, %zu devices", b->n_adapters, b->n_devices);
        if (b->on_appeared)
                b->on_appeared(b, b->userdata);
        notify(b);
        return 0;
}

static void owner_changed(Bluez *b, const char *owner)
{
        if (streq_ptr(owner, b->owner))
                return;
        if (b->owner) {
                log_info("BlueZ left the bus");
                b->owner = mfree(b->owner);
                b->objects_slot = sd_bus_slot_unref(b->objects_slot);
                bluez_clear(b);
                if (b->on_vanished)
                        b->on_vanished(b, b->userdata);
                notify(b);
        }
        if (!owner || !*owner)
                return;
        b->owner = strdup(owner);
        if (!b->owner) {
                log_oom();
                return;
        }
        if (sd_bus_call_method_async(b->bus, &b->objects_slot, BLUEZ_SERVICE, "/", OBJMGR_IFACE,
                                     "GetManagedObjects", on_objects, b, NULL) < 0)
                log_warning("Cannot ask BlueZ for its objects");
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        const char *name, *old, *new;

        if (sd_bus_message_read(m, "sss", &name, &old, &new) < 0 || !streq(name, BLUEZ_SERVICE))
                return 0;
        owner_changed(userdata, new);
        return 0;
}

static int on_get_owner(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        Bluez *b = userdata;
        const char *owner;

        b->get_owner_slot = sd_bus_slot_unref(b->get_owner_slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_info("BlueZ is not on the bus; Bluetooth follows when it comes");
                return 0;
        }
        if (sd_bus_message_read(m, "s", &owner) >= 0)
                owner_changed(b, owner);
        return 0;
}

static int on_interfaces_added(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        Bluez *b = userdata;
        const char *path;

        if (!from_bluez(b, m) || b->objects_slot)
                return 0;
        if (sd_bus_message_read(m, "o", &path) < 0 || read_interfaces(b, path, m) < 0) {
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

        r = sd_bus_match_signal_async(b->bus, &b->owner_slot, "org.freedesktop.DBus",
                                      "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                      "NameOwnerChanged", on_name_owner_changed, NULL, b);
        if (r >= 0)
                r = sd_bus_match_signal_async(b->bus, &b->added_slot, BLUEZ_SERVICE, "/",
                                              OBJMGR_IFACE, "InterfacesAdded", on_interfaces_added,
                                              NULL, b);
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
        r = sd_bus_call_method_async(b->bus, &b->get_owner_slot, "org.freedesktop.DBus",
                                     "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                     "GetNameOwner", on_get_owner, b, "s", BLUEZ_SERVICE);
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

        if (!b->owner)
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
