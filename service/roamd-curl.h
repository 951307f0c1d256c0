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
