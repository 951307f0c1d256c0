/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <string.h>
#include <sys/socket.h>

#include "roam-macro.h"
#include "roamd-chrony-cmd.h"

enum {
        PROTO_VERSION = 6,
        PKT_TYPE_REQUEST = 1,
        PKT_TYPE_REPLY = 2,
        REQ_TRACKING = 33,
        REQ_RELOAD_SOURCES = 70,
        RPY_NULL = 1,
        RPY_TRACKING = 5,
        IPADDR_INET4 = 1,
        IPADDR_INET6 = 2,
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

static void request(uint16_t command, uint32_t sequence, uint16_t attempt, uint8_t *buf,
                    size_t size)
{
        memset(buf, 0, size); /* the padding chronyd wants: zeros */
        buf[0] = PROTO_VERSION;
        buf[1] = PKT_TYPE_REQUEST;
        put16(buf + 4, command);
        put16(buf + 6, attempt);
        buf[8] = (uint8_t)(sequence >> 24);
        buf[9] = (uint8_t)(sequence >> 16);
        buf[10] = (uint8_t)(sequence >> 8);
        buf[11] = (uint8_t)sequence;
}

void chrony_cmd_reload_sources(uint32_t sequence, uint16_t attempt,
                               uint8_t buf[static CHRONY_CMD_REQUEST_SIZE])
{
        request(REQ_RELOAD_SOURCES, sequence, attempt, buf, CHRONY_CMD_REQUEST_SIZE);
}

void chrony_cmd_tracking(uint32_t sequence, uint16_t attempt,
                         uint8_t buf[static CHRONY_CMD_TRACKING_SIZE])
{
        request(REQ_TRACKING, sequence, attempt, buf, CHRONY_CMD_TRACKING_SIZE);
}

/* The header of a reply to our command of this sequence number: 0 and its status and reply
 * code; -EBADMSG for something else, -EPROTO for another version. */
static int parse_header(const uint8_t *buf, size_t len, uint16_t command, uint32_t sequence,
                        ChronyCmdStatus *ret, uint16_t *code)
{
        /* version, type, res1, res2, command, reply, status, pad1-3, sequence, pad4-5 */
        if (len < CHRONY_CMD_REPLY_MIN || buf[1] != PKT_TYPE_REPLY || get16(buf + 4) != command ||
            get32(buf + 16) != sequence)
                return -EBADMSG;
        if (buf[0] != PROTO_VERSION) {
                *ret = CHRONY_CMD_BAD_VERSION;
                return -EPROTO;
        }
        *code = get16(buf + 6);
        switch (get16(buf + 8)) {
        case STT_SUCCESS:
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

int chrony_cmd_parse_reply(const uint8_t *buf, size_t len, uint32_t sequence, ChronyCmdStatus *ret)
{
        ChronyCmdStatus st;
        uint16_t code;
        int r = parse_header(buf, len, REQ_RELOAD_SOURCES, sequence, &st, &code);

        if (r == -EPROTO)
                *ret = st;
        if (r < 0)
                return r;
        /* a success carries the empty reply */
        if (st == CHRONY_CMD_SUCCESS && code != RPY_NULL)
                return -EBADMSG;
        *ret = st;
        return 0;
}

double chrony_cmd_float(uint32_t f)
{
        /* the exponent's 7 bits and the coefficient's 25, each two's complement */
        int32_t exp = (int32_t)(f >> 25), coef = (int32_t)(f & 0x1ffffff);

        if (exp >= 64)
                exp -= 128;
        if (coef >= 1 << 24)
                coef -= 1 << 25;
        return ldexp((double)coef, exp - 25);
}

int chrony_cmd_parse_tracking(const uint8_t *buf, size_t len, uint32_t sequence,
                              ChronyCmdStatus *st, ChronyTracking *ret)
{
        ChronyCmdStatus s;
        uint16_t code, family;
        const uint8_t *d = buf + 28; /* RPY_Tracking */
        double *floats[] = {
            &ret->current_correction, &ret->last_offset,     &ret->rms_offset,
            &ret->freq_ppm,           &ret->resid_freq_ppm,  &ret->skew_ppm,
            &ret->root_delay,         &ret->root_dispersion, &ret->last_update_interval,
        };
        uint32_t high;
        int r = parse_header(buf, len, REQ_TRACKING, sequence, &s, &code);

        if (r == -EPROTO)
                *st = s;
        if (r < 0)
                return r;
        if (s != CHRONY_CMD_SUCCESS) {
                *st = s;
                return 0;
        }
        if (code != RPY_TRACKING || len < CHRONY_CMD_TRACKING_SIZE)
                return -EBADMSG;
        *ret = (ChronyTracking){.ref_id = get32(d)};
        /* IPAddr: a 16 byte union, then the family and a pad word */
        family = get16(d + 4 + 16);
        if (family == IPADDR_INET4) {
                ret->family = AF_INET;
                memcpy(ret->addr, d + 4, 4);
        } else if (family == IPADDR_INET6) {
                ret->family = AF_INET6;
                memcpy(ret->addr, d + 4, 16);
        } else
                ret->family = AF_UNSPEC; /* IPADDR_UNSPEC, or an unresolved name's id */
        ret->stratum = get16(d + 24);
        ret->leap_status = get16(d + 26);
        /* Timespec: seconds' high and low words (0x7fffffff high: none), nanoseconds */
        high = get32(d + 28);
        ret->ref_time_sec = (uint64_t)(high == 0x7fffffff ? 0 : high) << 32 | get32(d + 32);
        ret->ref_time_nsec = get32(d + 36);
        if (ret->ref_time_nsec > 999999999)
                ret->ref_time_nsec = 999999999;
        for (size_t i = 0; i < ELEMENTSOF(floats); i++)
                *floats[i] = chrony_cmd_float(get32(d + 40 + 4 * i));
        *st = CHRONY_CMD_SUCCESS;
        return 0;
}
