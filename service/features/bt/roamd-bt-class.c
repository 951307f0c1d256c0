/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>

#include "roamd-bt-class.h"

const char *bt_class_to_word(uint32_t c)
{
        unsigned major = (c >> 8) & 0x1f, minor = (c >> 2) & 0x3f;

        switch (major) {
        case 1:
                return "computer";
        case 2:
                return "phone";
        case 3:
                return "network";
        case 4:
                switch (minor) {
                case 1:
                case 2:
                        return "headset";
                case 5:
                        return "speaker";
                case 6:
                        return "headphones";
                case 8:
                        return "car audio";
                default:
                        return "audio";
                }
        case 5:
                /* Bits 6-7 of the minor class: keyboard, pointing device, both. */
                switch (minor >> 4) {
                case 1:
                        return "keyboard";
                case 2:
                        return "mouse";
                case 3:
                        return "keyboard";
                default:
                        return (minor & 0x0f) == 1 || (minor & 0x0f) == 2 ? "gamepad" : "input";
                }
        case 6:
                return (c & 0x80) ? "printer" : (c & 0x20) ? "camera" : "imaging";
        case 7:
                return "wearable";
        case 8:
                return "toy";
        case 9:
                return "health";
        default:
                return NULL;
        }
}

const char *bt_appearance_to_word(uint16_t a)
{
        unsigned category = a >> 6, sub = a & 0x3f;

        switch (category) {
        case 0x01:
                return "phone";
        case 0x02:
                return "computer";
        case 0x03:
                return "watch";
        case 0x04:
                return "clock";
        case 0x05:
                return "display";
        case 0x06:
                return "remote";
        case 0x07:
                return "glasses";
        case 0x08:
                return "tag";
        case 0x09:
                return "keyring";
        case 0x0a:
                return "media player";
        case 0x0b:
                return "scanner";
        case 0x0c:
                return "thermometer";
        case 0x0d:
        case 0x0e:
        case 0x10:
                return "health";
        case 0x0f:
                switch (sub) {
                case 1:
                        return "keyboard";
                case 2:
                        return "mouse";
                case 3:
                case 4:
                        return "gamepad";
                default:
                        return "input";
                }
        case 0x11:
        case 0x12:
                return "sensor";
        case 0x21:
                return "speaker";
        case 0x25:
                return sub == 1 ? "earbuds" : sub == 2 ? "headset" : "headphones";
        case 0x29:
                return "hearing aid";
        default:
                return NULL;
        }
}

const char *bt_device_word(uint32_t device_class, uint16_t appearance)
{
        const char *w = bt_class_to_word(device_class);

        if (!w)
                w = bt_appearance_to_word(appearance);
        return w ? w : "device";
}
