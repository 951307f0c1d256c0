/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Who answers a TCP connection to an address in roamd's network namespace: the owners (uid)
 * of the sockets listening there, from the kernel's socket table (sock_diag, INET_DIAG; one
 * dump per family, answered at once, as roamd-stall.c's). A listener counts when its port is
 * the address's and its address is the same or the wildcard (0.0.0.0, ::, and :: or
 * ::ffff:A for an IPv4 A, a dual-stack socket taking it). Fills at most max uids; ret_n: how
 * many listeners were found (may exceed max). Negative errno on failure. */
int tcp_listener_uids(const struct sockaddr *sa, socklen_t len, uid_t *uids, size_t max,
                      size_t *ret_n);
