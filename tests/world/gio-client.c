/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small unmodified GLib program: its network monitor's type and answer, one line at start
 * and one per network-changed, until stdin closes (tests/world/test_gio.py). */
#include <gio/gio.h>
#include <stdio.h>

static void say(GNetworkMonitor *m, const char *event)
{
        static const char *const words[] = {"", "local", "limited", "portal", "full"};
        GNetworkConnectivity c = g_network_monitor_get_connectivity(m);

        printf("%s %s available=%d connectivity=%s metered=%d\n", event, G_OBJECT_TYPE_NAME(m),
               g_network_monitor_get_network_available(m), c >= 1 && c <= 4 ? words[c] : "?",
               g_network_monitor_get_network_metered(m));
        fflush(stdout);
}

static void on_changed(GNetworkMonitor *m, gboolean available, gpointer userdata)
{
        say(m, "changed");
}

static gboolean on_stdin(GIOChannel *ch, GIOCondition cond, gpointer loop)
{
        g_main_loop_quit(loop);
        return G_SOURCE_REMOVE;
}

int main(void)
{
        GMainLoop *loop = g_main_loop_new(NULL, FALSE);
        GNetworkMonitor *m = g_network_monitor_get_default();
        GIOChannel *in = g_io_channel_unix_new(0);

        say(m, "start");
        g_signal_connect(m, "network-changed", G_CALLBACK(on_changed), NULL);
        g_io_add_watch(in, G_IO_IN | G_IO_HUP, on_stdin, loop);
        g_main_loop_run(loop);
        g_io_channel_unref(in);
        g_main_loop_unref(loop);
        return 0;
}
