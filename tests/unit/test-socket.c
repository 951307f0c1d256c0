/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "test.h"

/* A peer that never answers: the bounded read gives up with EAGAIN instead of blocking the
 * loop for ever (without the bound this test would hang, and meson's timeout fails it). */
TEST(socket_bound_recv_gives_up)
{
        int sv[2];
        char c;

        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
        ASSERT_OK(socket_bound_recv(sv[0], 20 * USEC_PER_MSEC));
        ASSERT_EQ(recv(sv[0], &c, 1, 0), -1);
        ASSERT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
        /* an answer that comes is read as before */
        ASSERT_EQ(send(sv[1], "x", 1, 0), 1);
        ASSERT_EQ(recv(sv[0], &c, 1, 0), 1);
        ASSERT_EQ(c, 'x');
        ASSERT_EQ(socket_bound_recv(-1, USEC_PER_SEC), -EBADF);
        close(sv[0]);
        close(sv[1]);
}
