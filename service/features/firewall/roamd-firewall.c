/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roam-words.h"
#include "roamd-apps.h"
#include "roamd-firewall-chain.h"
#include "roamd-firewall-nft.h"
#include "roamd-firewall.h"
#include "roamd-link-bus.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-netlink.h"
#include "roamd-reconcile.h"
#include "roamd-wpa.h"

/* (FwChain, what one chain of a link holds, compared with what the kernel has to change only
 * what differs: roamd-firewall-chain.h) */

typedef struct FwLink {
        int ifindex;
        char *name;
        Bearer bearer;
        /* the network the location is of (the link's NetworkId as of the last sync) */
        char network_id[NETID_MAX];
        /* the location of the network now (NULL: no network), and why */
        char *location;
        FwSource source;
        char *reason;
        /* the location whose rules the kernel holds (NULL: none), as of the last commit; it
         * differs from location while a pass has not taken the new one (the kernel refused
         * it): what is reported is what is in force */
        char *in_force;
        FwSource in_force_source;
        char *in_force_reason;
        /* the location the pass being committed carries */
        bool committing_valid;
        char *committing;
        FwSource committing_source;
        char *committing_reason;
        /* LocationWanted changed since PropertiesChanged last said it */
        bool wanted_unsaid;
        bool seen;
        /* the kernel: chains and map elements as last committed, and as being committed */
        bool installed;
        FwChain chain[2];
        bool pending_valid, pending_installed;
        FwChain pending[2];
} FwLink;

struct Firewall {
        Core *core;
        unsigned links_watch; /* links_watch_add() id */
        Apps *apps;           /* whose cgroups per-app rules name; NULL without apps */
        unsigned apps_watch;  /* apps_cgroup_watch_add() id */
        int part;             /* reconcile_add_part() id: its chains */
        FwModel model;
        char *error; /* Manager.FirewallError, NULL none */
        FwChoice *choices;
        size_t n_choices;
        FwLink **links;
        size_t n_links;
        /* links whose chains go away in the transaction being committed */
        int *dropping;
        size_t n_dropping;
};

static FwLink *fw_link_free(FwLink *l)
{
        if (!l)
                return NULL;
        free(l->name);
        free(l->location);
        free(l->reason);
        free(l->in_force);
        free(l->in_force_reason);
        free(l->committing);
        free(l->committing_reason);
        for (int d = 0; d < 2; d++) {
                fw_chain_done(&l->chain[d]);
                fw_chain_done(&l->pending[d]);
        }
        free(l);
        return NULL;
}

/* What a link's location and chains are made of: its network, name and bearer. */
#define FW_LINK_KINDS (LINK_CHANGE_IDENTITY | LINK_CHANGE_NAME | LINK_CHANGE_OTHER)

/* After a sync that changed a link's network, name or bearer, or lost a link: the locations
 * follow. */
static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        if (ev->type == LINKS_EVENT_SYNCED && ((ev->mask & FW_LINK_KINDS) || ev->n_gone))
                firewall_links_changed(userdata, true);
}

/* The firewall's part of the reconciler's passes: its chains in the one transaction. */
static int part_install(void *userdata, NftTxn *t)
{
        return firewall_txn_install(userdata, t);
}

static int part_sync(void *userdata, NftTxn *t)
{
        return firewall_txn_sync(userdata, t);
}

static void part_done(void *userdata, Reconcile *rc, int result, bool full)
{
        firewall_txn_done(userdata, result >= 0);
}

static const ReconcilePart firewall_part = {
    .install = part_install,
    .sync = part_sync,
    .done = part_done,
};

int firewall_new(Core *core, Firewall **ret)
{
        Firewall *fw = calloc(1, sizeof(*fw));

        if (!fw)
                return -ENOMEM;
        fw->core = core;
        if (fw_model_init(&fw->model) < 0) {
                free(fw);
                return -ENOMEM;
        }
        fw->links_watch = links_watch_add(core->links, on_links, fw, NULL);
        if (fw->links_watch == 0) {
                firewall_free(fw);
                return -ENOMEM;
        }
        /* its chains go into the reconciler's transactions, after the table's owner's part */
        fw->part = reconcile_add_part(core->reconcile, &firewall_part, fw);
        *ret = fw;
        return 0;
}

Firewall *firewall_free(Firewall *fw)
{
        if (!fw)
                return NULL;
        firewall_set_apps(fw, NULL);
        links_watch_remove(fw->core->links, fw->links_watch);
        /* the chains stay in the kernel: roamd exiting must not open the firewall */
        reconcile_remove_part(fw->core->reconcile, fw->part);
        fw_model_done(&fw->model);
        free(fw->error);
        fw_choices_free(fw->choices, fw->n_choices);
        for (size_t i = 0; i < fw->n_links; i++)
                fw_link_free(fw->links[i]);
        free(fw->links);
        free(fw->dropping);
        free(fw);
        return NULL;
}

const char *firewall_error(Firewall *fw)
{
        return fw && fw->error ? fw->error : "";
}

char **firewall_locations(Firewall *fw)
{
        return fw ? fw->model.locations : NULL;
}

/* fw->links is sorted by ifindex (like the manager's): a sync of many links stays linear. */
static size_t link_position(Firewall *fw, int ifindex, bool *found)
{
        size_t lo = 0, hi = fw->n_links;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (fw->links[mid]->ifindex < ifindex)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < fw->n_links && fw->links[lo]->ifindex == ifindex;
        return lo;
}

static FwLink *link_find(Firewall *fw, int ifindex)
{
        bool found;
        size_t i = link_position(fw, ifindex, &found);

        return found ? fw->links[i] : NULL;
}

/* ---- files ---- */

static int load_choices(Firewall *fw)
{
        const char *path = fw->core->config->firewall.state_file;
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r;

        state_file_make_private(path);
        r = read_full_file(path, 1024 * 1024, &text, &size);
        if (r == -ENOENT)
                return 0;
        if (r >= 0)
                r = fw_choices_parse(text, size, &fw->choices, &fw->n_choices);
        if (r < 0)
                log_error_errno(r, "%s: unreadable, the remembered locations start empty: %m",
                                path);
        return 0;
}

static int save_choices(Firewall *fw)
{
        const char *path = fw->core->config->firewall.state_file;
        _cleanup_free_ char *text = NULL, *dir = strdup(path);
        int r;

        if (!dir)
                return -ENOMEM;
        r = fw_choices_format(fw->choices, fw->n_choices, &text);
        if (r < 0)
                return r;
        (void)mkdir(dirname(dir), 0700);
        r = write_file_atomic(path, text, strlen(text));
        if (r < 0)
                return log_error_errno(r, "Cannot save the chosen locations to %s: %m", path);
        return 0;
}

static void set_error(Firewall *fw, char *error)
{
        if (streq_ptr(fw->error, error)) {
                free(error);
                return;
        }
        free(fw->error);
        fw->error = error;
        core_emit_manager_changed(fw->core, "FirewallError", NULL);
}

static int load_model(Firewall *fw, FwModel *ret)
{
        const FirewallConfig *c = &fw->core->config->firewall;
        _cleanup_free_ char *first = NULL;
        int r;

        r = fw_model_load(c->networks_dir, c->profiles_dir, ret, &first);
        if (r < 0) {
                char *msg = NULL;
                if (asprintf(&msg, "%s; the rules in force stay",
                             first ? first : "cannot read the firewall's files") < 0)
                        msg = NULL;
                log_error("Firewall: %s", msg ? msg : "files refused");
                set_error(fw, msg);
                return r;
        }
        set_error(fw, NULL);
        return 0;
}

/* Once at start, what the firewall does and how to change it: installing roamd changes what
 * comes in, and the journal is where an administrator looks first. */
static void log_firewall_summary(Firewall *fw)
{
        static const char *const ssh[_FIREWALL_SSH_MAX] = {
            [FIREWALL_SSH_ALWAYS] = "open in every location",
            [FIREWALL_SSH_TRUSTED] = "open at home and work only",
            [FIREWALL_SSH_NEVER] = "closed unless a profile opens it",
        };
        FirewallSsh s = fw->core->config->firewall.ssh;

        log_notice("Firewall: inbound traffic on each link follows its network's location. home "
                   "lets in %s; work and public %s; an unknown network is untrusted: %s. SSH "
                   "(TCP 22) is %s ([Firewall] SSH=). Choose a network's location with 'roam "
                   "network trust', open ports in %s (docs/firewall.md, roam-networks.d(5)).",
                   roam_location_lets_in(FW_LOCATION_HOME),
                   roam_location_lets_in(FW_LOCATION_PUBLIC),
                   roam_location_lets_in(FW_LOCATION_UNTRUSTED),
                   s >= 0 && s < _FIREWALL_SSH_MAX ? ssh[s] : "open",
                   fw->core->config->firewall.profiles_dir);
}

void firewall_refused(Firewall *fw, const char *first_error)
{
        char *msg = NULL;

        if (!fw)
                return;
        if (asprintf(&msg, "%s; the rules in force stay",
                     first_error ? first_error : "cannot read the firewall's files") < 0)
                msg = NULL;
        set_error(fw, msg);
}

int firewall_start(Firewall *fw)
{
        FwModel m;

        (void)load_choices(fw);
        if (load_model(fw, &m) >= 0) {
                fw_model_done(&fw->model);
                fw->model = m;
        }
        log_info("Firewall: %zu networks, %zu rules, %zu locations known.", fw->model.n_nets,
                 fw->model.n_rules, strv_length(fw->model.locations));
        log_firewall_summary(fw);
        firewall_links_changed(fw, false);
        return 0;
}

int firewall_reload(Firewall *fw)
{
        FwModel m;
        int r;

        if (!fw)
                return 0;
        r = load_model(fw, &m);
        if (r < 0)
                return r;
        /* the remembered choices too: an administrator may have edited or removed them */
        fw_choices_free(fw->choices, fw->n_choices);
        fw->choices = NULL;
        fw->n_choices = 0;
        (void)load_choices(fw);
        fw_model_done(&fw->model);
        fw->model = m;
        core_emit_manager_changed(fw->core, "Locations", "SSH", "SSHLetIn", NULL);
        firewall_links_changed(fw, false);
        return 0;
}

/* ---- identity and location ---- */

/* What networks.d matches on: the link's facts, from the links' facts stage. */
static void link_netid_facts(const Link *l, NetIdFacts *ret)
{
        *ret = (NetIdFacts){.has_network = l->facts.has_network,
                            .gateway_pending = l->facts.gateway_pending};
        for (int k = 0; k < _NETID_FACT_MAX; k++)
                ret->fact[k] = l->facts.fact[k];
}

static const FwChoice *choice_find(Firewall *fw, const char *network_id)
{
        for (size_t i = 0; i < fw->n_choices; i++)
                if (streq(fw->choices[i].network_id, network_id))
                        return &fw->choices[i];
        return NULL;
}

/* The location of a network: the user's choice, else networks.d, else untrusted. */
static void locate(Firewall *fw, FwLink *fl, const NetIdFacts *f, char **ret_location,
                   FwSource *ret_source, char **ret_reason)
{
        const FwChoice *c;
        const FwNetwork *n;
        char *reason = NULL;

        *ret_location = NULL;
        *ret_reason = NULL;
        *ret_source = _FW_SOURCE_INVALID;
        if (!fl->network_id[0])
                return;
        c = choice_find(fw, fl->network_id);
        if (c && fw_model_has_location(&fw->model, c->location)) {
                *ret_location = strdup(c->location);
                *ret_source = FW_SOURCE_USER;
                if (asprintf(ret_reason, "you chose %s for network %s", c->location,
                             fl->network_id) < 0)
                        *ret_reason = NULL;
                return;
        }
        n = fw_model_match(&fw->model, f, &reason);
        if (n) {
                *ret_location = strdup(n->location);
                *ret_source = FW_SOURCE_CONFIG;
                *ret_reason = reason;
                return;
        }
        /* A VPN tunnel shows nothing that names the network behind it (no gateway MAC, no DHCP
         * server, no SSID): its id is only its interface's name, shared by every VPN that
         * ever uses that interface. "Home, work or public?" would be a question without
         * facts: it is untrusted without asking, until networks.d names it (Interface=,
         * Bearer=vpn) or the user chooses (roam network trust). */
        if (fl->bearer == BEARER_VPN && !netid_fact_known(f, NETID_SSID) &&
            !netid_fact_known(f, NETID_GATEWAY_MAC) && !netid_fact_known(f, NETID_DHCP_SERVER)) {
                *ret_location = strdup(FW_LOCATION_UNTRUSTED);
                *ret_source = FW_SOURCE_TUNNEL;
                *ret_reason = strdup("a VPN tunnel names no network of its own: untrusted, "
                                     "until networks.d names it or you choose");
                return;
        }
        *ret_location = strdup(FW_LOCATION_UNTRUSTED);
        *ret_source = FW_SOURCE_DEFAULT;
        *ret_reason = strdup("unknown network: untrusted until you choose");
}

static void link_sync(Firewall *fw, Link *l)
{
        FwLink *fl = link_find(fw, l->ifindex);
        char *location, *reason;
        const char *names[8];
        size_t n = 0;
        NetIdFacts f;
        FwSource source;
        bool location_said = false, enforced;

        if (!fl) {
                FwLink **nl = realloc(fw->links, sizeof(FwLink *) * (fw->n_links + 1));
                bool found;
                size_t pos;
                if (!nl)
                        return (void)log_oom();
                fw->links = nl;
                fl = calloc(1, sizeof(FwLink));
                if (!fl)
                        return (void)log_oom();
                fl->ifindex = l->ifindex;
                fl->source = fl->in_force_source = fl->committing_source = _FW_SOURCE_INVALID;
                pos = link_position(fw, l->ifindex, &found);
                memmove(&nl[pos + 1], &nl[pos], sizeof(FwLink *) * (fw->n_links - pos));
                nl[pos] = fl;
                fw->n_links++;
        }
        fl->seen = true;
        if (!streq_ptr(fl->name, l->info.name)) {
                free(fl->name);
                fl->name = l->info.name ? strdup(l->info.name) : NULL;
        }
        fl->bearer = l->bearer;
        link_netid_facts(l, &f);
        snprintf(fl->network_id, sizeof(fl->network_id), "%s", l->facts.network_id);
        locate(fw, fl, &f, &location, &source, &reason);
        /* Enforced, Location and its source and reason say what is in force, and the new
         * location is said with the pass that carries it (firewall_txn_done): a client never
         * sees it "not in force" for the instant before that pass. */
        enforced = reconcile_enforcing(fw->core->reconcile);
        if (!streq_ptr(location, fl->location)) {
                log_info("%s: location %s -> %s (%s)", strempty(l->info.name),
                         fl->location ? fl->location : "none", location ? location : "none",
                         reason ? reason : "no network");
                if (enforced)
                        fl->wanted_unsaid = true;
                else {
                        names[n++] = "LocationWanted";
                        names[n++] = "Location";
                        location_said = true;
                }
        }
        free(fl->location);
        fl->location = location;
        if (source != fl->source && !enforced)
                names[n++] = "LocationSource";
        fl->source = source;
        if (!streq_ptr(reason, fl->reason) && !enforced)
                names[n++] = "LocationReason";
        free(fl->reason);
        fl->reason = reason;
        names[n] = NULL;
        if (n > 0)
                link_bus_emit_changed_strv(l, (char **)names);
        if (location_said)
                links_link_location_changed(fw->core->links, l);
}

void firewall_links_changed(Firewall *fw, bool changed_only)
{
        Links *links;
        size_t k = 0;

        if (!fw)
                return;
        links = fw->core->links;
        for (size_t i = 0; i < fw->n_links; i++)
                fw->links[i]->seen = false;
        for (size_t i = 0; i < links->n_links; i++) {
                Link *l = links->links[i];
                FwLink *fl = changed_only && !(l->sync_changed & FW_LINK_KINDS)
                                 ? link_find(fw, l->ifindex)
                                 : NULL;

                if (fl) /* nothing of it changed */
                        fl->seen = true;
                else
                        link_sync(fw, l);
        }
        /* links that are gone stay until their chains are gone from the kernel */
        for (size_t i = 0; i < fw->n_links; i++) {
                FwLink *fl = fw->links[i];
                if (!fl->seen && !fl->installed) {
                        fw_link_free(fl);
                        continue;
                }
                if (!fl->seen) {
                        free(fl->location);
                        fl->location = NULL;
                }
                fw->links[k++] = fl;
        }
        fw->n_links = k;
}

void firewall_link_view(Firewall *fw, int ifindex, LinkIdentityView *ret)
{
        FwLink *fl = fw ? link_find(fw, ifindex) : NULL;

        *ret = (LinkIdentityView){"", "", "", ""};
        if (!fl)
                return;
        ret->wanted = strempty(fl->location);
        /* Nothing of table inet roam is enforced (Enforce=no): there is no kernel to wait for,
         * the location is the network's. */
        if (!reconcile_enforcing(fw->core->reconcile)) {
                ret->location = strempty(fl->location);
                ret->source = fl->location ? strempty(fw_source_to_string(fl->source)) : "";
                ret->reason = fl->location ? strempty(fl->reason) : "";
                return;
        }
        ret->location = strempty(fl->in_force);
        ret->source = fl->in_force ? strempty(fw_source_to_string(fl->in_force_source)) : "";
        ret->reason = fl->in_force ? strempty(fl->in_force_reason) : "";
}

int firewall_set_location(Firewall *fw, Link *l, const char *location)
{
        FwLink *fl = link_find(fw, l->ifindex);
        _cleanup_free_ char *old = NULL;
        FwChoice *c;
        int r;

        if (!fw_model_has_location(&fw->model, location))
                return -EINVAL;
        if (!fl || !fl->network_id[0])
                return -ENONET;
        c = (FwChoice *)choice_find(fw, fl->network_id);
        if (c) {
                old = c->location;
                c->location = strdup(location);
                if (!c->location) {
                        c->location = TAKE_PTR(old);
                        return -ENOMEM;
                }
        } else {
                FwChoice *n = realloc(fw->choices, sizeof(FwChoice) * (fw->n_choices + 1));
                if (!n)
                        return -ENOMEM;
                fw->choices = n;
                n[fw->n_choices] = (FwChoice){strdup(location), strdup(fl->network_id)};
                fw->n_choices++;
                c = &n[fw->n_choices - 1];
        }
        r = c->location && c->network_id ? save_choices(fw) : -ENOMEM;
        if (r < 0) {
                /* not remembered: nothing changes, in memory either */
                if (old) {
                        free(c->location);
                        c->location = TAKE_PTR(old);
                } else {
                        free(c->location);
                        free(c->network_id);
                        fw->n_choices--;
                }
                return r;
        }
        /* the caller waits for the pass that commits it (reconcile_wait()) and answers with
         * the kernel's word */
        firewall_links_changed(fw, false);
        return 0;
}

/* ---- the kernel ---- */

static bool firewall_names_app(Firewall *fw, const char *app_id)
{
        for (size_t i = 0; fw && app_id && i < fw->model.n_rules; i++)
                if (streq_ptr(fw->model.rules[i].app, app_id))
                        return true;
        return false;
}

/* A rule of this app follows its cgroups: a pass puts them in or takes them out. */
static void on_apps_cgroup(Apps *a, const AppsCgroupEvent *ev, void *userdata)
{
        Firewall *fw = userdata;

        if (ev->started && ev->node->cls.kind == CGROUP_KIND_APP &&
            firewall_names_app(fw, ev->node->cls.app_id))
                reconcile_schedule(fw->core->reconcile);
}

Core *firewall_core(Firewall *fw)
{
        return fw->core;
}

int firewall_set_apps(Firewall *fw, Apps *apps)
{
        if (!fw)
                return 0;
        apps_cgroup_watch_remove(fw->apps, fw->apps_watch);
        fw->apps_watch = 0;
        fw->apps = apps;
        if (apps) {
                fw->apps_watch = apps_cgroup_watch_add(apps, on_apps_cgroup, fw);
                if (fw->apps_watch == 0)
                        return -ENOMEM;
        }
        return 0;
}

static bool ssh_open(Firewall *fw, const char *location)
{
        return fw_ssh_open(fw->core->config->firewall.ssh, location);
}

static bool app_cgroup(void *userdata, const char *app_id, size_t k, unsigned *ret_level,
                       uint64_t *ret_id)
{
        Apps *apps = userdata;
        App *app = apps ? apps_get(apps, app_id) : NULL;

        if (!app || k >= app->n_cgroups)
                return false;
        *ret_level = app->cgroups[k].level;
        *ret_id = app->cgroups[k].id;
        return true;
}

/* What link fl's chain of direction dir must hold now. */
static int chain_build(Firewall *fw, FwLink *fl, FwDirection dir, FwChain *ret)
{
        return fw_chain_build(&fw->model, fl->location, fl->name, fl->bearer,
                              ssh_open(fw, fl->location), dir, app_cgroup, fw->apps, ret);
}

static int put_link(NftTxn *t, FwLink *fl, bool exists)
{
        for (int d = 0; d < 2; d++) {
                FwChain *c = &fl->pending[d];
                int r = fw_nft_put_link(t, fl->ifindex, (FwDirection)d, c->rules, c->n, c->final,
                                        c->final_id, exists);
                if (r >= 0 && !exists)
                        r = fw_nft_link_elem(t, fl->ifindex, (FwDirection)d, true);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void pending_clear(FwLink *fl)
{
        for (int d = 0; d < 2; d++)
                fw_chain_done(&fl->pending[d]);
        fl->pending_valid = false;
}

static void committing_clear(FwLink *fl)
{
        free(fl->committing);
        free(fl->committing_reason);
        fl->committing = fl->committing_reason = NULL;
        fl->committing_source = _FW_SOURCE_INVALID;
        fl->committing_valid = false;
}

/* The location this pass carries for link fl: in force once the pass commits. */
static int committing_set(FwLink *fl)
{
        committing_clear(fl);
        if (fl->location) {
                fl->committing = strdup(fl->location);
                fl->committing_reason = fl->reason ? strdup(fl->reason) : NULL;
                if (!fl->committing || (fl->reason && !fl->committing_reason))
                        return -ENOMEM;
                fl->committing_source = fl->source;
        }
        fl->committing_valid = true;
        return 0;
}

/* The commit took link fl's pass: its location is in force (Location, LocationSource,
 * LocationReason follow). */
static void in_force_set(Firewall *fw, FwLink *fl)
{
        static const char *const names[] = {"Location", "LocationSource", "LocationReason",
                                            "LocationWanted", NULL};
        bool changed = !streq_ptr(fl->in_force, fl->committing) ||
                       fl->in_force_source != fl->committing_source ||
                       !streq_ptr(fl->in_force_reason, fl->committing_reason);
        Link *l;

        if (!changed)
                return committing_clear(fl);
        log_info("%s: location in force %s -> %s", strempty(fl->name),
                 fl->in_force ? fl->in_force : "none", fl->committing ? fl->committing : "none");
        free(fl->in_force);
        fl->in_force = TAKE_PTR(fl->committing);
        free(fl->in_force_reason);
        fl->in_force_reason = TAKE_PTR(fl->committing_reason);
        fl->in_force_source = fl->committing_source;
        committing_clear(fl);
        l = links_get(fw->core->links, fl->ifindex);
        fl->wanted_unsaid = false;
        if (l) {
                link_bus_emit_changed_strv(l, (char **)names);
                links_link_location_changed(fw->core->links, l);
        }
}

/* A pass ended without taking link fl's new location (the kernel refused it): now it is
 * wanted and not in force. */
static void wanted_say(Firewall *fw, FwLink *fl)
{
        static const char *const names[] = {"LocationWanted", NULL};
        Link *l = links_get(fw->core->links, fl->ifindex);

        fl->wanted_unsaid = false;
        if (l)
                link_bus_emit_changed_strv(l, (char **)names);
}

static int sync_links(Firewall *fw, NftTxn *t, bool fresh)
{
        int r, n = 0;

        free(fw->dropping);
        fw->dropping = NULL;
        fw->n_dropping = 0;
        for (size_t i = 0; i < fw->n_links; i++) {
                FwLink *fl = fw->links[i];
                bool installed = fresh ? false : fl->installed;

                pending_clear(fl);
                r = committing_set(fl);
                if (r < 0)
                        return r;
                if (!fl->location) {
                        if (!installed)
                                continue;
                        /* no network any more (or the link is gone): its chains go, the
                         * map's fallback drops what is new */
                        for (int d = 0; d < 2; d++) {
                                r = fw_nft_link_elem(t, fl->ifindex, (FwDirection)d, false);
                                if (r >= 0)
                                        r = fw_nft_del_link(t, fl->ifindex, (FwDirection)d);
                                if (r < 0)
                                        return r;
                        }
                        int *nd = realloc(fw->dropping, sizeof(int) * (fw->n_dropping + 1));
                        if (!nd)
                                return -ENOMEM;
                        fw->dropping = nd;
                        nd[fw->n_dropping++] = fl->ifindex;
                        fl->pending_valid = true;
                        fl->pending_installed = false;
                        n++;
                        continue;
                }
                for (int d = 0; d < 2; d++) {
                        r = chain_build(fw, fl, (FwDirection)d, &fl->pending[d]);
                        if (r < 0)
                                return r;
                }
                fl->pending_valid = true;
                fl->pending_installed = true;
                if (installed && fw_chain_equal(&fl->pending[0], &fl->chain[0]) &&
                    fw_chain_equal(&fl->pending[1], &fl->chain[1])) {
                        pending_clear(fl);
                        continue;
                }
                r = put_link(t, fl, installed);
                if (r < 0)
                        return r;
                n++;
        }
        return n;
}

int firewall_txn_install(Firewall *fw, NftTxn *t)
{
        int r;

        if (!fw)
                return 0;
        r = fw_nft_install(t);
        if (r < 0)
                return r;
        r = sync_links(fw, t, true);
        return r < 0 ? r : 0;
}

int firewall_txn_sync(Firewall *fw, NftTxn *t)
{
        return fw ? sync_links(fw, t, false) : 0;
}

void firewall_txn_done(Firewall *fw, bool committed)
{
        size_t k = 0;

        if (!fw)
                return;
        for (size_t i = 0; i < fw->n_links; i++) {
                FwLink *fl = fw->links[i];
                if (!fl->pending_valid)
                        continue;
                if (committed) {
                        for (int d = 0; d < 2; d++) {
                                fw_chain_done(&fl->chain[d]);
                                fl->chain[d] = fl->pending[d];
                                fl->pending[d] = (FwChain){};
                        }
                        fl->installed = fl->pending_installed;
                }
                pending_clear(fl);
        }
        for (size_t i = 0; i < fw->n_links; i++) {
                FwLink *fl = fw->links[i];
                if (committed && fl->committing_valid)
                        in_force_set(fw, fl);
                else
                        committing_clear(fl);
                if (fl->wanted_unsaid)
                        wanted_say(fw, fl);
        }
        /* links gone from the system whose chains are gone too */
        for (size_t i = 0; i < fw->n_links; i++) {
                FwLink *fl = fw->links[i];
                if (!fl->seen && !fl->installed) {
                        fw_link_free(fl);
                        continue;
                }
                fw->links[k++] = fl;
        }
        fw->n_links = k;
        free(fw->dropping);
        fw->dropping = NULL;
        fw->n_dropping = 0;
}

/* ---- reads ---- */

static uint64_t counter_of(const FwNftCounter *c, size_t n, const char *chain, const char *id,
                           bool bytes)
{
        for (size_t i = 0; i < n; i++)
                if (streq(c[i].chain, chain) && streq(c[i].id, id))
                        return bytes ? c[i].bytes : c[i].packets;
        return 0;
}

void firewall_rules_free(FwRuleRow *rows, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(rows[i].match);
        free(rows);
}

static int row_push(FwRuleRow **rows, size_t *n, const FwRuleRow *row)
{
        FwRuleRow *nr = realloc(*rows, sizeof(FwRuleRow) * (*n + 1));
        if (!nr) {
                free(row->match);
                return -ENOMEM;
        }
        *rows = nr;
        nr[(*n)++] = *row;
        return 0;
}

static const FwRule *model_rule(Firewall *fw, const char *id)
{
        for (size_t i = 0; i < fw->model.n_rules; i++)
                if (streq(fw->model.rules[i].id, id))
                        return &fw->model.rules[i];
        return NULL;
}

static const char *service_words(const char *location, const char *id)
{
        const FwService *s;

        for (size_t k = 0; (s = fw_location_service(location, k)); k++)
                if (streq(s->id, id))
                        return s->words;
        return NULL;
}

int firewall_rules(Firewall *fw, FwRuleRow **ret, size_t *ret_n)
{
        static const struct {
                const char *id, *match, *action;
        } in_builtins[] =
            {
                {"built-in:loopback", "loopback", "accept"},
                {"built-in:established", "established or related", "accept"},
                {"built-in:invalid", "invalid", "drop"},
                {"built-in:icmp", "icmp essentials (errors, echo request)", "accept"},
                {"built-in:icmpv6", "icmpv6 essentials (errors, echo request, ND, RA, MLD)",
                 "accept"},
                {"built-in:dhcp", "udp 68 from 67, udp 546 from 547 (DHCP, DHCPv6)", "accept"},
                {"built-in:no-location", "a link without a location", "drop"},
            },
          out_builtins[] = {
              {"built-in:loopback", "loopback", "accept"},
              {"built-in:established", "established or related", "accept"},
          };
        _cleanup_free_ FwNftCounter *c = NULL;
        FwRuleRow *rows = NULL;
        size_t n = 0, nc = 0;
        int r;

        if (fw_nft_counters(&c, &nc) < 0)
                nc = 0; /* the rules in words still; counters at zero */
        for (int d = 0; d < 2; d++) {
                const char *base = d == 0 ? "fw_input" : "fw_output";
                size_t nb = d == 0 ? ELEMENTSOF(in_builtins) : ELEMENTSOF(out_builtins);
                for (size_t i = 0; i < nb; i++) {
                        const char *id = d == 0 ? in_builtins[i].id : out_builtins[i].id;
                        FwRuleRow row = {
                            .link = "",
                            .location = "",
                            .direction = d == 0 ? "in" : "out",
                            .action = d == 0 ? in_builtins[i].action : out_builtins[i].action,
                            .app = "",
                            .source = "built-in",
                            .id = id,
                            .match = strdup(d == 0 ? in_builtins[i].match : out_builtins[i].match),
                            .packets = counter_of(c, nc, base, id, false),
                            .bytes = counter_of(c, nc, base, id, true)};
                        if (!row.match || row_push(&rows, &n, &row) < 0)
                                goto oom;
                }
                for (size_t li = 0; li < fw->n_links; li++) {
                        FwLink *fl = fw->links[li];
                        const FwChain *ch = &fl->chain[d];
                        char chain[32];
                        const char *last = NULL;

                        if (!fl->installed || !fl->in_force)
                                continue;
                        snprintf(chain, sizeof(chain), "%s_%d", d == 0 ? "fwi" : "fwo",
                                 fl->ifindex);
                        for (size_t k = 0; k <= ch->n; k++) {
                                const FwNftRule *nr = k < ch->n ? &ch->rules[k] : NULL;
                                const char *id = nr ? nr->id : ch->final_id;
                                const FwRule *mr = nr ? model_rule(fw, id) : NULL;
                                FwRuleRow row = {.link = fl->name ? fl->name : "",
                                                 .location = fl->in_force,
                                                 .direction = d == 0 ? "in" : "out",
                                                 .id = id};
                                if (last && streq(last, id))
                                        continue; /* one row per rule, its cgroups summed */
                                last = id;
                                row.packets = counter_of(c, nc, chain, id, false);
                                row.bytes = counter_of(c, nc, chain, id, true);
                                if (mr) {
                                        row.action = fw_action_to_string(mr->action);
                                        row.app = mr->app ? mr->app : "";
                                        row.source = mr->source;
                                        row.match = fw_rule_describe(mr);
                                } else if (nr) {
                                        const char *svc = service_words(fl->in_force, id);
                                        row.action = "accept";
                                        row.app = "";
                                        row.source = "built-in";
                                        row.match =
                                            strdup(svc ? svc : "tcp 22 (ssh, [Firewall] SSH=)");
                                } else {
                                        row.action = fw_action_to_string(ch->final);
                                        row.app = "";
                                        row.source = "built-in";
                                        row.match = strdup("anything else");
                                }
                                if (!row.match || row_push(&rows, &n, &row) < 0)
                                        goto oom;
                        }
                }
        }
        *ret = rows;
        *ret_n = n;
        return 0;
oom:
        r = -ENOMEM;
        firewall_rules_free(rows, n);
        return r;
}

int firewall_check_inbound(Firewall *fw, Link *l, FwProto proto, uint16_t port, const char *app,
                           bool *ret_accepted, char **ret_rule_id, char **ret_reason)
{
        FwLink *fl = link_find(fw, l->ifindex);
        LinkIdentityView v;
        const char *location, *name = strempty(l->info.name);
        _cleanup_free_ char *desc = NULL;
        FwCheck c;
        int r;

        /* the location in force (the one whose rules the kernel holds) */
        firewall_link_view(fw, l->ifindex, &v);
        location = fl && *v.location ? v.location : NULL;
        r = fw_model_check_inbound(&fw->model, location, name, l->bearer,
                                   location && ssh_open(fw, location), proto, port, app, &c);
        if (r < 0)
                return r;
        if (c.rule)
                desc = fw_rule_describe(c.rule);
        *ret_rule_id = strdup(c.rule ? c.rule->id : c.builtin);
        if (!location)
                r = asprintf(ret_reason,
                             "%s has no network named yet: nothing new comes in (built-in rule)",
                             name);
        else if (c.rule)
                r = asprintf(ret_reason, "%s %u %s on %s (%s) by rule %s at %s: %s %s",
                             fw_proto_to_string(proto), port,
                             c.accepted ? "is let in" : "is not let in", name, location, c.rule->id,
                             c.rule->source, fw_action_to_string(c.action), desc ? desc : "");
        else if (c.accepted)
                r = asprintf(ret_reason, "%s %u is let in on %s (%s) by the built-in rule %s",
                             fw_proto_to_string(proto), port, name, location, c.builtin);
        else
                r = asprintf(ret_reason,
                             "%s %u is not let in on %s (%s): no rule opens it, the location's "
                             "default is %s",
                             fw_proto_to_string(proto), port, name, location,
                             fw_action_to_string(c.action));
        if (r < 0 || !*ret_rule_id)
                return -ENOMEM;
        *ret_accepted = c.accepted;
        return 0;
}
