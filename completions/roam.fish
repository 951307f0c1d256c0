# fish completion for roam(1)
# SPDX-License-Identifier: LGPL-2.1-or-later
# App IDs, link names, WiFi Direct peers and Bluetooth addresses come from roamd through
# `roam ... --json`; when roamd does not run they are simply not offered, and nothing is
# printed.

function __roam_values --argument-names field
    timeout 2 roam $argv[2..-1] --json 2>/dev/null | sed -n 's/^ *"'$field'": "\([^"\\\\]*\)",\{0,1\}$/\1/p'
end

# The Bluetooth devices' addresses: the adapters come first in `roam bt --json`, then "devices".
function __roam_bt_devices
    timeout 2 roam bt --json 2>/dev/null | sed -n '/"devices":/,$ s/^ *"address": "\([^"\\]*\)",\{0,1\}$/\1/p' | sort -u
end

# default and system are always there, also when roamd does not run.
function __roam_apps
    begin
        __roam_values id apps
        printf '%s\n' default system
    end | sort -u
end

# What `roam run --app` takes: apps, not the policies default, system, user and user:UID
# (roamd refuses to run a program under a policy).
function __roam_run_apps
    __roam_values id apps | string match -v -r '^(default|system|user|user:[0-9]+)$'
end

function __roam_links
    __roam_values name status
end

# Is the command line `roam CMD [WORD...]` with exactly N words after CMD so far?
function __roam_args_are --argument-names cmd n
    set -l tokens (commandline -opc)
    set -l words
    for t in $tokens[2..-1]
        switch $t
            case '-*'
                continue
        end
        set words $words $t
    end
    test (count $words) -ge 1; and test "$words[1]" = $cmd; and test (count $words) -eq (math $n + 1)
end

set -l commands status apps app run wait-online when-online stats portal time p2p bt nfc network firewall wifi
complete -c roam -f
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a status -d 'Show the global state and every link'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a apps -d 'Show every app and its policy'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a app -d 'Show or change one app'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a run -d 'Run a command inside an app'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a wait-online -d 'Wait until the internet is reached'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a when-online -d 'Run a command when an app\'s turn comes'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a stats -d 'Traffic per app, user and link'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a time -d 'The time as the sources agree on it'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a portal -d 'Captive portals'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a p2p -d 'WiFi Direct devices'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a bt -d 'Bluetooth'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a nfc -d 'What an NFC tag holds'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a network -d "Each link's network and location"
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a firewall -d 'The firewall rules in force'
complete -c roam -n "not __fish_seen_subcommand_from $commands" -a wifi -d 'Wi-Fi networks: list, join, forget, share, enroll'

complete -c roam -s h -l help -d 'Show the help and exit'
complete -c roam -l version -d 'Show the version and exit'
complete -c roam -l json -d 'Print as JSON'
complete -c roam -l plain -d 'Line mode for screen readers'
complete -c roam -l theme -x -a 'default high-contrast light monochrome' -d 'Colours of the interface'
complete -c roam -l no-mouse -d 'Leave the mouse to the terminal'
complete -c roam -l confirm-quit -r -d 'Ask before quitting the full-screen interface'
complete -c roam -n 'not __fish_seen_subcommand_from run' -l app -x -a '(__roam_apps)' -d 'The app (run, stats, firewall check, wait-online, when-online)'
complete -c roam -n '__fish_seen_subcommand_from run' -l app -x -a '(__roam_run_apps)' -d 'The app to run the command in'
complete -c roam -l timeout -x -d 'With wait-online, when-online: seconds'
complete -c roam -l require-time -d 'With wait-online, when-online: the time verified too'
complete -c roam -n '__fish_seen_subcommand_from p2p' -l pin-file -r -F -d 'With p2p connect, accept: the PIN from this file'
complete -c roam -l online-for -x -a '90s 10m 30m 1h 1h30m 24h until-released' -d 'With run: online that long'
complete -c roam -l user -x -a 'all' -d 'With stats: a user ID or all'
complete -c roam -l link -x -a '(__roam_links)' -d 'With stats: a link'
complete -c roam -l since -x -a '1h 1d 7d 30d' -d 'With stats: since when'

complete -c roam -n '__roam_args_are app 0' -a '(__roam_apps)'
complete -c roam -n '__roam_args_are app 1' -a 'set reset online-for release'
complete -c roam -n '__fish_seen_subcommand_from set' -a 'access=allow access=lan access=deny bearers=all bearers=ethernet bearers=wifi bearers=cellular bearers=bluetooth bearers=wifi-direct bearers=vpn bearers=lowpan vpn=any vpn=required vpn=forbidden handover=sticky handover=move wake=no wake=0 wake=50 wake=80 wake=100 wake-slice=10s wake-slice=30s wake-slice=2min wake-bytes=500K wake-bytes=2M wake-bytes=1G'

complete -c roam -n '__fish_seen_subcommand_from run' -F

complete -c roam -n '__roam_args_are time 0' -a 'zone' -d 'Show the time zone, or choose one'
complete -c roam -n '__roam_args_are time 0' -a 'set' -d 'Set the time by hand (UTC)'
complete -c roam -n '__roam_args_are time 1; and __fish_seen_subcommand_from zone' -a '(timeout 2 roam time zone --json 2>/dev/null | sed -n \'s/^ *"\([A-Za-z][A-Za-z0-9_+-]*\/[^"\\\\]*\)",\{0,1\}$/\1/p\')'
complete -c roam -n '__roam_args_are portal 0' -a 'approve login browse extend decline logoff forget'
complete -c roam -n '__fish_seen_subcommand_from portal' -a '(__roam_links)'
complete -c roam -n '__fish_seen_subcommand_from portal' -l always -d 'On this network from now on'
complete -c roam -n '__fish_seen_subcommand_from portal' -l no-save -d 'Do not save the login'
complete -c roam -n '__fish_seen_subcommand_from portal' -l password-file -r -F -d 'The password from this file'
complete -c roam -n '__fish_seen_subcommand_from portal' -l browser -x -a '(__fish_complete_command)' -d 'The text browser'

complete -c roam -n '__roam_args_are p2p 0' -a 'find peers connect accept reject disconnect help'
complete -c roam -n '__roam_args_are p2p 1; and __fish_seen_subcommand_from connect accept reject disconnect' -a '(__roam_values address p2p peers)'
complete -c roam -n '__roam_args_are p2p 2; and __fish_seen_subcommand_from connect' -a 'push-button show-pin pin'

complete -c roam -n '__roam_args_are bt 0' -a 'power discoverable pairable scan pair trust untrust connect disconnect remove join leave answer'
complete -c roam -n '__roam_args_are bt 1; and __fish_seen_subcommand_from power discoverable pairable' -a 'on off'
complete -c roam -n '__roam_args_are bt 1; and __fish_seen_subcommand_from pair trust untrust connect disconnect remove join leave' -a '(__roam_bt_devices)'

complete -c roam -n '__roam_args_are nfc 0' -a 'import accept reject'
complete -c roam -n '__fish_seen_subcommand_from import' -F
complete -c roam -n '__fish_seen_subcommand_from nfc' -l yes -d 'Pair its device, add its network'

complete -c roam -n '__roam_args_are network 0' -a trust
complete -c roam -n '__roam_args_are network 1' -a 'home work public untrusted'
complete -c roam -n '__roam_args_are network 2' -a '(__roam_links)'

complete -c roam -n '__roam_args_are firewall 0' -a check
complete -c roam -n '__roam_args_are firewall 1' -a 'tcp udp'
complete -c roam -n '__roam_args_are firewall 3' -a '(__roam_links)'

complete -c roam -n '__roam_args_are wifi 0' -a 'list scan join forget autoconnect priority join-uri share enroll'
complete -c roam -n '__roam_args_are wifi 0' -a '(__roam_links)'
complete -c roam -n '__roam_args_are wifi 2; and __fish_seen_subcommand_from autoconnect' -a 'on off'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l hidden -d 'With join: a hidden network'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l security -x -a 'open owe wpa2 wpa3 enterprise' -d 'With join: its security'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l passphrase-file -r -F -d 'With join: the passphrase from this file (-: stdin)'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l eap -x -a 'peap ttls' -d 'With join: the EAP method'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l identity -x -d 'With join: the user name'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l phase2 -x -a 'MSCHAPV2 PAP GTC MD5' -d 'With join --eap: the inner method'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l anonymous-identity -x -d 'With join --eap: the user name outside the tunnel'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l ca-cert -r -F -d 'With join: the CA certificate'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l domain -x -d "With join: the server's domain"
complete -c roam -n '__fish_seen_subcommand_from wifi' -l no-remember -d 'With join: do not keep the network'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l no-autoconnect -d 'With join: join it only when asked'
complete -c roam -n '__fish_seen_subcommand_from wifi' -l yes -d 'With join-uri: join without asking'
