/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fnmatch.h>
#include <libgen.h>
#include <limits.h>
#include <sys/inotify.h>

#include "roam-log.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roamd-dhcp-lease.h"
#include "roamd-dns-client.h"

static Dns *dns_free_files(Dns *d)
{
        d->inotify_source = sd_event_source_disable_unref(d->inotify_source);
        d->lease_wd = d->resolv_wd = d->ra_wd = d->inotify_fd = -1;
        free(d->resolv_dir);
        free(d->resolv_name);
        d->resolv_dir = d->resolv_name = NULL;
        return d;
}

Dns *dns_free(Dns *d)
{
        if (!d)
                return NULL;
        dns_free_files(d);
        dns_client_done(d);
        free(d->resolv_servers);
        strv_free(d->resolv_domains);
        free(d);
        return NULL;
}

/* The nameserver and search lines of a resolv.conf-style text (the global file, dhcpcd's
 * per-interface ones): at most DHCP_LEASE_MAX_DNS servers, clean-text domains only. */
static int parse_resolv_text(const char *path, char *text, IpAddr *servers, size_t *n,
                             char ***domains)
{
        char *save = NULL;

        *n = 0;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                _cleanup_strv_free_ char **w = NULL;

                if (strv_split(l, " \t", &w) < 0)
                        return -ENOMEM;
                if (strv_length(w) >= 2 && streq(w[0], "nameserver") && *n < DHCP_LEASE_MAX_DNS) {
                        /* Drop a scope suffix (fe80::1%eth0): roamd reports plain addresses. */
                        char *pct = strchr(w[1], '%');
                        if (pct)
                                *pct = 0;
                        if (ip_addr_parse(w[1], &servers[*n]) >= 0)
                                (*n)++;
                } else if (strv_length(w) >= 2 &&
                           (streq(w[0], "search") || streq(w[0], "domain"))) {
                        for (size_t i = 1; w[i]; i++) {
                                /* A domain that is not clean text would fail every bus
                                 * reply it is in (sd-bus refuses broken UTF-8) or rewrite
                                 * a terminal: left out, with a word why. */
                                if (!roam_text_is_clean(w[i], 0)) {
                                        log_warning("%s: search domain \"%s\" is not valid text, "
                                                    "ignored.",
                                                    path, w[i]);
                                        continue;
                                }
                                if (!strv_contains(*domains, w[i]) &&
                                    strv_extend(domains, w[i]) < 0)
                                        return -ENOMEM;
                        }
                }
        }
        return 0;
}

static int load_resolv_conf(Dns *d)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ IpAddr *servers = NULL;
        _cleanup_strv_free_ char **domains = NULL;
        size_t n = 0;
        int r;

        d->n_resolv_servers = 0;
        d->resolv_servers = mfree(d->resolv_servers);
        d->resolv_domains = strv_free(d->resolv_domains);

        r = read_full_file((*d->config)->resolv_conf, 256 * 1024, &text, NULL);
        if (r < 0) {
                log_debug_errno(r, "%s: %m", (*d->config)->resolv_conf);
                return 0;
        }
        servers = calloc(DHCP_LEASE_MAX_DNS, sizeof(IpAddr));
        if (!servers)
                return -ENOMEM;
        r = parse_resolv_text((*d->config)->resolv_conf, text, servers, &n, &domains);
        if (r < 0)
                return r;
        d->resolv_servers = TAKE_PTR(servers);
        d->n_resolv_servers = n;
        d->resolv_domains = TAKE_PTR(domains);
        return 0;
}

/* dhcpcd keeps no lease of a router advertisement: the RDNSS and DNSSL options of the RAs it
 * handles reach only its resolv.conf hook, which writes them to DIR/IFNAME.ra (and removes
 * the file when they expire or the carrier goes). An IPv6-only network without DHCPv6 (SLAAC
 * and RDNSS, as cellular carriers run them) has its DNS servers nowhere else. The directory
 * appears with dhcpcd's first hook run: until then each sync tries to watch it. */
static void watch_ra_dir(Dns *d)
{
        if (d->ra_wd >= 0 || d->inotify_fd < 0)
                return;
        d->ra_wd = inotify_add_watch(d->inotify_fd, (*d->config)->dhcpcd_ra_dir,
                                     IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM);
}

static int read_ra_dns(Dns *d, const char *ifname, IpAddr *servers, size_t *n, char ***domains)
{
        _cleanup_free_ char *path = NULL, *text = NULL;
        int r;

        *n = 0;
        watch_ra_dir(d);
        if (!ifname || !ifname[0] || strchr(ifname, '/') || ifname[0] == '.')
                return 0;
        if (asprintf(&path, "%s/%s.ra", (*d->config)->dhcpcd_ra_dir, ifname) < 0)
                return -ENOMEM;
        r = read_full_file(path, 64 * 1024, &text, NULL);
        if (r < 0)
                return 0;
        return parse_resolv_text(path, text, servers, n, domains);
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        Dns *d = userdata;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool resolv = false, lease = false;
        ssize_t len;

        for (;;) {
                len = read(fd, buf, sizeof(buf));
                if (len <= 0)
                        break;
                for (char *p = buf; p < buf + len;) {
                        struct inotify_event *e = (struct inotify_event *)p;

                        if (e->mask & IN_Q_OVERFLOW)
                                resolv = lease = true;
                        else if (e->wd == d->lease_wd || (d->ra_wd >= 0 && e->wd == d->ra_wd))
                                lease = true;
                        else if (e->wd == d->resolv_wd && e->len > 0 &&
                                 streq(e->name, d->resolv_name))
                                resolv = true;
                        p += sizeof(*e) + e->len;
                }
        }
        if (resolv)
                (void)load_resolv_conf(d);
        if (resolv || lease)
                d->changed(d->userdata);
        return 0;
}

int dns_reconfigure(Dns *d)
{
        const Config *c = (*d->config);
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *copy = NULL;
        int r;

        dns_free_files(d);

        fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "inotify_init1: %m");

        /* Leases and resolv.conf are replaced by rename: watch the directories. */
        d->lease_wd = inotify_add_watch(fd, c->dhcpcd_lease_dir,
                                        IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM);
        if (d->lease_wd < 0)
                log_debug_errno(errno, "Cannot watch %s: %m", c->dhcpcd_lease_dir);

        copy = strdup(c->resolv_conf);
        if (!copy)
                return -ENOMEM;
        d->resolv_name = strdup(basename(copy));
        d->resolv_dir = strdup(dirname(copy));
        if (!d->resolv_name || !d->resolv_dir)
                return -ENOMEM;
        d->resolv_wd = inotify_add_watch(fd, d->resolv_dir,
                                         IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_CREATE);
        if (d->resolv_wd < 0)
                log_debug_errno(errno, "Cannot watch %s: %m", d->resolv_dir);

        d->inotify_fd = fd;
        watch_ra_dir(d);

        r = sd_event_add_io(d->event, &d->inotify_source, fd, EPOLLIN, on_inotify, d);
        if (r < 0) {
                d->inotify_fd = d->ra_wd = -1;
                return log_error_errno(r, "Failed to watch inotify fd: %m");
        }
        r = sd_event_source_set_io_fd_own(d->inotify_source, true);
        if (r < 0)
                return r;
        TAKE_FD(fd);
        (void)sd_event_source_set_description(d->inotify_source, "dns-files");
        return load_resolv_conf(d);
}

int dns_new(sd_event *event, sd_bus *bus, Config *const *config, LinkChangedFn changed,
            void *userdata, Dns **ret)
{
        Dns *d;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->event = event;
        d->bus = bus;
        d->config = config;
        d->changed = changed;
        d->userdata = userdata;
        d->lease_wd = d->resolv_wd = d->ra_wd = d->inotify_fd = -1;
        r = dns_reconfigure(d);
        if (r >= 0)
                r = dns_client_init(d);
        if (r < 0) {
                dns_free(d);
                return r;
        }
        *ret = d;
        return 0;
}

static int set_servers(LinkInfo *info, const IpAddr *s, size_t n, DnsSource source)
{
        if (n > 0) {
                info->dns = calloc(n, sizeof(IpAddr));
                if (!info->dns)
                        return -ENOMEM;
                memcpy(info->dns, s, n * sizeof(IpAddr));
        }
        info->n_dns = n;
        info->dns_source = source;
        return 0;
}

static bool has_global6(const LinkInfo *info)
{
        for (size_t i = 0; i < info->n_addrs; i++)
                if (info->addrs[i].addr.family == AF_INET6 &&
                    (info->addrs[i].scope == ADDR_SCOPE_GLOBAL ||
                     info->addrs[i].scope == ADDR_SCOPE_SITE))
                        return true;
        return false;
}

static int fill_from_dhcpcd(Dns *d, LinkInfo *info, const DhcpLeases *leases, bool want_servers)
{
        const DhcpLease *v4 = &leases->lease[0], *v6 = &leases->lease[1];
        bool h4 = leases->has[0], h6 = leases->has[1];
        _cleanup_strv_free_ char **ra_domains = NULL;
        const char *url = NULL;
        IpAddr all[3 * DHCP_LEASE_MAX_DNS], ra[DHCP_LEASE_MAX_DNS];
        size_t n = 0, n_ra = 0;
        int r;

        if (h4 && v4->captive_portal[0])
                url = v4->captive_portal;
        else if (h6 && v6->captive_portal[0])
                url = v6->captive_portal;
        if (url && !info->captive_portal_url) {
                info->captive_portal_url = strdup(url);
                if (!info->captive_portal_url)
                        return -ENOMEM;
        }
        if (!want_servers) {
                /* NTP servers: the DHCPv4 lease's first, then the DHCPv6 one's */
                for (int k = 0; k < 2; k++) {
                        const DhcpLease *l = k == 0 ? (h4 ? v4 : NULL) : (h6 ? v6 : NULL);
                        for (size_t i = 0; l && i < l->n_ntp; i++)
                                if (!strv_contains(info->ntp_servers, l->ntp[i]) &&
                                    strv_extend(&info->ntp_servers, l->ntp[i]) < 0)
                                        return -ENOMEM;
                }
                return 0;
        }

        /* The RAs' servers count while the link has a global IPv6 address (from them). */
        if (has_global6(info)) {
                r = read_ra_dns(d, info->name, ra, &n_ra, &ra_domains);
                if (r < 0)
                        return r;
        }
        if (!h4 && !h6 && n_ra == 0 && !ra_domains)
                return 0;
        for (size_t i = 0; h4 && i < v4->n_dns; i++)
                all[n++] = v4->dns[i];
        for (size_t i = 0; h6 && i < v6->n_dns; i++)
                all[n++] = v6->dns[i];
        for (size_t i = 0; i < n_ra; i++) {
                bool dup = false;
                for (size_t k = 0; k < n && !dup; k++)
                        dup = all[k].family == ra[i].family && streq(all[k].text, ra[i].text);
                if (!dup)
                        all[n++] = ra[i];
        }
        for (int k = 0; k < 2; k++) {
                const DhcpLease *l = k == 0 ? (h4 ? v4 : NULL) : (h6 ? v6 : NULL);
                for (size_t i = 0; l && i < l->n_domains; i++)
                        if (!strv_contains(info->domains, l->domains[i]) &&
                            strv_extend(&info->domains, l->domains[i]) < 0)
                                return -ENOMEM;
        }
        for (size_t i = 0; ra_domains && ra_domains[i]; i++)
                if (!strv_contains(info->domains, ra_domains[i]) &&
                    strv_extend(&info->domains, ra_domains[i]) < 0)
                        return -ENOMEM;
        if (n == 0 && !info->domains)
                return 0;
        if (set_servers(info, all, n, DNS_SOURCE_DHCPCD) < 0)
                return -ENOMEM;
        return 1;
}

int dns_fill(Dns *d, int ifindex, LinkInfo *info, const DhcpLeases *leases)
{
        const Config *c = (*d->config);
        const DnsPin *pin = config_dns_pin(c, info->name);
        int r;

        info->dns_source = DNS_SOURCE_NONE;

        /* The captive portal URL and the NTP servers come from the leases whatever source gives
         * the DNS servers. */
        r = fill_from_dhcpcd(d, info, leases, false);
        if (r < 0)
                return r;

        if (pin)
                return set_servers(info, pin->servers, pin->n_servers, DNS_SOURCE_CONFIG);

        for (size_t i = 0; i < c->n_dns_sources; i++) {
                switch (c->dns_sources[i]) {
                case DNS_SOURCE_RESOLVED:
                case DNS_SOURCE_NETWORKMANAGER:
                        r = dns_client_fill(d, c->dns_sources[i], ifindex, info);
                        break;
                case DNS_SOURCE_DHCPCD:
                        r = fill_from_dhcpcd(d, info, leases, true);
                        break;
                case DNS_SOURCE_RESOLV_CONF:
                        /* resolv.conf is global: it describes links that lead somewhere. */
                        r = 0;
                        if (info->n_gateways > 0 && d->n_resolv_servers > 0) {
                                r = set_servers(info, d->resolv_servers, d->n_resolv_servers,
                                                DNS_SOURCE_RESOLV_CONF);
                                if (r >= 0 && d->resolv_domains) {
                                        info->domains = strv_copy(d->resolv_domains);
                                        r = info->domains ? 1 : -ENOMEM;
                                } else if (r >= 0)
                                        r = 1;
                        }
                        break;
                case DNS_SOURCE_NONE:
                case DNS_SOURCE_CONFIG:
                case _DNS_SOURCE_MAX:
                case _DNS_SOURCE_INVALID:
                        r = 0;
                        break;
                }
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return 0;
}
