/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-client-chrony.h"
#include "roamd-link.h"
#include "roamd-links.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-ntp-dhcp.h"
#include "roamd-ntp-sources.h"

/* What roamd handed chronyd for one link. */
typedef struct NtpDhcpEntry {
        int ifindex;
        bool allowed; /* the verdict's decision, kept while the link is checking */
        char *path;   /* the file written; NULL: none */
        char *text;   /* its text */
} NtpDhcpEntry;

struct NtpDhcp {
        Core *core;
        unsigned links_watch;
        ChronyClient *chrony; /* not ours: the time feed's */
        NtpDhcpEntry *entries;
        size_t n_entries;
        bool swept;    /* an earlier roamd's files were looked at */
        int dir_error; /* the last failure to write into the directory, said once */
};

static void entry_done(NtpDhcpEntry *e)
{
        free(e->path);
        free(e->text);
        e->path = e->text = NULL;
}

NtpDhcp *ntp_dhcp_free(NtpDhcp *d)
{
        if (!d)
                return NULL;
        if (d->links_watch)
                links_watch_remove(d->core->links, d->links_watch);
        for (size_t i = 0; i < d->n_entries; i++)
                entry_done(&d->entries[i]);
        free(d->entries);
        free(d);
        return NULL;
}

static NtpDhcpEntry *entry_get(NtpDhcp *d, int ifindex, bool create)
{
        NtpDhcpEntry *n;

        for (size_t i = 0; i < d->n_entries; i++)
                if (d->entries[i].ifindex == ifindex)
                        return &d->entries[i];
        if (!create)
                return NULL;
        n = realloc(d->entries, sizeof(*n) * (d->n_entries + 1));
        if (!n)
                return NULL;
        d->entries = n;
        n[d->n_entries] = (NtpDhcpEntry){.ifindex = ifindex};
        return &n[d->n_entries++];
}

/* The one place a link's file changes: writes or removes it and logs old -> new. 1 when chronyd
 * must hear of it. */
static int entry_set(NtpDhcp *d, NtpDhcpEntry *e, const char *name, char *path, char *text,
                     const char *why)
{
        _cleanup_free_ char *p = path, *t = text;
        const char *dir;
        int r;

        if (streq_ptr(e->path, p) && streq_ptr(e->text, t))
                return 0;
        if (e->path && !streq_ptr(e->path, p)) {
                if (unlink(e->path) < 0 && errno != ENOENT)
                        log_warning_errno(errno, "Time: cannot remove %s: %m", e->path);
                else
                        log_info("Time: %s's NTP servers from DHCP withdrawn from chronyd (%s): "
                                 "%s removed",
                                 name, why, e->path);
        }
        entry_done(e);
        if (!p)
                return 1;
        /* made when first needed, as Debian's hooks do */
        dir = d->core->config->time.chrony_source_dir;
        if (dir && mkdir(dir, 0755) < 0 && errno != EEXIST && -errno != d->dir_error) {
                d->dir_error = -errno;
                log_warning_errno(errno, "Time: cannot make %s: %m", dir);
        }
        r = write_file_atomic_mode(p, t, strlen(t), 0644);
        if (r < 0) {
                if (r != d->dir_error)
                        log_warning_errno(r, "Time: cannot write %s: %m", p);
                d->dir_error = r;
                return 1; /* an old file may have gone */
        }
        d->dir_error = 0;
        log_info("Time: %s's NTP servers from DHCP handed to chronyd in %s", name, p);
        e->path = TAKE_PTR(p);
        e->text = TAKE_PTR(t);
        return 1;
}

/* Whether the link's network is one the user trusts with the device's time: its location in
 * force (the firewall's, through the links' view) is home or work. Any host on a café's or an
 * untrusted network can answer DHCP: its NTP servers would become one more voice chronyd
 * listens to. No firewall, no location: not trusted either. */
static bool location_trusted(NtpDhcp *d, const Link *l)
{
        const LinkViews *v = &d->core->links->views;
        LinkIdentityView view;

        if (!v->identity)
                return false;
        v->identity(l->ifindex, &view, v->identity_userdata);
        return streq_ptr(view.location, "home") || streq_ptr(view.location, "work");
}

/* What one link's file should say now. */
static int update_link(NtpDhcp *d, Link *l, const char *dir)
{
        NtpDhcpEntry *e = entry_get(d, l->ifindex, true);
        _cleanup_free_ char *path = NULL, *text = NULL;
        const char *why = "no servers in its leases";
        int r;

        if (!e)
                return -ENOMEM;
        e->allowed = ntp_sources_verdict_allows(l->verdict.verdict, e->allowed);
        if (!dir)
                why = "[Time] ChronySourceDir= is off";
        else if (!ntp_sources_ifname_ok(l->info.name))
                why = "a link name that is no file name";
        else if (!location_trusted(d, l))
                why = "the link's location is not home or work";
        else if (!e->allowed)
                why = l->verdict.verdict == VERDICT_PORTAL ? "the link is behind a portal"
                                                           : "the link is offline";
        else {
                r = ntp_sources_text(l->info.name, l->info.ntp_servers, &text);
                if (r < 0)
                        return r;
                if (text && asprintf(&path, "%s/%s" NTP_SOURCES_SUFFIX, dir, l->info.name) < 0)
                        return -ENOMEM;
        }
        return entry_set(d, e, strempty(l->info.name), TAKE_PTR(path), TAKE_PTR(text), why);
}

/* Files with roamd's mark that no link of this roamd wants: an earlier roamd's. */
static int sweep(NtpDhcp *d, const char *dir)
{
        _cleanup_(closedirp) DIR *dh = opendir(dir);
        int changed = 0;

        if (!dh)
                return 0;
        for (struct dirent *de; (de = readdir(dh));) {
                _cleanup_free_ char *path = NULL, *text = NULL;
                size_t n = strlen(de->d_name), s = strlen(NTP_SOURCES_SUFFIX);
                bool ours = false;

                if (n <= s || !streq(de->d_name + n - s, NTP_SOURCES_SUFFIX))
                        continue;
                if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < d->n_entries && !ours; i++)
                        ours = streq_ptr(d->entries[i].path, path);
                if (ours || read_full_file(path, 64 * 1024, &text, NULL) < 0 ||
                    strncmp(text, NTP_SOURCES_MARK, strlen(NTP_SOURCES_MARK)) != 0)
                        continue;
                if (unlink(path) >= 0) {
                        log_info("Time: %s of an earlier roamd removed (no link wants it)", path);
                        changed = 1;
                }
        }
        return changed;
}

int ntp_dhcp_remove_all(const char *dir)
{
        NtpDhcp none = {}; /* no link wants any: every marked file goes */

        return sweep(&none, dir);
}

static void update(NtpDhcp *d, const LinksEvent *ev)
{
        const Config *c = d->core->config;
        const char *dir = c->time.chrony_source_dir;
        Links *links = d->core->links;
        int changed = 0, r;

        /* a link that went: its file goes */
        if (ev->type == LINKS_EVENT_GONE) {
                NtpDhcpEntry *e = entry_get(d, ev->link->ifindex, false);
                if (e) {
                        changed |= entry_set(d, e, strempty(ev->link->info.name), NULL, NULL,
                                             "the link is gone");
                        *e = d->entries[--d->n_entries];
                }
        }
        /* a verdict or a location changes its link's file alone; a sync those links whose
         * leases' NTP servers it changed */
        for (size_t i = 0; ev->type != LINKS_EVENT_GONE && i < links->n_links; i++) {
                Link *l = links->links[i];
                if ((ev->type == LINKS_EVENT_VERDICT || ev->type == LINKS_EVENT_LOCATION) &&
                    l != ev->link)
                        continue;
                /* after the first sync, only the links whose servers or name it changed */
                if (ev->type == LINKS_EVENT_SYNCED && d->swept &&
                    !(l->sync_changed & (LINK_CHANGE_NTP | LINK_CHANGE_NAME)))
                        continue;
                r = update_link(d, l, dir);
                if (r < 0) {
                        log_oom();
                        return;
                }
                changed |= r;
        }
        if (dir && !d->swept && ev->type == LINKS_EVENT_SYNCED) {
                d->swept = true;
                r = sweep(d, dir);
                if (r < 0) {
                        log_oom();
                        return;
                }
                changed |= r;
        }
        if (changed && c->time.chrony_command_socket)
                (void)chrony_client_reload_sources(d->chrony, c->time.chrony_command_socket);
}

static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        switch (ev->type) {
        case LINKS_EVENT_SYNCED:
        case LINKS_EVENT_VERDICT:
        case LINKS_EVENT_LOCATION:
        case LINKS_EVENT_GONE:
                update(userdata, ev);
                break;
        case LINKS_EVENT_NEW:
        case LINKS_EVENT_CHANGED:
        case LINKS_EVENT_CAPPORT:
        case LINKS_EVENT_NETWORK:
        case LINKS_EVENT_BEST:
        case LINKS_EVENT_PROBED:
        case _LINKS_EVENT_MAX:
        case _LINKS_EVENT_INVALID:
                break;
        }
}

int ntp_dhcp_new(Core *core, ChronyClient *chrony, NtpDhcp **ret)
{
        NtpDhcp *d = calloc(1, sizeof(*d));

        if (!d)
                return -ENOMEM;
        d->core = core;
        d->chrony = chrony;
        d->links_watch = links_watch_add(core->links, on_links, d, NULL);
        if (!d->links_watch) {
                ntp_dhcp_free(d);
                return -ENOMEM;
        }
        *ret = d;
        return 0;
}
