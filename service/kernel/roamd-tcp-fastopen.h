/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* TCP Fast Open on the client side (RFC 7413): the kernel keeps the cookie a server gave in
 * its TCP metrics, per source and destination address, and sends it, with the first data,
 * in the SYN of the next connection there. */

/* Forgets the cookies kept for connections to addr (struct in_addr or in6_addr of family),
 * from any source address: a cookie a server gave the device on one network must not be
 * shown to it from another. 0 also when none was kept; negative errno when the kernel
 * refused (the connection must then go without Fast Open). */
int tcp_fastopen_forget(int family, const void *addr);

/* Whether the Fast Open SYN of the connection fd (still open) was lost: it carried data and
 * a cookie, or the request for one, and only its retransmission, without them, was
 * answered. A path that drops such SYNs costs one SYN timeout (1 s) per connection, every
 * time: the kernel does not stop trying (net.ipv4.tcp_fastopen_blackhole_timeout_sec is 0
 * by default since 5.14). A connection that asked for a cookie and retransmitted anything
 * later counts too: the kernel does not tell the two apart. */
bool tcp_fastopen_syn_lost(int fd);
