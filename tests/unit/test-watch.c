/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-macro.h"
#include "roam-watch.h"
#include "test.h"

typedef void (*TestWatchFn)(int event, void *userdata);

static void dispatch(void *callback, void *userdata, void *ctx)
{
        ((TestWatchFn)callback)(*(int *)ctx, userdata);
}

static void notify(WatchList *wl, int event)
{
        watch_list_notify(wl, dispatch, &event);
}

typedef struct Watcher {
        WatchList *wl;
        unsigned id;
        int calls, last;
        unsigned remove_id; /* removes this watcher (maybe itself) when called */
        bool add_one;       /* adds a new watcher when called */
        int destroyed;
} Watcher;

static Watcher *added_watcher;

static void on_event(int event, void *userdata)
{
        Watcher *w = userdata;

        w->calls++;
        w->last = event;
        if (w->remove_id) {
                unsigned id = w->remove_id;
                w->remove_id = 0;
                ASSERT_TRUE(watch_list_remove(w->wl, id));
        }
        if (w->add_one) {
                w->add_one = false;
                added_watcher->id = watch_list_add(w->wl, on_event, added_watcher, NULL);
                ASSERT_TRUE(added_watcher->id > 0);
        }
        /* Nested notification: the inner one must not compact under the outer loop. */
        if (event == 1)
                notify(w->wl, 2);
}

static void on_destroy(void *userdata)
{
        ((Watcher *)userdata)->destroyed++;
}

TEST(watch_order_and_remove)
{
        WatchList wl = {};
        Watcher a = {.wl = &wl}, b = {.wl = &wl};

        a.id = watch_list_add(&wl, on_event, &a, on_destroy);
        b.id = watch_list_add(&wl, on_event, &b, on_destroy);
        ASSERT_TRUE(a.id > 0 && b.id > 0 && a.id != b.id);
        notify(&wl, 7);
        ASSERT_EQ(a.calls, 1);
        ASSERT_EQ(b.last, 7);
        ASSERT_TRUE(watch_list_remove(&wl, a.id));
        ASSERT_EQ(a.destroyed, 1);
        ASSERT_TRUE(!watch_list_remove(&wl, a.id));
        ASSERT_TRUE(!watch_list_remove(&wl, 0));
        notify(&wl, 8);
        ASSERT_EQ(a.calls, 1);
        ASSERT_EQ(b.calls, 2);
        watch_list_clear(&wl);
        ASSERT_EQ(b.destroyed, 1);
        ASSERT_EQ(watch_list_count(&wl), 0);
}

TEST(watch_remove_self_during_notify)
{
        WatchList wl = {};
        Watcher a = {.wl = &wl}, b = {.wl = &wl}, c = {.wl = &wl};

        a.id = watch_list_add(&wl, on_event, &a, on_destroy);
        b.id = watch_list_add(&wl, on_event, &b, on_destroy);
        c.id = watch_list_add(&wl, on_event, &c, on_destroy);
        b.remove_id = b.id;
        notify(&wl, 5);
        ASSERT_EQ(a.calls, 1);
        ASSERT_EQ(b.calls, 1);
        ASSERT_EQ(b.destroyed, 1);
        ASSERT_EQ(c.calls, 1); /* the one after the removed one is still told */
        ASSERT_EQ(watch_list_count(&wl), 2);
        notify(&wl, 6);
        ASSERT_EQ(b.calls, 1);
        ASSERT_EQ(c.last, 6);
        watch_list_clear(&wl);
}

TEST(watch_remove_other_during_notify)
{
        WatchList wl = {};
        Watcher a = {.wl = &wl}, b = {.wl = &wl}, c = {.wl = &wl};

        a.id = watch_list_add(&wl, on_event, &a, NULL);
        b.id = watch_list_add(&wl, on_event, &b, NULL);
        c.id = watch_list_add(&wl, on_event, &c, NULL);
        a.remove_id = c.id; /* a later one: never called */
        b.remove_id = a.id; /* an earlier one */
        notify(&wl, 3);
        ASSERT_EQ(a.calls, 1);
        ASSERT_EQ(b.calls, 1);
        ASSERT_EQ(c.calls, 0);
        ASSERT_EQ(watch_list_count(&wl), 1);
        notify(&wl, 4);
        ASSERT_EQ(a.calls, 1);
        ASSERT_EQ(b.calls, 2);
        watch_list_clear(&wl);
}

TEST(watch_nested_and_add_during_notify)
{
        WatchList wl = {};
        Watcher a = {.wl = &wl}, b = {.wl = &wl}, n = {.wl = &wl};

        added_watcher = &n;
        a.id = watch_list_add(&wl, on_event, &a, NULL);
        b.id = watch_list_add(&wl, on_event, &b, NULL);
        a.add_one = true;
        b.remove_id = b.id;
        /* Event 1: a adds n and notifies 2 from inside (a, b removes itself, n: added before
         * that notification began); the outer loop then skips b and never reaches n. */
        notify(&wl, 1);
        ASSERT_EQ(a.calls, 2);
        ASSERT_EQ(b.calls, 1);
        ASSERT_EQ(n.calls, 1);
        ASSERT_EQ(watch_list_count(&wl), 2);
        notify(&wl, 9);
        ASSERT_EQ(a.calls, 3);
        ASSERT_EQ(n.calls, 2);
        ASSERT_EQ(n.last, 9);
        watch_list_clear(&wl);
}
