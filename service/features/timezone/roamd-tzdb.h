/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Which time zones a cellular network can be in: its MCC (Mobile Country Code) -> countries
 * (mobile-broadband-provider-info's serviceproviders.xml, plus the MCCs that several
 * countries or territories share, written down in roamd-tzdb.c) -> zones (tzdata's
 * zone1970.tab) -> the zones whose UTC offset and DST at the given time match what NITZ said.
 * The files are read on first use and kept; a missing file is a clear error, not an empty
 * answer. */

#include <stdbool.h>

#include "roamd-time-sample.h"

#define TZDB_PROVIDERS_XML "/usr/share/mobile-broadband-provider-info/serviceproviders.xml"
#define TZDB_ZONEINFO_DIR  "/usr/share/zoneinfo"

typedef struct TzDb TzDb;

/* NULL paths take the defaults above. Nothing is read yet. */
int tzdb_new(const char *providers_xml, const char *zoneinfo_dir, TzDb **ret);
TzDb *tzdb_free(TzDb *db);

/* Reads both files now (they are kept): errors as below, logged with the path. The zone
 * decision calls it first, so that a missing file is not taken for an unknown MCC. */
int tzdb_load(TzDb *db);

/* Countries (ISO 3166 alpha-2, upper case, NULL-terminated, the caller frees) the MCC belongs
 * to. -ENOENT: unknown MCC; -EINVAL: not an MCC; other errors: a file could not be read (logged
 * with its path). */
int tzdb_mcc_countries(TzDb *db, const char *mcc, char ***ret);

/* The zones zone1970.tab lists for a country (ISO 3166 alpha-2); -ENOENT when none. */
int tzdb_country_zones(TzDb *db, const char *country, char ***ret);

/* The UTC offset (minutes, DST included) and whether DST is in force in `zone` at `utc`
 * (µs since the epoch). -EINVAL for a name that is not a zone name, -ENOENT when the zone has
 * no file. */
int tzdb_zone_offset(TzDb *db, const char *zone, usec_t utc, int *ret_offset_min, bool *ret_dst);

/* Whether `s` could name a zone: letters, digits, "_+-/", no "..", no leading "/". */
bool tzdb_zone_name_valid(const char *s);

/* The zones of the MCC's countries whose offset at `utc` is `offset_min` and, when dst >= 0
 * (hours, as NITZ says it), whose DST state agrees (dst > 0 <=> DST in force). Sorted,
 * NULL-terminated; an empty list (not an error) when no zone matches. */
int tzdb_candidates(TzDb *db, const char *mcc, int offset_min, int dst, usec_t utc, char ***ret);

/* The UTC offset and DST state a POSIX TZ string ("CET-1CEST,M3.5.0,M10.5.0/3") gives at
 * `utc`; -EINVAL when the string does not start like one (a name of 3+ letters or <...>, then
 * an hour offset). */
int tzdb_posix_offset(const char *tz, usec_t utc, int *ret_offset_min, bool *ret_dst);
