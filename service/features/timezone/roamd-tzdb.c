/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-nitz.h"
#include "roamd-tzdb.h"
#include "roamd-xml.h"

typedef struct MccEntry {
        char mcc[4];
        char **countries;
} MccEntry;

typedef struct ZoneRow {
        char **countries;
        char *zone;
} ZoneRow;

struct TzDb {
        char *providers_xml, *zoneinfo_dir;
        bool mcc_loaded, zones_loaded;
        MccEntry *mccs;
        size_t n_mccs;
        ZoneRow *zones;
        size_t n_zones;
};

/* MCCs that serviceproviders.xml files under one country, or gets wrong, while the networks
 * that use them serve several countries or territories with their own zones (ITU-T E.212 and
 * the operators' practice). These replace the database's answer for the MCC. */
static const struct {
        const char *mcc;
        const char *countries;
} mcc_exceptions[] = {
    /* the Crown Dependencies' networks use the UK's MCCs */
    {"234", "GB,GG,IM,JE"},
    {"235", "GB,GG,IM,JE"},
    /* Russia only: the database also files a Ugandan network under 250 (Uganda is 641) */
    {"250", "RU"},
    /* the US MCCs; Puerto Rico, the US Virgin Islands, Guam and the Northern Mariana
     * Islands have networks on them too */
    {"310", "US,PR,VI,GU,MP"},
    {"311", "US,PR,VI,GU,MP"},
    {"312", "US,PR,VI,GU,MP"},
    {"313", "US"},
    {"314", "US"},
    {"315", "US"},
    {"316", "US"},
    /* French Antilles: Guadeloupe, Martinique, French Guiana, Saint-Barthélemy, Saint-Martin */
    {"340", "GP,MQ,GF,BL,MF"},
    /* the former Netherlands Antilles: Curaçao, Sint Maarten, Caribbean Netherlands */
    {"362", "CW,SX,BQ"},
    /* Israel and the Palestinian networks (Jawwal, Wataniya) */
    {"425", "IL,PS"},
    /* Australia, with Norfolk Island and the Australian external territories */
    {"505", "AU,NF,CX,CC"},
    /* Réunion and Mayotte */
    {"647", "RE,YT"},
    /* international and test networks name no country */
    {"001", ""},
    {"901", ""},
    {"999", ""},
};

int tzdb_new(const char *providers_xml, const char *zoneinfo_dir, TzDb **ret)
{
        _cleanup_free_ TzDb *db = calloc(1, sizeof(*db));

        if (!db)
                return -ENOMEM;
        db->providers_xml = strdup(providers_xml ? providers_xml : TZDB_PROVIDERS_XML);
        db->zoneinfo_dir = strdup(zoneinfo_dir ? zoneinfo_dir : TZDB_ZONEINFO_DIR);
        if (!db->providers_xml || !db->zoneinfo_dir) {
                free(db->providers_xml);
                free(db->zoneinfo_dir);
                return -ENOMEM;
        }
        *ret = TAKE_PTR(db);
        return 0;
}

static void mccs_clear(TzDb *db)
{
        for (size_t i = 0; i < db->n_mccs; i++)
                strv_free(db->mccs[i].countries);
        free(db->mccs);
        db->mccs = NULL;
        db->n_mccs = 0;
}

static void zones_clear(TzDb *db)
{
        for (size_t i = 0; i < db->n_zones; i++) {
                strv_free(db->zones[i].countries);
                free(db->zones[i].zone);
        }
        free(db->zones);
        db->zones = NULL;
        db->n_zones = 0;
}

TzDb *tzdb_free(TzDb *db)
{
        if (!db)
                return NULL;
        mccs_clear(db);
        zones_clear(db);
        free(db->providers_xml);
        free(db->zoneinfo_dir);
        free(db);
        return NULL;
}

static MccEntry *mcc_find(TzDb *db, const char *mcc)
{
        for (size_t i = 0; i < db->n_mccs; i++)
                if (streq(db->mccs[i].mcc, mcc))
                        return &db->mccs[i];
        return NULL;
}

static int mcc_add(TzDb *db, const char *mcc, const char *country)
{
        MccEntry *e = mcc_find(db, mcc);

        if (!e) {
                MccEntry *n = realloc(db->mccs, (db->n_mccs + 1) * sizeof(*n));
                if (!n)
                        return -ENOMEM;
                db->mccs = n;
                e = &db->mccs[db->n_mccs++];
                *e = (MccEntry){};
                memcpy(e->mcc, mcc, 4);
        }
        if (!country || strv_contains(e->countries, country))
                return 0;
        return strv_extend(&e->countries, country);
}

static const char *attr(const xmlNode *n, const char *name)
{
        for (const xmlAttr *a = n->properties; a; a = a->next)
                if (streq((const char *)a->name, name) && a->children &&
                    a->children->type == XML_TEXT_NODE)
                        return (const char *)a->children->content;
        return NULL;
}

static bool elem_is(const xmlNode *n, const char *name)
{
        return n->type == XML_ELEMENT_NODE && streq((const char *)n->name, name);
}

/* Every <network-id mcc=".."> below a <country code="..">, at any depth. */
static int walk_country(TzDb *db, const xmlNode *n, const char *country)
{
        for (const xmlNode *c = n->children; c; c = c->next) {
                int r;
                if (c->type != XML_ELEMENT_NODE)
                        continue;
                if (elem_is(c, "network-id")) {
                        const char *mcc = attr(c, "mcc");
                        if (mcc && nitz_check_mcc(mcc, NULL) >= 0) {
                                r = mcc_add(db, mcc, country);
                                if (r < 0)
                                        return r;
                        }
                        continue;
                }
                r = walk_country(db, c, country);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void xml_free_docp(xmlDocPtr *d)
{
        const XmlApi *x;
        if (*d && xml_api_get(&x) >= 0)
                x->free_doc(*d);
}

static void xml_silent(void *ctx, const char *msg, ...)
{
        (void)ctx;
        (void)msg;
}

static int load_mccs(TzDb *db)
{
        _cleanup_(xml_free_docp) xmlDocPtr doc = NULL;
        _cleanup_free_ char *buf = NULL;
        const XmlApi *x;
        size_t size;
        int r;

        if (db->mcc_loaded)
                return 0;
        r = read_full_file(db->providers_xml, 64 * 1024 * 1024, &buf, &size);
        if (r < 0)
                return log_error_errno(r,
                                       "Cannot read %s (mobile-broadband-provider-info): %m; "
                                       "no time zone from the cellular network's country",
                                       db->providers_xml);
        r = xml_api_get(&x);
        if (r < 0)
                return r;
        x->set_generic_error_func(NULL, xml_silent);
        /* no network, no DTD loading, no entity expansion: a system file, read as untrusted */
        doc = x->read_memory(buf, (int)size, db->providers_xml, NULL,
                             XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        if (!doc)
                return log_error_errno(EBADMSG, "%s is not well-formed XML: %m", db->providers_xml);
        const xmlNode *root = x->doc_get_root_element(doc);
        if (!root || !elem_is(root, "serviceproviders"))
                return log_error_errno(EBADMSG, "%s has no <serviceproviders>: %m",
                                       db->providers_xml);
        for (const xmlNode *c = root->children; c; c = c->next) {
                const char *code;
                char cc[3];
                if (!elem_is(c, "country") || !(code = attr(c, "code")) || strlen(code) != 2)
                        continue;
                cc[0] = (char)(code[0] >= 'a' && code[0] <= 'z' ? code[0] - 32 : code[0]);
                cc[1] = (char)(code[1] >= 'a' && code[1] <= 'z' ? code[1] - 32 : code[1]);
                cc[2] = 0;
                if (cc[0] < 'A' || cc[0] > 'Z' || cc[1] < 'A' || cc[1] > 'Z')
                        continue;
                r = walk_country(db, c, cc);
                if (r < 0) {
                        mccs_clear(db);
                        return log_oom();
                }
        }
        db->mcc_loaded = true;
        return 0;
}

static int load_zones(TzDb *db)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        char line[1024];

        if (db->zones_loaded)
                return 0;
        if (asprintf(&path, "%s/zone1970.tab", db->zoneinfo_dir) < 0)
                return log_oom();
        f = fopen(path, "re");
        if (!f)
                return log_error_errno(
                    errno, "Cannot read %s (tzdata): %m; no time zone candidates", path);
        while (fgets(line, sizeof(line), f)) {
                _cleanup_strv_free_ char **cols = NULL, **ccs = NULL;
                char *nl = strchr(line, '\n');
                int r;

                if (nl)
                        *nl = 0;
                if (line[0] == '#' || line[0] == 0)
                        continue;
                r = strv_split(line, "\t", &cols);
                if (r < 0)
                        return log_oom();
                if (strv_length(cols) < 3 || !tzdb_zone_name_valid(cols[2]))
                        continue;
                r = strv_split(cols[0], ",", &ccs);
                if (r < 0)
                        return log_oom();
                ZoneRow *n = realloc(db->zones, (db->n_zones + 1) * sizeof(*n));
                if (!n)
                        return log_oom();
                db->zones = n;
                char *zone = strdup(cols[2]);
                if (!zone)
                        return log_oom();
                db->zones[db->n_zones++] = (ZoneRow){.countries = TAKE_PTR(ccs), .zone = zone};
        }
        if (db->n_zones == 0)
                return log_error_errno(EBADMSG, "%s lists no zones: %m", path);
        db->zones_loaded = true;
        return 0;
}

int tzdb_load(TzDb *db)
{
        int r = load_mccs(db);
        if (r < 0)
                return r;
        return load_zones(db);
}

int tzdb_mcc_countries(TzDb *db, const char *mcc, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;
        int r;

        if (nitz_check_mcc(mcc, NULL) < 0)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(mcc_exceptions); i++)
                if (streq(mcc_exceptions[i].mcc, mcc)) {
                        if (!*mcc_exceptions[i].countries)
                                return -ENOENT;
                        r = strv_split(mcc_exceptions[i].countries, ",", &l);
                        if (r < 0)
                                return r;
                        *ret = TAKE_PTR(l);
                        return 0;
                }
        r = load_mccs(db);
        if (r < 0)
                return r;
        MccEntry *e = mcc_find(db, mcc);
        if (!e || !e->countries)
                return -ENOENT;
        l = strv_copy(e->countries);
        if (!l)
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

int tzdb_country_zones(TzDb *db, const char *country, char ***ret)
{
        _cleanup_strv_free_ char **l = NULL;
        int r;

        r = load_zones(db);
        if (r < 0)
                return r;
        for (size_t i = 0; i < db->n_zones; i++)
                if (strv_contains(db->zones[i].countries, country) &&
                    !strv_contains(l, db->zones[i].zone)) {
                        r = strv_extend(&l, db->zones[i].zone);
                        if (r < 0)
                                return r;
                }
        if (!l)
                return -ENOENT;
        *ret = TAKE_PTR(l);
        return 0;
}

bool tzdb_zone_name_valid(const char *s)
{
        if (!s || !*s || *s == '/' || strlen(s) > 63 || strstr(s, ".."))
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                      (*p >= '0' && *p <= '9') || strchr("_+-/", *p)))
                        return false;
        return true;
}

/* TZ is process-wide state: roamd runs one thread, and TZ is restored before returning, so
 * nothing else sees the change. */
static int offset_with_tz(const char *tz, usec_t utc, int *ret_offset_min, bool *ret_dst)
{
        _cleanup_free_ char *saved = NULL;
        const char *old = getenv("TZ");
        time_t t = (time_t)(utc / USEC_PER_SEC);
        struct tm tm;
        bool ok;

        if (old && !(saved = strdup(old)))
                return -ENOMEM;
        if (setenv("TZ", tz, 1) < 0)
                return -errno;
        tzset();
        ok = localtime_r(&t, &tm);
        if (saved)
                setenv("TZ", saved, 1);
        else
                unsetenv("TZ");
        tzset();
        if (!ok)
                return -ERANGE;
        if (tm.tm_gmtoff % 60 != 0)
                return -EBADMSG; /* local mean time of old dates: not a NITZ zone */
        *ret_offset_min = (int)(tm.tm_gmtoff / 60);
        *ret_dst = tm.tm_isdst > 0;
        return 0;
}

/* glibc computes the offset from the zone's TZif file, its POSIX TZ footer included (the rule
 * for times after the last transition): that is what tzfile(5) readers must implement in full,
 * and glibc already does it correctly. */
int tzdb_zone_offset(TzDb *db, const char *zone, usec_t utc, int *ret_offset_min, bool *ret_dst)
{
        _cleanup_free_ char *path = NULL, *tz = NULL;

        if (!tzdb_zone_name_valid(zone))
                return -EINVAL;
        if (asprintf(&path, "%s/%s", db->zoneinfo_dir, zone) < 0)
                return -ENOMEM;
        /* glibc falls back to UTC for a zone without a file: check first */
        if (access(path, R_OK) < 0)
                return -errno;
        if (asprintf(&tz, ":%s", path) < 0)
                return -ENOMEM;
        return offset_with_tz(tz, utc, ret_offset_min, ret_dst);
}

static bool is_alpha(char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

int tzdb_posix_offset(const char *tz, usec_t utc, int *ret_offset_min, bool *ret_dst)
{
        const char *p = tz;
        size_t n = 0;

        /* glibc takes a malformed string for UTC: refuse what does not look like one */
        if (!tz || strlen(tz) > 255 || *tz == ':')
                return -EINVAL;
        if (*p == '<') {
                for (p++; *p && *p != '>'; p++, n++)
                        if (!is_alpha(*p) && !(*p >= '0' && *p <= '9') && *p != '+' && *p != '-')
                                return -EINVAL;
                if (*p++ != '>')
                        return -EINVAL;
        } else
                for (; is_alpha(*p); p++)
                        n++;
        if (n < 3)
                return -EINVAL;
        if (*p == '+' || *p == '-')
                p++;
        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (const char *c = tz; *c; c++)
                if (!is_alpha(*c) && !(*c >= '0' && *c <= '9') && !strchr("<>+-:,./", *c))
                        return -EINVAL;
        return offset_with_tz(tz, utc, ret_offset_min, ret_dst);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the country is the first one listed for the zone: zone1970.tab puts the country whose
 * zone it is first and then the countries that share it for part of their land ("CH,DE,LI
 * Europe/Zurich" is Büsingen's zone in Germany; "JP,AU Asia/Tokyo" an Antarctic station). */
static bool zone_principal(TzDb *db, const char *zone, const char *country)
{
        for (size_t i = 0; i < db->n_zones; i++)
                if (streq(db->zones[i].zone, zone) && db->zones[i].countries[0] &&
                    streq(db->zones[i].countries[0], country))
                        return true;
        return false;
}

int tzdb_candidates(TzDb *db, const char *mcc, int offset_min, int dst, usec_t utc, char ***ret)
{
        _cleanup_strv_free_ char **countries = NULL, **out = NULL;
        int r;

        r = tzdb_mcc_countries(db, mcc, &countries);
        if (r < 0)
                return r;
        /* a missing zone1970.tab is an error, not "this country has no zones" */
        r = load_zones(db);
        if (r < 0)
                return r;
        out = calloc(1, sizeof(char *));
        if (!out)
                return -ENOMEM;
        STRV_FOREACH (cc, countries) {
                _cleanup_strv_free_ char **zones = NULL, **principal = NULL, **shared = NULL;
                r = tzdb_country_zones(db, *cc, &zones);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                STRV_FOREACH (z, zones) {
                        int off;
                        bool in_dst;
                        r = tzdb_zone_offset(db, *z, utc, &off, &in_dst);
                        if (r < 0) {
                                log_debug_errno(r, "Zone %s: %m", *z);
                                continue;
                        }
                        if (off != offset_min || (dst >= 0 && (dst > 0) != in_dst))
                                continue;
                        r = strv_extend(zone_principal(db, *z, *cc) ? &principal : &shared, *z);
                        if (r < 0)
                                return r;
                }
                /* the country's own zones; a shared one only when none of its own matches */
                STRV_FOREACH (z, principal ? principal : shared) {
                        if (strv_contains(out, *z))
                                continue;
                        r = strv_extend(&out, *z);
                        if (r < 0)
                                return r;
                }
        }
        qsort(out, strv_length(out), sizeof(char *), cmp_str);
        *ret = TAKE_PTR(out);
        return 0;
}
