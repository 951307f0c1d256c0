/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <curl/curl.h>
#include <systemd/sd-event.h>

/* libcurl's multi interface driven by sd-event: curl's sockets become io sources and its
 * timeout one time source. No threads, no blocking calls. */

typedef struct CurlGlue CurlGlue;

/* Called once per transfer when it ends (result is the easy handle's CURLcode). The handle is
 * already removed from the multi handle; the callee owns it again. */
typedef void (*CurlDoneFn)(CURL *easy, CURLcode result, void *userdata);

int curl_glue_new(sd_event *event, CurlGlue **ret);
CurlGlue *curl_glue_free(CurlGlue *g);

/* Starts a transfer. CURLOPT_PRIVATE of easy is used by the glue. */
int curl_glue_add(CurlGlue *g, CURL *easy, CurlDoneFn done, void *userdata);

/* Cancels a transfer that has not ended; no callback follows. NULL allowed. */
void curl_glue_remove(CurlGlue *g, CURL *easy);

/* What every transfer roamd makes on one link's behalf shares (probes, captive portal
 * fetches): connect to addr (our resolver's answer) keeping host for Host, SNI and the
 * certificate check, bound to the link, one fresh connection that is never reused, no
 * redirects followed (the caller checks every host), http and https only, timeout_ms for
 * connect and whole, and the CA file (NULL: the system's CA directory, see roamd-curl.c).
 * *ret_connect_to must outlive the transfer; the caller frees it with curl_slist_free_all(). */
int curl_easy_link_setup(CURL *easy, const char *host, long port, int family, const char *addr_text,
                         const char *ifname, int ifindex, long timeout_ms, const char *ca_file,
                         struct curl_slist **ret_connect_to);
