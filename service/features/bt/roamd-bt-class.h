/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* One word for what a Bluetooth device is, from its Class of Device (BR/EDR, Assigned Numbers
 * "Baseband") or its GAP Appearance (LE). roamd sends the word; clients only show it. */

/* "phone", "computer", "headset", "keyboard", ... or NULL when the class says nothing. */
const char *bt_class_to_word(uint32_t device_class);
/* The same words for an LE appearance, or NULL. */
const char *bt_appearance_to_word(uint16_t appearance);
/* Class first, then appearance, then "device". */
const char *bt_device_word(uint32_t device_class, uint16_t appearance);
