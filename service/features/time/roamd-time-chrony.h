/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* chrony's SOCK reference clock (docs/time.md): roamd does not set the clock, it hands the
 * agreed time to chronyd as a reference clock sample, and chronyd steps or slews by its own
 * rules. chronyd binds the socket (`refclock SOCK /run/chrony.roam.sock`); roamd sends one
 * datagram a sample, never waiting: a chronyd that is not there or busy loses the sample. */

#include <stdint.h>

/* The sample chrony's refclock_sock.c reads. */
#define CHRONY_SOCK_MAGIC 0x534f434b

/* Sends "the true time minus the system time is offset_usec at realtime_usec" to the socket
 * at path. 0, or a negative errno (-ENOENT, -ECONNREFUSED: no chronyd listens there; -EAGAIN:
 * its queue is full). */
int chrony_sock_send(const char *path, uint64_t realtime_usec, int64_t offset_usec);
