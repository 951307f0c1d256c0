/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "roam-macro.h"
#include "roamd-time-chrony.h"

/* As chrony 4 defines it (refclock_sock.c); its size and layout are the protocol. */
struct sock_sample {
        struct timeval tv; /* the system time of the measurement */
        double offset;     /* the true time minus the system time, seconds */
        int pulse;
        int leap; /* 0: no leap second */
        int _pad;
        int magic;
};

int chrony_sock_send(const char *path, uint64_t realtime_usec, int64_t offset_usec)
{
        _cleanup_close_ int fd = -EBADF;
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct sock_sample s = {
            .tv = {.tv_sec = (time_t)(realtime_usec / 1000000),
                   .tv_usec = (suseconds_t)(realtime_usec % 1000000)},
            .offset = (double)offset_usec / 1e6,
            .magic = CHRONY_SOCK_MAGIC,
        };

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, &s, sizeof(s), MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return -errno;
        return 0;
}
