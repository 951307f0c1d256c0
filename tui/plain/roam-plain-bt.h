/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "roam-macro.h"

/* Bluetooth in plain mode (roam --plain): pairing questions, NFC tags and Bluetooth outcomes
 * are announced as lines as they happen; "bt yes [PIN]" and "bt no" answer the open question,
 * "nfc yes" and "nfc no" the tag. */

typedef struct PlainBt PlainBt;

/* Follows org.roam1.Bluetooth on bus (again if bus changed since the last call). */
int plain_bt_follow(PlainBt **pb, sd_bus *bus);
PlainBt *plain_bt_free(PlainBt *pb);
DEFINE_TRIVIAL_CLEANUP_FUNC(PlainBt *, plain_bt_free);
/* A "bt ..." command line (words[0] is "bt"). */
int plain_bt_command(PlainBt *pb, char **words);
/* An "nfc yes|no" command line: accepts or declines the NFC tag waiting for an answer. */
int plain_bt_nfc_command(PlainBt *pb, char **words);
