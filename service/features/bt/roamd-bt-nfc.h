/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NFC handover in roamd: roamd-bt-nfc.c parses a message (from 'roam nfc import', or neard's tag
 * once the user accepted it), answers with what it holds and, when asked to apply it, pairs
 * its Bluetooth carriers;
 * roamd-bt-nfc-wifi.c adds its WiFi credentials to wpa_supplicant first (asynchronously), and the
 * answer waits for that. docs/bluetooth.md. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "roamd-ndef.h"

typedef struct Bt Bt;
typedef struct NfcWifi NfcWifi;

/* What was done with each WiFi credential (carrier k, credential j; [k][0] for a carrier
 * without credentials): a phrase, or NULL for "none". */
typedef const char *NfcWifiActions[NDEF_MAX_CARRIERS][WSC_MAX_CREDENTIALS];

/* Finishes an import: the Bluetooth actions (apply), then the answer to call (the summary of
 * ImportNdef or AnswerNfc). Takes h. */
int nfc_finish(Bt *bt, NdefHandover *h, bool apply, NfcWifiActions actions, sd_bus_message *call);

/* Whether applying h hands WiFi credentials to wpa_supplicant. */
bool nfc_wifi_wanted(const NdefHandover *h);
/* Adds h's WiFi credentials to wpa_supplicant, then calls nfc_finish(); on failure answers
 * call with an error and removes what was added. Takes h. An error return (no
 * wpa_supplicant, a key it cannot take) means nothing was sent and call is not answered.
 * Without wpa_supplicant, a message with a Bluetooth carrier too is still used (its WiFi
 * carriers say why not). */
int nfc_wifi_start(Bt *bt, NdefHandover *h, sd_bus_message *call, sd_bus_error *error);
/* Drops every import in flight (roamd stops): no answer is sent. */
void nfc_wifi_free_all(Bt *bt);
