/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/* A client of BlueZ (org.bluez on the system bus): its ObjectManager's adapters (Adapter1),
 * devices (Device1, with Battery1 and Network1 when present), followed through
 * InterfacesAdded/Removed and PropertiesChanged, and calls on them. BlueZ coming and going is
 * followed by its bus name (shared/roam-bus-name.c): when it leaves, every object is dropped. */

#define BLUEZ_SERVICE "org.bluez"

typedef struct BluezAdapter {
        char *path;
        char *id; /* "hci0": the last element of the path */
        char address[18];
        char *alias;
        bool powered, discoverable, pairable, discovering;
} BluezAdapter;

typedef struct BluezDevice {
        char *path;
        char *adapter; /* object path */
        char address[18];
        char *name; /* Alias (BlueZ falls back to the address), else Name */
        uint32_t device_class;
        uint16_t appearance;
        int16_t rssi;
        bool has_rssi;
        bool paired, trusted, connected, blocked, legacy_pairing;
        int battery; /* percent, -1 unknown */
        bool has_network;
        bool network_connected;
        char *network_interface; /* "bnep0" while connected */
        bool nap;                /* offers the NAP service (UUID 0x1116) */
} BluezDevice;

/* At most this many devices are followed. A scan in a crowded place (a station, a
 * conference) shows hundreds of passing devices, each one more entry in every Devices
 * emission; beyond the cap, devices that are neither paired, trusted nor connected are left
 * out until others go (BlueZ forgets unpaired ones a while after the scan). */
#define BLUEZ_DEVICES_MAX 256

typedef struct Bluez Bluez;
typedef struct BusNameWatch BusNameWatch;
typedef void (*bluez_changed_t)(Bluez *b, void *userdata);

struct Bluez {
        sd_bus *bus;
        BusNameWatch *name; /* org.bluez's owner (bluez_owner()) */
        bool following;     /* its objects are read (or asked) for the current owner */
        BluezAdapter **adapters;
        size_t n_adapters;
        BluezDevice **devices; /* in the order BlueZ showed them */
        size_t n_devices;
        BluezDevice **by_path; /* the same, sorted by path: signals name their object */
        bool capped;           /* said once that devices were left out */

        bluez_changed_t on_changed;  /* any object or property changed */
        bluez_changed_t on_appeared; /* BlueZ's objects were read after it came */
        bluez_changed_t on_vanished; /* BlueZ left the bus */
        void (*on_device_removed)(Bluez *b, const char *path, void *userdata);
        void *userdata;

        sd_bus_slot *added_slot, *removed_slot, *props_slot, *objects_slot;
};

int bluez_new(sd_bus *bus, Bluez **ret);
Bluez *bluez_free(Bluez *b);
/* Starts following BlueZ: the matches, then the owner and its objects (asynchronously). */
int bluez_start(Bluez *b);

/* The unique name of org.bluez, NULL while it is not on the bus. */
const char *bluez_owner(const Bluez *b);

BluezAdapter *bluez_get_adapter(Bluez *b, const char *id_or_path);
/* The first powered adapter, else the first one. */
BluezAdapter *bluez_default_adapter(Bluez *b);
BluezDevice *bluez_get_device(Bluez *b, const char *address_or_path);

/* An asynchronous call on a BlueZ object; callback gets the reply (or error). */
int bluez_call(Bluez *b, sd_bus_slot **ret_slot, const char *path, const char *interface,
               const char *method, uint64_t timeout_usec, sd_bus_message_handler_t callback,
               void *userdata, const char *types, ...);
/* Sets a boolean property (Powered, Discoverable, Pairable, Trusted). */
int bluez_set_bool(Bluez *b, sd_bus_slot **ret_slot, const char *path, const char *interface,
                   const char *property, bool value, sd_bus_message_handler_t callback,
                   void *userdata);

bool bluez_address_valid(const char *s);
