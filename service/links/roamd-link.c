/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>
#include <sys/socket.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-link-bus.h"
#include "roamd-link.h"
#include "roamd-core.h"

static const char *const link_state_table[_LINK_STATE_MAX] = {
    [LINK_STATE_NO_CARRIER] = "no-carrier", [LINK_STATE_NO_ADDRESS] = "no-address",
    [LINK_STATE_LINK_LOCAL] = "link-local", [LINK_STATE_ADDRESSED] = "addressed",
    [LINK_STATE_ROUTABLE] = "routable",
};
DEFINE_STRING_TABLE_LOOKUP(link_state, LinkState)

static void link_note(Link *l, LinkNote note)
{
        if (l->note)
                l->note(l, note, l->note_userdata);
}

int link_new(Core *core, int ifindex, Link **ret)
{
        Link *l;

        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->core = core;
        l->ifindex = ifindex;
        l->bearer = BEARER_VIRTUAL;
        l->state = LINK_STATE_NO_CARRIER;
        l->verdict4 = l->verdict6 = l->verdict =
            (VerdictResult){.verdict = VERDICT_OFFLINE, .reason = REASON_NOT_PROBED};
        if (asprintf(&l->path, ROAM_LINK_PATH_PREFIX "/%d", ifindex) < 0) {
                free(l);
                return -ENOMEM;
        }
        *ret = l;
        return 0;
}

Link *link_free(Link *l)
{
        if (!l)
                return NULL;
        link_info_done(&l->info);
        link_facts_done(&l->facts);
        capport_info_done(&l->capport);
        free(l->capport_error);
        free(l->nat64_prefix);
        free(l->portal_url);
        strv_free(l->bus_pending);
        free(l->path);
        free(l);
        return NULL;
}

void link_facts_done(LinkFacts *f)
{
        for (int k = 0; k < _NETID_FACT_MAX; k++)
                free(f->fact[k]), f->fact[k] = NULL;
        free(f->wifi.wpa_state);
        free(f->wifi.ssid);
        free(f->wifi.bssid);
        free(f->wifi.key_mgmt);
        f->wifi = (WpaStation){};
}

int link_classify(Link *l, const char **names, size_t *n)
{
        Core *m = l->core;
        char dir[PATH_MAX];
        Bearer b;
        bool from_config = true;
        int r;

        if (!l->info.name)
                return 0;
        b = config_bearer_override(m->config, l->info.name);
        if (b < 0) {
                BearerInput in = {
                    .sysfs_dir = dir,
                    .ifname = l->info.name,
                    .kind = l->info.kind,
                    .initial_netns = m->initial_netns,
                };
                snprintf(dir, sizeof(dir), "%s/class/net/%s", m->config->sysfs_path, l->info.name);
                r = bearer_classify(&in, &b);
                if (r < 0)
                        b = BEARER_VIRTUAL;
                from_config = false;
        }
        if (b == l->bearer && from_config == l->bearer_from_config)
                return 0;
        log_info("%s: bearer %s (%s) -> %s (%s)", l->info.name, bearer_to_string(l->bearer),
                 l->bearer_from_config ? "config" : "sysfs", bearer_to_string(b),
                 from_config ? "config" : "sysfs");
        if (b != l->bearer)
                names[(*n)++] = "Bearer";
        if (from_config != l->bearer_from_config)
                names[(*n)++] = "BearerSource";
        l->bearer = b;
        l->bearer_from_config = from_config;
        return 1;
}

bool link_is_usable(const Link *l)
{
        return l->state >= LINK_STATE_ADDRESSED;
}

bool link_has_global(const Link *l, int family)
{
        for (size_t i = 0; i < l->info.n_addrs; i++)
                if (l->info.addrs[i].addr.family == family &&
                    (l->info.addrs[i].scope == ADDR_SCOPE_GLOBAL ||
                     l->info.addrs[i].scope == ADDR_SCOPE_SITE))
                        return true;
        return false;
}

static LinkState link_compute_state(const LinkInfo *i)
{
        bool any = false, usable = false;

        if (!i->admin_up || !i->carrier)
                return LINK_STATE_NO_CARRIER;
        for (size_t k = 0; k < i->n_addrs; k++) {
                any = true;
                if (i->addrs[k].scope == ADDR_SCOPE_GLOBAL || i->addrs[k].scope == ADDR_SCOPE_SITE)
                        usable = true;
        }
        if (!any)
                return LINK_STATE_NO_ADDRESS;
        if (!usable)
                return LINK_STATE_LINK_LOCAL;
        return i->n_gateways > 0 ? LINK_STATE_ROUTABLE : LINK_STATE_ADDRESSED;
}

void link_set_state(Link *l, LinkState s)
{
        if (l->state == s)
                return;
        log_info("%s: state %s -> %s", strempty(l->info.name), link_state_to_string(l->state),
                 link_state_to_string(s));
        l->state = s;
        link_bus_emit_changed(l, "State", NULL);
}

#define CHANGED_STR(field, prop)                                                                   \
        do {                                                                                       \
                if (!streq_ptr(old->field, info->field))                                           \
                        names[n++] = prop;                                                         \
        } while (0)
#define CHANGED_VAL(field, prop)                                                                   \
        do {                                                                                       \
                if (old->field != info->field)                                                     \
                        names[n++] = prop;                                                         \
        } while (0)
#define CHANGED_ARR(arr, cnt, prop)                                                                \
        do {                                                                                       \
                if (old->cnt != info->cnt ||                                                       \
                    (info->cnt && memcmp(old->arr, info->arr, sizeof(*info->arr) * info->cnt)))    \
                        names[n++] = prop;                                                         \
        } while (0)

static bool addr_usable(const LinkAddress *a)
{
        return a->scope == ADDR_SCOPE_GLOBAL || a->scope == ADDR_SCOPE_SITE;
}

/* Whether a and b differ in what the verdict of one family depends on: any address at all,
 * the usable (not link-local) addresses, default routes and DNS servers of that family. */
static bool family_facts_differ(const LinkInfo *a, const LinkInfo *b, int family)
{
        size_t i = 0, k = 0;
        bool any_a = false, any_b = false;

        for (size_t j = 0; j < a->n_addrs; j++)
                any_a = any_a || a->addrs[j].addr.family == family;
        for (size_t j = 0; j < b->n_addrs; j++)
                any_b = any_b || b->addrs[j].addr.family == family;
        if (any_a != any_b)
                return true;
        /* A first DNS server (of either family: each answers both) ends a round's wait for
         * one (roamd-probe.c). */
        if ((a->n_dns == 0) != (b->n_dns == 0))
                return true;
        /* The usable addresses of the family, in order. */
        for (;;) {
                while (i < a->n_addrs &&
                       (a->addrs[i].addr.family != family || !addr_usable(&a->addrs[i])))
                        i++;
                while (k < b->n_addrs &&
                       (b->addrs[k].addr.family != family || !addr_usable(&b->addrs[k])))
                        k++;
                if (i == a->n_addrs || k == b->n_addrs)
                        break;
                if (memcmp(&a->addrs[i], &b->addrs[k], sizeof(LinkAddress)) != 0)
                        return true;
                i++, k++;
        }
        if ((i == a->n_addrs) != (k == b->n_addrs))
                return true;
        for (int list = 0; list < 2; list++) {
                const IpAddr *x = list ? a->dns : a->gateways, *y = list ? b->dns : b->gateways;
                size_t nx = list ? a->n_dns : a->n_gateways, ny = list ? b->n_dns : b->n_gateways;
                i = k = 0;
                for (;;) {
                        while (i < nx && x[i].family != family)
                                i++;
                        while (k < ny && y[k].family != family)
                                k++;
                        if (i == nx || k == ny)
                                break;
                        if (!streq(x[i].text, y[k].text))
                                return true;
                        i++, k++;
                }
                if ((i == nx) != (k == ny))
                        return true;
        }
        return false;
}

/* The families whose round must start again after old -> new. */
static unsigned probe_families_changed(const LinkInfo *old, const LinkInfo *new)
{
        unsigned f = 0;

        if (old->carrier != new->carrier || old->admin_up != new->admin_up ||
            !streq_ptr(old->captive_portal_url, new->captive_portal_url))
                return PROBE_IPV4 | PROBE_IPV6;
        if (family_facts_differ(old, new, AF_INET))
                f |= PROBE_IPV4;
        if (family_facts_differ(old, new, AF_INET6))
                f |= PROBE_IPV6;
        return f;
}

int link_update(Link *l, LinkInfo *info, bool force_classify, unsigned *ret_families)
{
        LinkInfo *old = &l->info;
        const char *names[24];
        size_t n = 0;
        bool renamed = !streq_ptr(old->name, info->name);
        unsigned families = probe_families_changed(old, info);

        CHANGED_STR(name, "Name");
        CHANGED_STR(kind, "Kind");
        CHANGED_STR(driver, "Driver");
        CHANGED_STR(hwaddr, "HardwareAddress");
        CHANGED_STR(oper_state, "OperState");
        CHANGED_VAL(mtu, "MTU");
        CHANGED_VAL(admin_up, "AdminUp");
        CHANGED_VAL(carrier, "Carrier");
        CHANGED_ARR(addrs, n_addrs, "Addresses");
        CHANGED_ARR(gateways, n_gateways, "Gateways");
        CHANGED_ARR(dns, n_dns, "DNS");
        CHANGED_VAL(dns_source, "DNSSource");
        if (!strv_equal(old->domains, info->domains))
                names[n++] = "Domains";
        CHANGED_STR(captive_portal_url, "CaptivePortalURL");
        if (!streq_ptr(old->captive_portal_url, info->captive_portal_url))
                names[n++] = "CaptivePortalURLRejected";
        if (!strv_equal(old->ntp_servers, info->ntp_servers))
                names[n++] = "NTPServers";

        if (renamed && old->name)
                log_info("%s: renamed to %s", old->name, info->name);

        link_info_done(old);
        *old = *info;
        *info = (LinkInfo){};

        if (renamed || force_classify)
                (void)link_classify(l, names, &n);

        names[n] = NULL;
        if (n > 0)
                link_bus_emit_changed_strv(l, (char **)names);
        link_set_state(l, link_compute_state(&l->info));

        /* What the verdict of a family depends on changed: that family is probed again. A
         * new bearer (a virtual link renamed into a real one) starts both. */
        for (size_t i = 0; i < n; i++)
                if (streq(names[i], "Bearer"))
                        families = PROBE_IPV4 | PROBE_IPV6;
        *ret_families = families;
        return (int)n;
}

bool link_capport_url_rejected(const Link *l)
{
        const char *u = l->info.captive_portal_url;

        return u && !streq(u, "urn:ietf:params:capport:unrestricted") && !capport_api_url_ok(u);
}

static VerdictResult overall(const Link *l)
{
        /* The better family decides; on a tie IPv4's reason is reported. */
        if (verdict_best(l->verdict4.verdict, l->verdict6.verdict) == l->verdict4.verdict)
                return l->verdict4;
        return l->verdict6;
}

void link_set_verdict(Link *l, int family, VerdictResult v, const char *portal_url)
{
        VerdictResult *slot = family == AF_INET6 ? &l->verdict6 : &l->verdict4;
        const char *names[8];
        size_t n = 0;
        VerdictResult all;

        if (slot->verdict != v.verdict || slot->reason != v.reason) {
                log_info("%s: %s connectivity %s (%s) -> %s (%s)", strempty(l->info.name),
                         family == AF_INET6 ? "IPv6" : "IPv4", verdict_to_string(slot->verdict),
                         verdict_reason_to_string(slot->reason), verdict_to_string(v.verdict),
                         verdict_reason_to_string(v.reason));
                *slot = v;
                names[n++] = family == AF_INET6 ? "Connectivity6" : "Connectivity4";
                names[n++] = family == AF_INET6 ? "ConnectivityReason6" : "ConnectivityReason4";
        }

        all = overall(l);
        if (all.verdict != l->verdict.verdict || all.reason != l->verdict.reason) {
                log_info("%s: connectivity %s (%s) -> %s (%s)", strempty(l->info.name),
                         verdict_to_string(l->verdict.verdict),
                         verdict_reason_to_string(l->verdict.reason),
                         verdict_to_string(all.verdict), verdict_reason_to_string(all.reason));
                l->verdict = all;
                names[n++] = "Connectivity";
                names[n++] = "ConnectivityReason";
        }

        /* The portal URL follows the overall verdict: kept while behind a portal, updated
         * when a family reports one, dropped otherwise. */
        if (l->verdict.verdict != VERDICT_PORTAL)
                portal_url = NULL;
        else if (v.verdict != VERDICT_PORTAL || !portal_url)
                portal_url = l->portal_url;
        if (!streq_ptr(portal_url, l->portal_url)) {
                if (free_and_strdup(&l->portal_url, portal_url) > 0)
                        names[n++] = "PortalURL";
        }

        names[n] = NULL;
        if (n > 0) {
                link_bus_emit_changed_strv(l, (char **)names);
                link_note(l, LINK_NOTE_VERDICT);
        }
}

void link_probe_finished(Link *l)
{
        link_bus_emit_changed(l, "LastProbe", "ProbeDuration", NULL);
        link_note(l, LINK_NOTE_PROBED);
}

void link_set_nat64_prefix(Link *l, const char *prefix)
{
        if (streq_ptr(l->nat64_prefix, prefix))
                return;
        log_info("%s: NAT64 prefix %s -> %s", strempty(l->info.name), l->nat64_prefix ?: "none",
                 prefix ?: "none");
        if (free_and_strdup(&l->nat64_prefix, prefix) < 0) {
                log_oom();
                return;
        }
        link_bus_emit_changed(l, "Nat64Prefix", NULL);
}

void link_set_working_mtu(Link *l, int family, uint32_t mtu)
{
        uint32_t *v = &l->working_mtu[family == AF_INET6];

        if (*v == mtu)
                return;
        log_info("%s: %s working path MTU %" PRIu32 " -> %" PRIu32 " (0: unknown)",
                 strempty(l->info.name), family == AF_INET6 ? "IPv6" : "IPv4", *v, mtu);
        *v = mtu;
        link_bus_emit_changed(l, family == AF_INET6 ? "WorkingMTU6" : "WorkingMTU4", NULL);
}

void link_set_capport(Link *l, const CapportInfo *info, const char *error)
{
        bool changed = false;

        if (!info && l->capport_valid) {
                capport_info_done(&l->capport);
                l->capport_valid = false;
                changed = true;
        } else if (info) {
                CapportInfo c = *info;
                c.user_portal_url = info->user_portal_url ? strdup(info->user_portal_url) : NULL;
                c.venue_info_url = info->venue_info_url ? strdup(info->venue_info_url) : NULL;
                capport_info_done(&l->capport);
                l->capport = c;
                l->capport_valid = true;
                changed = true;
        }
        if (!streq_ptr(l->capport_error, error)) {
                if (error)
                        log_warning("%s: %s", strempty(l->info.name), error);
                (void)free_and_strdup(&l->capport_error, error);
                changed = true;
        }
        if (changed) {
                link_bus_emit_changed(l, "CaptivePortal", NULL);
                link_note(l, LINK_NOTE_CAPPORT);
        }
}
