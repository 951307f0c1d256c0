/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roamd-core.h"

void core_schedule_trim(Core *c)
{
        if (c->trim_source)
                (void)sd_event_source_set_enabled(c->trim_source, SD_EVENT_ONESHOT);
}
