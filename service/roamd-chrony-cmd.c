/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "roam-macro.h"
#include "roamd-chrony-cmd.h"

enum {
        PROTO_VERSION = 6,
        PKT_TYPE_REQUEST = 1,
        PKT_TYPE_REPLY = 2,
        REQ_RELOAD_SOURCES = 70,
        RPY_NULL = 1,
        STT_SUCCESS = 0,
        STT_FAILED = 1,
        STT_UNAUTH = 2,
        STT_INVALID = 3,
        STT_BADPKTVERSION = 18,
        STT_BADPKTLENGTH = 19,
};

static const char *const status_table[_CHRONY_CMD_STATUS_MAX] = {
    [CHRONY_CMD_SUCCESS] = "success",
    [CHRONY_CMD_FAILED] = "failed",
    [CHRONY_CMD_UNAUTHORISED] = "not authorised",
    [CHRONY_CMD_INVALID] = "unknown command (chrony older than 4.0)",
    [CHRONY_CMD_BAD_VERSION] = "another protocol version",
    [CHRONY_CMD_BAD_LENGTH] = "bad packet length",
    [CHRONY_CMD_OTHER] = "an unknown status",
};

const char *chrony_cmd_status_to_string(ChronyCmdStatus s)
{
        if (s < 0 || s >= _CHRONY_CMD_STATUS_MAX)
                return NULL;
        return status_table[s];
}

static void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)(v >> 8);
        p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
        return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void chrony_cmd_reload_sources(uint32_t sequence, uint16_t attempt,
                               uint8_t buf[static CHRONY_CMD_REQUEST_SIZE])
{
        memset(buf, 0, CHRONY_CMD_REQUEST_SIZE);
        buf[0] = PROTO_VERSION;
        buf[1] = PKT_TYPE_REQUEST;
        put16(buf + 4, REQ_RELOAD_SOURCES);
        put16(buf + 6, attempt);
        buf[8] = (uint8_t)(sequence >> 24);
        buf[9] = (uint8_t)(sequence >> 16);
        buf[10] = (uint8_t)(sequence >> 8);
        buf[11] = (uint8_t)sequence;
}

int chrony_cmd_parse_reply(const uint8_t *buf, size_t len, uint32_t sequence, ChronyCmdStatus *ret)
{
        uint16_t status;

        /* version, type, res1, res2, command, reply, status, pad1-3, sequence, pad4-5 */
        if (len < CHRONY_CMD_REPLY_MIN || buf[1] != PKT_TYPE_REPLY ||
            get16(buf + 4) != REQ_RELOAD_SOURCES || get32(buf + 16) != sequence)
                return -EBADMSG;
        if (buf[0] != PROTO_VERSION) {
                *ret = CHRONY_CMD_BAD_VERSION;
                return -EPROTO;
        }
        status = get16(buf + 8);
        switch (status) {
        case STT_SUCCESS:
                /* a success carries the empty reply */
                if (get16(buf + 6) != RPY_NULL)
                        return -EBADMSG;
                *ret = CHRONY_CMD_SUCCESS;
                break;
        case STT_FAILED:
                *ret = CHRONY_CMD_FAILED;
                break;
        case STT_UNAUTH:
                *ret = CHRONY_CMD_UNAUTHORISED;
                break;
        case STT_INVALID:
                *ret = CHRONY_CMD_INVALID;
                break;
        case STT_BADPKTVERSION:
                *ret = CHRONY_CMD_BAD_VERSION;
                break;
        case STT_BADPKTLENGTH:
                *ret = CHRONY_CMD_BAD_LENGTH;
                break;
        default:
                *ret = CHRONY_CMD_OTHER;
                break;
        }
        return 0;
}
