/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "roamd-client-chrony.h"
#include "test.h"

/* chronyd's socket directory belongs to chronyd's user, who may swap roamd's new client
 * socket for a symlink the moment bind() made it. This test plays that user inside chmod():
 * any chmod() of a path the client makes lands on the symlink's target (as the real one
 * would, following it), a file of root's the test watches. */
static char victim[256], swap_link[256];
static unsigned chmod_calls;

int chmod(const char *path, mode_t mode)
{
        chmod_calls++;
        if (swap_link[0])
                (void)rename(swap_link, path);
        return (int)syscall(SYS_fchmodat, AT_FDCWD, path, mode);
}

static void on_time(const TimeEvent *ev, void *userdata)
{
}

TEST(chrony_client_socket_made_0666_without_chmod)
{
        char dir[] = "/tmp/roam-test-chrony-XXXXXX", server[300], mine[300];
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        sd_event *e = NULL;
        ChronyClient *c = NULL;
        struct stat st;
        int fd;

        ASSERT_TRUE(mkdtemp(dir));
        snprintf(server, sizeof(server), "%s/chronyd.sock", dir);
        snprintf(mine, sizeof(mine), "%s/roamd.%d.sock", dir, (int)getpid());
        snprintf(victim, sizeof(victim), "%s/victim", dir);
        snprintf(swap_link, sizeof(swap_link), "%s/swap", dir);
        fd = open(victim, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        close(fd);
        ASSERT_OK(symlink(victim, swap_link));
        /* chronyd: a datagram socket that never answers (the exchange stays under way) */
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(fd >= 0);
        strcpy(sa.sun_path, server);
        ASSERT_OK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)));

        ASSERT_OK(sd_event_new(&e));
        ASSERT_OK(chrony_client_new(e, on_time, NULL, &c));
        ASSERT_OK(chrony_client_reload_sources(c, server));
        /* the victim kept its mode: nothing chmod()ed a path in that directory */
        ASSERT_OK(stat(victim, &st));
        ASSERT_EQ(st.st_mode & 07777, 0600);
        ASSERT_EQ(chmod_calls, 0);
        /* and chronyd's user can still answer: the client's socket is 0666 */
        ASSERT_OK(lstat(mine, &st));
        ASSERT_TRUE(S_ISSOCK(st.st_mode));
        ASSERT_EQ(st.st_mode & 07777, 0666);

        chrony_client_free(c);
        sd_event_unref(e);
        close(fd);
        (void)unlink(server);
        (void)unlink(mine);
        (void)unlink(victim);
        (void)unlink(swap_link);
        (void)rmdir(dir);
}
