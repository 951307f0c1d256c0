/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The firewall's model as the files give it (docs/firewall.md): networks.d maps network
 * identities to locations, firewall.d holds each location's rules. Pure code: parsed, checked
 * and evaluated here (unit tests, fuzzing), put into nftables by roamd-firewall*.c. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-bearer.h"
#include "roamd-netid.h"
#include "roamd-nft.h"

#define FW_LOCATION_NAME_MAX 32

typedef enum FwAction {
        FW_ACTION_ACCEPT,
        FW_ACTION_DROP,
        FW_ACTION_REJECT,
        _FW_ACTION_MAX,
        _FW_ACTION_INVALID = -22,
} FwAction;

typedef enum FwDirection {
        FW_DIRECTION_IN,
        FW_DIRECTION_OUT,
        _FW_DIRECTION_MAX,
        _FW_DIRECTION_INVALID = -22,
} FwDirection;

typedef enum FwProto {
        FW_PROTO_ANY,
        FW_PROTO_TCP,
        FW_PROTO_UDP,
        FW_PROTO_ICMP,
        FW_PROTO_ICMPV6,
        _FW_PROTO_MAX,
        _FW_PROTO_INVALID = -22,
} FwProto;

typedef enum FwSource {
        FW_SOURCE_CONFIG,  /* a networks.d file matched */
        FW_SOURCE_USER,    /* SetLocation, remembered in the state file */
        FW_SOURCE_DEFAULT, /* an unknown network: untrusted */
        FW_SOURCE_TUNNEL,  /* a VPN tunnel without facts of its own: untrusted, not asked */
        _FW_SOURCE_MAX,
        _FW_SOURCE_INVALID = -22,
} FwSource;

const char *fw_action_to_string(FwAction a);
FwAction fw_action_from_string(const char *s);
const char *fw_direction_to_string(FwDirection d);
FwDirection fw_direction_from_string(const char *s);
const char *fw_proto_to_string(FwProto p);
FwProto fw_proto_from_string(const char *s);
const char *fw_source_to_string(FwSource s);
FwSource fw_source_from_string(const char *s);

/* The four built-in locations, strictest last. */
#define FW_LOCATION_HOME      "home"
#define FW_LOCATION_WORK      "work"
#define FW_LOCATION_PUBLIC    "public"
#define FW_LOCATION_UNTRUSTED "untrusted"

typedef struct FwRule {
        char *id;         /* stable: "BASENAME:LINE" of its [Rule] header */
        char *source;     /* "PATH:LINE" */
        char **locations; /* the profile's Location= words */
        FwDirection direction;
        FwAction action;
        FwProto proto;
        uint16_t port_min, port_max; /* 0: any */
        int family;                  /* AF_UNSPEC: both */
        bool has_addr;
        NftPrefix addr; /* the remote end: source inbound, destination outbound */
        char *link;     /* interface name, NULL any */
        Bearer bearer;  /* _BEARER_INVALID: any */
        char *app;      /* app id, NULL any process */
} FwRule;

typedef struct FwNetwork {
        char *location;
        char *source;                 /* "PATH:LINE" of its [Network] header */
        char *match[_NETID_FACT_MAX]; /* NULL: not looked at */
} FwNetwork;

typedef struct FwPolicy {
        char *location;
        FwAction inbound; /* what is not matched: drop or reject */
        char *source;
} FwPolicy;

typedef struct FwModel {
        FwNetwork *nets;
        size_t n_nets;
        FwRule *rules;
        size_t n_rules;
        FwPolicy *policies;
        size_t n_policies;
        char **locations; /* the built-ins, then the named ones in order of appearance */
} FwModel;

void fw_model_done(FwModel *m);
int fw_model_init(FwModel *m); /* the four built-in locations, no rules */

bool fw_location_name_valid(const char *s);
bool fw_model_has_location(const FwModel *m, const char *location);

/* Parses one networks.d / firewall.d file into m. On errors (all logged as PATH:LINE), the
 * first one is put in *first_error (when still NULL) and -EINVAL returned; m then holds a
 * partial model the caller must throw away. */
int fw_networks_parse(const char *path, const char *text, size_t size, FwModel *m,
                      char **first_error);
int fw_profile_parse(const char *path, const char *text, size_t size, FwModel *m,
                     char **first_error);
/* Checks the whole model: rules that contradict each other (the same match with another
 * action in a location: the first would always win). */
int fw_model_check(const FwModel *m, char **first_error);
/* Reads every *.conf of both directories (sorted by name; a missing directory is empty). */
int fw_model_load(const char *networks_dir, const char *profiles_dir, FwModel *ret,
                  char **first_error);

/* What a built-in location lets in besides its profiles' rules: what firewalld's zone of the
 * same name lets in (its services mdns, samba-client, dhcpv6-client; its ssh is [Firewall]
 * SSH=). One entry per kernel rule; the entries of one service share its id. */
typedef struct FwService {
        const char *id;    /* "built-in:mdns" */
        const char *words; /* the service in words, for GetFirewallRules */
        FwProto proto;     /* tcp or udp */
        uint16_t port;
        int family;        /* AF_UNSPEC: both */
        const char *local; /* the destination address (the mDNS group, link-local), NULL: any */
        unsigned local_prefixlen;
} FwService;

/* The k-th service location lets in (its order in the chain), NULL past the last. */
const FwService *fw_location_service(const char *location, size_t k);

/* The first networks.d entry whose facts all equal the link's, and the reason in words. */
const FwNetwork *fw_model_match(const FwModel *m, const NetIdFacts *f, char **ret_reason);
/* What a location does with inbound packets no rule matched. */
FwAction fw_model_inbound_default(const FwModel *m, const char *location);
/* Whether rule r applies to a link named ifname of bearer b in location. */
bool fw_rule_applies(const FwRule *r, const char *location, const char *ifname, Bearer b);
/* The rule's match in words: "tcp 22000 app org.syncthing from 192.0.2.0/24". */
char *fw_rule_describe(const FwRule *r);

/* Would a new inbound packet (proto tcp/udp, port, to a socket of app, "" any process) be let
 * in on a link in location? Returns the deciding rule (NULL: the location's default, or the
 * built-in ssh rule when *ret_ssh) and the verdict. */
typedef struct FwCheck {
        bool accepted;
        const FwRule *rule;
        const char *builtin; /* "built-in:dhcp", "built-in:ssh", "built-in:default" when no rule */
        FwAction action;
} FwCheck;
int fw_model_check_inbound(const FwModel *m, const char *location, const char *ifname, Bearer b,
                           bool ssh_open, FwProto proto, uint16_t port, const char *app,
                           FwCheck *ret);

/* The remembered SetLocation choices: "LOCATION NETWORK-ID" lines. */
typedef struct FwChoice {
        char *location;
        char *network_id;
} FwChoice;
int fw_choices_parse(const char *text, size_t size, FwChoice **ret, size_t *ret_n);
void fw_choices_free(FwChoice *c, size_t n);
int fw_choices_format(const FwChoice *c, size_t n, char **ret);
