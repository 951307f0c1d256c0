/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libmnl/libmnl.h>
#include <stdint.h>

/* One dump of the kernel's TCP sockets of a family (sock_diag, INET_DIAG) in the given states
 * (a mask of 1 << TCP_*: the kernel filters, so the dump is usually small), each message
 * handed to cb. The kernel answers at once from its socket table: nothing waits on the
 * network. seq: the request's sequence number, checked on the answers. Negative errno on
 * failure. */
int sock_diag_dump_tcp(struct mnl_socket *nl, uint32_t seq, int family, uint32_t states,
                       mnl_cb_t cb, void *data);
