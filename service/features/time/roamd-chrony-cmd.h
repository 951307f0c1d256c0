/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* chronyd's command protocol (cmdmon, version 6: chrony 4.x), the requests roamd makes:
 * "reload sources" (REQ_RELOAD_SOURCES, chrony 4.0 and later), which makes chronyd read its
 * sourcedir files again, and "tracking" (REQ_TRACKING, what `chronyc tracking` prints): the
 * reference chronyd follows and how far the system clock is off it. Written from the layout
 * in chrony's candm.h and pktlength.c: a 20 byte request header (version, packet type, two
 * reserved bytes, command, attempt, sequence, two pad words, big-endian) with no data,
 * zero-padded to the length of the reply (chronyd drops a request shorter than the reply it
 * would send: 28 bytes for reload, 104 for tracking); the reply's header carries the command,
 * the reply code, the status and the sequence. No library speaks it (chronyc is a program,
 * not a library) and only these requests are needed. Pure: the socket is
 * roamd-client-chrony.c's. */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define CHRONY_CMD_REQUEST_SIZE     28
#define CHRONY_CMD_REPLY_MIN        28
#define CHRONY_CMD_TRACKING_SIZE    104 /* the tracking request and its reply (RPY_Tracking) */
#define CHRONY_CMD_N_SOURCES_SIZE   32  /* the request and its reply (RPY_N_Sources) */
#define CHRONY_CMD_SOURCE_DATA_SIZE 76  /* the request and its reply (RPY_Source_Data) */

/* chronyd's answer (its STT_* status codes that roamd names). */
typedef enum ChronyCmdStatus {
        CHRONY_CMD_SUCCESS,
        CHRONY_CMD_FAILED,
        CHRONY_CMD_UNAUTHORISED,
        CHRONY_CMD_INVALID, /* a chronyd without the command: older than 4.0 */
        CHRONY_CMD_BAD_VERSION,
        CHRONY_CMD_BAD_LENGTH,
        CHRONY_CMD_NO_SUCH_SOURCE, /* a source index beyond chronyd's sources */
        CHRONY_CMD_OTHER,          /* a status code roamd does not know */
        _CHRONY_CMD_STATUS_MAX,
        _CHRONY_CMD_STATUS_INVALID = -EINVAL,
} ChronyCmdStatus;

/* The status in words, for the log. */
const char *chrony_cmd_status_to_string(ChronyCmdStatus s);

/* Writes the "reload sources" request with this sequence number and attempt into buf
 * (CHRONY_CMD_REQUEST_SIZE bytes). */
void chrony_cmd_reload_sources(uint32_t sequence, uint16_t attempt,
                               uint8_t buf[static CHRONY_CMD_REQUEST_SIZE]);

/* Reads a reply (outside input: every field checked). 0 and *ret for a reply to our "reload
 * sources" with this sequence number; -EBADMSG for something that is not one (too short, not
 * a reply, another command or sequence: a stray datagram, ignored); -EPROTO for a reply of
 * another protocol version (*ret CHRONY_CMD_BAD_VERSION). */
int chrony_cmd_parse_reply(const uint8_t *buf, size_t len, uint32_t sequence, ChronyCmdStatus *ret);

/* RPY_Tracking, in host order (chrony's ntohl/ntohs, UTI_IPNetworkToHost,
 * UTI_TimespecNetworkToHost, UTI_FloatNetworkToHost). */
typedef struct ChronyTracking {
        uint32_t ref_id;  /* the reference's NTP refid (an IPv4 address, or 4 characters) */
        int family;       /* of addr: AF_INET, AF_INET6 or AF_UNSPEC (a refclock, none) */
        uint8_t addr[16]; /* the reference's address, network order */
        uint16_t stratum;
        uint16_t leap_status; /* 0 normal, 1 insert, 2 delete, 3 unsynchronised */
        uint64_t ref_time_sec;
        uint32_t ref_time_nsec;
        /* seconds; current_correction >= 0: the system clock is slow of NTP time by it */
        double current_correction, last_offset, rms_offset, freq_ppm, resid_freq_ppm, skew_ppm;
        double root_delay, root_dispersion, last_update_interval;
} ChronyTracking;

/* chrony's 32-bit Float (candm.h): a 7-bit signed exponent over a 25-bit signed coefficient,
 * 2^(exp - 25) * coef, given as the host-order value of the big-endian word. */
double chrony_cmd_float(uint32_t f);

/* Writes the "tracking" request (CHRONY_CMD_TRACKING_SIZE bytes). */
void chrony_cmd_tracking(uint32_t sequence, uint16_t attempt,
                         uint8_t buf[static CHRONY_CMD_TRACKING_SIZE]);

/* Reads a reply to our "tracking" with this sequence number, like chrony_cmd_parse_reply();
 * with *st CHRONY_CMD_SUCCESS, *ret is chronyd's report (a success must be a whole
 * RPY_Tracking: -EBADMSG otherwise). */
int chrony_cmd_parse_tracking(const uint8_t *buf, size_t len, uint32_t sequence,
                              ChronyCmdStatus *st, ChronyTracking *ret);

/* A source's state in chronyd's selection (RPY_SD_ST_*, chronyc's second column). */
typedef enum ChronySourceState {
        CHRONY_SOURCE_SELECTED,      /* '*': the reference */
        CHRONY_SOURCE_NONSELECTABLE, /* '?': unusable (unreachable, noselect, no samples) */
        CHRONY_SOURCE_FALSETICKER,   /* 'x' */
        CHRONY_SOURCE_JITTERY,       /* '~' */
        CHRONY_SOURCE_COMBINED,      /* '+': RPY_SD_ST_UNSELECTED, combined with the reference */
        CHRONY_SOURCE_NOT_COMBINED,  /* '-': RPY_SD_ST_SELECTABLE, selectable but left out */
        _CHRONY_SOURCE_STATE_MAX,
        _CHRONY_SOURCE_STATE_INVALID = -EINVAL, /* a state roamd does not know */
} ChronySourceState;

const char *chrony_source_state_to_string(ChronySourceState s);

/* A source's mode (RPY_SD_MD_*, chronyc's first column). */
typedef enum ChronySourceMode {
        CHRONY_SOURCE_CLIENT,   /* '^': an NTP server */
        CHRONY_SOURCE_PEER,     /* '=': an NTP peer */
        CHRONY_SOURCE_REFCLOCK, /* '#': a reference clock */
        _CHRONY_SOURCE_MODE_MAX,
        _CHRONY_SOURCE_MODE_INVALID = -EINVAL,
} ChronySourceMode;

/* RPY_Source_Data, in host order. A reference clock's address is its refid as an IPv4
 * address (chrony's RCL_ReportSource); an NTP source whose name is not resolved yet has an
 * id (IPADDR_ID): family AF_UNSPEC, the id in ref_id. */
typedef struct ChronySource {
        int family;       /* of addr: AF_INET, AF_INET6 or AF_UNSPEC */
        uint8_t addr[16]; /* network order */
        uint32_t ref_id;  /* the first 4 bytes of addr (a refclock's refid), or the id */
        int16_t poll;
        uint16_t stratum;
        ChronySourceState state;
        ChronySourceMode mode;
        uint16_t flags, reachability;
        uint32_t since_sample;
        double orig_latest_meas, latest_meas, latest_meas_err; /* seconds */
} ChronySource;

/* Writes the "how many sources" request (CHRONY_CMD_N_SOURCES_SIZE bytes). */
void chrony_cmd_n_sources(uint32_t sequence, uint16_t attempt,
                          uint8_t buf[static CHRONY_CMD_N_SOURCES_SIZE]);

/* Reads its reply, like chrony_cmd_parse_reply(); with *st CHRONY_CMD_SUCCESS, *ret is the
 * number of sources. */
int chrony_cmd_parse_n_sources(const uint8_t *buf, size_t len, uint32_t sequence,
                               ChronyCmdStatus *st, uint32_t *ret);

/* Writes the request for the source of this index (CHRONY_CMD_SOURCE_DATA_SIZE bytes). */
void chrony_cmd_source_data(uint32_t sequence, uint16_t attempt, uint32_t index,
                            uint8_t buf[static CHRONY_CMD_SOURCE_DATA_SIZE]);

/* Reads its reply, like chrony_cmd_parse_reply(); with *st CHRONY_CMD_SUCCESS, *ret is the
 * source. -ENODATA: chronyd answered the empty reply (it had no report for that source, as
 * its cmdmon.c does for a source that went meanwhile): nothing to read, not an error. */
int chrony_cmd_parse_source_data(const uint8_t *buf, size_t len, uint32_t sequence,
                                 ChronyCmdStatus *st, ChronySource *ret);
