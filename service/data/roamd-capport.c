/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-c/json.h>
#include <stdint.h>
#include <strings.h>

#include "roam-macro.h"
#include "roamd-capport.h"
#include "roamd-http-answer.h"

/* The RFC 8908 document is flat; the limit leaves room for nested extension members while a
 * "[[[[..." bomb stops early. */
#define CAPPORT_DEPTH_MAX 16
#define CAPPORT_SIZE_MAX  (64 * 1024)

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_tokener *, json_tokener_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put);

void capport_info_done(CapportInfo *i)
{
        if (!i)
                return;
        free(i->user_portal_url);
        free(i->venue_info_url);
        *i = (CapportInfo){};
}

static int get_bool(struct json_object *o, const char *key, bool required, bool *ret)
{
        struct json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return required ? -EBADMSG : 0;
        if (!json_object_is_type(v, json_type_boolean))
                return -EBADMSG;
        *ret = json_object_get_boolean(v);
        return 1;
}

static int get_count(struct json_object *o, const char *key, bool *ret_has, uint64_t *ret)
{
        struct json_object *v;
        int64_t n;

        if (!json_object_object_get_ex(o, key, &v))
                return 0;
        /* Integers only: 3600.0 or 1e3 are doubles to json-c and wrong types here. */
        if (!json_object_is_type(v, json_type_int))
                return -EBADMSG;
        /* json-c clamps numbers outside int64 to INT64_MIN/INT64_MAX without an error, so
         * INT64_MAX itself may stand for any larger number: refused with them. */
        n = json_object_get_int64(v);
        if (n < 0 || n == INT64_MAX)
                return -EBADMSG;
        *ret_has = true;
        *ret = (uint64_t)n;
        return 1;
}

static int get_url(struct json_object *o, const char *key, bool https_only, char **ret)
{
        struct json_object *v;
        const char *s;
        char *copy;

        if (!json_object_object_get_ex(o, key, &v))
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return -EBADMSG;
        s = json_object_get_string(v);
        /* A "\u0000" escape would hide the rest of the string from the checks below. */
        if ((size_t)json_object_get_string_len(v) != strlen(s) || !http_url_ok(s, https_only))
                return -EBADMSG;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        free(*ret);
        *ret = copy;
        return 1;
}

int capport_parse(const char *body, size_t size, CapportInfo *ret)
{
        _cleanup_(json_tokener_freep) struct json_tokener *tok = NULL;
        _cleanup_(json_object_putp) struct json_object *o = NULL;
        _cleanup_(capport_info_done) CapportInfo info = {};
        int r;

        if (!body || size == 0 || size > CAPPORT_SIZE_MAX)
                return -EBADMSG;
        /* A raw NUL is never valid JSON; json-c would stop at it and see a shorter text. */
        if (memchr(body, 0, size))
                return -EBADMSG;

        tok = json_tokener_new_ex(CAPPORT_DEPTH_MAX);
        if (!tok)
                return -ENOMEM;
        /* Strict RFC 8259 JSON, valid UTF-8, nothing after the object. */
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = json_tokener_parse_ex(tok, body, (int)size);
        if (!o || json_tokener_get_error(tok) != json_tokener_success ||
            json_tokener_get_parse_end(tok) != size)
                return -EBADMSG;
        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;

        r = get_bool(o, "captive", true, &info.captive);
        if (r < 0)
                return r;
        /* RFC 8908 section 5: the portal URL must be https; the venue page may be http. */
        r = get_url(o, "user-portal-url", true, &info.user_portal_url);
        if (r < 0)
                return r;
        r = get_url(o, "venue-info-url", false, &info.venue_info_url);
        if (r < 0)
                return r;
        r = get_count(o, "seconds-remaining", &info.has_seconds_remaining, &info.seconds_remaining);
        if (r < 0)
                return r;
        r = get_count(o, "bytes-remaining", &info.has_bytes_remaining, &info.bytes_remaining);
        if (r < 0)
                return r;
        r = get_bool(o, "can-extend-session", false, &info.can_extend_session);
        if (r < 0)
                return r;

        *ret = info;
        info = (CapportInfo){};
        return 0;
}

bool capport_content_type_ok(const char *content_type)
{
        static const char media[] = "application/captive+json";
        const char *p;

        if (!content_type)
                return false;
        p = content_type + strspn(content_type, " \t");
        if (strncasecmp(p, media, sizeof(media) - 1) != 0)
                return false;
        p += sizeof(media) - 1;
        /* The type must end here: "application/captive+jsonx" is another type. */
        p += strspn(p, " \t");
        return *p == 0 || *p == ';';
}

bool capport_api_url_ok(const char *url)
{
        return http_url_ok(url, true);
}
