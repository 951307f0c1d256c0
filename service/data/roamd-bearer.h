/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>

typedef enum Bearer {
        BEARER_ETHERNET,
        BEARER_WIFI,
        BEARER_CELLULAR,
        BEARER_BLUETOOTH,
        BEARER_WIFI_DIRECT,
        BEARER_VPN,
        BEARER_LOWPAN,
        BEARER_VIRTUAL,
        _BEARER_MAX,
        _BEARER_INVALID = -EINVAL,
} Bearer;

const char *bearer_to_string(Bearer b);
Bearer bearer_from_string(const char *s);

/* What the classifier looks at: the link's sysfs directory (/sys/class/net/NAME), its name,
 * its rtnetlink kind (NULL for hardware) and whether it lives in the initial network
 * namespace (a veth there is the host side of a container link). */
typedef struct BearerInput {
        const char *sysfs_dir;
        const char *ifname;
        const char *kind;
        bool initial_netns;
} BearerInput;

/* Returns 0 and the bearer, or -EOPNOTSUPP for loopback (ignored by roamd). */
int bearer_classify(const BearerInput *in, Bearer *ret);

/* Lower is preferred when choosing the best link; virtual and vpn never win. */
int bearer_preference(Bearer b);
