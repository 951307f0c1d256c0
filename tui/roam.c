/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "roam-app.h"
#include "roam-apps-cli.h"
#include "roam-bt-cli.h"
#include "roam-bus.h"
#include "roam-cli.h"
#include "roam-client-bus.h"
#include "roam-firewall-cli.h"
#include "roam-log.h"
#include "roam-output.h"
#include "roam-p2p-cli.h"
#include "roam-plain.h"
#include "roam-screens.h"
#include "roam-stats-cli.h"
#include "roam-time-cli.h"
#include "roam-portal-cli.h"
#include "roam-status.h"
#include "roam-tui.h"
#include "roam-util.h"
#include "roam-wake-cli.h"
#include "roam-wifi-cli.h"
#include "roam-app-id.h"

/* Exit statuses, documented in --help. */
enum {
        EXIT_STATUS_SUCCESS = 0,
        EXIT_STATUS_FAILURE = 1,
        EXIT_STATUS_USAGE = 2,
        EXIT_STATUS_NOT_RUNNING = 3,
};

typedef int (*VerbFn)(char **args);
/* A verb's own check of its arguments (args, n of them) and options, before anything is
 * asked: a usage error is logged (usage_error()) and -EINVAL. */
typedef int (*VerbCheckFn)(char **args, unsigned n);

/* The options a command may take after its name (roam's own, --theme and the rest, go before
 * it): parse_argv() refuses any other with the option's sentence below. */
typedef enum VerbOption {
        VERB_OPT_JSON = 1 << 0,
        VERB_OPT_APP = 1 << 1,        /* --app */
        VERB_OPT_ONLINE_FOR = 1 << 2, /* --online-for */
        VERB_OPT_STATS = 1 << 3,      /* --user, --link, --since */
        VERB_OPT_WAIT = 1 << 4,       /* --timeout, --require-time */
        VERB_OPT_PIN_FILE = 1 << 5,   /* --pin-file */
} VerbOption;

/* How a command takes its words. */
typedef enum VerbFlags {
        VERB_IN_ORDER = 1 << 0,     /* options end at the first argument (a command follows) */
        VERB_RUNS_COMMAND = 1 << 1, /* its arguments are a command to run: --help there is the
                                     * command's, and the words are not roamd's to check */
        VERB_OWN_WORDS = 1 << 2,    /* its words are its own (a file, a browser): it checks
                                     * them itself */
} VerbFlags;

/* What a command is, as parse_argv() needs it: one row of verbs[] below, no command named in
 * the parser. */
typedef struct Verb {
        const char *name;
        unsigned max_args;  /* after the verb's name */
        VerbOption options; /* the options it takes */
        VerbFlags flags;
        VerbCheckFn check; /* NULL: nothing more to check */
        VerbFn run;
} Verb;

static bool arg_json = false;
static bool arg_plain = false;
static const char *arg_theme = NULL;
static bool arg_no_mouse = false;
static const char *arg_confirm_quit = NULL;
static const char *arg_app = NULL;
static const char *arg_online_for = NULL;
static uint64_t arg_online_for_usec = 0;
static RoamStatsQuery arg_stats = {};
static const char *arg_since = NULL;
static const char *arg_fw_app = NULL; /* --app of `roam firewall check` */
static const char *arg_timeout = NULL;
static uint64_t arg_timeout_usec = ROAM_WAIT_TIMEOUT_DEFAULT;
static bool arg_require_time = false;
static const char *arg_pin_file = NULL; /* `roam p2p connect|accept`'s PIN, never in argv */
static const Verb *arg_verb = NULL;
static char **arg_args = NULL; /* the verb's arguments, NULL-terminated */

static const Verb default_verb;

/* No command, on a terminal, without --plain or --json: the full-screen TUI. */
static bool runs_tui(void)
{
        return arg_verb == &default_verb && !arg_plain && !arg_json && isatty(STDIN_FILENO) &&
               isatty(STDOUT_FILENO);
}

/* The TUI's screens: the home screen first, the others' tabs in this order. */
static const ScreenVTable *const tui_screens[] = {
    &overview_screen_vtable,  &link_screen_vtable,     &apps_screen_vtable,
    &portal_screen_vtable,    &usage_screen_vtable,    &devices_screen_vtable,
    &bluetooth_screen_vtable, &firewall_screen_vtable, &time_screen_vtable,
    &wake_screen_vtable,      &wifi_screen_vtable,     &wifi_enroll_screen_vtable,
};

/* No command: the full-screen TUI on a terminal, `status` for scripts and pipes. */
static int verb_default(char **args)
{
        if (arg_plain)
                return plain_run();
        if (runs_tui())
                return tui_run(&(TuiOptions){
                    .theme = arg_theme,
                    .no_mouse = arg_no_mouse,
                    .screens = tui_screens,
                    .n_screens = ELEMENTSOF(tui_screens),
                    .help = &help_screen_vtable,
                    .quit_consequence = arg_confirm_quit,
                });
        return roam_status_run(arg_json);
}

static int verb_status(char **args)
{
        return roam_status_run(arg_json);
}

static int verb_apps(char **args)
{
        return roam_apps_run(arg_json);
}

/* roam app ID [set KEY=VALUE...|reset|online-for DURATION|release]; checked by parse_argv. */
static int verb_app(char **args)
{
        const char *id = args[0], *action = args[1];

        if (!action)
                return roam_app_show_run(id, arg_json);
        if (streq(action, "set"))
                return roam_app_set_run(id, args + 2);
        if (streq(action, "reset"))
                return roam_app_reset_run(id);
        if (streq(action, "online-for"))
                return roam_app_online_for_run(id, arg_online_for_usec);
        return roam_app_release_run(id);
}

static int verb_run(char **args)
{
        return roam_run_app(arg_app, arg_online_for_usec, args);
}

static int verb_wait_online(char **args)
{
        return roam_wait_online_run(arg_app, arg_timeout_usec, arg_require_time);
}

static int verb_when_online(char **args)
{
        return roam_when_online_run(arg_app, arg_timeout_usec, arg_require_time, args);
}

static int verb_portal(char **args)
{
        return roam_portal_run(args, arg_json);
}

static int verb_stats(char **args)
{
        return roam_stats_run(&arg_stats, arg_json);
}

static int verb_time(char **args)
{
        return roam_time_run(args, arg_json);
}

static int verb_p2p(char **args)
{
        return roam_p2p_run(args, arg_json, arg_pin_file);
}

static int verb_bt(char **args)
{
        return roam_bt_run(args, arg_json);
}

static int verb_nfc(char **args)
{
        return roam_nfc_run(args, arg_json);
}

static int verb_network(char **args)
{
        return roam_network_run(args, arg_json);
}

static int verb_wifi(char **args)
{
        return roam_wifi_run(args, arg_json);
}

static int verb_firewall(char **args)
{
        return roam_firewall_run(args, arg_fw_app, arg_json);
}

static void help(void);

/* roam help [COMMAND]: checked by parse_argv. */
static int verb_help(char **args)
{
        if (!args[0]) {
                help();
                return 0;
        }
        return roam_command_help(args[0]);
}

static void help(void)
{
        printf("Usage: roam [OPTIONS...] [COMMAND]\n"
               "\n"
               "Show the network connections that roamd supervises, and the apps it governs.\n"
               "Without a command: the full-screen interface on a terminal, `status`\n"
               "otherwise.\n"
               "\n"
               "Commands:\n"
               "  status             Show the global state and every link\n"
               "  apps               Show every app: access, bearers, VPN, handover, route,\n"
               "                     state (`default` and `system` last)\n"
               "  app ID             Show one app\n"
               "  app ID set KEY=VALUE...\n"
               "                     Change the app's policy, all settings at once. Keys:\n"
               "                     access=allow|lan|deny, bearers=all|LIST (comma\n"
               "                     separated: ethernet, wifi, cellular, bluetooth,\n"
               "                     wifi-direct, vpn, lowpan), vpn=any|required|forbidden,\n"
               "                     handover=sticky|move, and the ordered wake-up's\n"
               "                     wake=no|0-100 (higher first), wake-slice=DURATION (a\n"
               "                     turn's longest: 10s, 2min), wake-bytes=SIZE (what a\n"
               "                     turn fetches: 500K, 2M)\n"
               "  app ID reset       Forget the changes: the configured policy applies again\n"
               "  app ID online-for DURATION\n"
               "                     Let the app use the network for a while even if its\n"
               "                     access denies it: 90s, 10m, 1h, 1h30m (at most 24h),\n"
               "                     or until-released\n"
               "  app ID release     End that grant now\n"
               "  run --app ID [--online-for DURATION] [--] CMD [ARGS...]\n"
               "                     Run CMD inside the app: roamd moves roam into the app\n"
               "                     first, so CMD's first packet follows the app's policy.\n"
               "                     CMD does not run when roamd refuses.\n"
               "  wait-online [--app ID] [--timeout S] [--require-time]\n"
               "                     Wait until the internet is reached (validated), with\n"
               "                     --require-time also the time verified (settled), with\n"
               "                     --app until that app's turn in the ordered wake-up\n"
               "                     came; exits 0\n"
               "                     online, 1 not in time (default 30 s; 0: no limit), 2 error\n"
               "  when-online --app ID [--timeout S] [--require-time] [--] CMD [ARGS...]\n"
               "                     Run CMD when the app's turn comes, then tell roamd the\n"
               "                     app is done (run it as a process of the app)\n"
               "  stats [--app ID] [--user UID|all] [--link NAME] [--since 7d|@EPOCH]\n"
               "                     Show the traffic counted per app, user and link, home\n"
               "                     and roaming (your own; others' needs authorization)\n"
               "  portal [LINK]      Show captive portals: state, login offered, time left\n"
               "  portal approve [--always] [LINK]\n"
               "                     Let roam log in (--always: on this network from now on)\n"
               "  portal login --user NAME --password-file FILE [--no-save] [--always] [LINK]\n"
               "                     Log in with WISPr (FILE - : standard input); the login\n"
               "                     is saved for this network once it works\n"
               "  portal browse [--browser CMD] [LINK]\n"
               "                     Approve and log in with a text browser (lynx, w3m,\n"
               "                     $BROWSER) that reaches the captive link only\n"
               "  portal extend [--browser CMD] [LINK]\n"
               "                     Extend the session when the network offers it (RFC 8908)\n"
               "  portal decline|logoff|forget [LINK]\n"
               "                     Send nothing; log off; forget the saved login\n"
               "  time               The time as the sources agree on it: state, bound,\n"
               "                     gate, clock, zone, each source's interval, verdict and\n"
               "                     age\n"
               "  time zone [ZONE]   The time zone and the zones to choose from; choose one\n"
               "  time set DATE [ERROR]\n"
               "                     Give roamd the time by hand: 'YYYY-MM-DD HH:MM[:SS]'\n"
               "                     (UTC) or @EPOCH, ± ERROR (30s, 5m; 1m by default)\n"
               "  p2p find|peers|connect|accept|reject|disconnect ...\n"
               "                     WiFi Direct devices (roam p2p --help)\n"
               "  bt [ACTION ...]    Bluetooth: adapters, devices, the pairing question;\n"
               "                     power|discoverable|pairable on|off [ADAPTER],\n"
               "                     scan [SECONDS] [ADAPTER], pair|trust|untrust|connect|\n"
               "                     disconnect|remove|join|leave ADDRESS,\n"
               "                     answer ID yes|no (a PIN or passkey: stdin)\n"
               "  nfc import FILE|- [--yes]\n"
               "                     What an NFC tag (NDEF, raw or hex) holds; --yes pairs\n"
               "                     its Bluetooth device, adds its WiFi network\n"
               "  nfc accept|reject [ID]\n"
               "                     Use the tag neard read (it waits for this), or not\n"
               "  network            Each link's network, its location (home, work, public,\n"
               "                     untrusted, or one of networks.d) and why\n"
               "  network trust home|work|public|untrusted [LINK]\n"
               "                     Remember the network on LINK (default: the link with\n"
               "                     the default route) as that location; its firewall\n"
               "                     rules apply at once\n"
               "  firewall           The firewall rules in force per link and location,\n"
               "                     with packet and byte counters\n"
               "  firewall check tcp|udp PORT [--app ID] [LINK]\n"
               "                     Would a packet to PORT be let in (to a socket of app\n"
               "                     ID), and by which rule?\n"
               "  wifi [LINK]        Wi-Fi networks through the link's owner: signal,\n"
               "                     security, known; scan, join SSID, forget SSID,\n"
               "                     autoconnect SSID on|off, join-uri URI|-, share SSID\n"
               "                     (QR code), enroll (DPP); roam wifi --help\n"
               "  help [COMMAND]     This help, or one command's (also: roam COMMAND --help)\n"
               "\n"
               "Changes are polkit's to allow (it may ask for a password; where polkit is not\n"
               "running: root and group netdev).\n"
               "\n"
               "Options:\n"
               "  -h --help          Show this help and exit; after a command: that\n"
               "                     command's help\n"
               "     --version       Show the version and exit\n"
               "     --json          Print status, apps or one app (network, firewall, ...)\n"
               "                     as JSON instead of text\n"
               "     --plain         Line mode for screen readers: the state, then one line\n"
               "                     per change; commands from stdin (type help)\n"
               "     --theme NAME    Colours of the full-screen interface: default,\n"
               "                     high-contrast, light, monochrome, or a file path\n"
               "                     (also theme=NAME in ~/.config/roam/config; NO_COLOR\n"
               "                     is honoured)\n"
               "     --no-mouse      Leave the mouse to the terminal (to select text); by\n"
               "                     default a click selects, the wheel scrolls and a\n"
               "                     click on a key hint runs it\n"
               "     --confirm-quit=TEXT\n"
               "                     q in the full-screen interface asks first, saying\n"
               "                     TEXT (what quitting ends too; roam-demo uses it)\n"
               "     --app ID        With run: the app to run CMD in; with firewall check:\n"
               "                     the app whose socket the packet is for\n"
               "     --online-for DURATION\n"
               "                     With run: the app may use the network that long (as\n"
               "                     above)\n"
               "     --pin-file FILE With p2p connect PEER pin and p2p accept: the PIN the\n"
               "                     device shows, read from FILE (- or none: stdin)\n"
               "\n"
               "Exit status:\n"
               "  0  Success\n"
               "  1  Failure (roamd refused: no such app, not allowed, invalid setting; system\n"
               "     bus error, unexpected answer from roamd, ...)\n"
               "  2  Invalid command line\n"
               "  3  roamd is not running (no owner of %s on the system bus,\n"
               "     or no system bus)\n"
               "  127  run, when-online: CMD could not be started (otherwise they exit as\n"
               "     CMD does)\n"
               "  4  wifi join, join-uri: the passphrase or password was refused\n"
               "  5  wifi: no such network (join: none answered; forget, autoconnect,\n"
               "     share: not a known one)\n"
               "  6  wifi: not allowed, or the owner refused the join\n"
               "wait-online exits as nm-online: 0 online, 1 not in time, 2 error.\n"
               "\n"
               "The system bus is the one named by DBUS_SYSTEM_BUS_ADDRESS when it is set.\n",
               ROAM_BUS_NAME);
}

static const Verb *find_verb(const char *name);

/* Points to the command's own help once the command is known. */
static int usage_error(const char *fmt, ...) _printf_(1, 2);
static int usage_error(const char *fmt, ...)
{
        char buf[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        return roam_usage_error(arg_verb && *arg_verb->name ? arg_verb->name : NULL, "%s", buf);
}

/* Parses the options in argv (argv[0] is not looked at). in_order: stop at the first argument
 * that is not an option; otherwise options may follow arguments (GNU getopt moves the
 * arguments to the end). Returns 1 to go on with argv[optind...], 0 to exit successfully,
 * -EINVAL on a usage error (logged). */
static int parse_options(int argc, char *argv[], bool in_order)
{
        enum {
                ARG_VERSION = 0x100,
                ARG_JSON,
                ARG_PLAIN,
                ARG_THEME,
                ARG_APP,
                ARG_ONLINE_FOR,
                ARG_NO_MOUSE,
                ARG_CONFIRM_QUIT,
                ARG_USER,
                ARG_LINK,
                ARG_SINCE,
                ARG_TIMEOUT,
                ARG_REQUIRE_TIME,
                ARG_PIN_FILE,
        };
        static const struct option options[] = {
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, ARG_VERSION},
            {"json", no_argument, NULL, ARG_JSON},
            {"plain", no_argument, NULL, ARG_PLAIN},
            {"theme", required_argument, NULL, ARG_THEME},
            {"app", required_argument, NULL, ARG_APP},
            {"online-for", required_argument, NULL, ARG_ONLINE_FOR},
            {"no-mouse", no_argument, NULL, ARG_NO_MOUSE},
            {"confirm-quit", required_argument, NULL, ARG_CONFIRM_QUIT},
            {"user", required_argument, NULL, ARG_USER},
            {"link", required_argument, NULL, ARG_LINK},
            {"since", required_argument, NULL, ARG_SINCE},
            {"timeout", required_argument, NULL, ARG_TIMEOUT},
            {"require-time", no_argument, NULL, ARG_REQUIRE_TIME},
            {"pin-file", required_argument, NULL, ARG_PIN_FILE},
            {},
        };
        int c;

        opterr = 0; /* our own messages */
        optind = 0; /* from the start, with getopt's state reset */
        while ((c = getopt_long(argc, argv, in_order ? "+:h" : ":h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        /* before a command: roam's; after it: the command's */
                        if (arg_verb && *arg_verb->name)
                                (void)roam_command_help(arg_verb->name);
                        else
                                help();
                        return 0;
                case ARG_VERSION:
                        printf("roam %s\n", ROAM_VERSION);
                        return 0;
                case ARG_JSON:
                        arg_json = true;
                        break;
                case ARG_PLAIN:
                        arg_plain = true;
                        break;
                case ARG_THEME:
                        arg_theme = optarg;
                        break;
                case ARG_APP:
                        arg_app = optarg;
                        break;
                case ARG_ONLINE_FOR:
                        arg_online_for = optarg;
                        break;
                case ARG_NO_MOUSE:
                        arg_no_mouse = true;
                        break;
                case ARG_CONFIRM_QUIT:
                        if (!*optarg)
                                return usage_error("--confirm-quit needs a sentence.");
                        arg_confirm_quit = optarg;
                        break;
                case ARG_USER:
                        arg_stats.user = optarg;
                        break;
                case ARG_LINK:
                        arg_stats.link = optarg;
                        break;
                case ARG_SINCE:
                        arg_since = optarg;
                        break;
                case ARG_TIMEOUT:
                        arg_timeout = optarg;
                        break;
                case ARG_REQUIRE_TIME:
                        arg_require_time = true;
                        break;
                case ARG_PIN_FILE:
                        arg_pin_file = optarg;
                        break;
                case ':':
                        return usage_error("option '%s' needs an argument.", argv[optind - 1]);
                case '?':
                        if (optopt >= '0' && optopt <= '9') {
                                /* "online-for -5m": a negative number, not an option */
                                const char *word = NULL;

                                for (int i = 1; i < argc && !word; i++)
                                        if (argv[i][0] == '-' && argv[i][1] == optopt)
                                                word = argv[i];
                                return usage_error("'%s' is negative: a negative duration, "
                                                   "timeout or count is not allowed.",
                                                   word ?: "-");
                        }
                        if (optopt)
                                return usage_error("unknown option '-%c'.", optopt);
                        return usage_error("unknown option '%s'.", argv[optind - 1]);
                }
        }
        return 1;
}

static int parse_duration(const char *s, uint64_t *ret)
{
        char why[256];
        int r;

        r = roam_app_parse_duration(s, ret);
        if (r < 0) {
                roam_app_duration_error(r, s, why, sizeof(why));
                return usage_error("%s.", why);
        }
        return 0;
}

/* The arguments of `roam app`: ID [ACTION [ARGS...]]. */
static int check_app_args(char **args, unsigned n)
{
        const char *action = args[1];
        char why[256];

        if (!action)
                return 0;
        if (arg_json)
                return usage_error("--json goes with 'roam app ID' alone.");
        if (streq(action, "set")) {
                if (n < 3)
                        return usage_error("'roam app %s set' needs KEY=VALUE (keys: %s).", args[0],
                                           roam_app_settings_keys());
                if (roam_app_check_settings(args + 2, why, sizeof(why)) < 0)
                        return usage_error("%s.", why);
                return 0;
        }
        if (streq(action, "online-for")) {
                if (n != 3)
                        return usage_error("'roam app %s online-for' needs one DURATION, like "
                                           "10m or until-released.",
                                           args[0]);
                return parse_duration(args[2], &arg_online_for_usec);
        }
        if (streq(action, "reset") || streq(action, "release")) {
                if (n != 2)
                        return usage_error("'roam app %s %s' takes no arguments, got '%s'.",
                                           args[0], action, args[2]);
                return 0;
        }
        return usage_error("unknown action '%s' for 'roam app': set, reset, online-for or "
                           "release.",
                           action);
}

/* What goes to roamd is text (roam_args_check_utf8): every option's value and the command's
 * words, but not a command to run (run, when-online) nor a verb's own words (nfc import FILE;
 * portal checks its own words, its --password-file and --browser are local). */
static int check_utf8(char *const *args, unsigned n)
{
        const char *cmd = *arg_verb->name ? arg_verb->name : NULL;
        char *const values[] = {
            (char *)arg_theme,        (char *)arg_app,        (char *)arg_online_for,
            (char *)arg_confirm_quit, (char *)arg_stats.user, (char *)arg_stats.link,
            (char *)arg_since,        (char *)arg_timeout,
        };
        int r;

        r = roam_args_check_utf8(cmd, values, ELEMENTSOF(values));
        if (r < 0 || (arg_verb->flags & (VERB_RUNS_COMMAND | VERB_OWN_WORDS)))
                return r;
        return roam_args_check_utf8(cmd, args, n);
}

/* The verbs' own checks. */

static int check_stats(char **args, unsigned n)
{
        /* --app filters the usage; --since is a duration back or @EPOCH */
        arg_stats.app = arg_app;
        arg_app = NULL;
        if (arg_since &&
            roam_stats_parse_since(arg_since, (uint64_t)time(NULL), &arg_stats.since) < 0)
                return usage_error("--since takes a duration back from now (30m, 2h, 7d, 4w) or "
                                   "@SECONDS since the epoch, got '%s'.",
                                   arg_since);
        return 0;
}

static int check_firewall(char **args, unsigned n)
{
        arg_fw_app = arg_app; /* the app a checked packet is for */
        arg_app = NULL;
        return 0;
}

static int check_wait(char **args, unsigned n)
{
        if (arg_timeout && roam_wait_parse_timeout(arg_timeout, &arg_timeout_usec) < 0)
                return usage_error("--timeout takes seconds (30, 30s, 2m, 500ms; 0: no limit), "
                                   "got '%s'.",
                                   arg_timeout);
        return 0;
}

static int check_when_online(char **args, unsigned n)
{
        int r = check_wait(args, n);

        if (r < 0)
                return r;
        if (!arg_app)
                return usage_error("'when-online' needs --app ID.");
        if (n < 1)
                return usage_error("'when-online' needs a command to run: roam when-online --app "
                                   "%s -- CMD [ARGS...].",
                                   arg_app);
        return 0;
}

static int check_run(char **args, unsigned n)
{
        if (!arg_app)
                return usage_error("'run' needs --app ID.");
        if (n < 1)
                return usage_error("'run' needs a command to run: roam run --app %s -- CMD "
                                   "[ARGS...].",
                                   arg_app);
        if (arg_online_for && parse_duration(arg_online_for, &arg_online_for_usec) < 0)
                return -EINVAL;
        return 0;
}

static int check_app(char **args, unsigned n)
{
        if (n < 1)
                return usage_error("'app' needs an app ID: roam app ID [set KEY=VALUE...|reset|"
                                   "online-for DURATION|release].");
        /* roamd's own rule (shared/roam-app-id.c), before asking it anything */
        if (!app_policy_id_is_valid(args[0]))
                return usage_error("Invalid app ID '%s': 1-255 characters of A-Z a-z 0-9 . _ -, "
                                   "starting with a letter or digit, no '..'.",
                                   args[0]);
        return check_app_args(args, n);
}

static int check_time(char **args, unsigned n)
{
        char why[256];

        if (n > 0 && roam_time_check_args(args, n, arg_json, why, sizeof(why)) < 0)
                return usage_error("%s", why);
        return 0;
}

static int check_help(char **args, unsigned n)
{
        if (n == 1 && !find_verb(args[0]))
                return roam_usage_error(NULL, "no command '%s' to help with.", args[0]);
        return 0;
}

/* Every command, one a line: its arguments, options and checks. */
#define J VERB_OPT_JSON
/* clang-format off */
static const Verb verbs[] = {
    /* name          max_args  options                          flags                          check              run */
    {"status",      0,        J,                                0,                             NULL,              verb_status},
    {"apps",        0,        J,                                0,                             NULL,              verb_apps},
    {"app",         UINT_MAX, J,                                0,                             check_app,         verb_app},
    {"run",         UINT_MAX, VERB_OPT_APP|VERB_OPT_ONLINE_FOR, VERB_IN_ORDER|VERB_RUNS_COMMAND, check_run,       verb_run},
    /* The ordered wake-up: roam-wake-cli.c */
    {"wait-online", 0,        VERB_OPT_APP|VERB_OPT_WAIT,       0,                             check_wait,        verb_wait_online},
    {"when-online", UINT_MAX, VERB_OPT_APP|VERB_OPT_WAIT,       VERB_IN_ORDER|VERB_RUNS_COMMAND, check_when_online, verb_when_online},
    {"stats",       0,        J|VERB_OPT_APP|VERB_OPT_STATS,    0,                             check_stats,       verb_stats},
    {"portal",      UINT_MAX, J,                                VERB_IN_ORDER|VERB_OWN_WORDS,  NULL,              verb_portal},
    {"time",        3,        J,                                0,                             check_time,        verb_time},
    {"p2p",         UINT_MAX, J|VERB_OPT_PIN_FILE,              0,                             NULL,              verb_p2p},
    /* Bluetooth and NFC tags: roam-bt-cli.c */
    {"bt",          UINT_MAX, J,                                VERB_IN_ORDER,                 NULL,              verb_bt},
    {"nfc",         UINT_MAX, J,                                VERB_IN_ORDER|VERB_OWN_WORDS,  NULL,              verb_nfc},
    /* Locations and the personal firewall: roam-firewall-cli.c */
    {"network",     3,        J,                                0,                             NULL,              verb_network},
    {"firewall",    4,        J|VERB_OPT_APP,                   0,                             check_firewall,    verb_firewall},
    /* Wi-Fi through the link's owner: roam-wifi-cli.c (its options and files are its own) */
    {"wifi",        UINT_MAX, J,                                VERB_IN_ORDER|VERB_OWN_WORDS,  NULL,              verb_wifi},
    {"help",        1,        0,                                0,                             check_help,        verb_help},
};
/* clang-format on */

/* No command: the TUI, plain mode or status. */
static const Verb default_verb = {"", 0, J, 0, NULL, verb_default};
#undef J

static const Verb *find_verb(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

/* An option given to a command that does not take it: its sentence. */
static int check_verb_options(void)
{
        VerbOption takes = arg_verb->options;

        if (arg_json && !(takes & VERB_OPT_JSON))
                return usage_error("'%s' prints no JSON.", arg_verb->name);
        if (arg_pin_file && !(takes & VERB_OPT_PIN_FILE))
                return usage_error("--pin-file goes with 'roam p2p connect PEER pin' and 'roam "
                                   "p2p accept PEER'.");
        if ((arg_stats.user || arg_stats.link || arg_since) && !(takes & VERB_OPT_STATS))
                return usage_error("--user, --link and --since go with 'roam stats'.");
        if ((arg_timeout || arg_require_time) && !(takes & VERB_OPT_WAIT))
                return usage_error("--timeout and --require-time go with 'roam wait-online' and "
                                   "'roam when-online'.");
        if (arg_online_for && !(takes & VERB_OPT_ONLINE_FOR) && (takes & VERB_OPT_APP))
                return usage_error("--online-for goes with 'roam run'.");
        if ((arg_app || arg_online_for) && !(takes & (VERB_OPT_APP | VERB_OPT_ONLINE_FOR)))
                return usage_error("--app and --online-for go with 'roam run'.");
        return 0;
}

/* Returns 1 to go on with arg_verb, 0 to exit successfully, -EINVAL on a usage error (logged). */
static int parse_argv(int argc, char *argv[])
{
        char **sub;
        unsigned n_args;
        int r, sub_argc;

        /* The options before the command, then the command's own (after its name). */
        r = parse_options(argc, argv, true);
        if (r <= 0)
                return r;

        if (arg_plain && arg_json)
                return usage_error("--plain and --json do not go together.");
        if (optind >= argc) {
                arg_verb = &default_verb;
                sub = argv + argc;
                n_args = 0;
        } else {
                if (arg_plain)
                        return usage_error("--plain takes no command.");
                arg_verb = find_verb(argv[optind]);
                if (!arg_verb)
                        return usage_error("unknown command '%s'.", argv[optind]);
                /* --help anywhere in a command's own words (`portal approve --help`, `nfc
                 * import --help`) is a question, not an argument; run's CMD has its own
                 * options, so there only before CMD (getopt stops there). */
                if (!(arg_verb->flags & VERB_RUNS_COMMAND) &&
                    roam_args_want_help(argv + optind + 1))
                        return roam_command_help(arg_verb->name) < 0 ? -EINVAL : 0;

                sub = argv + optind;
                sub_argc = argc - optind;
                r = parse_options(sub_argc, sub, arg_verb->flags & VERB_IN_ORDER);
                if (r <= 0)
                        return r;
                if (arg_plain)
                        return usage_error("--plain takes no command.");
                n_args = (unsigned)(sub_argc - optind);
                sub += optind;
        }
        arg_args = sub;
        if (check_utf8(sub, n_args) < 0)
                return -EINVAL;

        r = check_verb_options();
        if (r < 0)
                return r;
        if (n_args > arg_verb->max_args) {
                if (arg_verb->max_args == 0)
                        return usage_error("'%s' takes no arguments, got '%s'.",
                                           *arg_verb->name ? arg_verb->name : "roam", sub[0]);
                return usage_error("'%s' takes at most %u arguments.", arg_verb->name,
                                   arg_verb->max_args);
        }
        if (arg_verb->check && arg_verb->check(sub, n_args) < 0)
                return -EINVAL;
        return 1;
}

int main(int argc, char *argv[])
{
        int r;

        log_set_ident("roam");
        /* The character set only (UTF-8 or not, for curses and for cleaning what we print):
         * numbers, JSON and times stay in the C locale's format. */
        (void)setlocale(LC_CTYPE, "");

        r = parse_argv(argc, argv);
        if (r < 0)
                return EXIT_STATUS_USAGE;
        if (r == 0)
                return fflush(stdout) == 0 ? EXIT_STATUS_SUCCESS : EXIT_STATUS_FAILURE;

        /* Every command prints names, reasons and events that came from the network: one
         * cleaner for all of them (the TUI cleans what it draws itself). */
        if (!runs_tui() && roam_output_clean_stdout() < 0)
                return EXIT_STATUS_FAILURE;
        r = arg_verb->run(arg_args);

        if (fflush(stdout) != 0 || ferror(stdout)) {
                log_error_errno(errno ? errno : EIO, "Failed to write the output: %m");
                return EXIT_STATUS_FAILURE;
        }
        if (r > 0) /* an exit status of its own: `roam run` could not start its command */
                return r;
        if (r == -ROAM_ERR_NOT_RUNNING)
                return EXIT_STATUS_NOT_RUNNING;
        if (r == -ROAM_ERR_USAGE) /* found by the command's own parser */
                return EXIT_STATUS_USAGE;
        return r < 0 ? EXIT_STATUS_FAILURE : EXIT_STATUS_SUCCESS;
}
