/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "roam-bus.h"
#include "roam-client-bus.h"
#include "roam-log.h"
#include "roam-plain.h"
#include "roam-status.h"
#include "roam-tui.h"
#include "roam-util.h"

/* Exit statuses, documented in --help. */
enum {
        EXIT_STATUS_SUCCESS = 0,
        EXIT_STATUS_FAILURE = 1,
        EXIT_STATUS_USAGE = 2,
        EXIT_STATUS_NOT_RUNNING = 3,
};

typedef int (*VerbFn)(void);

typedef struct Verb {
        const char *name;
        unsigned max_args; /* after the verb's name */
        VerbFn run;
} Verb;

static bool arg_json = false;
static bool arg_plain = false;
static const char *arg_theme = NULL;
static const Verb *arg_verb = NULL;

/* No command: the full-screen TUI on a terminal, `status` for scripts and pipes. */
static int verb_default(void)
{
        if (arg_plain)
                return plain_run();
        if (!arg_json && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
                return tui_run(&(TuiOptions){.theme = arg_theme});
        return roam_status_run(arg_json);
}

static int verb_status(void)
{
        return roam_status_run(arg_json);
}

static const Verb verbs[] = {
    {"status", 0, verb_status},
};

static const Verb default_verb = {"", 0, verb_default};

static void help(void)
{
        printf("Usage: roam [OPTIONS...] [COMMAND]\n"
               "\n"
               "Show the network connections that roamd supervises. Without a command: the\n"
               "full-screen interface on a terminal, `status` otherwise.\n"
               "\n"
               "Commands:\n"
               "  status          Show the global state and every link\n"
               "\n"
               "Options:\n"
               "  -h --help       Show this help and exit\n"
               "     --version    Show the version and exit\n"
               "     --json       Print the status as JSON instead of text\n"
               "     --plain      Line mode for screen readers: the state, then one line\n"
               "                  per change; commands from stdin (type help)\n"
               "     --theme NAME Colours of the full-screen interface: default,\n"
               "                  high-contrast, light, monochrome, or a file path\n"
               "                  (also theme=NAME in ~/.config/roam/config; NO_COLOR\n"
               "                  is honoured)\n"
               "\n"
               "Exit status:\n"
               "  0  Success\n"
               "  1  Failure (system bus error, unexpected answer from roamd, ...)\n"
               "  2  Invalid command line\n"
               "  3  roamd is not running (no owner of %s on the system bus,\n"
               "     or no system bus)\n"
               "\n"
               "The system bus is the one named by DBUS_SYSTEM_BUS_ADDRESS when it is set.\n",
               ROAM_BUS_NAME);
}

static const Verb *find_verb(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

/* Returns 1 to go on with arg_verb, 0 to exit successfully, -EINVAL on a usage error (logged). */
static int parse_argv(int argc, char *argv[])
{
        enum {
                ARG_VERSION = 0x100,
                ARG_JSON,
                ARG_PLAIN,
                ARG_THEME,
        };
        static const struct option options[] = {
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, ARG_VERSION},
            {"json", no_argument, NULL, ARG_JSON},
            {"plain", no_argument, NULL, ARG_PLAIN},
            {"theme", required_argument, NULL, ARG_THEME},
            {},
        };
        unsigned n_args;
        int c;

        opterr = 0; /* our own messages */
        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
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
                case ':':
                        log_error("option '%s' needs an argument. Try 'roam --help'.",
                                  argv[optind - 1]);
                        return -EINVAL;
                case '?':
                        if (optopt)
                                log_error("unknown option '-%c'. Try 'roam --help'.", optopt);
                        else
                                log_error("unknown option '%s'. Try 'roam --help'.",
                                          argv[optind - 1]);
                        return -EINVAL;
                }
        }

        if (arg_plain && arg_json) {
                log_error("--plain and --json do not go together. Try 'roam --help'.");
                return -EINVAL;
        }
        if (optind >= argc) {
                arg_verb = &default_verb;
                return 1;
        }
        if (arg_plain) {
                log_error("--plain takes no command. Try 'roam --help'.");
                return -EINVAL;
        }

        arg_verb = find_verb(argv[optind]);
        if (!arg_verb) {
                log_error("unknown command '%s'. Try 'roam --help'.", argv[optind]);
                return -EINVAL;
        }

        n_args = (unsigned)(argc - optind - 1);
        if (n_args > arg_verb->max_args) {
                log_error("'%s' takes no arguments, got '%s'. Try 'roam --help'.", arg_verb->name,
                          argv[optind + 1]);
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char *argv[])
{
        int r;

        log_set_ident("roam");

        r = parse_argv(argc, argv);
        if (r < 0)
                return EXIT_STATUS_USAGE;
        if (r == 0)
                return fflush(stdout) == 0 ? EXIT_STATUS_SUCCESS : EXIT_STATUS_FAILURE;

        r = arg_verb->run();

        if (fflush(stdout) != 0 || ferror(stdout)) {
                log_error_errno(errno ? errno : EIO, "Failed to write the output: %m");
                return EXIT_STATUS_FAILURE;
        }
        if (r == -ROAM_ERR_NOT_RUNNING)
                return EXIT_STATUS_NOT_RUNNING;
        return r < 0 ? EXIT_STATUS_FAILURE : EXIT_STATUS_SUCCESS;
}
