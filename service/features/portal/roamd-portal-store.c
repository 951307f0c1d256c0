/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-netid.h"
#include "roamd-portal-store.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_tokener *, json_tokener_free);

void portal_secret_free(char *p)
{
        if (!p)
                return;
        explicit_bzero(p, strlen(p));
        free(p);
}

static void entry_done(PortalEntry *e)
{
        free(e->identity);
        free(e->user);
        portal_secret_free(e->password);
        free(e->login_host);
        free(e->login_pin);
        *e = (PortalEntry){};
}

PortalStore *portal_store_free(PortalStore *s)
{
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_entries; i++)
                entry_done(&s->entries[i]);
        free(s->entries);
        free(s->path);
        free(s);
        return NULL;
}

static bool field_ok(const char *v)
{
        size_t n = strlen(v);

        if (n == 0 || n > PORTAL_STORE_FIELD_MAX)
                return false;
        for (const char *p = v; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

static int get_string(struct json_object *o, const char *key, bool required, char **ret)
{
        struct json_object *v;
        const char *s;

        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return required ? -EBADMSG : 0;
        if (!json_object_is_type(v, json_type_string))
                return -EBADMSG;
        s = json_object_get_string(v);
        if (!field_ok(s))
                return -EBADMSG;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int parse_entries(struct json_object *root, PortalStore *s)
{
        struct json_object *list;
        size_t n;

        if (!json_object_is_type(root, json_type_object) ||
            !json_object_object_get_ex(root, "networks", &list) ||
            !json_object_is_type(list, json_type_array))
                return -EBADMSG;
        n = json_object_array_length(list);
        if (n > 1024)
                return -EBADMSG;
        s->entries = calloc(n ? n : 1, sizeof(PortalEntry));
        if (!s->entries)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct json_object *o = json_object_array_get_idx(list, i), *a;
                PortalEntry *e = &s->entries[s->n_entries];
                int r;

                if (!json_object_is_type(o, json_type_object))
                        return -EBADMSG;
                s->n_entries++;
                if ((r = get_string(o, "identity", true, &e->identity)) < 0 ||
                    (r = get_string(o, "user", false, &e->user)) < 0 ||
                    (r = get_string(o, "password", false, &e->password)) < 0 ||
                    (r = get_string(o, "login_host", false, &e->login_host)) < 0 ||
                    (r = get_string(o, "login_pin", false, &e->login_pin)) < 0)
                        return r;
                if (json_object_object_get_ex(o, "always", &a)) {
                        if (!json_object_is_type(a, json_type_boolean))
                                return -EBADMSG;
                        e->always = json_object_get_boolean(a);
                }
        }
        return 0;
}

int portal_store_load(const char *path, PortalStore **ret)
{
        _cleanup_(portal_store_freep) PortalStore *s = NULL;
        _cleanup_(json_object_putp) struct json_object *root = NULL;
        _cleanup_(json_tokener_freep) struct json_tokener *tok = NULL;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t size = 0;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        if (!path) {
                /* An empty store that is never written (the file on disk was refused). */
                *ret = TAKE_PTR(s);
                return 0;
        }
        s->path = strdup(path);
        if (!s->path)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
                if (errno == ENOENT) {
                        *ret = TAKE_PTR(s);
                        return 0;
                }
                return negative_errno();
        }
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077))
                return -EPERM;
        if (st.st_size > (off_t)PORTAL_STORE_MAX)
                return -EFBIG;
        buf = malloc((size_t)st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        while (size < (size_t)st.st_size) {
                ssize_t k = read(fd, buf + size, (size_t)st.st_size - size);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                size += (size_t)k;
        }
        buf[size] = 0;
        tok = json_tokener_new_ex(8);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        root = json_tokener_parse_ex(tok, buf, (int)size);
        explicit_bzero(buf, size);
        if (!root || json_tokener_get_error(tok) != json_tokener_success)
                return -EBADMSG;
        r = parse_entries(root, s);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

const PortalEntry *portal_store_get(const PortalStore *s, const char *identity)
{
        for (size_t i = 0; s && identity && i < s->n_entries; i++)
                if (strcmp(s->entries[i].identity, identity) == 0)
                        return &s->entries[i];
        return NULL;
}

static int write_secret_file(const char *path, const char *data, size_t size)
{
        _cleanup_free_ char *tmp = NULL, *dir = NULL;
        _cleanup_close_ int fd = -EBADF, dfd = -EBADF;
        int r;

        if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0)
                return -ENOMEM;
        /* mkostemp creates the file 0600; it never has another mode, not even briefly. */
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        for (size_t done = 0; done < size;) {
                ssize_t k = write(fd, data + done, size - done);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = negative_errno();
                        goto fail;
                }
                done += (size_t)k;
        }
        if (fchmod(fd, 0600) < 0 || fchown(fd, 0, 0) < 0 || fsync(fd) < 0 ||
            rename(tmp, path) < 0) {
                r = negative_errno();
                goto fail;
        }
        dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd) < 0)
                return negative_errno();
        return 0;
fail:
        (void)unlink(tmp);
        return r;
}

int portal_store_save(const PortalStore *s)
{
        _cleanup_(json_object_putp) struct json_object *root = json_object_new_object();
        struct json_object *list = json_object_new_array();
        const char *text;
        int r;

        if (!s->path) {
                json_object_put(list);
                return -EROFS;
        }
        if (!root || !list) {
                json_object_put(list);
                return -ENOMEM;
        }
        json_object_object_add(root, "networks", list);
        for (size_t i = 0; i < s->n_entries; i++) {
                const PortalEntry *e = &s->entries[i];
                struct json_object *o = json_object_new_object();
                if (!o)
                        return -ENOMEM;
                json_object_array_add(list, o);
                json_object_object_add(o, "identity", json_object_new_string(e->identity));
                if (e->user)
                        json_object_object_add(o, "user", json_object_new_string(e->user));
                if (e->password)
                        json_object_object_add(o, "password", json_object_new_string(e->password));
                json_object_object_add(o, "always", json_object_new_boolean(e->always));
                if (e->login_host)
                        json_object_object_add(o, "login_host",
                                               json_object_new_string(e->login_host));
                if (e->login_pin)
                        json_object_object_add(o, "login_pin",
                                               json_object_new_string(e->login_pin));
        }
        text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
        if (!text)
                return -ENOMEM;
        r = write_secret_file(s->path, text, strlen(text));
        /* json-c keeps the text in the root object's buffer: wipe it. */
        explicit_bzero((char *)text, strlen(text));
        return r;
}

int portal_store_set(PortalStore *s, const char *identity, const char *user, const char *password,
                     bool always)
{
        PortalEntry *e = (PortalEntry *)portal_store_get(s, identity);
        char *nu = NULL, *np = NULL;

        if (!field_ok(identity) || (user && !field_ok(user)) || (password && !field_ok(password)))
                return -EINVAL;
        if (!e) {
                PortalEntry *ne = realloc(s->entries, sizeof(PortalEntry) * (s->n_entries + 1));
                if (!ne)
                        return -ENOMEM;
                s->entries = ne;
                e = &s->entries[s->n_entries];
                *e = (PortalEntry){.identity = strdup(identity)};
                if (!e->identity)
                        return -ENOMEM;
                s->n_entries++;
        }
        if (user && !(nu = strdup(user)))
                return -ENOMEM;
        if (password && !(np = strdup(password))) {
                free(nu);
                return -ENOMEM;
        }
        if (nu) {
                free(e->user);
                e->user = nu;
        }
        if (np) {
                portal_secret_free(e->password);
                e->password = np;
        }
        e->always = always;
        return portal_store_save(s);
}

int portal_store_set_login_host(PortalStore *s, const char *identity, const char *host,
                                const char *pin)
{
        PortalEntry *e = (PortalEntry *)portal_store_get(s, identity);
        char *h, *p = NULL;

        if (!e)
                return -ENOENT;
        if (!field_ok(host) || (pin && !field_ok(pin)))
                return -EINVAL;
        h = strdup(host);
        if (!h || (pin && !(p = strdup(pin)))) {
                free(h);
                return -ENOMEM;
        }
        free(e->login_host);
        e->login_host = h;
        free(e->login_pin);
        e->login_pin = p;
        return portal_store_save(s);
}

int portal_store_forget(PortalStore *s, const char *identity)
{
        for (size_t i = 0; i < s->n_entries; i++)
                if (strcmp(s->entries[i].identity, identity) == 0) {
                        entry_done(&s->entries[i]);
                        memmove(&s->entries[i], &s->entries[i + 1],
                                sizeof(PortalEntry) * (s->n_entries - i - 1));
                        s->n_entries--;
                        return portal_store_save(s) < 0 ? -EIO : 1;
                }
        return 0;
}

static bool has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* An older roamd's key as the NetworkId it stands for, into id ("" none). */
static int legacy_id(const char *key, const char *(*bearer_of)(const char *ifname, void *userdata),
                     void *userdata, char id[static NETID_MAX])
{
        const char *sp = strchr(key, ' '), *rest = sp ? sp + 1 : "";
        _cleanup_free_ char *ifname = strndup(key, sp ? (size_t)(sp - key) : strlen(key));
        _cleanup_free_ char *mac = NULL, *ssid = NULL, *bssid = NULL;
        NetIdFacts f = {.has_network = true};
        bool by_address = false;

        id[0] = 0;
        if (!ifname)
                return -ENOMEM;
        /* an interface name holds no ':' (the kernel refuses one): a NetworkId already */
        if (!*ifname || strchr(ifname, ':'))
                return 0;
        if (has_prefix(rest, "gateway-mac ") || has_prefix(rest, "gateway ")) {
                const char *v = strchr(rest, ' ') + 1, *e = strchr(v, ' ');

                by_address = has_prefix(rest, "gateway ");
                mac = strndup(v, e ? (size_t)(e - v) : strlen(v));
                if (!mac)
                        return -ENOMEM;
                rest = e ? e + 1 : "";
        }
        if (has_prefix(rest, "ssid ")) {
                const char *b = strstr(rest, " bssid ");

                /* the last " bssid ": an SSID may hold one */
                for (const char *n = b; n; n = strstr(n + 1, " bssid "))
                        b = n;
                if (!b)
                        return 0;
                ssid = strndup(rest + 5, (size_t)(b - (rest + 5)));
                bssid = strdup(b + 7);
                if (!ssid || !bssid)
                        return -ENOMEM;
                f.fact[NETID_SSID] = ssid;
                f.fact[NETID_BSSID] = bssid;
        } else if (*rest || by_address)
                return 0; /* unknown, or named by the gateway's address: no NetworkId is */
        else {
                f.fact[NETID_BEARER] = bearer_of ? bearer_of(ifname, userdata) : NULL;
                if (!f.fact[NETID_BEARER])
                        return 0;
                f.fact[NETID_INTERFACE] = ifname;
                f.fact[NETID_GATEWAY_MAC] = mac;
        }
        netid_compose(&f, id);
        return 0;
}

int portal_store_migrate(PortalStore *s,
                         const char *(*bearer_of)(const char *ifname, void *userdata),
                         void *userdata)
{
        int n = 0, r;

        for (size_t i = 0; s && i < s->n_entries; i++) {
                PortalEntry *e = &s->entries[i];
                char id[NETID_MAX];
                char *t;

                r = legacy_id(e->identity, bearer_of, userdata, id);
                if (r < 0)
                        return r;
                if (!id[0] || !field_ok(id) || portal_store_get(s, id))
                        continue;
                t = strdup(id);
                if (!t)
                        return -ENOMEM;
                free(e->identity);
                e->identity = t;
                n++;
        }
        if (n > 0 && s->path) {
                r = portal_store_save(s);
                if (r < 0)
                        return r;
        }
        return n;
}
