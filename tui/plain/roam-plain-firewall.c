/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-firewall.h"
#include "roam-format.h"
#include "roam-log.h"
#include "roam-plain-firewall.h"
#include "roam-util.h"
#include "roam-verdict.h"
#include "roam-words.h"

const char plain_fw_help[] =
    "  network        every link's network and location, and why\n"
    "  firewall [LINK]   the firewall rules in force (on LINK), with counters\n"
    "  trust LOCATION LINK   remember LINK's network as home, work, public or\n"
    "                 untrusted; its firewall rules apply at once\n"
    "  home N, work N, public N, untrusted N   answer question N (where a new\n"
    "                 network is); the word alone answers the oldest question;\n"
    "                 untrusted keeps it untrusted for this session\n";

typedef struct Question {
        unsigned number;
        char *path, *name, *network_id;
} Question;

/* What a link's location was when last seen, to announce changes. */
typedef struct Seen {
        char *path, *network_id, *location, *source, *wanted;
} Seen;

struct PlainFw {
        RoamLive *live;
        Question *questions;
        size_t n_questions;
        unsigned next_number;
        char **asked; /* network IDs asked about (or answered) this session */
        Seen *seen;
        size_t n_seen;
        RoamFwCall *calls;  /* SetLocation in flight */
        sd_bus_slot *rules; /* GetFirewallRules in flight (a newer one replaces it) */
        char rules_link[64];
};

static void question_clear(Question *q)
{
        free(q->path);
        free(q->name);
        free(q->network_id);
}

static void seen_clear(Seen *s)
{
        free(s->path);
        free(s->network_id);
        free(s->location);
        free(s->source);
        free(s->wanted);
}

PlainFw *plain_fw_free(PlainFw *pf)
{
        if (!pf)
                return NULL;
        for (size_t i = 0; i < pf->n_questions; i++)
                question_clear(&pf->questions[i]);
        free(pf->questions);
        for (size_t i = 0; i < pf->n_seen; i++)
                seen_clear(&pf->seen[i]);
        free(pf->seen);
        strv_free(pf->asked);
        roam_fw_calls_free(&pf->calls);
        sd_bus_slot_unref(pf->rules);
        free(pf);
        return NULL;
}

int plain_fw_new(RoamLive *live, PlainFw **ret)
{
        PlainFw *pf = calloc(1, sizeof(*pf));

        if (!pf)
                return -ENOMEM;
        pf->live = live;
        pf->next_number = 1;
        *ret = pf;
        return 0;
}

static void ask(PlainFw *pf, const RoamLink *l)
{
        Question *q;
        char facts[512], ssh[64];

        q = reallocarray(pf->questions, pf->n_questions + 1, sizeof(Question));
        if (!q) {
                log_oom();
                return;
        }
        pf->questions = q;
        q = &pf->questions[pf->n_questions];
        *q = (Question){
            .number = pf->next_number,
            .path = strdup(l->path),
            .name = strdup(l->name),
            .network_id = strdup(l->network_id),
        };
        if (!q->path || !q->name || !q->network_id || strv_extend(&pf->asked, l->network_id) < 0) {
                question_clear(q);
                log_oom();
                return;
        }
        pf->n_questions++;
        pf->next_number++;
        (void)roam_fw_identity_text(l, facts, sizeof(facts));
        (void)roam_fw_ssh_note(roam_live_get_model(pf->live), "untrusted", ssh, sizeof(ssh));
        roam_print_stamp();
        printf("Question %u: %s joined a network roam has not seen (%s%s%s). %s It is untrusted "
               "(the strictest rules%s%s) until you answer: type home %u, work %u or public %u "
               "(untrusted %u: not now, untrusted for this session).\n",
               q->number, l->name, l->network_id, *facts ? "; " : "", facts, ROAM_LOCATION_QUESTION,
               *ssh ? "; " : "", ssh, q->number, q->number, q->number, q->number);
}

static void question_remove(PlainFw *pf, size_t i)
{
        question_clear(&pf->questions[i]);
        memmove(pf->questions + i, pf->questions + i + 1,
                (pf->n_questions - i - 1) * sizeof(Question));
        pf->n_questions--;
}

static Seen *seen_find(PlainFw *pf, const char *path)
{
        for (size_t i = 0; i < pf->n_seen; i++)
                if (streq(pf->seen[i].path, path))
                        return &pf->seen[i];
        return NULL;
}

/* Says "eth1: location now home (set by you)" when it changed since it was last seen, and
 * when a location is wanted but not in force ("...; public wanted, not in force yet"). */
static void note_location(PlainFw *pf, const RoamLink *l)
{
        Seen *s = seen_find(pf, l->path);
        char where[256];

        if (!s) {
                Seen *n = reallocarray(pf->seen, pf->n_seen + 1, sizeof(Seen));

                if (!n) {
                        log_oom();
                        return;
                }
                pf->seen = n;
                s = &pf->seen[pf->n_seen++];
                *s = (Seen){};
        } else if (streq_ptr(s->network_id, l->network_id) && streq_ptr(s->location, l->location) &&
                   streq_ptr(s->source, l->location_source) &&
                   streq_ptr(s->wanted, l->location_wanted))
                return;
        else if (*l->network_id && !roam_link_needs_location(l)) {
                roam_fw_location_text(l, where, sizeof(where));
                roam_print_stamp();
                /* "location now no location in force" reads badly: say it as a sentence */
                if (!*l->location)
                        printf("%s: no location in force now.\n", l->name);
                else
                        printf("%s: location now %s.\n", l->name, where);
        }
        if (free_and_strdup(&s->path, l->path) < 0 ||
            free_and_strdup(&s->network_id, l->network_id) < 0 ||
            free_and_strdup(&s->location, l->location) < 0 ||
            free_and_strdup(&s->source, l->location_source) < 0 ||
            free_and_strdup(&s->wanted, l->location_wanted) < 0)
                log_oom();
}

void plain_fw_model_changed(PlainFw *pf)
{
        const RoamModel *m;

        if (!pf || roam_live_get_state(pf->live) != ROAM_LIVE_READY)
                return;
        m = roam_live_get_model(pf->live);
        /* Questions about links that left that network, or were placed meanwhile, are gone. */
        for (size_t i = pf->n_questions; i > 0; i--) {
                const RoamLink *l = roam_model_find_link(m, pf->questions[i - 1].path);

                if (!l || !roam_link_needs_location(l) ||
                    !streq(l->network_id, pf->questions[i - 1].network_id)) {
                        /* Gone, elsewhere, or placed by someone else (the TUI, roam network
                         * trust, networks.d): said, so nobody answers a number that no longer
                         * asks anything. Answers here remove their question themselves. */
                        roam_print_stamp();
                        if (!l || !streq(l->network_id, pf->questions[i - 1].network_id))
                                printf("Question %u withdrawn: %s %s.\n",
                                       pf->questions[i - 1].number, pf->questions[i - 1].name,
                                       l ? "left that network" : "is gone");
                        else
                                printf("Question %u withdrawn: %s's network is now %s.\n",
                                       pf->questions[i - 1].number, pf->questions[i - 1].name,
                                       *l->location ? l->location : "placed");
                        question_remove(pf, i - 1);
                }
        }
        for (size_t i = 0; i < m->n_links; i++) {
                const RoamLink *l = m->links[i];

                note_location(pf, l);
                if (roam_link_needs_location(l) && !strv_contains(pf->asked, l->network_id))
                        ask(pf, l);
        }
        fflush(stdout);
}

static void on_set_location(const char *link, const char *location, bool first_join,
                            const sd_bus_error *e, void *userdata)
{
        char what[96], buf[512];

        roam_print_stamp();
        if (!e)
                printf("%s: this network is now %s; its rules are in force.\n", link, location);
        else {
                snprintf(what, sizeof(what), "make this network %s", location);
                roam_fw_call_error_text(e, what, link, buf, sizeof(buf));
                printf("%s%s.\n", buf, first_join ? "; it stays untrusted for now" : "");
        }
        fflush(stdout);
}

static int set_location(PlainFw *pf, const char *link, const char *location, bool first_join)
{
        sd_bus *bus = roam_live_get_bus(pf->live);
        int r;

        if (!bus) {
                puts("roamd is not there.");
                return 0;
        }
        r = roam_fw_set_location_async(bus, &pf->calls, link, location, first_join, on_set_location,
                                       pf);
        if (r < 0)
                printf("Cannot ask roamd: %s\n", strerror(-r));
        return 0;
}

static int on_rules(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PlainFw *pf = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        RoamFwRule *rules = NULL;
        size_t n = 0, shown = 0;
        char buf[512], bytes[32];

        pf->rules = sd_bus_slot_unref(pf->rules);
        if (e) {
                roam_fw_call_error_text(e, "read the firewall rules", NULL, buf, sizeof(buf));
                printf("%s.\n", buf);
        } else if (roam_fw_rules_read(m, &rules, &n) < 0)
                puts("Cannot read roamd's answer: the rules are not shown.");
        for (size_t i = 0; i < n; i++) {
                const RoamFwRule *f = &rules[i];

                if (*pf->rules_link && !streq(f->link, pf->rules_link))
                        continue;
                shown++;
                roam_format_bytes(f->bytes, bytes, sizeof(bytes));
                roam_fw_rule_origin(f, buf, sizeof(buf));
                printf("%s (%s): %s %s %s; %" PRIu64 " packets, %s; %s\n",
                       *f->link ? f->link : "every link", f->location, f->direction, f->action,
                       f->match, f->packets, bytes, buf);
        }
        if (!e && shown == 0)
                printf("No firewall rules in force%s%s.\n", *pf->rules_link ? " on " : "",
                       pf->rules_link);
        roam_fw_rules_free(rules, n);
        fflush(stdout);
        return 0;
}

static void print_network(PlainFw *pf)
{
        const RoamModel *m = roam_live_get_model(pf->live);
        char where[256], facts[512];

        if (*m->firewall_error)
                printf("Firewall files refused: %s\n", m->firewall_error);
        if (m->n_links == 0)
                puts("No links (loopback is never shown).");
        for (size_t i = 0; i < m->n_links; i++) {
                const RoamLink *l = m->links[i];

                roam_fw_location_text(l, where, sizeof(where));
                printf("%s (%s): %s", l->name, l->bearer, where);
                if (*l->location_reason)
                        printf("; %s", l->location_reason);
                if (*l->network_id) {
                        (void)roam_fw_identity_text(l, facts, sizeof(facts));
                        printf("; network %s%s%s%s", l->network_id, *facts ? " (" : "", facts,
                               *facts ? ")" : "");
                }
                putchar('\n');
        }
}

static bool is_location_word(const char *w)
{
        return roam_location_from_string(w) >= 0;
}

int plain_fw_command(PlainFw *pf, char **words)
{
        const RoamModel *m = roam_live_get_model(pf->live);
        size_t n = strv_length(words);

        if (streq(words[0], "network") && n == 1) {
                if (roam_live_get_state(pf->live) != ROAM_LIVE_READY)
                        puts("roamd's state is not read yet; ask again in a moment.");
                else
                        print_network(pf);
                return 1;
        }
        if (streq(words[0], "firewall") && n <= 2) {
                sd_bus *bus = roam_live_get_bus(pf->live);
                int r;

                if (!bus) {
                        puts("roamd is not there.");
                        return 1;
                }
                snprintf(pf->rules_link, sizeof(pf->rules_link), "%s", n == 2 ? words[1] : "");
                pf->rules = sd_bus_slot_unref(pf->rules);
                r = sd_bus_call_method_async(bus, &pf->rules, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                             ROAM_MANAGER_INTERFACE, "GetFirewallRules", on_rules,
                                             pf, NULL);
                if (r < 0)
                        printf("Cannot ask roamd: %s\n", strerror(-r));
                return 1;
        }
        if (streq(words[0], "trust")) {
                if (n != 3) {
                        puts("Say: trust LOCATION LINK (home, work, public or untrusted; links "
                             "lists the links).");
                        return 1;
                }
                return set_location(pf, words[2], words[1], false) < 0 ? -ENOMEM : 1;
        }
        if (is_location_word(words[0]) && n <= 2) {
                size_t i = 0;

                if (pf->n_questions == 0) {
                        puts("No question is open.");
                        return 1;
                }
                if (n == 2) {
                        for (i = 0; i < pf->n_questions; i++)
                                if (strtoul(words[1], NULL, 10) == pf->questions[i].number)
                                        break;
                        if (i == pf->n_questions) {
                                printf("No open question %s.\n", words[1]);
                                return 1;
                        }
                }
                /* Still on that network? The link may have moved since it was asked. */
                if (!roam_model_find_link(m, pf->questions[i].path)) {
                        question_remove(pf, i);
                        puts("That link is gone.");
                        return 1;
                }
                if (streq(words[0], "untrusted")) {
                        printf("%s stays untrusted for this session; say trust LOCATION %s to "
                               "choose later.\n",
                               pf->questions[i].name, pf->questions[i].name);
                        question_remove(pf, i);
                        return 1;
                }
                if (set_location(pf, pf->questions[i].name, words[0], true) < 0)
                        return -ENOMEM;
                question_remove(pf, i);
                return 1;
        }
        return 0;
}
