/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <systemd/sd-bus.h>

#include "roam-bus-model.h"
#include "roam-json.h"

/* The personal firewall in the client's model (docs/firewall.md): the rules as
 * GetFirewallRules() returns them, the identity facts' labels, the location in words and
 * SetLocation's calls and refusals: what `roam network`, `roam firewall`, the TUI and plain
 * mode share. */

/* One rule in force, in evaluation order. */
typedef struct RoamFwRule {
        char *link, *location, *direction, *action, *match, *app, *source, *id;
        uint64_t packets, bytes;
} RoamFwRule;

void roam_fw_rules_free(RoamFwRule *rules, size_t n);
/* Reads an a(sssssssstt) at the message's position. */
int roam_fw_rules_read(sd_bus_message *m, RoamFwRule **ret, size_t *ret_n);

/* Where a rule comes from and its ID in one phrase, without saying a thing twice:
 * "/etc/roam/firewall.d/home.conf:4" for the rule home.conf:4, "built-in:established" for a
 * built-in, "SOURCE, rule ID" otherwise. */
void roam_fw_rule_origin(const RoamFwRule *f, char *buf, size_t size);

/* A NetworkIdentity key as people read it: "gateway-mac" -> "Gateway MAC"; unknown: as is. */
const char *roam_fw_identity_label(const char *key);
/* The facts of the link's network identity that name it, in words: "SSID HomeNet, Gateway MAC
 * 02:..., DHCP server 192.0.2.1" (interface and bearer left out); returns its length. */
int roam_fw_identity_text(const RoamLink *l, char *buf, size_t size);
/* The link's location in force in a few words: "home, set by you", "untrusted until you
 * choose", "no network"; then a location wanted but not in force yet: "; public wanted, not
 * in force yet (see Degraded)". */
void roam_fw_location_text(const RoamLink *l, char *buf, size_t size);
/* What [Firewall] SSH= means for location's rules, as roamd publishes it (Manager.SSH,
 * SSHLetIn): "SSH still let in: SSH=always" where they let TCP 22 in; false (buf "") where
 * they do not, or roamd does not say. */
bool roam_fw_ssh_note(const RoamModel *m, const char *location, char *buf, size_t size);
/* Whether roamd wants another location than the one in force (Link.LocationWanted). */
bool roam_fw_location_pending(const RoamLink *l);
/* The link's network and location keys of --json (roam status, roam network): network_id,
 * location, location_source, location_reason, location_wanted. */
int roam_fw_location_json(const RoamLink *l, json_object *o);

/* Why SetLocation (or another firewall call) failed, in words, for the link named (NULL or
 * "": the default-route link). */
void roam_fw_call_error_text(const sd_bus_error *e, const char *what, const char *link, char *buf,
                             size_t size);
/* Whether the error says the caller may not do it (AccessDenied in roamd's or D-Bus's name,
 * or polkit wanting a password nobody can give). */
bool roam_fw_error_is_denied(const sd_bus_error *e);

/* SetLocation calls in flight, in a list their owner frees (cancelling what has not been
 * answered): a second answer never cancels the first one's. done gets the call's words and
 * the error (NULL: done). */
typedef struct RoamFwCall RoamFwCall;
typedef void (*RoamFwCallDone)(const char *link, const char *location, bool first_join,
                               const sd_bus_error *error, void *userdata);
int roam_fw_set_location_async(sd_bus *bus, RoamFwCall **list, const char *link,
                               const char *location, bool first_join, RoamFwCallDone done,
                               void *userdata);
void roam_fw_calls_free(RoamFwCall **list);
