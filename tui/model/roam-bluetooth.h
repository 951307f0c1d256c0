/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "roam-macro.h"

/* The client's model of org.roam1.Bluetooth (docs/bluetooth.md, docs/dbus-api.md): what the
 * TUI's screen 7, plain mode and `roam bt` show, read from one GetAll (roam-props.c). Strings
 * are never NULL. */

typedef struct RoamBtAdapter {
        char *id, *address, *name;
        bool powered, discoverable, pairable, scanning;
} RoamBtAdapter;

typedef struct RoamBtDevice {
        char *address, *adapter, *name, *kind;
        char *network; /* "", "available", "connected" */
        char *interface;
        int16_t rssi; /* dBm, 127: not known */
        bool paired, trusted, connected;
        int32_t battery; /* %, -1: not known */
} RoamBtDevice;

/* The pairing agent's question (id 0: none). The passkey or PIN of confirm, show-pin and
 * show-passkey is not in the property, which every local user reads: the follower asks roamd
 * for it (GetQuestionValue, authorized like Answer) and puts it in value, "" when this caller
 * may not see it. */
typedef struct RoamBtQuestion {
        uint32_t id;
        char *kind, *address, *name, *value;
} RoamBtQuestion;

typedef struct RoamBluetooth {
        bool available; /* BlueZ runs */
        bool agent;     /* roamd's pairing agent is registered */
        char *last_event;
        RoamBtAdapter *adapters;
        size_t n_adapters;
        RoamBtDevice *devices;
        size_t n_devices;
        RoamBtQuestion question;
        uint32_t nfc_id; /* a tag from neard waiting for a yes or no, 0: none */
        char *nfc_text;
} RoamBluetooth;

void roam_bluetooth_done(RoamBluetooth *bt);
/* Reads a GetAll answer or a PropertiesChanged's a{sv}; unknown properties are skipped. */
int roam_bluetooth_read(sd_bus_message *props, void *userdata /* RoamBluetooth */);
/* The adapter the TUI shows: the first (roamd's default is the first powered one; one adapter
 * is the common case); NULL when there is none. */
const RoamBtAdapter *roam_bluetooth_adapter(const RoamBluetooth *bt);

/* roamd's refusal to read Bluetooth in words, with a final period ("roamd runs without
 * Bluetooth ([Bluetooth] Enable=no)."). */
const char *roam_bluetooth_error_words(const sd_bus_error *e);

bool roam_bt_question_is_secret(const char *kind);
/* The question and what the person should do, in one sentence: roam bt pair, plain mode and
 * the TUI's status line. */
void roam_bt_question_sentence(const RoamBtQuestion *q, char *buf, size_t size);

/* A PropertiesChanged of org.roam1.Bluetooth read into bt (what changed only): 1, 0 when the
 * signal is about another interface. */
int roam_bluetooth_read_changed(sd_bus_message *m, RoamBluetooth *bt);
/* Asks roamd for the code of bt's question when it has one (GetQuestionValue; blocking: the
 * CLI's). */
int roam_bluetooth_question_code(sd_bus *bus, RoamBluetooth *bt);

/* The CLI's read: one GetAll, then the question's code when it has one (GetQuestionValue).
 * Logs and returns a negative errno (-EHOSTDOWN: roamd is not running). */
int roam_bluetooth_load(sd_bus *bus, RoamBluetooth *bt);

/* The TUI's and plain mode's: org.roam1.Bluetooth followed on bus (its event loop), the code
 * of a new question asked for asynchronously before the owner hears of it. changed is called
 * after each read (error: roamd refused, then the model is cleared). */
typedef struct RoamBluetoothWatch RoamBluetoothWatch;
typedef void (*RoamBluetoothChanged)(RoamBluetoothWatch *w, const sd_bus_error *error,
                                     void *userdata);
int roam_bluetooth_watch_new(sd_bus *bus, RoamBluetoothChanged changed, void *userdata,
                             RoamBluetoothWatch **ret);
RoamBluetoothWatch *roam_bluetooth_watch_free(RoamBluetoothWatch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(RoamBluetoothWatch *, roam_bluetooth_watch_free);
const RoamBluetooth *roam_bluetooth_watch_get(const RoamBluetoothWatch *w);
sd_bus *roam_bluetooth_watch_get_bus(const RoamBluetoothWatch *w);
bool roam_bluetooth_watch_loaded(const RoamBluetoothWatch *w);
int roam_bluetooth_watch_reload(RoamBluetoothWatch *w);
