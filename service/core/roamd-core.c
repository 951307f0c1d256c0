/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-core.h"

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
