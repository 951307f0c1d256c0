/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roamd-config-check.h"
#include "roamd-fault.h"
#include "roamd-flush.h"
#include "roamd-manager.h"

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        log_info("Received %s, shutting down.", strsignal((int)si->ssi_signo));
        (void)sd_notify(false, "STOPPING=1");
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        (void)manager_reload(userdata, NULL); /* refused: logged with file:line */
        return 0;
}

/* SIGTERM and SIGINT stop the loop, SIGHUP reloads (the sources are the caller's). */
static int watch_signals(Manager *m, sd_event_source *ret[3])
{
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");
        if ((r = sd_event_add_signal(m->core.event, &ret[0], SIGTERM, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->core.event, &ret[1], SIGINT, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->core.event, &ret[2], SIGHUP, on_sighup, m)) < 0)
                return log_error_errno(r, "Failed to watch signals: %m");
        return 0;
}

static void signal_sources_free(sd_event_source *(*s)[3])
{
        for (size_t i = 0; i < 3; i++)
                sd_event_source_disable_unref((*s)[i]);
}

static void help(void)
{
        printf("Usage: roamd [OPTIONS]\n\n"
               "The roam connection manager service.\n\n"
               "  -c, --config=PATH   configuration file (default: %s)\n"
               "      --check-config  check the configuration and every file it names\n"
               "                      (apps.d, networks.d, firewall.d), report errors, exit\n"
               "      --reload        make the running roamd re-read its configuration and\n"
               "                      wait for its answer: exits 1 when it was refused\n"
               "      --flush-kernel-state  remove the nftables tables, ip rules and routes a\n"
               "                      stopped roamd leaves (its firewall), and exit\n"
               "  -h, --help          show this help\n"
               "      --version       show the version\n",
               ROAMD_CONFIG_DEFAULT);
        /* a test-only option: not in the help of a build without it (the packages) */
        if (fault_injection_built())
                printf("      --test-faults=FILE  make kernel operations named in FILE fail "
                       "(tests)\n");
        printf("\nSignals: SIGHUP reloads the configuration (a broken one is refused),\n"
               "SIGTERM and SIGINT stop the service.\n");
}

/* systemctl reload's ExecReload: a signal cannot say "refused", a bus call can. */
static int reload_running(void)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "roamd: cannot connect to the system bus: %s\n", strerror(-r));
                return 1;
        }
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "Reload", &error, NULL, NULL);
        if (r < 0) {
                fprintf(stderr, "roamd: reload refused: %s\n",
                        error.message ? error.message : strerror(-r));
                return 1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        enum { ARG_VERSION = 0x100, ARG_CHECK, ARG_RELOAD, ARG_FLUSH, ARG_TEST_FAULTS };
        static const struct option options[] = {
            {"config", required_argument, NULL, 'c'},
            {"check-config", no_argument, NULL, ARG_CHECK},
            {"reload", no_argument, NULL, ARG_RELOAD},
            {"flush-kernel-state", no_argument, NULL, ARG_FLUSH},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, ARG_VERSION},
            {"test-faults", required_argument, NULL, ARG_TEST_FAULTS},
            {},
        };
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(signal_sources_free) sd_event_source *signals[3] = {};
        const char *config = ROAMD_CONFIG_DEFAULT;
        bool explicit_config = false, check_only = false, reload = false, flush = false;
        int c, r;

        log_set_ident("roamd");
        while ((c = getopt_long(argc, argv, "c:h", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        config = optarg;
                        explicit_config = true;
                        break;
                case ARG_CHECK:
                        check_only = true;
                        break;
                case ARG_RELOAD:
                        reload = true;
                        break;
                case ARG_FLUSH:
                        flush = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_TEST_FAULTS:
                        r = fault_setup(optarg);
                        if (r < 0) {
                                fprintf(stderr, "roamd: --test-faults: %s\n",
                                        r == -EOPNOTSUPP ? "built without fault injection"
                                                         : strerror(-r));
                                return 2;
                        }
                        break;
                case ARG_VERSION:
                        printf("roamd %s\n", ROAM_VERSION);
                        return 0;
                default:
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "roamd: unexpected argument \"%s\"\n", argv[optind]);
                return 2;
        }

        if (reload)
                return reload_running();
        if (check_only) {
                _cleanup_free_ char *error = NULL;
                Config *cfg = NULL;
                ConfigPart part;

                /* every error is logged (stderr) as FILE:LINE as it is found */
                r = config_check_all(config, !explicit_config, &cfg, &error, &part);
                if (r >= 0) {
                        printf("%s: OK\n", config);
                        if (cfg->apps.enforce)
                                printf("%s: OK\n", cfg->apps.policy_dir);
                        if (cfg->firewall.enable)
                                printf("%s: OK\n%s: OK\n", cfg->firewall.networks_dir,
                                       cfg->firewall.profiles_dir);
                }
                config_free(cfg);
                return r < 0 ? 1 : 0;
        }

        if (flush) {
                Config *cfg = NULL;
                /* A broken configuration must not keep the firewall in place at removal:
                 * the defaults' tables and priorities are flushed then. */
                r = config_load(config, !explicit_config, &cfg);
                if (r < 0) {
                        log_warning("%s is broken; flushing with the default table and rule "
                                    "priorities.",
                                    config);
                        r = config_load("/dev/null", true, &cfg);
                        if (r < 0)
                                return 1;
                }
                r = kernel_state_flush(cfg);
                config_free(cfg);
                return r < 0 ? 1 : 0;
        }

        /* The default file may be absent (built-in defaults); an explicit one must exist. */
        r = manager_new(config, !explicit_config, &m);
        if (r < 0)
                return 1;
        r = watch_signals(m, signals);
        if (r < 0)
                return 1;
        r = manager_start(m);
        if (r < 0)
                return 1;
        r = sd_event_loop(m->core.event);
        if (r < 0) {
                log_error_errno(r, "Event loop failed: %m");
                return 1;
        }
        return 0;
}
