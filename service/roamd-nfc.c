/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-bus.h"
#include "roam-log.h"
#include "roamd-bt-class.h"
#include "roamd-bt.h"
#include "roamd-manager.h"

/* An NFC tag or handover message given by a client (roam nfc import): what it holds, and with
 * apply, pairing for each Bluetooth carrier that is not switched off. BlueZ takes remote OOB
 * data (hash C, randomizer R) only from neard (its handover agent accepts PushOOB from neard's
 * bus name alone), so roamd pairs normally, with the tag's address and name. */

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
                else if (!bt->bluez->owner)
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

static int append_wifi(sd_bus_message *reply, const NdefCarrier *c, bool apply)
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
                /* Handing WSC to wpa_supplicant needs its control-socket client, which this
                 * build of roamd does not have: said plainly rather than pretended. */
                if (r >= 0)
                        r = append_entry(reply, "action",
                                         apply ? "not applied: roamd cannot hand WiFi networks to "
                                                 "wpa_supplicant yet"
                                               : "none");
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        return r;
}

int bt_nfc_import(Bt *bt, const uint8_t *data, size_t size, bool apply, sd_bus_message *request,
                  sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        NdefHandover *h;
        char err[NDEF_ERROR_MAX] = "";
        int r;

        h = malloc(sizeof(*h));
        if (!h)
                return -ENOMEM;
        r = ndef_handover_parse(data, size, h, err, sizeof(err));
        if (r < 0) {
                free(h);
                log_info("NFC: refused a message of %zu bytes: %s", size, err);
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "%s.", err);
        }
        r = sd_bus_message_new_method_return(request, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", ndef_handover_kind_to_string(h->kind));
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(sa{ss})");
        for (size_t i = 0; r >= 0 && i < h->n_carriers; i++)
                r = h->carriers[i].kind == NDEF_CARRIER_WIFI
                        ? append_wifi(reply, &h->carriers[i], apply)
                        : append_bt(bt, reply, &h->carriers[i], apply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        free(h);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
