/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "roam-cli.h"
#include "roam-log.h"
#include "roam-text.h"
#include "roam-util.h"

/* Each command's usage, short enough for one screen; `roam --help` has them all. */
static const struct {
        const char *command, *text;
} helps[] = {
    {"status", "Usage: roam status [--json]\n"
               "\n"
               "The global state in one sentence, then every link: its state, addresses,\n"
               "routes, DNS, connectivity and location.\n"},
    {"apps", "Usage: roam apps [--json]\n"
             "\n"
             "Every app roamd governs: access, bearers, VPN, handover, route and state, then\n"
             "`default` and `system`. Long IDs are shortened in the middle (--json has them\n"
             "whole); a table wider than the terminal becomes one block per app.\n"},
    {"app", "Usage: roam app ID [--json]\n"
            "       roam app ID set KEY=VALUE...\n"
            "       roam app ID reset\n"
            "       roam app ID online-for DURATION\n"
            "       roam app ID release\n"
            "\n"
            "Show one app, or change its policy (all settings in one call). Keys:\n"
            "  access=allow|lan|deny, bearers=all|LIST (ethernet, wifi, cellular, bluetooth,\n"
            "  wifi-direct, vpn, lowpan; comma separated), vpn=any|required|forbidden,\n"
            "  handover=sticky|move; the ordered wake-up's wake=no|0-100 (higher first),\n"
            "  wake-slice=DURATION (a turn's longest: 10s, 2min) and wake-bytes=SIZE (what\n"
            "  a turn fetches: 500K, 2M; see docs/wake.md)\n"
            "The app's wake priority, slice and bytes and its place in the queue are shown\n"
            "with the rest.\n"
            "set on an app roamd does not know yet creates it. reset forgets the changes;\n"
            "online-for lets the app use the network for a while even if its access denies\n"
            "it (90s, 10m, 1h30m, at most 24h, or until-released); release ends that now.\n"},
    {"run", "Usage: roam run --app ID [--online-for DURATION] [--] CMD [ARGS...]\n"
            "\n"
            "Run CMD inside app ID: roamd moves roam into the app first, so CMD's first\n"
            "packet follows the app's policy. ID must be an app roamd knows (roam apps; roam\n"
            "app ID set ... creates one). CMD does not run when roamd refuses. Exits as CMD\n"
            "does, 127 when CMD cannot be started.\n"},
    {"wait-online",
     "Usage: roam wait-online [--app ID] [--timeout S] [--require-time]\n"
     "\n"
     "Wait until roamd says the internet is reached (the state online); with\n"
     "--require-time also until the time is verified (settled: a gate opened after\n"
     "GateTimeout=, \"time unverified\", is not enough); with --app until that app's\n"
     "turn in the ordered wake-up came (an app that is not wake-listed: online is\n"
     "enough). Woken by roamd's signals; waits for roamd to start. --timeout: 30 s\n"
     "by default, 0 no limit. Exits 0 online, 1 not in time, 2 error (as nm-online).\n"},
    {"when-online",
     "Usage: roam when-online --app ID [--timeout S] [--require-time]\n"
     "                        [--] CMD [ARGS...]\n"
     "\n"
     "Wait as wait-online --app ID, run CMD, and tell roamd the app is done when CMD\n"
     "exits, so the next app's turn starts. Run it as a process of the app (in its\n"
     "unit, or under roam run --app ID). Exits as CMD does; 1 not in time, 2 error,\n"
     "127 when CMD cannot be started.\n"},
    {"stats", "Usage: roam stats [--app ID] [--user UID|all] [--link NAME] [--since 7d|@EPOCH]\n"
              "                  [--json]\n"
              "\n"
              "The traffic counted per app, user and link, not roaming and roaming, and\n"
              "budgets. Your own by default; --user another or all needs authorization.\n"
              "--link names a link roamd has or has counted traffic on.\n"},
    {"time", "Usage: roam time [--json]\n"
             "       roam time zone [--json] [ZONE]\n"
             "       roam time set DATE [ERROR]\n"
             "\n"
             "The time as roamd's sources agree on it (docs/time.md): settled, settling,\n"
             "disputed or unknown, the agreed time with its error, whether apps were told\n"
             "\"online\" (the gate), the time zone the networks agree on (or the zones to\n"
             "choose from), then each source: its interval, truechimer, falseticker,\n"
             "lower-bound or expired, why, and when it was taken. zone ZONE chooses the\n"
             "zone (one of this system's tzdata); set gives roamd the time by hand, a\n"
             "source of its own: DATE is 'YYYY-MM-DD HH:MM[:SS]' in UTC or @EPOCH, ERROR how\n"
             "far off it may be (30s, 5m, at most 24h; 1m by default). Both need root, group\n"
             "netdev or polkit (org.roam1.set-timezone, org.roam1.set-time).\n"
             "Clock: what roamd did with the clock: it steps it through timedated when the\n"
             "sources agree and no clock daemon keeps it (roamd.conf(5), SetClock=).\n"},
    {"portal", "Usage: roam portal [--json] [LINK]\n"
               "       roam portal approve [--always] [LINK]\n"
               "       roam portal login --user NAME --password-file FILE [--no-save]\n"
               "                         [--always] [LINK]\n"
               "       roam portal browse [--browser CMD] [LINK]\n"
               "       roam portal extend [--browser CMD] [LINK]\n"
               "       roam portal decline|logoff|forget [LINK]\n"
               "\n"
               "Captive portals: state, login offered, time left. approve lets roam log in\n"
               "(--always: on this network from now on); login logs in with WISPr (FILE -:\n"
               "standard input; the login is saved once it works unless --no-save); browse\n"
               "opens a text browser (lynx, w3m, $BROWSER) that reaches the captive link\n"
               "only; extend extends the session when the network offers it. LINK may be\n"
               "left out when one link is behind a portal.\n"},
    {"p2p", "Usage: roam p2p find [SECONDS]\n"
            "       roam p2p peers [--json]\n"
            "       roam p2p connect PEER [push-button | show-pin | pin [--pin-file FILE]]\n"
            "       roam p2p accept PEER [--pin-file FILE]\n"
            "       roam p2p reject PEER\n"
            "       roam p2p disconnect PEER\n"
            "\n"
            "WiFi Direct: find devices (a TV, a printer, a phone) and connect to them.\n"
            "PEER is a name or an address from `roam p2p peers`. connect uses the\n"
            "device's button when it has one; show-pin shows a PIN to type on the device;\n"
            "pin types the PIN the device shows, read from standard input or FILE, never\n"
            "from the command line (every local user reads that). --json: JSON.\n"},
    {"bt", "Usage: roam bt [--json]\n"
           "       roam bt power|discoverable|pairable on|off [ADAPTER]\n"
           "       roam bt scan [SECONDS] [ADAPTER]\n"
           "       roam bt pair|trust|untrust|connect|disconnect|remove ADDRESS\n"
           "       roam bt join|leave ADDRESS\n"
           "       roam bt answer ID yes|no\n"
           "\n"
           "Bluetooth: adapters, devices and the pairing question. join and leave use a\n"
           "device's network (PAN); answer answers the pairing question number ID (a PIN\n"
           "or passkey it asks for is read from standard input).\n"},
    {"nfc", "Usage: roam nfc import FILE|- [--yes] [--json]\n"
            "       roam nfc accept|reject [ID] [--json]\n"
            "\n"
            "What an NFC tag holds (NDEF, raw or hex; - reads standard input; a file named\n"
            "like an option: ./--yes). --yes pairs its Bluetooth device and adds its WiFi\n"
            "network. accept and reject answer the tag neard read, which waits for this.\n"},
    {"network", "Usage: roam network [--json]\n"
                "       roam network trust home|work|public|untrusted|LOCATION [LINK]\n"
                "\n"
                "Each link's network, its location (home, work, public, untrusted, or one of\n"
                "networks.d) and why. trust remembers the network on LINK (default: the link\n"
                "with the default route) as that location; its firewall rules apply at once.\n"},
    {"firewall", "Usage: roam firewall [--json]\n"
                 "       roam firewall check tcp|udp PORT [--app ID] [LINK] [--json]\n"
                 "\n"
                 "The firewall rules in force per link and location, with packet and byte\n"
                 "counters. check: would a packet to PORT be let in on LINK (default: the link\n"
                 "with the default route), to a socket of app ID, and by which rule? ID must\n"
                 "be an app roamd knows.\n"},
    {"wifi", "Usage: roam wifi [list] [LINK] [--json]\n"
             "       roam wifi scan [LINK] [--json]\n"
             "       roam wifi join SSID [--hidden --security open|owe|wpa2|wpa3|enterprise]\n"
             "                 [--passphrase-file FILE|-] [--no-remember] [--no-autoconnect]\n"
             "                 [--eap peap|ttls --identity USER --ca-cert FILE --domain NAME\n"
             "                  --phase2 MSCHAPV2|PAP|GTC|MD5 --anonymous-identity USER]\n"
             "       roam wifi forget SSID\n"
             "       roam wifi autoconnect SSID on|off\n"
             "       roam wifi priority SSID N\n"
             "       roam wifi join-uri 'WIFI:...'|'DPP:...'|- [--yes]\n"
             "       roam wifi share SSID [--json]\n"
             "       roam wifi enroll [LINK] [--json]\n"
             "\n"
             "Wi-Fi through the daemon that owns the link (NetworkManager, iwd or\n"
             "wpa_supplicant): networks, signal and security in words, known ones out of\n"
             "range too. priority: higher joins first (iwd ranks networks itself). join-uri:\n"
             "a WIFI: or DPP: code's text (DPP: sends this network to that device). share: a\n"
             "known network as a QR code (an admin each time). enroll: this device's DPP\n"
             "code for a phone to scan (iwd, wpa_supplicant), then join what it sends.\n"
             "Passphrases are asked on the terminal (no echo) or read from FILE (-: standard\n"
             "input), never from the command line; a WIFI: URI holding one goes on standard\n"
             "input too. --link LINK picks the link. Exits 0 joined, 4 the passphrase or\n"
             "password was refused, 5 no such network, 6 not allowed or refused by the\n"
             "owner, 1 other failures.\n"},
    {"help", "Usage: roam help [COMMAND]\n"
             "\n"
             "The help of roam, or of one command (the same as roam COMMAND --help).\n"},
};

int roam_usage_error(const char *command, const char *fmt, ...)
{
        char buf[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (command)
                log_error("%s Try 'roam %s --help'.", buf, command);
        else
                log_error("%s Try 'roam --help'.", buf);
        return -ROAM_ERR_USAGE;
}

int roam_command_help(const char *command)
{
        for (size_t i = 0; i < ELEMENTSOF(helps); i++)
                if (streq(helps[i].command, command)) {
                        fputs(helps[i].text, stdout);
                        return 0;
                }
        return -ENOENT;
}

static bool is_utf8(const char *s)
{
        size_t n = strlen(s);

        while (n > 0) {
                uint32_t c;
                int l = roam_utf8_decode(s, n, &c);

                if (l <= 0)
                        return false;
                s += l;
                n -= (size_t)l;
        }
        return true;
}

int roam_args_check_utf8(const char *command, char *const *args, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *shown = NULL;

                if (!args[i] || is_utf8(args[i]))
                        continue;
                if (roam_text_escape(args[i], &shown) < 0)
                        return log_oom();
                return roam_usage_error(
                    command, "'%s' is not valid UTF-8: IDs, names and values are text.", shown);
        }
        return 0;
}

bool roam_args_want_help(char *const *args)
{
        for (; args && *args; args++) {
                if (streq(*args, "--"))
                        return false;
                if (streq(*args, "--help") || streq(*args, "-h"))
                        return true;
        }
        return false;
}
