/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "roamd-dhcp-lease.h"

/* dhcpcd's lease files, parsed once per version of each file. roamd looks at a link's
 * leases on every sync; one stat() tells whether the file changed since it was last parsed
 * (device, inode, size, mtime and ctime), so the file is read and parsed only after dhcpcd
 * wrote it. A malformed file is remembered as malformed, so it is warned about once. */

#define LEASE_CACHE_MAX      64 /* files remembered; the oldest is forgotten first */
#define LEASE_CACHE_FILE_MAX (64 * 1024)

typedef struct LeaseCache LeaseCache;

int lease_cache_new(LeaseCache **ret);
LeaseCache *lease_cache_free(LeaseCache *c);

/* The lease in DIR/IFNAME.lease (AF_INET) or DIR/IFNAME.lease6 (AF_INET6): 0 and *ret,
 * -ENOENT without a file, -EBADMSG for a malformed one, another negative errno otherwise. */
int lease_cache_get(LeaseCache *c, const char *dir, const char *ifname, int family, DhcpLease *ret);

/* How many times a file was read and parsed (for tests). */
unsigned lease_cache_reads(const LeaseCache *c);
