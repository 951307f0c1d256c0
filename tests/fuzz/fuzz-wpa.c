/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roam-text.h"
#include "roamd-client-wpa-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One datagram from wpa_supplicant: split, then parsed as an event or a key=value reply, and
 * the peer words computed from what came out, as roamd does. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        WpaMessage m = {};
        WpaEvent e = {};
        WpaKv kv = {};
        const char *w;
        unsigned methods;

        if (wpa_message_split((const char *)data, size, &m) < 0)
                return 0;
        if (m.event) {
                if (wpa_event_parse(m.text, m.len, &e) >= 0) {
                        if (!e.name || !*e.name || e.n_fields > WPA_FIELDS_MAX)
                                abort();
                        /* What goes on the bus is clean text (roam-text.c). */
                        if (!roam_text_is_clean(e.name, 0) || !roam_text_is_clean(e.ifname, 0))
                                abort();
                        for (size_t i = 0; i < e.n_fields; i++)
                                if (!roam_text_is_clean(e.fields[i].value, 0) ||
                                    (e.fields[i].key && !roam_text_is_clean(e.fields[i].key, 0)))
                                        abort();
                        (void)wpa_device_type_word(wpa_event_get(&e, "pri_dev_type"), &w);
                        (void)wpa_config_methods_parse(wpa_event_get(&e, "config_methods"),
                                                       &methods);
                        (void)wpa_mac_valid(wpa_event_arg(&e, 0));
                        (void)wpa_pin_valid(wpa_event_arg(&e, 1));
                        (void)wpa_group_removed_reason(wpa_event_get(&e, "reason"));
                        wpa_event_done(&e);
                }
                return 0;
        }
        if (wpa_kv_parse(m.text, m.len, &kv) >= 0) {
                for (size_t i = 0; i < kv.n_fields; i++)
                        if (!kv.fields[i].key || !kv.fields[i].value ||
                            !roam_text_is_clean(kv.fields[i].key, 0) ||
                            !roam_text_is_clean(kv.fields[i].value, 0))
                                abort();
                (void)wpa_device_type_word(wpa_kv_get(&kv, "pri_dev_type"), &w);
                wpa_kv_done(&kv);
        }
        return 0;
}
