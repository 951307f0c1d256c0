/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <stdlib.h>

#include "roam-watch.h"

unsigned watch_list_add(WatchList *wl, void *callback, void *userdata, WatchDestroyFn destroy)
{
        if (!callback)
                return 0;
        if (wl->n == wl->allocated) {
                size_t a = wl->allocated ? wl->allocated * 2 : 4;
                WatchEntry *e = realloc(wl->entries, a * sizeof(WatchEntry));

                if (!e)
                        return 0;
                wl->entries = e;
                wl->allocated = a;
        }
        if (++wl->next_id == 0) /* 0 means "removed"; wrapping takes 4 billion adds */
                wl->next_id = 1;
        wl->entries[wl->n++] = (WatchEntry){wl->next_id, callback, userdata, destroy};
        return wl->next_id;
}

static void compact(WatchList *wl)
{
        size_t k = 0;

        for (size_t i = 0; i < wl->n; i++)
                if (wl->entries[i].id != 0)
                        wl->entries[k++] = wl->entries[i];
        wl->n = k;
        wl->stale = false;
}

bool watch_list_remove(WatchList *wl, unsigned id)
{
        for (size_t i = 0; id != 0 && i < wl->n; i++) {
                WatchEntry e = wl->entries[i];

                if (e.id != id)
                        continue;
                /* Marked first: a destroy function that removes watchers sees it gone. */
                wl->entries[i].id = 0;
                wl->stale = true;
                if (e.destroy)
                        e.destroy(e.userdata);
                if (wl->notifying == 0)
                        compact(wl);
                return true;
        }
        return false;
}

void watch_list_notify(WatchList *wl, WatchCallFn call, void *ctx)
{
        /* Only the watchers that exist now; entries may move (realloc by an add), so each is
         * looked up again by position, which removal never changes during a notification. */
        size_t n = wl->n;

        wl->notifying++;
        for (size_t i = 0; i < n; i++) {
                WatchEntry e = wl->entries[i];

                if (e.id != 0)
                        call(e.callback, e.userdata, ctx);
        }
        assert(wl->notifying > 0);
        if (--wl->notifying == 0 && wl->stale)
                compact(wl);
}

size_t watch_list_count(const WatchList *wl)
{
        size_t c = 0;

        for (size_t i = 0; i < wl->n; i++)
                c += wl->entries[i].id != 0;
        return c;
}

void watch_list_clear(WatchList *wl)
{
        assert(wl->notifying == 0);
        for (size_t i = 0; i < wl->n; i++)
                if (wl->entries[i].id != 0 && wl->entries[i].destroy)
                        wl->entries[i].destroy(wl->entries[i].userdata);
        free(wl->entries);
        *wl = (WatchList){.next_id = wl->next_id};
}
