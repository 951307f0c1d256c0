/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>

#include "roam-log.h"
#include "roamd-xml.h"

/* libxml2 (and with it ICU and libstdc++) is loaded when the first page that carries a
 * WISPr document arrives, not when roamd starts: most networks never send one, and linked
 * in, the three libraries' relocated data and libstdc++'s exception pool are ~0.25 MB of
 * roamd's resident memory on every machine (docs/connectivity.md, "What a round keeps"). */
#define LIBXML2_SONAME "libxml2.so.2"

static XmlApi api;
static int load_result = 1; /* 1: not tried yet */

static int load(void)
{
        void *h = dlopen(LIBXML2_SONAME, RTLD_NOW | RTLD_LOCAL);
        struct {
                const char *name;
                void **fn;
        } syms[] = {
            {"xmlReadMemory", (void **)&api.read_memory},
            {"htmlReadMemory", (void **)&api.html_read_memory},
            {"xmlFreeDoc", (void **)&api.free_doc},
            {"xmlDocGetRootElement", (void **)&api.doc_get_root_element},
            {"xmlSetGenericErrorFunc", (void **)&api.set_generic_error_func},
        };

        if (!h)
                return log_error_errno(ELIBACC, "Cannot load %s for WISPr: %s", LIBXML2_SONAME,
                                       dlerror());
        for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
                *syms[i].fn = dlsym(h, syms[i].name);
                if (!*syms[i].fn) {
                        api = (XmlApi){};
                        dlclose(h);
                        return log_error_errno(ELIBACC, "%s lacks %s: cannot read WISPr",
                                               LIBXML2_SONAME, syms[i].name);
                }
        }
        /* The handle stays open for roamd's lifetime: the documents' memory is libxml2's. */
        return 0;
}

int xml_api_get(const XmlApi **ret)
{
        if (load_result > 0)
                load_result = load();
        if (load_result < 0)
                return load_result;
        *ret = &api;
        return 0;
}
