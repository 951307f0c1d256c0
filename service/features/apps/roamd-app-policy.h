/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Per-app policy: its values, how layers combine (built-in < apps.d drop-ins < runtime
 * changes), the key=value form used over D-Bus and on the command line, the drop-in format and
 * the runtime state file. Pure: no I/O beyond reading and writing those files. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-bearer.h"

#define APP_POLICY_DIR_DEFAULT   ROAM_SYSCONFDIR "/roam/apps.d"
#define APP_POLICY_STATE_DEFAULT ROAM_LOCALSTATEDIR "/lib/roam/apps.state"
/* Drop-ins and the state file larger than this are refused. */
#define APP_POLICY_FILE_MAX (1024 * 1024)

typedef enum AppAccess {
        APP_ACCESS_ALLOW, /* any network */
        APP_ACCESS_LAN,   /* local networks only */
        APP_ACCESS_DENY,  /* loopback only */
        _APP_ACCESS_MAX,
        _APP_ACCESS_INVALID = -EINVAL,
} AppAccess;

typedef enum AppVpn {
        APP_VPN_ANY,
        APP_VPN_REQUIRED,  /* only through a VPN link; blocked while none is up */
        APP_VPN_FORBIDDEN, /* never through a VPN link */
        _APP_VPN_MAX,
        _APP_VPN_INVALID = -EINVAL,
} AppVpn;

typedef enum AppHandover {
        APP_HANDOVER_STICKY, /* flows keep the link they started on */
        APP_HANDOVER_MOVE,   /* flows follow the new default link */
        _APP_HANDOVER_MAX,
        _APP_HANDOVER_INVALID = -EINVAL,
} AppHandover;

typedef enum AppPolicySource {
        APP_POLICY_SOURCE_BUILTIN,
        APP_POLICY_SOURCE_CONFIG,
        APP_POLICY_SOURCE_RUNTIME,
        _APP_POLICY_SOURCE_MAX,
        _APP_POLICY_SOURCE_INVALID = -EINVAL,
} AppPolicySource;

const char *app_access_to_string(AppAccess a);
AppAccess app_access_from_string(const char *s);
const char *app_vpn_to_string(AppVpn v);
AppVpn app_vpn_from_string(const char *s);
const char *app_handover_to_string(AppHandover h);
AppHandover app_handover_from_string(const char *s);
const char *app_policy_source_to_string(AppPolicySource s);
AppPolicySource app_policy_source_from_string(const char *s);

enum {
        APP_KEY_ACCESS = 1u << 0,
        APP_KEY_BEARERS = 1u << 1,
        APP_KEY_VPN = 1u << 2,
        APP_KEY_HANDOVER = 1u << 3,
        APP_KEY_ALL = 0xf, /* the routing keys: the builtin policy sets each */
        /* Ordered wake-up (docs/wake.md): unset in the builtin policy, so an app is wake-listed
         * only when apps.d or a runtime change says so. */
        APP_KEY_WAKE = 1u << 4,
        APP_KEY_WAKE_SLICE = 1u << 5,
        APP_KEY_WAKE_BYTES = 1u << 6,
        APP_KEY_WAKE_ALL = 0x70,
        APP_KEY_VALID = APP_KEY_ALL | APP_KEY_WAKE_ALL,
};

#define APP_WAKE_NONE          (-1)
#define APP_WAKE_PRIORITY_MAX  100
#define APP_WAKE_SLICE_DEFAULT (10 * 1000000ULL) /* µs */
#define APP_WAKE_SLICE_MIN     (100 * 1000ULL)
#define APP_WAKE_SLICE_MAX     (3600 * 1000000ULL)
#define APP_WAKE_BYTES_MAX     (1ULL << 40)

typedef struct AppPolicy {
        unsigned set; /* which APP_KEY_* are present (for layering) */
        AppAccess access;
        uint32_t bearers; /* bitmask of 1u << Bearer; 0 means every bearer */
        AppVpn vpn;
        AppHandover handover;
        int wake;                 /* APP_WAKE_NONE (not wake-listed), or 0-100: higher first */
        uint64_t wake_slice_usec; /* how long a turn lasts at most */
        uint64_t wake_bytes;      /* estimate of what a turn fetches, 0 unknown */
} AppPolicy;

/* The wake keys with their defaults where unset. */
int app_policy_wake_priority(const AppPolicy *p);
uint64_t app_policy_wake_slice(const AppPolicy *p);
uint64_t app_policy_wake_bytes(const AppPolicy *p);

/* The bearers a policy may name: every Bearer but virtual (virtual links never carry an app's
 * traffic out). */
#define APP_BEARERS_VALID ((uint32_t)((1u << _BEARER_MAX) - 1) & ~(1u << BEARER_VIRTUAL))

/* allow, all bearers, vpn any, sticky; set = APP_KEY_ALL */
void app_policy_init_builtin(AppPolicy *p);
/* Copies the keys set in over into base and ORs their bits into base->set. */
void app_policy_layer(AppPolicy *base, const AppPolicy *over);
/* Equal set masks, and equal values for the keys set. */
bool app_policy_equal(const AppPolicy *a, const AppPolicy *b);
/* Whether the bearers key lets the app use links of bearer b (true when the key is unset or
 * lists every bearer; false for an invalid b). The vpn key is separate: this does not look at
 * it. */
bool app_policy_allows_bearer(const AppPolicy *p, Bearer b);

/* One key=value as given over D-Bus or on the command line: keys access, bearers, vpn,
 * handover, wake (no, or a priority 0-100), wake-slice (a duration: 10s, 500ms, 2min;
 * 100ms-1h), wake-bytes (a size: 500K, 2M, 1G; IEC units) (lowercase). bearers: names separated by
 * commas and/or spaces, or "all"; no duplicates, not empty. On success sets the key's value and
 * bit. On a bad key or value: -EINVAL, p unchanged, and *ret_error (when ret_error is not NULL) a
 * malloc'd message naming the key and value, e.g. "unknown key 'foo' (known: access, bearers, vpn,
 * handover)" or "invalid value 'x' for access (allow, lan, deny)". Non-printable bytes in the value
 * are shown as \xNN and long values are cut. -ENOMEM leaves *ret_error alone. */
int app_policy_assign(AppPolicy *p, const char *key, const char *value, char **ret_error);
/* "ethernet,wifi" (names joined by sep, in Bearer enum order), or "all" when bearers is 0.
 * -EINVAL for bits that are no valid bearer. */
int app_policy_bearers_to_string(uint32_t bearers, const char *sep, char **ret);
/* "access=allow bearers=all vpn=any handover=sticky": only the keys set, "" when none is.
 * -EINVAL when a set key holds an invalid value. */
int app_policy_to_string(const AppPolicy *p, char **ret);

typedef struct AppPolicyEntry {
        char *id;
        AppPolicy policy;
        char *file;    /* where it was read last (the [App] header), NULL when set at runtime */
        unsigned line; /* 0 when file is NULL */
} AppPolicyEntry;

/* Entries with unique IDs, in the order they were first added. */
typedef struct AppPolicySet {
        AppPolicyEntry *entries;
        size_t n;
} AppPolicySet;

/* Frees the contents and leaves an empty set; NULL-safe. */
void app_policy_set_done(AppPolicySet *s);
/* The index of id, or -ENOENT. */
int app_policy_set_find(const AppPolicySet *s, const char *id);
/* Layers p over the entry for id, or adds an entry (file NULL, line 0). -EINVAL for an invalid
 * ID (app_id_is_valid()). */
int app_policy_set_put(AppPolicySet *s, const char *id, const AppPolicy *p);
/* -ENOENT when absent. The order of the others is kept. */
int app_policy_set_remove(AppPolicySet *s, const char *id);

/* Drop-in text, INI via shared/roam-conf.h:
 *   [App]
 *   ID=org.example.Mail
 *   Access=lan
 *   Bearers=wifi ethernet      (space and/or comma separated, or "all")
 *   VPN=required
 *   Handover=move
 *   Wake=80                   (no, or 0-100; WakeSlice=10s, WakeBytes=2M)
 * Several [App] sections per file. ID must appear in every section (any position) and pass
 * app_id_is_valid() ("default" and "system" configure the default and system policies); the
 * same ID twice in one file is an error; a key twice in a section: the later wins. Unknown
 * sections/keys and bad values are errors reported "file:line: message" through
 * conf_log_error(). A text with any error adds nothing to *into (all or nothing per file) and
 * returns -EINVAL with *ret_errors (may be NULL) counting the errors. On success each ID is
 * layered over the entry *into already has for it (its file and line become this one's), or
 * added. */
int app_policy_parse_dropin(const char *file, const char *text, size_t size, AppPolicySet *into,
                            unsigned *ret_errors);
/* All DIR/NAME.conf in strcmp() order of NAME (other names, and names starting with '.', are
 * ignored); a later file layers over an earlier one for the same ID, key by key. Malformed,
 * unreadable, non-regular and too large (> 1 MiB) files are skipped with their errors logged;
 * the others still load. A missing directory is an empty set. *ret is overwritten (it need not
 * be initialized). Returns 0; -EINVAL when some file was skipped (*ret holds the good ones);
 * another negative errno when the directory cannot be read (*ret empty). *ret_errors (may be
 * NULL) counts the errors over all files. */
int app_policy_load_dir(const char *dir, AppPolicySet *ret, unsigned *ret_errors);

/* What a damaged runtime state file lost. */
typedef struct AppPolicyStateDamage {
        unsigned n_damaged;  /* sections (or stray text) that could not be read */
        char **denied;       /* apps whose section was damaged: they are denied */
        bool default_denied; /* damage whose app cannot be told (or the default's own): the
                              * default's access is deny */
        bool system_lost;    /* the system policy's section: it stays as configured */
} AppPolicyStateDamage;
void app_policy_state_damage_done(AppPolicyStateDamage *d);

/* The runtime state text (the drop-in format behind a comment header saying roamd writes it),
 * read section by section: sections that parse are kept; each damaged one is logged with
 * file:line and fails closed (its app, named by a valid ID= in it, gets access=deny; damage
 * whose app cannot be told denies the default; the system policy is never denied, it keeps its
 * configured policy). *ret and *ret_damage are overwritten. Returns the number of damaged parts
 * (0: clean), or -ENOMEM. */
int app_policy_state_parse(const char *file, const char *text, size_t size, AppPolicySet *ret,
                           AppPolicyStateDamage *ret_damage);
/* Reads path with app_policy_state_parse(). A missing file is an empty set and 0. A damaged
 * one: the damaged part count, and a copy PATH.damaged. An unreadable (or too large: moved to
 * PATH.damaged) one: negative errno, with *ret the fail-closed set (the default denied). */
int app_policy_state_load(const char *path, AppPolicySet *ret, AppPolicyStateDamage *ret_damage);
/* Writes with write_file_atomic(): a crash leaves the old or the new file. -EINVAL when an
 * entry could not be read back (invalid ID or value). */
int app_policy_state_save(const char *path, const AppPolicySet *s);
/* The state text itself (what app_policy_state_save() writes). */
int app_policy_state_format(const AppPolicySet *s, char **ret);
