/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* chronyd's command protocol (cmdmon, version 6: chrony 4.x), the two requests roamd makes:
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

#define CHRONY_CMD_REQUEST_SIZE  28
#define CHRONY_CMD_REPLY_MIN     28
#define CHRONY_CMD_TRACKING_SIZE 104 /* the tracking request and its reply (RPY_Tracking) */

/* chronyd's answer (its STT_* status codes that roamd names). */
typedef enum ChronyCmdStatus {
        CHRONY_CMD_SUCCESS,
        CHRONY_CMD_FAILED,
        CHRONY_CMD_UNAUTHORISED,
        CHRONY_CMD_INVALID, /* a chronyd without the command: older than 4.0 */
        CHRONY_CMD_BAD_VERSION,
        CHRONY_CMD_BAD_LENGTH,
        CHRONY_CMD_OTHER, /* a status code roamd does not know */
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
