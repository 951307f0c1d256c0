/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The memory floor under roamd's probes: a process linked against roamd's libraries (all
 * loaded, as in roamd) that does nothing but curl's part of a probe round, the way roamd does
 * it (one multi handle, TLS sessions shared, a fresh connection per fetch, malloc_trim() at
 * rest). bench_verdict.py reads its RssAnon after each step: what no code of roamd's own can
 * go below.
 *
 * mem-floor HTTP_URL HTTPS_URL RESOLVE CA_FILE N
 *   RESOLVE: curl's "host:port:address" entries for both URLs, comma-separated */
#include <curl/curl.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One step done: trim as roamd does at rest, say so, and wait for bench_verdict.py to read
 * this process's smaps (its mem_parts(), the one split every memory figure uses) and answer
 * with a line. */
static int report(const char *what)
{
        char line[16];

        malloc_trim(0);
        printf("%s\n", what);
        fflush(stdout);
        return fgets(line, sizeof(line), stdin) ? 0 : -EPIPE;
}

static size_t discard(char *ptr, size_t size, size_t n, void *userdata)
{
        (void)ptr;
        (void)userdata;
        return size * n;
}

static int fetch(CURLM *multi, CURLSH *share, const char *url, struct curl_slist *resolve,
                 const char *ca_file)
{
        CURLcode result = CURLE_FAILED_INIT;
        CURLMsg *msg;
        CURL *easy;
        int running = 1, left;

        easy = curl_easy_init();
        if (!easy)
                return -ENOMEM;
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_easy_setopt(easy, CURLOPT_RESOLVE, resolve);
        curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file);
        curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
        curl_easy_setopt(easy, CURLOPT_SHARE, share);
        curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 10000L);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        if (curl_multi_add_handle(multi, easy) != CURLM_OK) {
                curl_easy_cleanup(easy);
                return -EIO;
        }
        while (running > 0) {
                if (curl_multi_perform(multi, &running) != CURLM_OK)
                        break;
                if (running > 0 && curl_multi_poll(multi, NULL, 0, 1000, NULL) != CURLM_OK)
                        break;
        }
        while ((msg = curl_multi_info_read(multi, &left)))
                if (msg->msg == CURLMSG_DONE)
                        result = msg->data.result;
        curl_multi_remove_handle(multi, easy);
        curl_easy_cleanup(easy);
        if (result != CURLE_OK) {
                fprintf(stderr, "mem-floor: %s: %s\n", url, curl_easy_strerror(result));
                return -EIO;
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct curl_slist *resolve = NULL;
        CURLSH *share = NULL;
        CURLM *multi = NULL;
        char *list, *entry, *save = NULL;
        int n, r = -EINVAL;

        if (argc != 6 || (n = atoi(argv[5])) < 1) {
                fprintf(stderr, "usage: mem-floor HTTP_URL HTTPS_URL RESOLVE CA_FILE N\n");
                return 2;
        }
        if (report("at main (libraries loaded)") < 0)
                return 1;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return 1;
        list = strdup(argv[3]);
        for (entry = list ? strtok_r(list, ",", &save) : NULL; entry;
             entry = strtok_r(NULL, ",", &save))
                resolve = curl_slist_append(resolve, entry);
        free(list);
        multi = curl_multi_init();
        share = curl_share_init();
        if (!resolve || !multi || !share ||
            curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK)
                goto out;
        if (report("after curl_global_init") < 0)
                goto out;
        r = fetch(multi, share, argv[1], resolve, argv[4]);
        if (r < 0 || (r = report("after 1 HTTP fetch")) < 0)
                goto out;
        r = fetch(multi, share, argv[2], resolve, argv[4]);
        if (r < 0 || (r = report("after 1 HTTPS fetch")) < 0)
                goto out;
        for (int i = 1; i < n && r >= 0; i++) {
                r = fetch(multi, share, argv[1], resolve, argv[4]);
                if (r >= 0)
                        r = fetch(multi, share, argv[2], resolve, argv[4]);
        }
        if (r >= 0) {
                char what[64];

                snprintf(what, sizeof(what), "after %d HTTP + HTTPS fetches", n);
                r = report(what);
        }
out:
        curl_share_cleanup(share);
        curl_multi_cleanup(multi);
        curl_slist_free_all(resolve);
        curl_global_cleanup();
        return r < 0 ? 1 : 0;
}
