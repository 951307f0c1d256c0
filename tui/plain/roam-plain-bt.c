/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-bt-cli.h"
#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-format.h"
#include "roam-plain-bt.h"
#include "roam-util.h"

struct PlainBt {
        sd_bus *bus;
        sd_bus_slot *match, *load;
        uint32_t question; /* the open question's id, 0: none */
        uint32_t nfc;      /* the NFC tag waiting for a yes or no, 0: none */
        char *last;
};

PlainBt *plain_bt_free(PlainBt *pb)
{
        if (!pb)
                return NULL;
        sd_bus_slot_unref(pb->match);
        sd_bus_slot_unref(pb->load);
        sd_bus_unref(pb->bus);
        free(pb->last);
        free(pb);
        return NULL;
}

static void announce_question(PlainBt *pb, const BtQuestion *q)
{
        _cleanup_free_ char *secret = NULL;
        BtQuestion shown = *q;
        char s[512];

        if (q->id == pb->question)
                return;
        if (q->id == 0) {
                pb->question = 0;
                return;
        }
        pb->question = q->id;
        /* the passkey or PIN is not in the property: asked for, authorized */
        if (roam_bt_question_is_secret(q->kind) &&
            roam_bt_question_secret(pb->bus, q, &secret) >= 0)
                shown.value = secret;
        roam_bt_question_sentence(&shown, s, sizeof(s));
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

typedef struct PropsRead {
        PlainBt *pb;
        bool initial;
} PropsRead;

static int set_question(sd_bus_message *m, const char *key, void *field)
{
        PropsRead *p = field;
        BtQuestion q;
        int r = sd_bus_message_read(m, "(ussss)", &q.id, &q.kind, &q.address, &q.name, &q.value);

        if (r >= 0)
                announce_question(p->pb, &q);
        return r;
}

static int set_nfc_offer(sd_bus_message *m, const char *key, void *field)
{
        PropsRead *p = field;
        const char *text;
        uint32_t id;
        int r = sd_bus_message_read(m, "(us)", &id, &text);

        if (r >= 0)
                announce_nfc(p->pb, id, text);
        return r;
}

static int set_last_event(sd_bus_message *m, const char *key, void *field)
{
        PropsRead *p = field;
        const char *last;
        int r = sd_bus_message_read_basic(m, 's', &last);

        if (r >= 0 && *last && !streq_ptr(last, p->pb->last)) {
                (void)free_and_strdup(&p->pb->last, last);
                if (!p->initial) {
                        roam_print_stamp();
                        printf("Bluetooth: %s\n", last);
                        fflush(stdout);
                }
        }
        return r;
}

static const BusMapEntry props_map[] = {
    {"Question", "(ussss)", set_question, 0},
    {"NfcOffer", "(us)", set_nfc_offer, 0},
    {"LastEvent", "s", set_last_event, 0},
    {},
};

/* Properties (a{sv}) from a PropertiesChanged or the first GetAll: questions and tags are
 * announced once each; the last outcome only as it happens (initial: it is old news). */
static int read_props(PlainBt *pb, sd_bus_message *m, bool initial)
{
        return bus_map_read(m, props_map, &(PropsRead){pb, initial});
}

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PlainBt *pb = userdata;
        const char *iface;

        if (sd_bus_message_read(m, "s", &iface) < 0 || !streq(iface, ROAM_BLUETOOTH_INTERFACE))
                return 0;
        (void)read_props(pb, m, false);
        return 0;
}

/* What already waits when plain mode starts (or roamd returns) is said too. */
static int on_loaded(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PlainBt *pb = userdata;

        pb->load = sd_bus_slot_unref(pb->load);
        if (!sd_bus_message_is_method_error(m, NULL))
                (void)read_props(pb, m, true);
        return 0;
}

static int load(PlainBt *pb)
{
        pb->load = sd_bus_slot_unref(pb->load);
        return sd_bus_call_method_async(pb->bus, &pb->load, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                        "org.freedesktop.DBus.Properties", "GetAll", on_loaded, pb,
                                        "s", ROAM_BLUETOOTH_INTERFACE);
}

int plain_bt_follow(PlainBt **pb, sd_bus *bus)
{
        PlainBt *n;
        int r;

        if (*pb && (*pb)->bus == bus) /* roamd is back: what waits now */
                return load(*pb);
        *pb = plain_bt_free(*pb);
        if (!bus)
                return 0;
        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->bus = sd_bus_ref(bus);
        r = sd_bus_match_signal_async(bus, &n->match, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                      "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                      on_changed, NULL, n);
        if (r >= 0)
                r = load(n);
        if (r < 0) {
                plain_bt_free(n);
                return r;
        }
        *pb = n;
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
        return sd_bus_call_method_async(pb->bus, NULL, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
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
        return sd_bus_call_method_async(pb->bus, NULL, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                        ROAM_BLUETOOTH_INTERFACE, "AnswerNfc", on_answered, NULL,
                                        "ub", pb->nfc, streq(words[1], "yes"));
}
