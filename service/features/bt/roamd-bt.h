/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roam-macro.h"
#include "roamd-client-bluez.h"
#include "roamd-ndef.h"

typedef struct Core Core;

/* Bluetooth in roamd: BlueZ's adapters and devices on roamd's bus (org.roam1.Bluetooth), the
 * pairing agent (org.bluez.Agent1) whose questions clients answer, actions forwarded to
 * BlueZ, and NFC handover records that lead to pairing. docs/bluetooth.md. */

typedef enum BtQuestionKind {
        BT_QUESTION_NONE,
        BT_QUESTION_CONFIRM,       /* RequestConfirmation: does the passkey match? */
        BT_QUESTION_AUTHORIZE,     /* RequestAuthorization: pair without a code? */
        BT_QUESTION_SERVICE,       /* AuthorizeService: may the device use a service? */
        BT_QUESTION_ENTER_PIN,     /* RequestPinCode */
        BT_QUESTION_ENTER_PASSKEY, /* RequestPasskey */
        BT_QUESTION_SHOW_PIN,      /* DisplayPinCode: type it on the device */
        BT_QUESTION_SHOW_PASSKEY,  /* DisplayPasskey: type it on the device */
        _BT_QUESTION_MAX,
        _BT_QUESTION_INVALID = -EINVAL,
} BtQuestionKind;

const char *bt_question_kind_to_string(BtQuestionKind k);
BtQuestionKind bt_question_kind_from_string(const char *s);

typedef struct BtQuestion {
        uint32_t id;
        BtQuestionKind kind;
        char *device_path;
        char address[18];
        char *name;
        char value[64];       /* passkey, PIN or service UUID */
        sd_bus_message *call; /* the agent call waiting for an answer; NULL for displays */
        sd_event_source *timeout;
} BtQuestion;

typedef struct BtOp BtOp;
typedef struct Bt Bt;

typedef struct WifiService WifiService;

struct Bt {
        Core *core;
        /* who owns each Wi-Fi link: an NFC tag's network goes through that owner (set by the
         * features' wiring; NULL with [WiFi] Enable=no) */
        WifiService *wifi;
        Bluez *bluez;
        BtQuestion question;
        uint32_t next_question_id;
        char *last_event;         /* a sentence: the latest outcome, for clients and plain mode */
        const char *pair_outcome; /* why the agent said no, for the pairing's failure */
        bool agent_registered;
        BtOp *ops; /* calls in flight to BlueZ, each answering a client */
        /* BlueZ's changes, announced together (RSSI churns during a scan) */
        sd_event_source *changed_timer;
        uint64_t changed_last;

        /* NFC pairing of a device BlueZ does not know yet: discovery until it shows up. */
        char nfc_address[18];
        char *nfc_adapter;
        sd_event_source *nfc_timeout;
        sd_event_source *discovery_timeout;
        char *discovery_adapter;

        sd_bus_slot *vtable_slot, *agent_slot, *register_slot;

        /* neard, when it runs: roamd's NDEF agent (roamd-bt-nfc.c). */
        BusNameWatch *neard;
        unsigned neard_registered;
        sd_bus_slot *ndef_agent_slot, *neard_slots[3];
        /* The tag neard read last, waiting for the user's yes or no (roamd-bt-nfc.c): its raw
         * NDEF, the question in words (never a key), dropped after NfcOfferTimeout=. */
        uint32_t nfc_offer_id, next_nfc_offer_id;
        uint8_t *nfc_offer_data;
        size_t nfc_offer_size;
        char *nfc_offer_text;
        sd_event_source *nfc_offer_timeout;
        /* NFC imports waiting for wpa_supplicant (roamd-bt-nfc-wifi.c). */
        struct NfcWifi *nfc_wifi;
};

int bt_new(Core *core, Bt **ret);
Bt *bt_free(Bt *bt);
int bt_start(Bt *bt);

/* Sets last_event (printf) and logs it. */
void bt_event(Bt *bt, const char *fmt, ...) _printf_(2, 3);
void bt_emit_changed(Bt *bt, const char *first, ...);

/* Pairs address: through its Device1 when BlueZ knows it, else after discovery finds it. */
int bt_pair(Bt *bt, const char *address, sd_bus_message *request, sd_bus_error *error);
/* Runs one call on a device or adapter and answers request when BlueZ answers. */
int bt_forward(Bt *bt, sd_bus_message *request, const char *what, const char *path,
               const char *interface, const char *method, const char *types, ...);

int bt_answer(Bt *bt, uint32_t id, bool accept, const char *value, sd_bus_error *error);
int bt_start_discovery(Bt *bt, BluezAdapter *a, uint64_t usec, sd_bus_message *request);

/* What an NDEF message asks for, and (apply) doing it: pairing for Bluetooth carriers. */
int bt_nfc_import(Bt *bt, const uint8_t *data, size_t size, bool apply, sd_bus_message *request,
                  sd_bus_error *error);

/* Answers the pending NFC offer id: accept applies it as 'roam nfc import --yes' would
 * (request is answered with the same summary), reject drops it. */
int bt_nfc_answer(Bt *bt, uint32_t id, bool accept, sd_bus_message *request, sd_bus_error *error);

/* Follows neard and registers roamd's NDEF agent with it when it runs. */
int bt_nfc_start(Bt *bt);
void bt_nfc_stop(Bt *bt);

int bt_bus_setup(Bt *bt);
extern const sd_bus_vtable bt_vtable[];
