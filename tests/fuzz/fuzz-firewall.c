/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-firewall-conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(int level, const char *msg, void *userdata)
{
}

/* The input as a firewall.d profile, a networks.d file and a state file of remembered
 * choices: a refusal always names the first error; what parsed is evaluated and described. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *text = (const char *)data;

        log_set_sink(quiet, NULL);
        for (int networks = 0; networks < 2; networks++) {
                _cleanup_free_ char *error = NULL;
                FwModel m;
                int r;

                if (fw_model_init(&m) < 0)
                        return 0;
                r = networks ? fw_networks_parse("/fuzz/n.conf", text, size, &m, &error)
                             : fw_profile_parse("/fuzz/p.conf", text, size, &m, &error);
                if (r == -EINVAL && !error)
                        abort();
                if (r >= 0 && fw_model_check(&m, &error) >= 0) {
                        NetIdFacts f = {.has_network = true};
                        FwCheck c;
                        f.fact[NETID_SSID] = "HomeNet";
                        f.fact[NETID_INTERFACE] = "wifi0";
                        (void)fw_model_match(&m, &f, NULL);
                        for (size_t i = 0; i < m.n_rules; i++)
                                free(fw_rule_describe(&m.rules[i]));
                        STRV_FOREACH (loc, m.locations)
                                if (fw_model_check_inbound(&m, *loc, "wifi0", BEARER_WIFI, true,
                                                           FW_PROTO_TCP, 22000, "org.a", &c) < 0)
                                        abort();
                }
                fw_model_done(&m);
        }
        {
                FwChoice *c = NULL;
                size_t n = 0;
                if (fw_choices_parse(text, size, &c, &n) >= 0) {
                        _cleanup_free_ char *out = NULL;
                        FwChoice *again = NULL;
                        size_t n2 = 0;
                        if (fw_choices_format(c, n, &out) >= 0 &&
                            (fw_choices_parse(out, strlen(out), &again, &n2) < 0 || n2 != n))
                                abort();
                        fw_choices_free(again, n2);
                        fw_choices_free(c, n);
                }
        }
        return 0;
}
