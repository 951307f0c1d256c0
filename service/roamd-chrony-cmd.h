/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* chronyd's command protocol (cmdmon, version 6: chrony 4.x), the one request roamd makes:
 * "reload sources" (REQ_RELOAD_SOURCES, chrony 4.0 and later), which makes chronyd read its
 * sourcedir files again. Written from the layout in chrony's candm.h and pktlength.c: a 20
 * byte request header (version, packet type, two reserved bytes, command, attempt, sequence,
 * two pad words, big-endian) with no data, zero-padded to the length of the reply (28 bytes:
 * chronyd drops a request shorter than the reply it would send); the reply's header carries
 * the command, the reply code, the status and the sequence. No library speaks it (chronyc is
 * a program, not a library) and only this request is needed. Pure: the socket is
 * roamd-client-chrony.c's. */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define CHRONY_CMD_REQUEST_SIZE 28
#define CHRONY_CMD_REPLY_MIN    28

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
