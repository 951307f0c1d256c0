/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roamd-wifi-owner.h"

/* NM before everything (its supplicant has a control socket too), ConnMan before the socket
 * (ConnMan also drives a wpa_supplicant, over D-Bus). */
const WifiOwner wifi_owner_order[_WIFI_OWNER_MAX - 1] = {
    WIFI_OWNER_NETWORKMANAGER,
    WIFI_OWNER_IWD,
    WIFI_OWNER_CONNMAN,
    WIFI_OWNER_WPA_SUPPLICANT,
};

static void append(char *why, size_t size, const char *s)
{
        size_t l = strlen(why);

        if (l + 1 >= size)
                return;
        snprintf(why + l, size - l, "%s%s", l ? "; " : "", s);
}

static void answer_words(WifiOwner o, const WifiOwnerAnswer *a, char *buf, size_t size)
{
        if (a->why[0])
                snprintf(buf, size, "%s", a->why);
        else if (a->error < 0)
                snprintf(buf, size, "%s did not answer (%s)", wifi_owner_to_name(o),
                         strerror(-a->error));
        else
                snprintf(buf, size, "%s does not run this interface", wifi_owner_to_name(o));
}

WifiOwner wifi_owner_decide(WifiOwner forced, const WifiOwnerAnswer answers[_WIFI_OWNER_MAX],
                            char *why, size_t why_size)
{
        char words[WIFI_WORDS_MAX];

        why[0] = 0;
        for (size_t i = 0; i < ELEMENTSOF(wifi_owner_order); i++) {
                WifiOwner o = wifi_owner_order[i];
                const WifiOwnerAnswer *a = &answers[o];

                if (forced >= 0 && o != forced)
                        continue;
                if (!a->asked)
                        continue;
                if (a->error >= 0 && a->manages) {
                        why[0] = 0;
                        if (o == WIFI_OWNER_CONNMAN)
                                snprintf(why, why_size,
                                         "ConnMan manages this interface; roam cannot join "
                                         "through ConnMan yet (use connmanctl)");
                        else
                                answer_words(o, a, why, why_size);
                        return o;
                }
                answer_words(o, a, words, sizeof(words));
                append(why, why_size, words);
        }
        if (forced >= 0 && forced != WIFI_OWNER_NONE) {
                snprintf(words, sizeof(words), "[WiFi] Backend=%s asks %s only",
                         wifi_owner_to_string(forced), wifi_owner_to_name(forced));
                append(why, why_size, words);
        }
        if (!why[0])
                snprintf(why, why_size, "Nobody runs Wi-Fi on this interface");
        return WIFI_OWNER_NONE;
}
