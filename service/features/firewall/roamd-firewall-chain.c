/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "roam-macro.h"
#include "roamd-firewall-chain.h"

void fw_chain_done(FwChain *c)
{
        free(c->rules);
        *c = (FwChain){};
}

bool fw_chain_equal(const FwChain *a, const FwChain *b)
{
        return a->n == b->n && a->final == b->final && streq(a->final_id, b->final_id) &&
               (a->n == 0 || memcmp(a->rules, b->rules, sizeof(FwNftRule) * a->n) == 0);
}

bool fw_ssh_open(FirewallSsh ssh, const char *location)
{
        switch (ssh) {
        case FIREWALL_SSH_ALWAYS:
                return true;
        case FIREWALL_SSH_TRUSTED:
                return streq(location, FW_LOCATION_HOME) || streq(location, FW_LOCATION_WORK);
        case FIREWALL_SSH_NEVER:
        case _FIREWALL_SSH_MAX:
        case _FIREWALL_SSH_INVALID:
                return false;
        }
        return false;
}

static int chain_push(FwChain *c, const FwNftRule *r)
{
        FwNftRule *n = realloc(c->rules, sizeof(FwNftRule) * (c->n + 1));
        if (!n)
                return -ENOMEM;
        c->rules = n;
        c->rules[c->n++] = *r;
        return 0;
}

int fw_chain_build(const FwModel *m, const char *location, const char *ifname, Bearer bearer,
                   bool ssh_open, FwDirection dir, fw_app_cgroup_t app_cgroup, void *userdata,
                   FwChain *ret)
{
        FwChain c = {};
        int r;

        for (size_t i = 0; i < m->n_rules; i++) {
                const FwRule *fr = &m->rules[i];
                FwNftRule nr;
                unsigned level;
                uint64_t id;

                if (fr->direction != dir || !fw_rule_applies(fr, location, ifname, bearer))
                        continue;
                memset(&nr, 0, sizeof(nr)); /* compared with memcmp */
                snprintf(nr.id, sizeof(nr.id), "%s", fr->id);
                nr.action = fr->action;
                nr.proto = fr->proto;
                nr.port_min = fr->port_min;
                nr.port_max = fr->port_max;
                nr.family = fr->family;
                nr.has_addr = fr->has_addr;
                if (fr->has_addr)
                        nr.addr = fr->addr;
                if (!fr->app) {
                        r = chain_push(&c, &nr);
                        if (r < 0)
                                goto fail;
                        continue;
                }
                /* an app's rule matches its sockets only: one rule per cgroup of the app
                 * (none while it does not run: nothing can match) */
                for (size_t k = 0; app_cgroup && app_cgroup(userdata, fr->app, k, &level, &id);
                     k++) {
                        nr.has_cgroup = true;
                        nr.cgroup_level = level;
                        nr.cgroup_id = id;
                        r = chain_push(&c, &nr);
                        if (r < 0)
                                goto fail;
                }
        }
        for (size_t k = 0; dir == FW_DIRECTION_IN; k++) {
                const FwService *s = fw_location_service(location, k);
                FwNftRule nr;

                if (!s)
                        break;
                memset(&nr, 0, sizeof(nr));
                snprintf(nr.id, sizeof(nr.id), "%s", s->id);
                nr.action = FW_ACTION_ACCEPT;
                nr.proto = s->proto;
                nr.port_min = nr.port_max = s->port;
                nr.family = s->family;
                if (s->local) {
                        nr.has_local = true;
                        nr.local.family = s->family;
                        nr.local.prefixlen = s->local_prefixlen;
                        if (inet_pton(s->family, s->local, &nr.local.addr) != 1) {
                                r = -EINVAL;
                                goto fail;
                        }
                }
                r = chain_push(&c, &nr);
                if (r < 0)
                        goto fail;
        }
        if (dir == FW_DIRECTION_IN && ssh_open) {
                FwNftRule nr;
                memset(&nr, 0, sizeof(nr));
                snprintf(nr.id, sizeof(nr.id), "built-in:ssh");
                nr.action = FW_ACTION_ACCEPT;
                nr.proto = FW_PROTO_TCP;
                nr.port_min = nr.port_max = 22;
                nr.family = AF_UNSPEC;
                r = chain_push(&c, &nr);
                if (r < 0)
                        goto fail;
        }
        c.final = dir == FW_DIRECTION_IN ? fw_model_inbound_default(m, location) : FW_ACTION_ACCEPT;
        snprintf(c.final_id, sizeof(c.final_id), "built-in:default");
        *ret = c;
        return 0;
fail:
        fw_chain_done(&c);
        return r;
}
