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
        REQ_N_SOURCES = 14,
        REQ_SOURCE_DATA = 15,
        REQ_TRACKING = 33,
        REQ_RELOAD_SOURCES = 70,
        RPY_NULL = 1,
        RPY_N_SOURCES = 2,
        RPY_SOURCE_DATA = 3,
        RPY_TRACKING = 5,
        IPADDR_INET4 = 1,
        IPADDR_INET6 = 2,
        IPADDR_ID = 3,
        STT_SUCCESS = 0,
        STT_FAILED = 1,
        STT_UNAUTH = 2,
        STT_INVALID = 3,
        STT_NOSUCHSOURCE = 4,
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
    [CHRONY_CMD_NO_SUCH_SOURCE] = "no such source",
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
        case STT_NOSUCHSOURCE:
                *ret = CHRONY_CMD_NO_SUCH_SOURCE;
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

static const char *const source_state_table[_CHRONY_SOURCE_STATE_MAX] = {
    [CHRONY_SOURCE_SELECTED] = "selected",       [CHRONY_SOURCE_NONSELECTABLE] = "unusable",
    [CHRONY_SOURCE_FALSETICKER] = "falseticker", [CHRONY_SOURCE_JITTERY] = "too variable",
    [CHRONY_SOURCE_COMBINED] = "combined",       [CHRONY_SOURCE_NOT_COMBINED] = "not combined",
};

const char *chrony_source_state_to_string(ChronySourceState s)
{
        if (s < 0 || s >= _CHRONY_SOURCE_STATE_MAX)
                return NULL;
        return source_state_table[s];
}

void chrony_cmd_n_sources(uint32_t sequence, uint16_t attempt,
                          uint8_t buf[static CHRONY_CMD_N_SOURCES_SIZE])
{
        request(REQ_N_SOURCES, sequence, attempt, buf, CHRONY_CMD_N_SOURCES_SIZE);
}

void chrony_cmd_source_data(uint32_t sequence, uint16_t attempt, uint32_t index,
                            uint8_t buf[static CHRONY_CMD_SOURCE_DATA_SIZE])
{
        request(REQ_SOURCE_DATA, sequence, attempt, buf, CHRONY_CMD_SOURCE_DATA_SIZE);
        /* REQ_Source_Data: the index, then the padding */
        buf[20] = (uint8_t)(index >> 24);
        buf[21] = (uint8_t)(index >> 16);
        buf[22] = (uint8_t)(index >> 8);
        buf[23] = (uint8_t)index;
}

int chrony_cmd_parse_n_sources(const uint8_t *buf, size_t len, uint32_t sequence,
                               ChronyCmdStatus *st, uint32_t *ret)
{
        ChronyCmdStatus s;
        uint16_t code;
        int r = parse_header(buf, len, REQ_N_SOURCES, sequence, &s, &code);

        if (r == -EPROTO)
                *st = s;
        if (r < 0)
                return r;
        if (s == CHRONY_CMD_SUCCESS && (code != RPY_N_SOURCES || len < CHRONY_CMD_N_SOURCES_SIZE))
                return -EBADMSG;
        if (s == CHRONY_CMD_SUCCESS)
                *ret = get32(buf + 28);
        *st = s;
        return 0;
}

int chrony_cmd_parse_source_data(const uint8_t *buf, size_t len, uint32_t sequence,
                                 ChronyCmdStatus *st, ChronySource *ret)
{
        ChronyCmdStatus s;
        uint16_t code, family, state, mode;
        const uint8_t *d = buf + 28; /* RPY_Source_Data */
        int r = parse_header(buf, len, REQ_SOURCE_DATA, sequence, &s, &code);

        if (r == -EPROTO)
                *st = s;
        if (r < 0)
                return r;
        *st = s;
        if (s != CHRONY_CMD_SUCCESS)
                return 0;
        if (code == RPY_NULL)
                return -ENODATA;
        if (code != RPY_SOURCE_DATA || len < CHRONY_CMD_SOURCE_DATA_SIZE)
                return -EBADMSG;
        *ret = (ChronySource){.ref_id = get32(d)};
        /* IPAddr: a 16 byte union, then the family and a pad word */
        family = get16(d + 16);
        if (family == IPADDR_INET4) {
                ret->family = AF_INET;
                memcpy(ret->addr, d, 4);
        } else if (family == IPADDR_INET6) {
                ret->family = AF_INET6;
                memcpy(ret->addr, d, 16);
        } else {
                ret->family = AF_UNSPEC; /* IPADDR_ID (a name not resolved yet) or unspecified */
                if (family != IPADDR_ID)
                        ret->ref_id = 0;
        }
        ret->poll = (int16_t)get16(d + 20);
        ret->stratum = get16(d + 22);
        state = get16(d + 24);
        mode = get16(d + 26);
        /* RPY_SD_ST_* and RPY_SD_MD_* are our enums' values; a newer chronyd's are unknown */
        ret->state = state < _CHRONY_SOURCE_STATE_MAX ? (ChronySourceState)state
                                                      : _CHRONY_SOURCE_STATE_INVALID;
        ret->mode =
            mode < _CHRONY_SOURCE_MODE_MAX ? (ChronySourceMode)mode : _CHRONY_SOURCE_MODE_INVALID;
        ret->flags = get16(d + 28);
        ret->reachability = get16(d + 30);
        ret->since_sample = get32(d + 32);
        ret->orig_latest_meas = chrony_cmd_float(get32(d + 36));
        ret->latest_meas = chrony_cmd_float(get32(d + 40));
        ret->latest_meas_err = chrony_cmd_float(get32(d + 44));
        return 0;
}
