/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <malloc.h>
#include <stdarg.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-core.h"

static int on_trim(sd_event_source *s, void *userdata)
{
        (void)malloc_trim(0);
        return 0;
}

int core_trim_setup(Core *c)
{
        int r;

        /* Giving the heap's free pages back takes ~1 ms after a round with TLS: when nothing
         * else is pending, never ahead of a verdict, an answer or a carrier change. */
        r = sd_event_add_defer(c->event, &c->trim_source, on_trim, c);
        if (r < 0)
                return r;
        (void)sd_event_source_set_enabled(c->trim_source, SD_EVENT_OFF);
        (void)sd_event_source_set_priority(c->trim_source, SD_EVENT_PRIORITY_IDLE);
        (void)sd_event_source_set_description(c->trim_source, "trim");
        return 0;
}

void core_schedule_trim(Core *c)
{
        if (c->trim_source)
                (void)sd_event_source_set_enabled(c->trim_source, SD_EVENT_ONESHOT);
}

void core_emit_manager_changed(Core *c, const char *first, ...)
{
        const char *names[8];
        size_t n = 0;
        va_list ap;
        int r;

        if (!c->bus)
                return;
        va_start(ap, first);
        for (const char *p = first; p && n < ELEMENTSOF(names) - 1; p = va_arg(ap, const char *))
                names[n++] = p;
        va_end(ap);
        names[n] = NULL;
        r = sd_bus_emit_properties_changed_strv(c->bus, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                                                (char **)names);
        if (r < 0)
                log_warning_errno(r, "Failed to emit PropertiesChanged: %m");
}
