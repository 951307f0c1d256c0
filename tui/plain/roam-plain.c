/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "roam-app.h"
#include "roam-bus.h"
#include "roam-auth-call.h"
#include "roam-client-bus.h"
#include "roam-polkit-agent.h"
#include "roam-format.h"
#include "roam-live.h"
#include "roam-plain-bt.h"
#include "roam-plain-firewall.h"
#include "roam-log.h"
#include "roam-output.h"
#include "roam-plain-p2p.h"
#include "roam-plain-portal.h"
#include "roam-plain-time.h"
#include "roam-plain-wifi.h"
#include "roam-plain-usage.h"
#include "roam-plain.h"
#include "roam-enforcement.h"
#include "roam-util.h"
#include "roam-verdict.h"

#define INPUT_LINE_MAX 4096
/* Commands wait for roamd's first state (a script's "status" must not get "ask again"), this
 * long at most; then, with commands waiting, roam says why and exits non-zero. */
#define PLAIN_STATE_WAIT_USEC (10 * USEC_PER_SEC)
/* A burst of changes (an uplink move: link verdicts, the global state, every app's state) is
 * printed once it settles: when nothing changed for PLAIN_SETTLE_USEC, or PLAIN_SETTLE_MAX_USEC
 * after its first change at the latest. Documented in docs/tui.md. */
#define PLAIN_SETTLE_USEC     (300 * USEC_PER_MSEC)
#define PLAIN_SETTLE_MAX_USEC (2 * USEC_PER_SEC)

/* What an object said before the burst began; compared with what it says when it settles. */
typedef struct Pending {
        char *key;     /* "manager", a link's or an app's path */
        char *name;    /* for the message: the link's name, the app's ID */
        char *before;  /* verdict (manager, link) or the app's state text */
        char *before2; /* the link's reason, the app's policy text */
} Pending;

typedef struct Plain {
        sd_event *event;
        sd_event_source *input, *settle;
        bool input_held;             /* polkit's agent reads the terminal (roam-auth-call.h) */
        sd_event_source *state_wait; /* until the first state: input is not read */
        int exit_code;               /* why plain mode gave up (logged), or 0 */
        RoamLive *live;
        Pending *pending;
        size_t n_pending;
        uint64_t burst_start; /* CLOCK_MONOTONIC µs of the burst's first change */
        PlainP2p *p2p;
        bool was_ready;
        bool announced; /* the first state has been printed */
        char buf[INPUT_LINE_MAX + 1];
        size_t n_buf;
        bool discarding;     /* the rest of a too long line */
        PlainBt *bt;         /* Bluetooth questions and outcomes (roam-plain-bt.c) */
        PlainPortal *portal; /* captive portals (roam-plain-portal.c) */
        PlainFw *fw;         /* where a new network is (roam-plain-firewall.c) */
        PlainUsage *usage;   /* usage and data budgets (roam-plain-usage.c) */
        PlainTime *time;     /* the time consensus (roam-plain-time.c) */
        PlainWifi *wifi;     /* Wi-Fi networks and joins (roam-plain-wifi.c) */
        char *notes;         /* the enforcement warnings last said, one a line ("" none) */
        char *wake_queue;    /* Manager.WakeQueue last said (or seen at start), NULL none */
} Plain;

static const char help_text[] =
    "Changes are printed as they happen, one line each, with the time.\n"
    "Commands:\n"
    "  status         the global state and one line per link\n"
    "  links          one line per link\n"
    "  link NAME      one link in full, with the verdicts seen\n"
    "  reprobe NAME   ask roamd to probe a link now\n"
    "  apps           one line per app\n"
    "  app ID         one app in full\n"
    "  app ID set KEY=VALUE...   change its policy (access=allow|lan|deny,\n"
    "                 bearers=all|wifi,cellular,..., vpn=any|required|forbidden,\n"
    "                 handover=sticky|move, wake=no|0-100,\n"
    "                 wake-slice=10s, wake-bytes=2M)\n"
    "  app ID reset   the configured policy again\n"
    "  app ID online-for DURATION   online for a while: 90s, 10m, 1h30m (at most\n"
    "                 24h) or until-released\n"
    "  app ID release end that grant\n"
    "  wake           the ordered wake-up: the queue and its apps in turn order\n"
    "  app ID wake-now   its turn in the ordered wake-up now (online for a task)\n"
    "  bt yes [PIN or passkey], bt no   answer a Bluetooth pairing question\n"
    "  nfc yes, nfc no   use the NFC tag just touched, or not\n"
    "  help           this list\n"
    "  quit           end (also exit, q, or end of input on a terminal)\n";

static const char *name_of(const RoamLink *l)
{
        return *l->name ? l->name : l->path;
}

/* "wlan0 (wifi): online, checks answered, probed 3s ago; addresses 192.0.2.10/24" */
static void print_link_line(const RoamLink *l, uint64_t now)
{
        char age[32];

        roam_format_age(l->last_probe, now, age, sizeof(age), NULL);
        printf("%s (%s): %s, %s", name_of(l), l->bearer, roam_verdict_word(l->connectivity),
               roam_reason_short(l->connectivity_reason));
        if (l->last_probe)
                printf(", probed %s", age);
        else if (!streq(l->connectivity_reason, "not-probed"))
                fputs(", no probe yet", stdout);
        if (l->n_addresses > 0) {
                fputs("; addresses", stdout);
                for (size_t i = 0; i < l->n_addresses; i++)
                        printf("%s %s/%" PRIu32, i > 0 ? "," : "", l->addresses[i].address,
                               l->addresses[i].prefix);
        } else
                fputs("; no address", stdout);
        if (streq(l->connectivity, "portal") && *l->portal_url)
                printf("; log in at %s", l->portal_url);
        {
                char wifi[160];
                roam_link_wifi_text(l, wifi, sizeof(wifi));
                if (*wifi)
                        printf("; WiFi %s", wifi);
        }
        if (roam_link_is_virtual(l))
                fputs("; virtual, never counts", stdout);
        fputc('\n', stdout);
}

static bool require_ready(Plain *p)
{
        switch (roam_live_get_state(p->live)) {
        case ROAM_LIVE_READY:
                return true;
        case ROAM_LIVE_NOT_RUNNING:
                puts("roamd is not running; waiting for it.");
                break;
        case ROAM_LIVE_LOADING:
                puts("Reading roamd's state; ask again in a moment.");
                break;
        case ROAM_LIVE_NO_BUS:
        case ROAM_LIVE_FAILED:
                printf("No answer from roamd: %s\n", roam_live_get_problem(p->live));
                break;
        case _ROAM_LIVE_STATE_MAX:
        case _ROAM_LIVE_STATE_INVALID:
                break;
        }
        return false;
}

/* "app org.example.Mail: online; access allow, bearers wifi,ethernet, VPN required, handover
 * sticky; route v4 tun0, v6 tun0" */
static void print_app_line(const RoamModel *m, const RoamApp *a)
{
        _cleanup_free_ char *state = roam_app_state_text(a), *policy = roam_app_policy_text(a),
                            *route = roam_app_route_text(m, a);

        if (!state || !policy || !route) {
                log_oom();
                return;
        }
        printf("app %s: %s; %s; route %s\n", a->id, state, policy, route);
}

static void print_apps(Plain *p)
{
        const RoamModel *m = roam_live_get_model(p->live);

        if (m->n_apps == 0)
                puts("No apps: roamd does not govern apps (an older roamd, or [Apps] "
                     "Enforce=no).");
        for (size_t i = 0; i < m->n_apps; i++)
                print_app_line(m, m->apps[i]);
}

/* The ordered wake-up (docs/wake.md): the queue, then one line per listed app in turn order,
 * as the TUI's wake queue screen shows them. */
static void print_wake(Plain *p)
{
        const RoamModel *m = roam_live_get_model(p->live);
        _cleanup_free_ const RoamApp **v = NULL;
        uint64_t now = roam_now();
        size_t n;

        if (!*m->wake_queue) {
                puts("This roamd has no ordered wake-up.");
                return;
        }
        printf("Wake queue: %s (period %" PRIu64 ").\n", roam_wake_queue_words(m->wake_queue),
               m->wake_period);
        if (streq(m->wake_queue, "time") && *m->time_gate_reason)
                printf("  The time gate holds it: %s\n", m->time_gate_reason);
        v = roam_model_wake_order(m, &n);
        if (!v) {
                log_oom();
                return;
        }
        if (n == 0)
                puts("No app is wake-listed. Give one a priority: app ID set wake=80.");
        for (size_t i = 0; i < n; i++) {
                const RoamApp *a = v[i];
                char age[32] = "";

                if (a->wake_since) {
                        size_t len;

                        roam_format_age(a->wake_since, now, age, sizeof(age), NULL);
                        len = strlen(age);
                        /* waiting 1m, awake 12s; done 3m ago */
                        if (!streq(a->wake_state, "done") && len > 4 &&
                            streq(age + len - 4, " ago"))
                                age[len - 4] = 0;
                }
                printf("%zu. %s, priority %d: %s%s%s%s%s\n", i + 1, a->id, a->wake, a->wake_state,
                       *age ? " " : "", age, *a->wake_reason ? "; " : "",
                       *a->wake_reason ? roam_wake_reason_words(a->wake_reason) : "");
        }
}

static void print_app_detail(const RoamModel *m, const RoamApp *a)
{
        _cleanup_free_ char *bearers = roam_app_bearers_text(a, ", ");

        print_app_line(m, a);
        if (!bearers) {
                log_oom();
                return;
        }
        printf("  Access: %s, %s\n", a->access, roam_app_access_words(a->access));
        printf("  Bearers: %s\n", a->bearers[0] ? bearers : "all, every bearer");
        printf("  VPN: %s, %s\n", a->vpn, roam_app_vpn_words(a->vpn));
        printf("  Handover: %s, %s\n", a->handover, roam_app_handover_words(a->handover));
        printf("  Policy from: %s\n", roam_app_source_words(a->source));
        STRV_FOREACH (c, a->cgroups)
                printf("  Cgroup: %s\n", *c);
}

static void print_links(Plain *p)
{
        const RoamModel *m = roam_live_get_model(p->live);
        uint64_t now = roam_now();

        if (m->n_links == 0)
                puts("No links (loopback is never shown).");
        for (size_t i = 0; i < m->n_links; i++)
                print_link_line(m->links[i], now);
}

/* Degraded enforcement and mark conflicts as roam status says them, one a line: "" none. */
static char *enforcement_text(const RoamModel *m)
{
        _cleanup_strv_free_ char **notes = NULL;
        char *text = NULL;
        size_t size = 0;
        FILE *f;

        if (roam_enforcement_notes(m, &notes) < 0)
                return NULL;
        f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        STRV_FOREACH (n, notes)
                fprintf(f, "Warning: %s\n", *n);
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

/* Says the warnings when they differ from what was said last (all of them: a reader wants
 * the whole picture, not a diff), or that they are gone. */
static void print_enforcement(Plain *p, bool changes_only)
{
        char *text = enforcement_text(roam_live_get_model(p->live));

        if (!text) {
                log_oom();
                return;
        }
        if (changes_only && streq(text, strempty(p->notes))) {
                free(text);
                return;
        }
        if (changes_only) {
                roam_print_stamp();
                if (*text)
                        fputs("enforcement:\n", stdout);
                else
                        puts("enforcement: whole again, no mark conflicts.");
        }
        fputs(text, stdout);
        free(p->notes);
        p->notes = text;
}

static void print_status(Plain *p)
{
        _cleanup_free_ char *sentence = NULL;

        if (!require_ready(p))
                return;
        sentence = roam_global_sentence(roam_live_get_model(p->live));
        printf("State: %s\n", sentence ? sentence : "unknown");
        print_enforcement(p, false);
        print_links(p);
        if (roam_live_get_model(p->live)->n_apps > 0)
                print_apps(p);
}

static const RoamLink *find_by_name(Plain *p, const char *name)
{
        const RoamModel *m = roam_live_get_model(p->live);

        for (size_t i = 0; i < m->n_links; i++)
                if (streq(m->links[i]->name, name))
                        return m->links[i];
        printf("No link named '%s'. Type links to see them.\n", name);
        return NULL;
}

static void print_link_detail(const RoamLink *l)
{
        const RoamHistoryEntry *e;
        char buf[32];

        print_link_line(l, roam_now());
        printf("  IPv4: %s, %s\n", roam_verdict_word(l->connectivity4),
               roam_reason_long(l->connectivity_reason4));
        printf("  IPv6: %s, %s\n", roam_verdict_word(l->connectivity6),
               roam_reason_long(l->connectivity_reason6));
        if (l->last_probe) {
                roam_format_duration(l->probe_duration, buf, sizeof(buf));
                printf("  Last probe took %s\n", buf);
        }
        for (size_t i = 0; i < l->n_gateways; i++)
                printf("  Gateway: %s\n",
                       *l->gateways[i].address ? l->gateways[i].address : "none (device route)");
        for (size_t i = 0; i < l->n_dns; i++)
                printf("  DNS server: %s (from %s)\n", l->dns[i].address, l->dns_source);
        if (*l->captive_portal_url)
                printf("  Captive portal API: %s\n", l->captive_portal_url);
        if (l->capport.error)
                printf("  Captive portal API problem: %s\n", l->capport.error);
        for (size_t i = 0; (e = roam_link_history_get(l, i)); i++) {
                roam_format_clock(e->seen, buf, sizeof(buf));
                printf("  Seen at %s: %s, %s", buf, roam_verdict_word(e->verdict),
                       roam_reason_short(e->reason));
                if (e->count > 1) {
                        roam_format_clock(e->last_seen, buf, sizeof(buf));
                        printf(" (%u times, last at %s)", e->count, buf);
                }
                putchar('\n');
        }
}

static char *join_words(char *const *words)
{
        size_t len = 1;
        char *s;

        STRV_FOREACH (w, (char **)words)
                len += strlen(*w) + 1;
        s = calloc(1, len);
        if (!s)
                return NULL;
        STRV_FOREACH (w, (char **)words) {
                if (*s)
                        strcat(s, " ");
                strcat(s, *w);
        }
        return s;
}

static void app_call_started(const char *id, int r)
{
        if (r == -ENOENT)
                printf("No app '%s'. Type apps to see them.\n", id);
        else if (r < 0)
                printf("Cannot ask roamd to change %s: %s\n", id, strerror(-r));
}

/* app ID [set KEY=VALUE...|reset|online-for DURATION|release] */
static int app_command(Plain *p, char **words)
{
        const RoamModel *m = roam_live_get_model(p->live);
        const char *id = words[1], *action = words[2];
        _cleanup_free_ char *what = NULL;
        const RoamApp *a;
        char why[256], d[64];
        uint64_t usec;
        int r;

        if (!require_ready(p))
                return 0;
        if (!action) {
                a = roam_model_find_app_by_id(m, id);
                if (a)
                        print_app_detail(m, a);
                else
                        printf("No app '%s'. Type apps to see them.\n", id);
                return 0;
        }
        if (streq(action, "set") && words[3]) {
                if (roam_app_check_settings(words + 3, why, sizeof(why)) < 0) {
                        printf("%s.\n", why);
                        return 0;
                }
                what = join_words(words + 2);
                if (!what)
                        return log_oom();
                app_call_started(id, roam_live_set_app_policy(p->live, id, words + 3, what));
                return 0;
        }
        if (streq(action, "reset") && !words[3]) {
                app_call_started(id, roam_live_reset_app_policy(p->live, id, "policy reset"));
                return 0;
        }
        if (streq(action, "release") && !words[3]) {
                app_call_started(id, roam_live_app_release(p->live, id, "grant released"));
                return 0;
        }
        if (streq(action, "wake-now") && !words[3]) {
                app_call_started(id, roam_live_wake_now(p->live, id, "online now (its turn)"));
                return 0;
        }
        if (streq(action, "online-for") && words[3] && !words[4]) {
                r = roam_app_parse_duration(words[3], &usec);
                if (r < 0) {
                        roam_app_duration_error(r, words[3], why, sizeof(why));
                        printf("%s.\n", why);
                        return 0;
                }
                roam_app_format_duration(usec, d, sizeof(d));
                if (asprintf(&what, usec == ROAM_APP_UNTIL_RELEASED ? "online %s" : "online for %s",
                             d) < 0)
                        return log_oom();
                app_call_started(id, roam_live_app_online_for(p->live, id, usec, what));
                return 0;
        }
        printf("Say: app %s set KEY=VALUE..., app %s reset, app %s online-for DURATION, app "
               "%s release or app %s wake-now. Type help for more.\n",
               id, id, id, id, id);
        return 0;
}

static void pending_flush(Plain *p);
static void wake_queue_changed(Plain *p, const RoamModel *m, bool say);

static int command(Plain *p, char *line)
{
        _cleanup_strv_free_ char **words = NULL;
        const RoamLink *l;
        int r;

        /* Changes still settling are older than the answer: they come first. */
        pending_flush(p);
        /* A password after "portal login LINK USER": the whole line, never split or echoed. */
        if (plain_portal_wants_line(p->portal)) {
                plain_portal_line(p->portal, line);
                return 0;
        }
        /* A Wi-Fi passphrase asked for: the same */
        if (plain_wifi_wants_line(p->wifi)) {
                plain_wifi_line(p->wifi, line);
                return 0;
        }
        r = strv_split(line, " \t\r", &words);
        if (r < 0)
                return log_oom();
        if (!words[0])
                return 0;
        if (streq(words[0], "quit") || streq(words[0], "exit") || streq(words[0], "q"))
                return sd_event_exit(p->event, 0);
        if (streq(words[0], "help")) {
                fputs(help_text, stdout);
                fputs(plain_p2p_help, stdout);
                fputs(plain_portal_help, stdout);
                fputs(plain_fw_help, stdout);
                fputs(plain_usage_help, stdout);
                fputs(plain_time_help, stdout);
                fputs(plain_wifi_help, stdout);
                return 0;
        }
        if (streq(words[0], "status") && !words[1]) {
                print_status(p);
                return 0;
        }
        if (streq(words[0], "links") && !words[1]) {
                if (require_ready(p))
                        print_links(p);
                return 0;
        }
        if (streq(words[0], "wake") && !words[1]) {
                if (require_ready(p))
                        print_wake(p);
                return 0;
        }
        if (streq(words[0], "apps") && !words[1]) {
                if (require_ready(p))
                        print_apps(p);
                return 0;
        }
        if (streq(words[0], "app") && words[1])
                return app_command(p, words);
        if (streq(words[0], "bt"))
                return plain_bt_command(p->bt, words);
        if (streq(words[0], "wifi")) {
                if (require_ready(p))
                        return plain_wifi_command(p->wifi, words) < 0 ? log_oom() : 0;
                return 0;
        }
        if (streq(words[0], "nfc"))
                return plain_bt_nfc_command(p->bt, words);
        if ((streq(words[0], "link") || streq(words[0], "reprobe")) && words[1] && !words[2]) {
                if (!require_ready(p) || !(l = find_by_name(p, words[1])))
                        return 0;
                if (streq(words[0], "link")) {
                        print_link_detail(l);
                        return 0;
                }
                r = roam_live_reprobe(p->live, l->path);
                if (r < 0)
                        printf("Cannot ask roamd to re-probe %s: %s\n", words[1], strerror(-r));
                return 0;
        }
        if (p->p2p && plain_p2p_command(p->p2p, words) > 0)
                return 0;
        if (p->portal && plain_portal_command(p->portal, words) != 0)
                return 0;
        if (p->fw && plain_fw_command(p->fw, words) != 0)
                return 0;
        if (p->usage && plain_usage_command(p->usage, words) != 0)
                return 0;
        if (p->time && plain_time_command(p->time, words) != 0)
                return 0;
        printf("Unknown command '%s'. Type help for the list.\n", line);
        return 0;
}

static int on_input(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        Plain *p = userdata;
        char chunk[1024];
        ssize_t n;

        n = read(fd, chunk, sizeof(chunk));
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : sd_event_exit(p->event, 0);
        if (n == 0) {
                if (p->n_buf > 0 && !p->discarding) {
                        p->buf[p->n_buf] = 0;
                        (void)command(p, p->buf);
                }
                p->n_buf = 0;
                /* End of input: on a terminal (Ctrl-D) that means quit; from a pipe or
                 * /dev/null, roam keeps announcing changes, like a log. */
                if (isatty(fd))
                        return sd_event_exit(p->event, 0);
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        }
        for (ssize_t i = 0; i < n; i++) {
                if (chunk[i] != '\n') {
                        if (p->n_buf < INPUT_LINE_MAX)
                                p->buf[p->n_buf++] = chunk[i];
                        else
                                p->discarding = true;
                        continue;
                }
                p->buf[p->n_buf] = 0;
                if (p->discarding)
                        puts("That line is too long; ignored.");
                else
                        (void)command(p, p->buf);
                p->n_buf = 0;
                p->discarding = false;
        }
        fflush(stdout);
        return 0;
}

static void pending_clear(Plain *p)
{
        for (size_t i = 0; i < p->n_pending; i++) {
                free(p->pending[i].key);
                free(p->pending[i].name);
                free(p->pending[i].before);
                free(p->pending[i].before2);
        }
        free(p->pending);
        p->pending = NULL;
        p->n_pending = 0;
        (void)sd_event_source_set_enabled(p->settle, SD_EVENT_OFF);
}

/* Remembers what an object said before its first change of this burst (later changes of the
 * burst keep that), and moves the settle timer. */
static void pending_add(Plain *p, const char *key, const char *name, const char *before,
                        const char *before2)
{
        uint64_t now = 0, at;
        Pending *n;

        (void)sd_event_now(p->event, CLOCK_MONOTONIC, &now);
        if (p->n_pending == 0)
                p->burst_start = now;
        at = MIN(now + PLAIN_SETTLE_USEC, p->burst_start + PLAIN_SETTLE_MAX_USEC);
        if (sd_event_source_set_time(p->settle, at) < 0 ||
            sd_event_source_set_enabled(p->settle, SD_EVENT_ONESHOT) < 0)
                log_debug("Cannot arm the settle timer.");

        for (size_t i = 0; i < p->n_pending; i++)
                if (streq(p->pending[i].key, key))
                        return;
        n = reallocarray(p->pending, p->n_pending + 1, sizeof(Pending));
        if (!n) {
                log_oom();
                return;
        }
        p->pending = n;
        n[p->n_pending] = (Pending){
            .key = strdup(key),
            .name = strdup(name),
            .before = strdup(strempty(before)),
            .before2 = strdup(strempty(before2)),
        };
        if (!n[p->n_pending].key || !n[p->n_pending].name || !n[p->n_pending].before ||
            !n[p->n_pending].before2) {
                free(n[p->n_pending].key);
                free(n[p->n_pending].name);
                free(n[p->n_pending].before);
                free(n[p->n_pending].before2);
                log_oom();
                return;
        }
        p->n_pending++;
}

static const Pending *pending_find(Plain *p, const char *key)
{
        for (size_t i = 0; i < p->n_pending; i++)
                if (streq(p->pending[i].key, key))
                        return &p->pending[i];
        return NULL;
}

/* "wlan0: portal -> online (checks answered)", or "still ..." when only the reason moved. */
static void print_link_change(const RoamLink *l, const Pending *was)
{
        if (!streq(was->before, l->connectivity)) {
                roam_print_stamp();
                printf("%s: %s -> %s (%s)", name_of(l), roam_verdict_word(was->before),
                       roam_verdict_word(l->connectivity),
                       roam_reason_short(l->connectivity_reason));
                if (streq(l->connectivity, "portal") && *l->portal_url)
                        printf("; log in at %s", l->portal_url);
                fputc('\n', stdout);
        } else if (!streq(was->before2, l->connectivity_reason)) {
                roam_print_stamp();
                printf("%s: still %s, now because: %s\n", name_of(l),
                       roam_verdict_word(l->connectivity),
                       roam_reason_short(l->connectivity_reason));
        }
}

/* "app org.x: policy now access deny, ...", "app org.x: online -> blocked: access denied" */
static void print_app_change(const RoamApp *a, const Pending *was)
{
        _cleanup_free_ char *state = roam_app_state_text(a), *policy = roam_app_policy_text(a);

        if (!state || !policy) {
                log_oom();
                return;
        }
        if (!streq(policy, was->before2)) {
                roam_print_stamp();
                printf("app %s: policy now %s\n", a->id, policy);
        }
        if (!streq(state, was->before)) {
                roam_print_stamp();
                printf("app %s: %s -> %s\n", a->id, was->before, state);
        }
}

/* Prints the settled outcome of a burst, causes first: the links, then the global state they
 * make, then the apps that follow it. What changed and changed back prints nothing. */
static void pending_flush(Plain *p)
{
        const RoamModel *m = roam_live_get_model(p->live);
        const Pending *was;

        if (p->n_pending == 0)
                return;
        for (size_t i = 0; i < m->n_links; i++)
                if ((was = pending_find(p, m->links[i]->path)))
                        print_link_change(m->links[i], was);
        if ((was = pending_find(p, "manager")) && !streq(was->before, m->state)) {
                _cleanup_free_ char *sentence = roam_global_sentence(m);

                roam_print_stamp();
                printf("state: %s -> %s: %s\n", roam_verdict_word(was->before),
                       roam_verdict_word(m->state), sentence ? sentence : "");
        }
        if (pending_find(p, "enforcement"))
                print_enforcement(p, true);
        if (pending_find(p, "wake"))
                wake_queue_changed(p, m, true);
        for (size_t i = 0; i < m->n_apps; i++)
                if ((was = pending_find(p, m->apps[i]->path)))
                        print_app_change(m->apps[i], was);
        pending_clear(p);
        fflush(stdout);
}

static int on_settle(sd_event_source *s, uint64_t usec, void *userdata)
{
        pending_flush(userdata);
        return 0;
}

/* The first state is known (or waiting for it is over): commands are read from now on. */
static void start_reading(Plain *p)
{
        if (!p->state_wait)
                return;
        p->state_wait = sd_event_source_disable_unref(p->state_wait);
        if (p->input)
                (void)sd_event_source_set_enabled(p->input, SD_EVENT_ON);
}

static int on_state_wait(sd_event_source *s, uint64_t usec, void *userdata)
{
        Plain *p = userdata;
        int n = 0;

        /* Nothing typed or piped yet: plain mode goes on as a log, saying what it waits for. */
        if (ioctl(STDIN_FILENO, FIONREAD, &n) < 0 || n <= 0) {
                start_reading(p);
                return 0;
        }
        switch (roam_live_get_state(p->live)) {
        case ROAM_LIVE_NOT_RUNNING:
                log_error("roamd is not running (waited %u s): the commands read from standard "
                          "input were not run.",
                          (unsigned)(PLAIN_STATE_WAIT_USEC / USEC_PER_SEC));
                p->exit_code = -ROAM_ERR_NOT_RUNNING;
                break;
        case ROAM_LIVE_NO_BUS:
        case ROAM_LIVE_FAILED:
                log_error("No answer from roamd (%s, waited %u s): the commands read from "
                          "standard input were not run.",
                          roam_live_get_problem(p->live),
                          (unsigned)(PLAIN_STATE_WAIT_USEC / USEC_PER_SEC));
                p->exit_code = -EIO;
                break;
        case ROAM_LIVE_LOADING:
        case ROAM_LIVE_READY:
        case _ROAM_LIVE_STATE_MAX:
        case _ROAM_LIVE_STATE_INVALID:
                log_error("roamd's state did not arrive within %u s: the commands read from "
                          "standard input were not run.",
                          (unsigned)(PLAIN_STATE_WAIT_USEC / USEC_PER_SEC));
                p->exit_code = -ETIMEDOUT;
                break;
        }
        return sd_event_exit(p->event, p->exit_code);
}

/* One line per change of the ordered wake-up's queue (docs/wake.md), in a burst after the
 * global state that caused it; the state found at start is only remembered. */
static void wake_queue_changed(Plain *p, const RoamModel *m, bool say)
{
        char *copy;

        if (streq_ptr(p->wake_queue, m->wake_queue))
                return;
        copy = strdup(m->wake_queue);
        if (!copy) {
                log_oom();
                return;
        }
        free(p->wake_queue);
        p->wake_queue = copy;
        if (!say || !*m->wake_queue)
                return;
        /* one line, under one time stamp: a screen reader reads it as one change */
        roam_print_stamp();
        if (streq(m->wake_queue, "time") && *m->time_gate_reason)
                printf("Wake queue: %s (period %" PRIu64 "); the time gate holds it: %s.\n",
                       roam_wake_queue_words(m->wake_queue), m->wake_period, m->time_gate_reason);
        else
                printf("Wake queue: %s (period %" PRIu64 ").\n",
                       roam_wake_queue_words(m->wake_queue), m->wake_period);
}

static void on_live_event(RoamLive *live, const RoamLiveEvent *ev, void *userdata)
{
        Plain *p = userdata;
        const RoamModel *m = roam_live_get_model(live);

        /* A link on a new network is asked about at once (roam-plain-firewall.c). */
        if (ev->type == ROAM_LIVE_EVENT_LINK_CHANGED)
                plain_fw_model_changed(p->fw);
        /* Changes wait for their burst to settle; anything else is said at once, after what
         * is pending (it may be what caused it: a call's answer after its changes). */
        switch (ev->type) {
        case ROAM_LIVE_EVENT_MANAGER:
                if (ev->verdict_changed)
                        pending_add(p, "manager", "", ev->old_verdict, NULL);
                pending_add(p, "enforcement", "", NULL, NULL);
                pending_add(p, "wake", "", NULL, NULL);
                return;
        case ROAM_LIVE_EVENT_LINK_CHANGED:
                if (ev->verdict_changed || !streq(ev->old_reason, ev->link->connectivity_reason))
                        pending_add(p, ev->link->path, name_of(ev->link), ev->old_verdict,
                                    ev->old_reason);
                return;
        case ROAM_LIVE_EVENT_APP_CHANGED:
                pending_add(p, ev->app->path, ev->app->id, ev->old_app_state, ev->old_app_policy);
                return;
        case ROAM_LIVE_EVENT_STATE:
                /* A new model: what was pending belongs to the old one. */
                pending_clear(p);
                break;
        case ROAM_LIVE_EVENT_LINK_ADDED:
        case ROAM_LIVE_EVENT_LINK_REMOVED:
        case ROAM_LIVE_EVENT_REPROBE:
        case ROAM_LIVE_EVENT_APP_ADDED:
        case ROAM_LIVE_EVENT_APP_REMOVED:
        case ROAM_LIVE_EVENT_APP_CALL:
        case ROAM_LIVE_EVENT_APP_WAKE:
        case _ROAM_LIVE_EVENT_TYPE_MAX:
        case _ROAM_LIVE_EVENT_TYPE_INVALID:
                pending_flush(p);
                break;
        }

        switch (ev->type) {
        case ROAM_LIVE_EVENT_STATE:
                switch (roam_live_get_state(live)) {
                case ROAM_LIVE_READY:
                        if (p->announced) {
                                roam_print_stamp();
                                puts("roamd is back.");
                        }
                        print_status(p);
                        wake_queue_changed(p, m, false);
                        p->announced = p->was_ready = true;
                        start_reading(p);
                        if (p->p2p)
                                plain_p2p_watch(p->p2p);
                        if (p->portal)
                                plain_portal_watch(p->portal);
                        if (p->usage)
                                plain_usage_watch(p->usage);
                        if (p->time)
                                plain_time_watch(p->time);
                        (void)plain_bt_follow(&p->bt, roam_live_get_bus(live));
                        break;
                case ROAM_LIVE_NOT_RUNNING:
                        if (p->announced)
                                roam_print_stamp();
                        puts(p->was_ready ? "roamd went away; waiting for it to return."
                                          : "roamd is not running; waiting for it.");
                        p->announced = true;
                        p->was_ready = false;
                        break;
                case ROAM_LIVE_NO_BUS:
                case ROAM_LIVE_FAILED:
                        if (p->announced)
                                roam_print_stamp();
                        printf("No answer from roamd: %s; trying again.\n",
                               roam_live_get_problem(live));
                        p->announced = true;
                        p->was_ready = false;
                        break;
                case ROAM_LIVE_LOADING:
                case _ROAM_LIVE_STATE_MAX:
                case _ROAM_LIVE_STATE_INVALID:
                        break;
                }
                break;
        case ROAM_LIVE_EVENT_LINK_ADDED:
                roam_print_stamp();
                printf("%s appeared: ", name_of(ev->link));
                print_link_line(ev->link, roam_now());
                break;
        case ROAM_LIVE_EVENT_LINK_REMOVED:
                roam_print_stamp();
                printf("%s vanished.\n", name_of(ev->link));
                break;
        case ROAM_LIVE_EVENT_REPROBE:
                roam_print_stamp();
                if (!ev->error)
                        printf("roamd is probing %s again.\n", ev->link_name);
                else if (roam_bus_error_is_denied(ev->error)) {
                        char why[256];

                        printf("Not allowed to re-probe %s: %s.\n", ev->link_name,
                               roam_bus_denied_reason(ev->error, why, sizeof(why)));
                } else
                        printf("Re-probe of %s failed: %s\n", ev->link_name,
                               ev->error->message ? ev->error->message : ev->error->name);
                break;
        case ROAM_LIVE_EVENT_APP_ADDED:
                roam_print_stamp();
                fputs("appeared: ", stdout);
                print_app_line(m, ev->app);
                break;
        case ROAM_LIVE_EVENT_APP_REMOVED:
                roam_print_stamp();
                printf("app %s vanished.\n", ev->app->id);
                break;
        case ROAM_LIVE_EVENT_APP_CALL:
                roam_print_stamp();
                if (!ev->error)
                        printf("Done: %s %s.\n", ev->app_id, ev->action);
                else if (roam_bus_error_is_denied(ev->error)) {
                        char why[256];

                        printf("Not allowed to change %s: %s.\n", ev->app_id,
                               roam_bus_denied_reason(ev->error, why, sizeof(why)));
                } else
                        printf("Cannot change %s (%s): %s\n", ev->app_id, ev->action,
                               ev->error->message ? ev->error->message : ev->error->name);
                break;
        case ROAM_LIVE_EVENT_APP_WAKE:
                roam_print_stamp();
                printf("Wake: %s's turn (%s), period %" PRIu64 ".\n", ev->app->id,
                       roam_wake_reason_words(ev->wake_reason), ev->wake_period);
                break;
        case ROAM_LIVE_EVENT_MANAGER:
        case ROAM_LIVE_EVENT_LINK_CHANGED:
        case ROAM_LIVE_EVENT_APP_CHANGED:
        case _ROAM_LIVE_EVENT_TYPE_MAX:
        case _ROAM_LIVE_EVENT_TYPE_INVALID:
                break;
        }
        plain_fw_model_changed(p->fw);
        fflush(stdout);
}

/* polkit wants a password for a change (roam-auth-call.h): the terminal is polkit's text
 * agent's until that call is answered, so no command line is read meanwhile. */
static int interaction_begin(void *userdata)
{
        Plain *p = userdata;
        int r, on = 0;

        if (geteuid() == 0 || !isatty(STDIN_FILENO))
                return -EPERM;
        if (p->input && sd_event_source_get_enabled(p->input, &on) >= 0 && on != SD_EVENT_OFF) {
                (void)sd_event_source_set_enabled(p->input, SD_EVENT_OFF);
                p->input_held = true;
        }
        roam_print_stamp();
        printf("polkit asks for a password to allow this change (Ctrl-C ends roam).\n");
        fflush(stdout);
        r = roam_polkit_agent_open();
        if (r <= 0) {
                if (p->input_held)
                        (void)sd_event_source_set_enabled(p->input, SD_EVENT_ON);
                p->input_held = false;
                return r < 0 ? r : -ENOENT;
        }
        return 0;
}

static void interaction_end(void *userdata)
{
        Plain *p = userdata;

        roam_polkit_agent_close();
        if (p->input_held)
                (void)sd_event_source_set_enabled(p->input, SD_EVENT_ON);
        p->input_held = false;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        return sd_event_exit(userdata, 0);
}

int plain_run(void)
{
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_event_source_disable_unrefp) sd_event_source *input = NULL;
        _cleanup_(roam_live_freep) RoamLive *live = NULL;
        Plain p = {};
        sigset_t mask;
        int r;

        /* names, URLs and reasons come from the network; the input line is echoed */
        r = roam_output_clean_stdout();
        if (r < 0)
                return r;
        r = sd_event_default(&event);
        if (r < 0)
                return log_error_errno(r, "Cannot create the event loop: %m");
        p.event = event;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Cannot block signals: %m");
        r = sd_event_add_signal(event, NULL, SIGINT, on_signal, event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, on_signal, event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGHUP, on_signal, event);
        if (r >= 0)
                r = sd_event_add_io(event, &input, STDIN_FILENO, EPOLLIN, on_input, &p);
        if (r == -EPERM) /* stdin is a regular file or /dev/null: epoll refuses it */
                r = 0;
        p.input = input;
        /* Commands typed or piped ahead wait in stdin until roamd's state is known. */
        if (r >= 0 && input)
                r = sd_event_source_set_enabled(input, SD_EVENT_OFF);
        if (r >= 0 && input)
                r = sd_event_add_time_relative(event, &p.state_wait, CLOCK_MONOTONIC,
                                               PLAIN_STATE_WAIT_USEC, 0, on_state_wait, &p);
        if (r >= 0)
                r = sd_event_add_time(event, &p.settle, CLOCK_MONOTONIC, 0, 0, on_settle, &p);
        if (r >= 0)
                r = sd_event_source_set_enabled(p.settle, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(r, "Cannot set up the event loop: %m");

        r = roam_live_new(event, on_live_event, &p, &live);
        if (r < 0)
                return log_error_errno(r, "Cannot set up the bus: %m");
        p.live = live;
        roam_auth_set_interaction(
            &(RoamInteraction){.begin = interaction_begin, .end = interaction_end, .userdata = &p});
        r = plain_p2p_new(live, &p.p2p);
        if (r >= 0)
                r = plain_portal_new(live, input, &p.portal);
        if (r < 0)
                return log_oom();
        r = plain_fw_new(live, &p.fw);
        if (r < 0)
                return log_oom();
        r = plain_usage_new(live, &p.usage);
        if (r >= 0)
                r = plain_time_new(live, &p.time);
        if (r >= 0)
                r = plain_wifi_new(live, &p.wifi);
        if (r < 0)
                return log_oom();
        (void)roam_live_start(live);

        r = sd_event_loop(event);
        roam_auth_set_interaction(NULL);
        pending_clear(&p);
        p.settle = sd_event_source_disable_unref(p.settle);
        p.state_wait = sd_event_source_disable_unref(p.state_wait);
        p.p2p = plain_p2p_free(p.p2p);
        p.portal = plain_portal_free(p.portal);
        p.bt = plain_bt_free(p.bt);
        p.wifi = plain_wifi_free(p.wifi);
        p.fw = plain_fw_free(p.fw);
        p.usage = plain_usage_free(p.usage);
        p.time = plain_time_free(p.time);
        free(p.notes);
        free(p.wake_queue);
        if (p.exit_code < 0)
                return p.exit_code; /* said by on_state_wait() */
        if (r < 0)
                return log_error_errno(r, "The event loop failed: %m");
        return 0;
}
