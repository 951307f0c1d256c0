/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/* A captive portal session as roamd reports it (org.roam1.Portal, docs/portal.md), what it
 * means in words, and the calls that act on it: what `roam portal`, its login browser, plain
 * mode and the portal screen share. */

typedef struct RoamPortalSession {
        char *link, *state, *message, *identity, *identity_source;
        char *portal_url, *login_url, *location_name, *venue_info_url, *user_portal_url;
        bool wispr, approved, can_logoff, has_saved_login, always, expiry_warning, expired;
        bool can_extend;
        bool browser_login; /* the portal-login app may reach this link now */
        bool has_expires, has_bytes;
        uint64_t expires_at_usec; /* CLOCK_REALTIME */
        uint64_t bytes_remaining;
} RoamPortalSession;

void roam_portal_sessions_free(RoamPortalSession *s, size_t n);
/* Reads an aa{sv} of sessions at the message's position. */
int roam_portal_sessions_read(sd_bus_message *m, RoamPortalSession **ret, size_t *ret_n);
/* Reads a Properties.Get reply of Sessions (its variant). */
int roam_portal_sessions_read_get(sd_bus_message *m, RoamPortalSession **ret, size_t *ret_n);
/* Reads the Sessions property. */
int roam_portal_sessions_get(sd_bus *bus, RoamPortalSession **ret, size_t *ret_n);

/* What a state means and what the user can do, in words. */
const char *roam_portal_state_words(const char *state);
const char *roam_portal_next_step(const RoamPortalSession *s, bool keys);
/* Whether the portal is in the way and waits for the user (approve, log in, a browser);
 * false once open, logged in, or while roamd is at it. What each key may do follows. */
bool roam_portal_needs_you(const RoamPortalSession *s);
bool roam_portal_can_approve(const RoamPortalSession *s);
bool roam_portal_can_decline(const RoamPortalSession *s);
bool roam_portal_can_login(const RoamPortalSession *s);  /* WISPr: the login form */
bool roam_portal_can_browse(const RoamPortalSession *s); /* no WISPr: the login browser */
/* "57 min left", "42 s left", "" when unknown; now_usec: CLOCK_REALTIME. */
void roam_portal_time_left(const RoamPortalSession *s, uint64_t now_usec, char *buf, size_t n);

/* One session as "  Label:  value" fields through add(label, value, userdata). */
void roam_portal_fields(const RoamPortalSession *s, uint64_t now_usec, bool keys,
                        void (*add)(const char *label, const char *value, void *userdata),
                        void *userdata);

/* Sends the password (read from the NUL-terminated secret) in a memfd. */
int roam_portal_login(sd_bus *bus, const char *link, const char *user, const char *password,
                      bool save, bool always);
/* approve, decline, logoff, forget, extend. */
int roam_portal_action(sd_bus *bus, const char *action, const char *link, bool always);
