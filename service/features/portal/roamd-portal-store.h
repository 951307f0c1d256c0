/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Saved captive portal logins, per network identity, in a root-only JSON file (mode 0600,
 * owned by root, written crash-safe). Passwords never leave this file and roamd's memory:
 * not logged, not on D-Bus. The whole file is read and written at once (it is small). */

#define PORTAL_STORE_MAX       (256u * 1024u)
#define PORTAL_STORE_FIELD_MAX 512u

typedef struct PortalEntry {
        char *identity;
        char *user;       /* NULL: none saved */
        char *password;   /* NULL: none saved; wiped when freed */
        bool always;      /* "always log in on this network" */
        char *login_host; /* the host the login was sent to when it was saved: the password
                           * goes to no other (NULL: saved by an older roamd, asks again) */
        char *login_pin;  /* and its certificate's public key then, "sha256//BASE64" */
} PortalEntry;

typedef struct PortalStore {
        char *path;
        PortalEntry *entries;
        size_t n_entries;
} PortalStore;

/* Reads path (NULL: an empty store that refuses to be saved, -EROFS); a missing file is an empty
 * store. A file not owned by root or readable by others than root is refused (-EPERM), a malformed
 * one too (-EBADMSG): nothing is lost, the file is left as it is and roamd runs with an empty
 * store. */
int portal_store_load(const char *path, PortalStore **ret);
PortalStore *portal_store_free(PortalStore *s);
static inline void portal_store_freep(PortalStore **s)
{
        portal_store_free(*s);
}

const PortalEntry *portal_store_get(const PortalStore *s, const char *identity);

/* Sets the fields of identity's entry (creating it); NULL user/password keep the saved ones.
 * Then saves. */
int portal_store_set(PortalStore *s, const char *identity, const char *user, const char *password,
                     bool always);
/* Pins identity's entry to the login host (and pin: its certificate's public key, NULL: none,
 * for a login over plain HTTP) seen when it was saved, and saves. -ENOENT when
 * there is no entry. */
int portal_store_set_login_host(PortalStore *s, const char *identity, const char *host,
                                const char *pin);
/* Removes identity's entry and saves. Returns 1 if there was one, 0 if not. */
int portal_store_forget(PortalStore *s, const char *identity);

/* The identities an older roamd filed logins under ("IFNAME gateway-mac MAC", the same or
 * "IFNAME" followed by " ssid SSID bssid BSSID", "IFNAME") rewritten once as the link's
 * NetworkId they stand for (roamd-netid.h: "wifi:SSID:BSSID", "BEARER:gw=MAC",
 * "BEARER:if=IFNAME"); bearer_of names an interface's bearer ("ethernet"...; NULL unknown).
 * A key with no such counterpart ("IFNAME gateway ADDRESS", an interface of unknown bearer) or
 * whose id is filed already is left as it is: nothing is lost. Saves when a key changed;
 * returns how many did. */
int portal_store_migrate(PortalStore *s,
                         const char *(*bearer_of)(const char *ifname, void *userdata),
                         void *userdata);

/* Writes the whole store: a 0600 temp file in the same directory, fsync, rename, fsync of
 * the directory. */
int portal_store_save(const PortalStore *s);

/* Overwrites and frees a secret. NULL allowed. */
void portal_secret_free(char *p);
