/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "roam-macro.h"
#include "roamd-netid.h"

static const char *const fact_names[_NETID_FACT_MAX] = {
    [NETID_INTERFACE] = "interface",
    [NETID_BEARER] = "bearer",
    [NETID_SSID] = "ssid",
    [NETID_BSSID] = "bssid",
    [NETID_GATEWAY_MAC] = "gateway-mac",
    [NETID_DHCP_SERVER] = "dhcp-server",
    [NETID_DOMAIN] = "domain",
};

const char *netid_fact_to_string(NetIdFact f)
{
        return f >= 0 && f < _NETID_FACT_MAX ? fact_names[f] : NULL;
}

NetIdFact netid_fact_from_string(const char *s)
{
        for (int i = 0; s && i < _NETID_FACT_MAX; i++)
                if (streq(s, fact_names[i]))
                        return (NetIdFact)i;
        return _NETID_FACT_INVALID;
}

bool netid_fact_known(const NetIdFacts *f, NetIdFact k)
{
        return f->fact[k] && f->fact[k][0];
}

/* Appends s, escaping what is not printable ASCII (an SSID is any 32 bytes) and ':' is kept:
 * the id is read by people and compared as a whole. */
static size_t append_escaped(char *buf, size_t pos, const char *s)
{
        for (; *s && pos + 5 < NETID_MAX; s++) {
                unsigned char c = (unsigned char)*s;
                if (c < 0x20 || c >= 0x7f || c == '\\')
                        pos += (size_t)snprintf(buf + pos, NETID_MAX - pos, "\\x%02x", c);
                else
                        buf[pos++] = (char)c;
        }
        buf[pos] = 0;
        return pos;
}

const char *netid_compose(const NetIdFacts *f, char buf[static NETID_MAX])
{
        const char *bearer = netid_fact_known(f, NETID_BEARER) ? f->fact[NETID_BEARER] : "link";
        size_t pos;

        buf[0] = 0;
        if (!f->has_network)
                return buf;
        if (netid_fact_known(f, NETID_SSID)) {
                pos = append_escaped(buf, 0, "wifi:");
                pos = append_escaped(buf, pos, f->fact[NETID_SSID]);
                if (netid_fact_known(f, NETID_BSSID)) {
                        pos = append_escaped(buf, pos, ":");
                        (void)append_escaped(buf, pos, f->fact[NETID_BSSID]);
                }
                return buf;
        }
        if (netid_fact_known(f, NETID_GATEWAY_MAC)) {
                snprintf(buf, NETID_MAX, "%s:gw=%s", bearer, f->fact[NETID_GATEWAY_MAC]);
                return buf;
        }
        /* A gateway not resolved yet: wait for its MAC rather than name the network twice. */
        if (f->gateway_pending)
                return buf;
        if (netid_fact_known(f, NETID_DHCP_SERVER)) {
                snprintf(buf, NETID_MAX, "%s:dhcp=%s", bearer, f->fact[NETID_DHCP_SERVER]);
                return buf;
        }
        if (netid_fact_known(f, NETID_INTERFACE))
                snprintf(buf, NETID_MAX, "%s:if=%s", bearer, f->fact[NETID_INTERFACE]);
        return buf;
}
