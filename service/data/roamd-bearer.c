/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fnmatch.h>
#include <limits.h>
#include <sys/stat.h>

#include "roamd-bearer.h"
#include "roam-words.h"
#include "roam-util.h"

/* The words are the shared table's (shared/roam-words.c), which roam uses too. */
_Static_assert((int)_BEARER_MAX == (int)_ROAM_BEARER_MAX &&
                   (int)BEARER_VIRTUAL == (int)ROAM_BEARER_VIRTUAL,
               "bearers and their shared words differ");

const char *bearer_to_string(Bearer b)
{
        return roam_bearer_to_string((RoamBearer)b);
}

Bearer bearer_from_string(const char *s)
{
        return (Bearer)roam_bearer_from_string(s);
}

/* ARPHRD_* values from <linux/if_arp.h>, spelled out so the table reads as data. */
enum {
        HW_ETHER = 1,
        HW_PPP = 512,
        HW_RAWIP = 519,
        HW_LOOPBACK = 772,
        HW_IEEE802154 = 804,
        HW_6LOWPAN = 825,
        HW_NONE = 65534,
};

/* Facts read from sysfs once per classification. */
typedef struct SysfsFacts {
        char devtype[64];
        char driver[64];
        int type;
        bool phy80211, wireless, tun, bridge;
} SysfsFacts;

/* One classification rule: every non-empty field must match. First matching rule wins. */
typedef struct BearerRule {
        const char *devtype;
        const char *driver;
        const char *kind;
        const char *name_glob;
        int type;
        bool need_phy80211, need_wireless, need_tun, need_bridge, only_initial_netns;
        Bearer bearer;
        bool loopback;
} BearerRule;

static const BearerRule rules[] = {
    {.type = HW_LOOPBACK, .loopback = true},
    /* WiFi Direct group interfaces are wlan devices named p2p-<dev>-<n> by wpa_supplicant. */
    {.devtype = "wlan", .name_glob = "p2p-*", .bearer = BEARER_WIFI_DIRECT},
    {.need_phy80211 = true, .name_glob = "p2p-*", .bearer = BEARER_WIFI_DIRECT},
    {.devtype = "wlan", .bearer = BEARER_WIFI},
    {.need_phy80211 = true, .bearer = BEARER_WIFI},
    {.need_wireless = true, .bearer = BEARER_WIFI},
    {.devtype = "wwan", .bearer = BEARER_CELLULAR},
    {.driver = "qmi_wwan", .bearer = BEARER_CELLULAR},
    {.driver = "cdc_mbim", .bearer = BEARER_CELLULAR},
    {.driver = "huawei_cdc_ncm", .bearer = BEARER_CELLULAR},
    {.driver = "sierra_net", .bearer = BEARER_CELLULAR},
    {.driver = "mhi_net", .bearer = BEARER_CELLULAR},
    {.driver = "ipa", .bearer = BEARER_CELLULAR},
    {.kind = "rmnet", .bearer = BEARER_CELLULAR},
    {.type = HW_RAWIP, .bearer = BEARER_CELLULAR},
    {.devtype = "bluetooth", .bearer = BEARER_BLUETOOTH},
    {.name_glob = "bnep*", .type = HW_ETHER, .bearer = BEARER_BLUETOOTH},
    {.type = HW_IEEE802154, .bearer = BEARER_LOWPAN},
    {.type = HW_6LOWPAN, .bearer = BEARER_LOWPAN},
    {.kind = "lowpan", .bearer = BEARER_LOWPAN},
    {.devtype = "wireguard", .bearer = BEARER_VPN},
    {.kind = "wireguard", .bearer = BEARER_VPN},
    {.need_tun = true, .bearer = BEARER_VPN},
    {.kind = "tun", .bearer = BEARER_VPN},
    {.type = HW_PPP, .bearer = BEARER_VPN},
    {.kind = "ipip", .bearer = BEARER_VPN},
    {.kind = "gre", .bearer = BEARER_VPN},
    {.kind = "sit", .bearer = BEARER_VPN},
    {.kind = "ip6tnl", .bearer = BEARER_VPN},
    {.kind = "vti", .bearer = BEARER_VPN},
    {.kind = "xfrm", .bearer = BEARER_VPN},
    {.need_bridge = true, .bearer = BEARER_VIRTUAL},
    {.kind = "bridge", .bearer = BEARER_VIRTUAL},
    {.kind = "dummy", .bearer = BEARER_VIRTUAL},
    {.kind = "vxlan", .bearer = BEARER_VIRTUAL},
    {.kind = "ifb", .bearer = BEARER_VIRTUAL},
    {.kind = "nlmon", .bearer = BEARER_VIRTUAL},
    {.name_glob = "docker*", .bearer = BEARER_VIRTUAL},
    {.name_glob = "virbr*", .bearer = BEARER_VIRTUAL},
    {.name_glob = "vnet*", .bearer = BEARER_VIRTUAL},
    {.name_glob = "br-*", .bearer = BEARER_VIRTUAL},
    /* In the initial namespace a veth or macvlan is the host side of a container's link;
     * inside a namespace it is that namespace's wire to the world. */
    {.kind = "veth", .only_initial_netns = true, .bearer = BEARER_VIRTUAL},
    {.kind = "macvlan", .only_initial_netns = true, .bearer = BEARER_VIRTUAL},
    {.kind = "ipvlan", .only_initial_netns = true, .bearer = BEARER_VIRTUAL},
    {.type = HW_ETHER, .bearer = BEARER_ETHERNET},
    {.type = HW_NONE, .bearer = BEARER_VPN},
};

static bool path_exists(const char *dir, const char *name)
{
        char p[PATH_MAX];
        struct stat st;

        snprintf(p, sizeof(p), "%s/%s", dir, name);
        return lstat(p, &st) == 0;
}

static void read_facts(const char *dir, SysfsFacts *f)
{
        _cleanup_free_ char *uevent = NULL, *type = NULL;
        char p[PATH_MAX], target[PATH_MAX];
        ssize_t n;

        *f = (SysfsFacts){.type = -1};

        snprintf(p, sizeof(p), "%s/uevent", dir);
        if (read_full_file(p, 64 * 1024, &uevent, NULL) >= 0) {
                char *save = NULL;
                for (char *l = strtok_r(uevent, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                        if (strncmp(l, "DEVTYPE=", 8) == 0)
                                snprintf(f->devtype, sizeof(f->devtype), "%s", l + 8);
        }

        snprintf(p, sizeof(p), "%s/type", dir);
        if (read_one_line_file(p, &type) >= 0) {
                char *end;
                long v = strtol(type, &end, 10);
                if (end != type && *end == 0 && v >= 0 && v <= 0xffff)
                        f->type = (int)v;
        }

        snprintf(p, sizeof(p), "%s/device/driver", dir);
        n = readlink(p, target, sizeof(target) - 1);
        if (n > 0) {
                const char *base;
                target[n] = 0;
                base = strrchr(target, '/');
                snprintf(f->driver, sizeof(f->driver), "%s", base ? base + 1 : target);
        }

        f->phy80211 = path_exists(dir, "phy80211");
        f->wireless = path_exists(dir, "wireless");
        f->tun = path_exists(dir, "tun_flags");
        f->bridge = path_exists(dir, "bridge");
}

static bool rule_matches(const BearerRule *r, const SysfsFacts *f, const BearerInput *in)
{
        if (r->devtype && !streq(r->devtype, f->devtype))
                return false;
        if (r->driver && !streq(r->driver, f->driver))
                return false;
        if (r->kind && !streq_ptr(r->kind, in->kind))
                return false;
        if (r->name_glob && fnmatch(r->name_glob, in->ifname, 0) != 0)
                return false;
        if (r->type && r->type != f->type)
                return false;
        if ((r->need_phy80211 && !f->phy80211) || (r->need_wireless && !f->wireless) ||
            (r->need_tun && !f->tun) || (r->need_bridge && !f->bridge))
                return false;
        if (r->only_initial_netns && !in->initial_netns)
                return false;
        return true;
}

int bearer_classify(const BearerInput *in, Bearer *ret)
{
        SysfsFacts f;

        read_facts(in->sysfs_dir, &f);
        for (size_t i = 0; i < ELEMENTSOF(rules); i++) {
                if (!rule_matches(&rules[i], &f, in))
                        continue;
                if (rules[i].loopback)
                        return -EOPNOTSUPP;
                *ret = rules[i].bearer;
                return 0;
        }
        /* Unknown hardware types carry nothing roam can reason about. */
        *ret = BEARER_VIRTUAL;
        return 0;
}

int bearer_preference(Bearer b)
{
        switch (b) {
        case BEARER_ETHERNET:
                return 0;
        case BEARER_WIFI:
                return 1;
        case BEARER_CELLULAR:
                return 2;
        case BEARER_BLUETOOTH:
                return 3;
        case BEARER_WIFI_DIRECT:
                return 4;
        case BEARER_LOWPAN:
                return 5;
        case BEARER_VPN:
        case BEARER_VIRTUAL:
        case _BEARER_MAX:
        case _BEARER_INVALID:
                break;
        }
        return -1;
}
