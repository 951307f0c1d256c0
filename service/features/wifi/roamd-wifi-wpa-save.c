/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-wifi-backend.h"
#include "roamd-wifi-wpa-parse.h"
#include "roamd-wifi-wpa-save.h"

struct WifiWpaSave {
        WpaRequest *req;
        char *path;
        bool had_mode;
        mode_t mode_before;
        WifiWpaSavedFn cb;
        void *userdata;
};

WifiWpaSave *wifi_wpa_save_free(WifiWpaSave *s)
{
        if (!s)
                return NULL;
        wpa_request_cancel(s->req);
        free(s->path);
        free(s);
        return NULL;
}

static int read_small(const char *path, char *buf, size_t size, size_t *ret_len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        *ret_len = (size_t)n;
        return 0;
}

/* The inode of the socket bound to path in this network namespace's /proc/net/unix, or 0. */
static unsigned long socket_inode(const char *path)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/net/unix", "re");
        char line[4096 + 128];
        unsigned long ino = 0;

        if (!f)
                return 0;
        while (!ino && fgets(line, sizeof(line), f)) {
                /* Num RefCount Protocol Flags Type St Inode Path */
                unsigned long i;
                int at = 0;

                line[strcspn(line, "\n")] = 0;
                if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %n", &i, &at) == 1 && at > 0 &&
                    streq(line + at, path))
                        ino = i;
        }
        return ino;
}

/* Whether process pid holds the socket of inode ino. */
static bool holds_socket(const char *pid, unsigned long ino)
{
        char p[64], want[64], link[64];
        struct dirent *de;
        DIR *d;
        bool found = false;

        snprintf(p, sizeof(p), "/proc/%s/fd", pid);
        snprintf(want, sizeof(want), "socket:[%lu]", ino);
        d = opendir(p);
        if (!d)
                return false;
        while (!found && (de = readdir(d))) {
                char fdp[128];
                ssize_t k;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(fdp, sizeof(fdp), "%s/%s", p, de->d_name);
                k = readlink(fdp, link, sizeof(link) - 1);
                if (k > 0) {
                        link[k] = 0;
                        found = streq(link, want);
                }
        }
        closedir(d);
        return found;
}

/* The wpa_supplicant is the process holding the control socket roamd talks to (server): not
 * the first one named so that runs an interface of that name, which on a machine with
 * containers or network namespaces may be another's, whose file roamd would then judge. */
int wifi_wpa_config_path(const char *server, const char *ifname, char **ret)
{
        unsigned long ino = server ? socket_inode(server) : 0;
        DIR *d;
        struct dirent *de;
        int r = -ENOENT;

        if (!ino)
                return -ENOENT;
        d = opendir("/proc");
        if (!d)
                return -errno;
        while (r == -ENOENT && (de = readdir(d))) {
                char p[64], comm[32], cmd[4096];
                size_t n;
                char *conf = NULL;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(p, sizeof(p), "/proc/%s/comm", de->d_name);
                if (read_small(p, comm, sizeof(comm), &n) < 0 ||
                    strncmp(comm, "wpa_supplicant", 14) != 0 || !holds_socket(de->d_name, ino))
                        continue;
                snprintf(p, sizeof(p), "/proc/%s/cmdline", de->d_name);
                if (read_small(p, cmd, sizeof(cmd), &n) < 0 ||
                    wifi_wpa_cmdline_config(cmd, n, ifname, &conf) < 0)
                        continue;
                if (conf[0] == '/')
                        *ret = conf;
                else {
                        /* relative to where it was started: its cwd (the link, read now) */
                        char cwd[4096];
                        ssize_t k;

                        snprintf(p, sizeof(p), "/proc/%s/cwd", de->d_name);
                        k = readlink(p, cwd, sizeof(cwd) - 1);
                        if (k < 0 || asprintf(ret, "%.*s/%s", (int)k, cwd, conf) < 0) {
                                free(conf);
                                continue;
                        }
                        free(conf);
                }
                r = 0;
        }
        closedir(d);
        return r;
}

/* The save is over: it frees itself, then tells (the callback may start another). */
static void saved_end(WifiWpaSave *s, int error, const char *words)
{
        WifiWpaSavedFn cb = s->cb;
        void *ud = s->userdata;

        wifi_wpa_save_free(s);
        cb(error, words, ud);
}

static void on_saved(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        WifiWpaSave *s = userdata;
        char words[WIFI_WORDS_MAX];
        struct stat st;

        s->req = NULL;
        if (error < 0) {
                snprintf(words, sizeof(words), "wpa_supplicant did not answer SAVE_CONFIG: %s",
                         strerror(-error));
                saved_end(s, error, words);
                return;
        }
        if (!wpa_reply_is_ok(reply, len)) {
                snprintf(words, sizeof(words),
                         "not saved: wpa_supplicant refused SAVE_CONFIG (update_config=0 or a "
                         "read-only file)");
                saved_end(s, -EROFS, words);
                return;
        }
        if (!s->path)
                snprintf(words, sizeof(words),
                         "saved; roamd could not find wpa_supplicant's file to check its mode");
        else if (stat(s->path, &st) < 0)
                snprintf(words, sizeof(words), "saved; %s could not be checked: %s", s->path,
                         strerror(errno));
        else if (s->had_mode && (st.st_mode & 077 & ~s->mode_before)) {
                mode_t now = st.st_mode & 07777, want = s->mode_before & 07777;

                if (chmod(s->path, want) < 0) {
                        snprintf(words, sizeof(words),
                                 "saved, but wpa_supplicant rewrote %s as %04o and roamd could "
                                 "not set it back to %04o: %s",
                                 s->path, (unsigned)now, (unsigned)want, strerror(errno));
                        log_warning("%s", words);
                } else {
                        snprintf(words, sizeof(words),
                                 "saved; wpa_supplicant rewrote %s as %04o, roamd set it back to "
                                 "%04o",
                                 s->path, (unsigned)now, (unsigned)want);
                        log_notice("%s", words);
                }
        } else
                snprintf(words, sizeof(words), "saved");
        saved_end(s, 0, words);
}

int wifi_wpa_save(WpaClient *client, const char *prefix, const char *ifname, WifiWpaSavedFn cb,
                  void *userdata, WifiWpaSave **ret)
{
        WifiWpaSave *s;
        struct stat st;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->cb = cb;
        s->userdata = userdata;
        if (wifi_wpa_config_path(wpa_client_server(client), ifname, &s->path) >= 0 &&
            stat(s->path, &st) >= 0) {
                s->mode_before = st.st_mode;
                s->had_mode = true;
        }
        r = wpa_client_request(client, prefix, "SAVE_CONFIG", on_saved, s, &s->req);
        if (r < 0) {
                wifi_wpa_save_free(s);
                return r;
        }
        *ret = s;
        return 0;
}
