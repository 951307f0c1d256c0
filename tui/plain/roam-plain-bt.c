/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-bluetooth.h"
#include "roam-bus.h"
#include "roam-format.h"
#include "roam-plain-bt.h"
#include "roam-util.h"

struct PlainBt {
        RoamBluetoothWatch *watch;
        bool initial;      /* the next read is the first since roamd came: its outcome is old */
        uint32_t question; /* the open question's id, 0: none */
        uint32_t nfc;      /* the NFC tag waiting for a yes or no, 0: none */
        char *last;
};

PlainBt *plain_bt_free(PlainBt *pb)
{
        if (!pb)
                return NULL;
        roam_bluetooth_watch_free(pb->watch);
        free(pb->last);
        free(pb);
        return NULL;
}

static void announce_question(PlainBt *pb, const RoamBtQuestion *q)
{
        char s[512];

        if (q->id == pb->question)
                return;
        pb->question = q->id;
        if (q->id == 0)
                return;
        roam_bt_question_sentence(q, s, sizeof(s));
        roam_print_stamp();
        if (streq(q->kind, "show-pin") || streq(q->kind, "show-passkey"))
                printf("Bluetooth: %s.\n", s);
        else if (streq(q->kind, "enter-pin") || streq(q->kind, "enter-passkey"))
                printf("Bluetooth asks: %s. Say: bt yes NUMBER, or bt no.\n", s);
        else
                printf("Bluetooth asks: %s Say: bt yes, or bt no.\n", s);
        fflush(stdout);
}

static void announce_nfc(PlainBt *pb, uint32_t id, const char *text)
{
        if (id == pb->nfc)
                return;
        pb->nfc = id;
        if (id == 0)
                return;
        roam_print_stamp();
        printf("NFC tag %u asks: %s Say: nfc yes, or nfc no.\n", id, text);
        fflush(stdout);
}

/* Questions and tags are announced once each; the last outcome only as it happens (what it
 * was when plain mode started, or roamd came back, is old news). */
static void on_changed(RoamBluetoothWatch *w, const sd_bus_error *error, void *userdata)
{
        PlainBt *pb = userdata;
        const RoamBluetooth *bt = roam_bluetooth_watch_get(w);
        bool initial = pb->initial;

        if (error)
                return;
        pb->initial = false;
        announce_question(pb, &bt->question);
        announce_nfc(pb, bt->nfc_id, bt->nfc_text);
        if (*bt->last_event && !streq_ptr(bt->last_event, pb->last)) {
                (void)free_and_strdup(&pb->last, bt->last_event);
                if (!initial) {
                        roam_print_stamp();
                        printf("Bluetooth: %s\n", bt->last_event);
                        fflush(stdout);
                }
        }
}

int plain_bt_follow(PlainBt **pb, sd_bus *bus)
{
        _cleanup_(plain_bt_freep) PlainBt *n = NULL;
        int r;

        if (*pb && roam_bluetooth_watch_get_bus((*pb)->watch) == bus) {
                /* roamd is back: what waits now */
                (*pb)->initial = true;
                return roam_bluetooth_watch_reload((*pb)->watch);
        }
        *pb = plain_bt_free(*pb);
        if (!bus)
                return 0;
        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->initial = true;
        r = roam_bluetooth_watch_new(bus, on_changed, n, &n->watch);
        if (r < 0)
                return r;
        *pb = TAKE_PTR(n);
        return 0;
}

static int on_answered(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        const sd_bus_error *e = sd_bus_message_get_error(m);

        if (e) {
                printf("Bluetooth: roamd refused the answer: %s\n",
                       e->message ? e->message : e->name);
                fflush(stdout);
        }
        return 0;
}

int plain_bt_command(PlainBt *pb, char **words)
{
        bool yes;

        if (!words[1] || (!streq(words[1], "yes") && !streq(words[1], "no"))) {
                printf("Say: bt yes [PIN or passkey], or bt no.\n");
                return 0;
        }
        if (!pb || pb->question == 0) {
                printf("Bluetooth asks nothing now.\n");
                return 0;
        }
        yes = streq(words[1], "yes");
        return sd_bus_call_method_async(roam_bluetooth_watch_get_bus(pb->watch), NULL,
                                        ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                        ROAM_BLUETOOTH_INTERFACE, "Answer", on_answered, NULL,
                                        "ubs", pb->question, yes, yes && words[2] ? words[2] : "");
}

int plain_bt_nfc_command(PlainBt *pb, char **words)
{
        if (!words[1] || (!streq(words[1], "yes") && !streq(words[1], "no")) || words[2]) {
                printf("Say: nfc yes, or nfc no.\n");
                return 0;
        }
        if (!pb || pb->nfc == 0) {
                printf("No NFC tag is waiting for an answer.\n");
                return 0;
        }
        return sd_bus_call_method_async(roam_bluetooth_watch_get_bus(pb->watch), NULL,
                                        ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                        ROAM_BLUETOOTH_INTERFACE, "AnswerNfc", on_answered, NULL,
                                        "ub", pb->nfc, streq(words[1], "yes"));
}
