/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <string.h>

#include "roam-bus-map.h"
#include "roam-bus-name.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roamd-bt-class.h"
#include "roamd-bt.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-bt-nfc.h"

/* An NFC tag or handover message given by a client (roam nfc import): what it holds, and with
 * apply, pairing for each Bluetooth carrier that is not switched off. BlueZ takes remote OOB
 * data (hash C, randomizer R) only from neard (its handover agent accepts PushOOB from neard's
 * bus name alone), so roamd pairs normally, with the tag's address and name. WiFi credentials
 * go to wpa_supplicant first (roamd-bt-nfc-wifi.c); the answer waits for it, and Bluetooth
 * pairing starts only once the WiFi part succeeded, so a failure changes nothing. */

static void ssid_text(const uint8_t *p, size_t n, char *out, size_t size)
{
        size_t o = 0;

        for (size_t i = 0; i < n && o + 5 < size; i++) {
                if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
                        out[o++] = (char)p[i];
                else
                        o += (size_t)snprintf(out + o, size - o, "\\x%02x", p[i]);
        }
        out[o] = 0;
}

static const char *wsc_security(uint16_t auth, uint16_t encr)
{
        if (auth & (WSC_AUTH_WPA2PSK | WSC_AUTH_WPAPSK))
                return (auth & WSC_AUTH_WPA2PSK) ? "wpa2-psk" : "wpa-psk";
        if (auth & (WSC_AUTH_WPA2 | WSC_AUTH_WPA))
                return "wpa-enterprise";
        if (auth & WSC_AUTH_SHARED || encr & WSC_ENCR_WEP)
                return "wep";
        return "open";
}

static int append_entry(sd_bus_message *reply, const char *key, const char *value)
{
        return sd_bus_message_append(reply, "{ss}", key, value);
}

static int append_bt(Bt *bt, sd_bus_message *reply, const NdefCarrier *c, bool apply)
{
        const BtOob *o = &c->bt;
        BluezDevice *d = bluez_get_device(bt->bluez, o->address);
        const char *action = "none";
        int r;

        if (apply) {
                if (c->power == CARRIER_POWER_INACTIVE)
                        action = "not paired: the device says its Bluetooth is off";
                else if (!bluez_owner(bt->bluez))
                        action = "not paired: BlueZ is not running";
                else if (d && d->paired)
                        action = "already paired";
                else if (bt_pair(bt, o->address, NULL, NULL) < 0)
                        action = "not paired: no Bluetooth adapter";
                else
                        action = d ? "pairing" : "looking for the device, then pairing";
        }
        r = sd_bus_message_open_container(reply, 'r', "sa{ss}");
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", ndef_carrier_kind_to_string(c->kind));
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "{ss}");
        if (r >= 0)
                r = append_entry(reply, "address", o->address);
        if (r >= 0)
                r = append_entry(reply, "name", o->name);
        if (r >= 0)
                r = append_entry(reply, "kind",
                                 bt_device_word(o->has_class ? o->device_class : 0,
                                                o->has_appearance ? o->appearance : 0));
        if (r >= 0)
                r = append_entry(reply, "power", carrier_power_state_to_string(c->power));
        if (r >= 0)
                r = append_entry(reply, "oob",
                                 o->has_hash256   ? "hash C-256 and randomizer R-256"
                                 : o->has_hash192 ? "hash C-192 and randomizer R-192"
                                                  : "none");
        if (r >= 0)
                r = append_entry(reply, "action", action);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int append_wifi(sd_bus_message *reply, const NdefCarrier *c, bool apply,
                       const char *const *actions)
{
        const WscInfo *w = &c->wsc;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < MAX(w->n_credentials, (size_t)1); i++) {
                const WscCredential *cr = w->n_credentials ? &w->credentials[i] : NULL;
                char ssid[32 * 4 + 1] = "";

                if (cr)
                        ssid_text(cr->ssid, cr->ssid_len, ssid, sizeof(ssid));
                r = sd_bus_message_open_container(reply, 'r', "sa{ss}");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "s", "wifi");
                if (r >= 0)
                        r = sd_bus_message_open_container(reply, 'a', "{ss}");
                if (r >= 0)
                        r = append_entry(reply, "power", carrier_power_state_to_string(c->power));
                if (r >= 0 && cr) {
                        r = append_entry(reply, "ssid", ssid);
                        if (r >= 0)
                                r = append_entry(reply, "security",
                                                 wsc_security(cr->auth_type, cr->encr_type));
                        if (r >= 0)
                                r = append_entry(reply, "key", cr->key_len ? "given" : "none");
                        if (r >= 0 && cr->mac[0])
                                r = append_entry(reply, "bssid", cr->mac);
                }
                if (r >= 0 && !cr)
                        r = append_entry(reply, "password-token", w->has_password ? "yes" : "no");
                if (r >= 0)
                        r = append_entry(reply, "action",
                                         apply && actions && actions[i] ? actions[i] : "none");
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        return r;
}

int nfc_finish(Bt *bt, NdefHandover *h_, bool apply, NfcWifiActions actions, sd_bus_message *call)
{
        _cleanup_(ndef_handover_freep) NdefHandover *h = h_;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", ndef_handover_kind_to_string(h->kind));
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sa{ss})");
        for (size_t i = 0; r >= 0 && i < h->n_carriers; i++)
                r = h->carriers[i].kind == NDEF_CARRIER_WIFI
                        ? append_wifi(reply, &h->carriers[i], apply, actions ? actions[i] : NULL)
                        : append_bt(bt, reply, &h->carriers[i], apply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0) {
                log_warning_errno(r, "NFC: cannot build the answer: %m");
                return sd_bus_reply_method_errno(call, r, NULL);
        }
        return sd_bus_send(NULL, reply, NULL);
}

/* Parses the message and answers call: at once, or once wpa_supplicant took the WiFi part. An
 * error return means call was not answered and nothing was done. */
static int nfc_handle(Bt *bt, const uint8_t *data, size_t size, bool apply, sd_bus_message *call,
                      sd_bus_error *error)
{
        _cleanup_(ndef_handover_freep) NdefHandover *h = NULL;
        char err[NDEF_ERROR_MAX] = "";
        int r;

        h = malloc(sizeof(*h));
        if (!h)
                return -ENOMEM;
        r = ndef_handover_parse(data, size, h, err, sizeof(err));
        if (r < 0) {
                log_info("NFC: refused a message of %zu bytes: %s", size, err);
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "%s.", err);
        }
        if (apply && nfc_wifi_wanted(h))
                return nfc_wifi_start(bt, TAKE_PTR(h), call, error);
        return nfc_finish(bt, TAKE_PTR(h), apply, NULL, call);
}

int bt_nfc_import(Bt *bt, const uint8_t *data, size_t size, bool apply, sd_bus_message *request,
                  sd_bus_error *error)
{
        int r = nfc_handle(bt, data, size, apply, request, error);

        /* 1: answered (sd_bus_send), or waiting for wpa_supplicant. */
        return r < 0 ? r : 1;
}

/* neard (org.neard), when it runs: roamd registers an NDEF agent (org.neard.NDEFAgent, neard's
 * doc/agent-api.txt) for the two carrier types; a touched tag's raw NDEF arrives in GetNDEF.
 * neard is answered at once (it has nothing to do with the user's answer, and its call must
 * not hang for a minute) and the tag becomes the pending offer (NfcOffer): applied as
 * 'roam nfc import --yes' only when a client accepts it (AnswerNfc), dropped on a no, after
 * NfcOfferTimeout= or when another tag replaces it. */

/* The offer in words: what would be paired and added, never a key. */
static void offer_sentence(const NdefHandover *h, char *buf, size_t size)
{
        char parts[8][200];
        size_t n = 0, o = 0;

        for (size_t k = 0; k < h->n_carriers && n < ELEMENTSOF(parts); k++) {
                const NdefCarrier *c = &h->carriers[k];
                if (c->kind != NDEF_CARRIER_WIFI) {
                        const BtOob *b = &c->bt;
                        const char *kind = bt_device_word(b->has_class ? b->device_class : 0,
                                                          b->has_appearance ? b->appearance : 0);
                        if (*b->name)
                                snprintf(parts[n++], sizeof(parts[0]), "pair with %s (%s, %s)",
                                         b->name, kind, b->address);
                        else
                                snprintf(parts[n++], sizeof(parts[0]), "pair with the %s %s", kind,
                                         b->address);
                        continue;
                }
                if (c->wsc.n_credentials == 0)
                        snprintf(parts[n++], sizeof(parts[0]),
                                 "use a WPS password token (it holds no network to add)");
                for (size_t j = 0; j < c->wsc.n_credentials && n < ELEMENTSOF(parts); j++) {
                        const WscCredential *cr = &c->wsc.credentials[j];
                        char ssid[32 * 4 + 1];

                        ssid_text(cr->ssid, cr->ssid_len, ssid, sizeof(ssid));
                        snprintf(parts[n++], sizeof(parts[0]), "add WiFi network \"%s\" (%s)", ssid,
                                 wsc_security(cr->auth_type, cr->encr_type));
                }
        }
        buf[0] = 0;
        if (n == 0) {
                snprintf(buf, size,
                         "Use this NFC tag (it offers no Bluetooth device or WiFi "
                         "network)?");
                return;
        }
        for (size_t i = 0; i < n && o < size; i++)
                o += (size_t)snprintf(buf + o, size - o, "%s%s",
                                      i == 0       ? ""
                                      : i + 1 == n ? " and "
                                                   : ", ",
                                      parts[i]);
        if (o + 1 < size)
                strcat(buf, "?");
        buf[0] = (char)toupper((unsigned char)buf[0]);
}

static void offer_clear(Bt *bt, bool emit)
{
        bool had = bt->nfc_offer_id != 0;

        bt->nfc_offer_timeout = sd_event_source_disable_unref(bt->nfc_offer_timeout);
        if (bt->nfc_offer_data)
                explicit_bzero(bt->nfc_offer_data, bt->nfc_offer_size); /* it holds keys */
        free(bt->nfc_offer_data);
        free(bt->nfc_offer_text);
        bt->nfc_offer_data = NULL;
        bt->nfc_offer_text = NULL;
        bt->nfc_offer_size = 0;
        bt->nfc_offer_id = 0;
        if (had && emit)
                bt_emit_changed(bt, "NfcOffer", NULL);
}

static int on_offer_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        Bt *bt = userdata;

        offer_clear(bt, true);
        bt_event(bt, "Nobody answered the NFC tag's question in time: nothing was done");
        return 0;
}

/* A tag from neard: parsed (a malformed one is refused here, for neard), then pending. */
static int offer_open(Bt *bt, const uint8_t *data, size_t size, sd_bus_error *error)
{
        _cleanup_(ndef_handover_freep) NdefHandover *h = NULL;
        char err[NDEF_ERROR_MAX] = "", text[1024];
        bool replaced = bt->nfc_offer_id != 0;
        int r;

        h = malloc(sizeof(*h));
        if (!h)
                return -ENOMEM;
        r = ndef_handover_parse(data, size, h, err, sizeof(err));
        if (r < 0) {
                log_info("NFC: refused a message of %zu bytes: %s", size, err);
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "%s.", err);
        }
        offer_sentence(h, text, sizeof(text));
        h = ndef_handover_free(h);
        /* A new tag replaces the one before: the person touched the one they want now. */
        offer_clear(bt, false);
        bt->nfc_offer_data = malloc(size);
        if (bt->nfc_offer_data)
                memcpy(bt->nfc_offer_data, data, size);
        bt->nfc_offer_text = strdup(text);
        if (!bt->nfc_offer_data || !bt->nfc_offer_text) {
                r = -ENOMEM;
                goto fail;
        }
        bt->nfc_offer_size = size;
        r = sd_event_add_time_relative(bt->core->event, &bt->nfc_offer_timeout, CLOCK_MONOTONIC,
                                       bt->core->config->bluetooth.nfc_offer_usec, 0,
                                       on_offer_timeout, bt);
        if (r < 0)
                goto fail;
        bt->nfc_offer_id = ++bt->next_nfc_offer_id;
        bt_emit_changed(bt, "NfcOffer", NULL);
        bt_event(bt, "An NFC tag asks: %s", text);
        return 0;
fail:
        offer_clear(bt, false);
        if (replaced) /* the older offer is gone too */
                bt_emit_changed(bt, "NfcOffer", NULL);
        return r;
}

int bt_nfc_answer(Bt *bt, uint32_t id, bool accept, sd_bus_message *request, sd_bus_error *error)
{
        _cleanup_free_ uint8_t *data = NULL;
        size_t size = bt->nfc_offer_size;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        int r;

        if (id == 0 || id != bt->nfc_offer_id)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "No NFC tag %u is waiting for an answer.", id);
        data = TAKE_PTR(bt->nfc_offer_data);
        offer_clear(bt, true);
        if (!accept)
                bt_event(bt, "The NFC tag was declined: nothing was done");
        /* The answer is the tag's summary, with what was done (accept) or "none". */
        r = nfc_handle(bt, data, size, accept, request, &e);
        explicit_bzero(data, size);
        if (r < 0) {
                bt_event(bt, "An NFC tag was not used: %s", e.message ? e.message : strerror(-r));
                return sd_bus_error_is_set(&e) ? sd_bus_error_copy(error, &e) : r;
        }
        return 1;
}

static const char *const ndef_agent_types[] = {"application/vnd.bluetooth.ep.oob",
                                               "application/vnd.bluetooth.le.oob",
                                               "application/vnd.wfa.wsc"};

static int ndef_agent_check(Bt *bt, sd_bus_message *msg, sd_bus_error *error)
{
        const char *neard = bus_name_watch_owner(bt->neard);

        if (!neard || !streq_ptr(sd_bus_message_get_sender(msg), neard))
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Only neard talks to this agent.");
        return 0;
}

/* The tag's bytes in GetNDEF's a{sv}: they stay the message's. */
typedef struct NdefData {
        const void *ndef;
        size_t size;
} NdefData;

static int set_ndef(sd_bus_message *m, const char *key, void *field)
{
        NdefData *d = field;

        return sd_bus_message_read_array(m, 'y', &d->ndef, &d->size);
}

static const BusMapEntry ndef_map[] = {
    {"NDEF", "ay", set_ndef, 0},
    {},
};

static int ndef_agent_get(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_error_free) sd_bus_error parse_error = SD_BUS_ERROR_NULL;
        Bt *bt = userdata;
        NdefData d = {};
        const void *ndef;
        size_t size;
        int r;

        r = ndef_agent_check(bt, msg, error);
        if (r < 0)
                return r;
        r = bus_map_read(msg, ndef_map, &d);
        if (r < 0)
                return r;
        ndef = d.ndef;
        size = d.size;
        if (!ndef || size == 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "GetNDEF without NDEF data.");
        log_info("NFC: neard read a tag of %zu bytes", size);
        r = offer_open(bt, ndef, size, &parse_error);
        if (r < 0) {
                bt_event(bt, "An NFC tag was not understood: %s",
                         parse_error.message ? parse_error.message : strerror(-r));
                return sd_bus_reply_method_errorf(msg, "org.neard.NDEFAgent.Error.Failed", "%s",
                                                  parse_error.message ? parse_error.message
                                                                      : strerror(-r));
        }
        return sd_bus_reply_method_return(msg, NULL);
}

static int ndef_agent_release(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        int r = ndef_agent_check(bt, msg, error);

        if (r < 0)
                return r;
        bt->neard_registered = 0;
        log_info("NFC: neard released roamd's NDEF agent");
        return sd_bus_reply_method_return(msg, NULL);
}

static const sd_bus_vtable ndef_agent_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("GetNDEF", "a{sv}", "", ndef_agent_get, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Release", "", "", ndef_agent_release, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

static int on_ndef_registered(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        Bt *bt = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        if (e)
                log_warning("neard refused roamd's NDEF agent: %s",
                            e->message ? e->message : e->name);
        else if (++bt->neard_registered == ELEMENTSOF(ndef_agent_types))
                log_info("NFC: NDEF agent registered with neard");
        return 0;
}

/* neard's owner, told by the name watch (its first answer too): the agent is registered with
 * each new one. */
static int on_neard_owner(BusNameWatch *w, const char *owner, void *userdata)
{
        Bt *bt = userdata;

        bt->neard_registered = 0;
        for (size_t i = 0; i < ELEMENTSOF(bt->neard_slots); i++)
                bt->neard_slots[i] = sd_bus_slot_unref(bt->neard_slots[i]);
        if (!*owner)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(ndef_agent_types); i++)
                if (sd_bus_call_method_async(bt->core->bus, &bt->neard_slots[i], "org.neard",
                                             "/org/neard", "org.neard.AgentManager",
                                             "RegisterNDEFAgent", on_ndef_registered, bt, "os",
                                             ROAM_NFC_AGENT_PATH, ndef_agent_types[i]) < 0)
                        log_warning("Cannot register roamd's NDEF agent with neard");
        return 0;
}

int bt_nfc_start(Bt *bt)
{
        int r;

        r = sd_bus_add_object_vtable(bt->core->bus, &bt->ndef_agent_slot, ROAM_NFC_AGENT_PATH,
                                     "org.neard.NDEFAgent", ndef_agent_vtable, bt);
        /* its first answer too: neard is not activated, and its unique name checks the agent's
         * callers */
        if (r >= 0)
                r = bus_name_watch_new_full(bt->core->bus, "org.neard", BUS_NAME_WATCH_TELL_FIRST,
                                            on_neard_owner, bt, &bt->neard);
        if (r < 0)
                return log_error_errno(r, "Failed to follow neard: %m");
        return 0;
}

void bt_nfc_stop(Bt *bt)
{
        offer_clear(bt, false);
        nfc_wifi_free_all(bt);
        for (size_t i = 0; i < ELEMENTSOF(bt->neard_slots); i++)
                bt->neard_slots[i] = sd_bus_slot_unref(bt->neard_slots[i]);
        bt->neard = bus_name_watch_free(bt->neard);
        bt->ndef_agent_slot = sd_bus_slot_unref(bt->ndef_agent_slot);
}
