/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The personal firewall that follows the network (docs/firewall.md): each link's network
 * identity and location, the rules of that location in the link's own chains of table inet
 * roam, changed only through the reconciler's transactions (roamd-reconcile.c), so a location
 * change, a profile edit or a link change is one nfnetlink transaction. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "roamd-firewall-conf.h"
#include "roamd-link.h"
#include "roamd-netid.h"

typedef struct Apps Apps;
typedef struct Core Core;
typedef struct Link Link;
typedef struct NftTxn NftTxn;
typedef struct Firewall Firewall;

int firewall_new(Core *core, Firewall **ret);
/* The apps, once they exist (NULL: gone): per-app rules name their cgroups, and follow them. */
int firewall_set_apps(Firewall *fw, Apps *apps);
Firewall *firewall_free(Firewall *fw);
/* Loads networks.d, firewall.d and the remembered choices (a broken file: FirewallError, only
 * the built-in rules apply until it is fixed). */
int firewall_start(Firewall *fw);
/* SIGHUP / Reload: new files apply in one transaction, or are refused and the rules in force
 * stay (FirewallError). */
int firewall_reload(Firewall *fw);
/* A reload refused before the firewall's turn because of its files (roamd-config-check.h):
 * Manager.FirewallError says why, and the rules in force stay. */
void firewall_refused(Firewall *fw, const char *first_error);

/* The links' networks (their NetworkId), names or bearers changed, or the firewall's files:
 * each link's location anew, PropertiesChanged. changed_only: only the links whose last sync
 * changed one of those (Link.sync_changed), else all. */
void firewall_links_changed(Firewall *fw, bool changed_only);

/* The reconciler's side (roamd-reconcile.c): install everything into a transaction that replaced
 * the table; or add what changed since the last commit; then report whether it committed. */
int firewall_txn_install(Firewall *fw, NftTxn *t);
int firewall_txn_sync(Firewall *fw, NftTxn *t);
void firewall_txn_done(Firewall *fw, bool committed);

void firewall_link_view(Firewall *fw, int ifindex, LinkIdentityView *ret);
const char *firewall_error(Firewall *fw);
char **firewall_locations(Firewall *fw);

/* D-Bus (roamd-firewall-bus.c): the firewall's members of org.roam1.Manager (SetLocation,
 * GetFirewallRules, CheckInbound, FirewallError, Locations), registered also when it is off:
 * *fw is read at each call, and NULL answers that it is off. */
int firewall_bus_manager_setup(sd_bus *bus, Firewall *const *fw, sd_bus_slot **ret);
/* For the bus glue */
Core *firewall_core(Firewall *fw);
int firewall_set_location(Firewall *fw, Link *l, const char *location);
typedef struct FwRuleRow {
        const char *link, *location, *direction, *action, *app, *source, *id;
        char *match;
        uint64_t packets, bytes;
} FwRuleRow;
int firewall_rules(Firewall *fw, FwRuleRow **ret, size_t *ret_n);
void firewall_rules_free(FwRuleRow *rows, size_t n);
int firewall_check_inbound(Firewall *fw, Link *l, FwProto proto, uint16_t port, const char *app,
                           bool *ret_accepted, char **ret_rule_id, char **ret_reason);
