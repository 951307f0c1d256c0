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

int wifi_wpa_config_path(const char *ifname, char **ret)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        int r = -ENOENT;

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
                    strncmp(comm, "wpa_supplicant", 14) != 0)
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
                snprintf(words, sizeof(words), "wpa_supplicant did not answer SAVE_CONFIG (%s)",
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
                         "saved (roamd could not find wpa_supplicant's file to check its mode)");
        else if (stat(s->path, &st) < 0)
                snprintf(words, sizeof(words), "saved (%s could not be checked: %s)", s->path,
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
        if (wifi_wpa_config_path(ifname, &s->path) >= 0 && stat(s->path, &st) >= 0) {
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
