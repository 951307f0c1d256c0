# bash completion for roam(1)                                    -*- shell-script -*-
# SPDX-License-Identifier: LGPL-2.1-or-later
# App IDs, link names, WiFi Direct peers and Bluetooth addresses come from roamd through
# `roam ... --json`; when roamd does not run (or does not answer within 2 s) they are simply
# not offered, and nothing is printed.

# _roam_values FIELD ROAM-ARGS...: the string values of FIELD in roam's pretty JSON.
_roam_values()
{
        local field=$1
        shift
        timeout 2 roam "$@" --json 2>/dev/null |
                sed -n 's/^ *"'"$field"'": "\([^"\\]*\)",\{0,1\}$/\1/p'
}

# default and system are always there, also when roamd does not run.
_roam_apps()
{
        {
                _roam_values id apps
                printf '%s\n' default system
        } | sort -u
}
# What `roam run --app` takes: apps, not the policies default, system, user and user:UID
# (roamd refuses to run a program under a policy).
_roam_run_apps()
{
        _roam_values id apps | grep -v -x -e default -e system -e user -e 'user:[0-9]*'
}
_roam_links() { _roam_values name status; }
# the Wi-Fi links: those `roam wifi --link X` would take (bearer wifi in `roam status`)
_roam_wifi_links()
{
        timeout 2 roam status --json 2>/dev/null |
                sed -n '/"name":/{s/^ *"name": "\([^"\\]*\)",\{0,1\}$/\1/;h};/"bearer": "wifi"/{x;p}' | sort -u
}
_roam_peers() { _roam_values address p2p peers; }
# The devices' addresses only: the adapters come first in `roam bt --json`, then "devices".
_roam_bt_addresses()
{
        timeout 2 roam bt --json 2>/dev/null |
                sed -n '/"devices":/,$ s/^ *"address": "\([^"\\]*\)",\{0,1\}$/\1/p' | sort -u
}
# the zones roamd offers to choose from (roam time zone --json: "candidates")
_roam_zones()
{
        timeout 2 roam time zone --json 2>/dev/null |
                sed -n 's/^ *"\([A-Za-z][A-Za-z0-9_+-]*\/[^"\\]*\)",\{0,1\}$/\1/p'
}

_roam()
{
        local cur prev words cword
        if declare -F _init_completion >/dev/null; then
                _init_completion || return
        else
                cur=${COMP_WORDS[COMP_CWORD]}
                prev=${COMP_WORDS[COMP_CWORD - 1]}
                words=("${COMP_WORDS[@]}")
                cword=$COMP_CWORD
        fi

        local commands="status apps app run wait-online when-online stats portal time p2p bt nfc
                network firewall wifi help"
        local options="-h --help --version --json --plain --theme --no-mouse --confirm-quit --app --online-for
                --user --link --since --timeout --require-time --pin-file"
        local durations="90s 10m 30m 1h 1h30m 24h until-released"

        case $prev in
        --theme)
                COMPREPLY=($(compgen -W "default high-contrast light monochrome" -- "$cur"))
                return
                ;;
        --app)
                # the command so far: run takes apps only
                local w run=""
                for w in "${words[@]:1:cword-1}"; do
                        [[ $w == run ]] && run=1
                        [[ $w != -* ]] && break
                done
                if [[ -n $run ]]; then
                        COMPREPLY=($(compgen -W "$(_roam_run_apps)" -- "$cur"))
                else
                        COMPREPLY=($(compgen -W "$(_roam_apps)" -- "$cur"))
                fi
                return
                ;;
        --link)
                COMPREPLY=($(compgen -W "$(_roam_links)" -- "$cur"))
                return
                ;;
        --online-for)
                COMPREPLY=($(compgen -W "$durations" -- "$cur"))
                return
                ;;
        --user)
                COMPREPLY=($(compgen -W "all $(id -u 2>/dev/null)" -- "$cur"))
                return
                ;;
        --since)
                COMPREPLY=($(compgen -W "1h 1d 7d 30d" -- "$cur"))
                return
                ;;
        --password-file | --pin-file | --passphrase-file | --ca-cert)
                COMPREPLY=($(compgen -f -- "$cur"))
                return
                ;;
        --browser)
                COMPREPLY=($(compgen -c -- "$cur"))
                return
                ;;
        --eap)
                COMPREPLY=($(compgen -W "peap ttls" -- "$cur"))
                return
                ;;
        --phase2)
                COMPREPLY=($(compgen -W "MSCHAPV2 PAP GTC MD5" -- "$cur"))
                return
                ;;
        --security)
                COMPREPLY=($(compgen -W "open owe wpa2 wpa3 enterprise" -- "$cur"))
                return
                ;;
        --identity | --domain | --anonymous-identity)
                return
                ;;
        esac

        # The command, and the words after it that are not options.
        local i cmd="" cmdi=0 args=()
        for ((i = 1; i < cword; i++)); do
                case ${words[i]} in
                --theme | --app | --online-for | --user | --link | --since | --password-file | --pin-file | --browser | \
                        --passphrase-file | --ca-cert | --eap | --security | --identity | --domain | \
                        --phase2 | --anonymous-identity)
                        ((i++))
                        ;;
                --)
                        if [[ $cmd == run ]]; then
                                # roam run ... -- CMD ARGS: complete CMD as its own command line.
                                if declare -F _command_offset >/dev/null; then
                                        _command_offset $((i + 1))
                                else
                                        COMPREPLY=($(compgen -c -- "$cur"))
                                fi
                                return
                        fi
                        ;;
                -*) ;;
                *)
                        if [[ -z $cmd ]]; then
                                cmd=${words[i]}
                                cmdi=$i
                        else
                                args+=("${words[i]}")
                        fi
                        ;;
                esac
        done

        if [[ $cur == -* ]]; then
                local extra=""
                case $cmd in
                run) extra="--" ;;
                portal) extra="--always --user --password-file --no-save --browser" ;;
                nfc) extra="--yes" ;;
                wifi) extra="--hidden --security --passphrase-file --eap --identity --phase2
                        --anonymous-identity --ca-cert --domain --no-remember --no-autoconnect --yes" ;;
                esac
                COMPREPLY=($(compgen -W "$options $extra" -- "$cur"))
                return
        fi
        if [[ -z $cmd ]]; then
                COMPREPLY=($(compgen -W "$commands" -- "$cur"))
                return
        fi

        local n=${#args[@]} words_now=""
        case $cmd in
        help)
                ((n == 0)) && words_now=$commands
                ;;
        app)
                if ((n == 0)); then
                        words_now=$(_roam_apps)
                elif ((n == 1)); then
                        words_now="set reset online-for release"
                elif [[ ${args[1]} == set ]]; then
                        case $cur in
                        access=*) words_now="access=allow access=lan access=deny" ;;
                        vpn=*) words_now="vpn=any vpn=required vpn=forbidden" ;;
                        handover=*) words_now="handover=sticky handover=move" ;;
                        wake=*) words_now="wake=no wake=0 wake=50 wake=80 wake=100" ;;
                        wake-slice=*) words_now="wake-slice=10s wake-slice=30s wake-slice=2min" ;;
                        wake-bytes=*) words_now="wake-bytes=500K wake-bytes=2M wake-bytes=1G" ;;
                        bearers=*)
                                words_now="bearers=all bearers=ethernet bearers=wifi
                                        bearers=cellular bearers=bluetooth bearers=wifi-direct
                                        bearers=vpn bearers=lowpan"
                                ;;
                        *)
                                compopt -o nospace 2>/dev/null
                                words_now="access= bearers= vpn= handover= wake= wake-slice=
                                        wake-bytes="
                                ;;
                        esac
                elif [[ ${args[1]} == online-for && $n == 2 ]]; then
                        words_now=$durations
                fi
                ;;
        run)
                words_now="--app --online-for --"
                ;;
        time)
                if ((n == 0)); then
                        words_now="zone set"
                elif ((n == 1)) && [[ ${args[0]} == zone ]]; then
                        words_now=$(_roam_zones)
                elif ((n == 2)) && [[ ${args[0]} == set ]]; then
                        words_now="30s 1m 5m"
                fi
                ;;
        portal)
                if ((n == 0)); then
                        words_now="approve login browse extend decline logoff forget $(_roam_links)"
                else
                        words_now="$(_roam_links)"
                fi
                ;;
        p2p)
                if ((n == 0)); then
                        words_now="find peers connect accept reject disconnect help"
                elif ((n == 1)); then
                        case ${args[0]} in
                        connect | accept | reject | disconnect) words_now=$(_roam_peers) ;;
                        esac
                elif ((n == 2)) && [[ ${args[0]} == connect ]]; then
                        words_now="push-button show-pin pin"
                fi
                ;;
        bt)
                if ((n == 0)); then
                        words_now="power discoverable pairable scan pair trust untrust connect
                                disconnect remove join leave answer"
                elif ((n == 1)); then
                        case ${args[0]} in
                        power | discoverable | pairable) words_now="on off" ;;
                        pair | trust | untrust | connect | disconnect | remove | join | leave)
                                words_now=$(_roam_bt_addresses)
                                ;;
                        esac
                elif ((n == 2)) && [[ ${args[0]} == answer ]]; then
                        words_now="yes no"
                fi
                ;;
        nfc)
                if ((n == 0)); then
                        words_now="import accept reject"
                elif [[ ${args[0]} == import && $n == 1 ]]; then
                        COMPREPLY=($(compgen -f -- "$cur"))
                        return
                fi
                ;;
        network)
                if ((n == 0)); then
                        words_now="trust"
                elif ((n == 1)); then
                        words_now="home work public untrusted"
                elif ((n == 2)); then
                        words_now=$(_roam_links)
                fi
                ;;
        wifi)
                if ((n == 0)); then
                        words_now="list scan join forget autoconnect priority join-uri share enroll $(_roam_wifi_links)"
                elif ((n == 1)) && [[ ${args[0]} == list || ${args[0]} == scan || ${args[0]} == enroll ]]; then
                        words_now=$(_roam_wifi_links)
                elif ((n == 2)) && [[ ${args[0]} == autoconnect ]]; then
                        words_now="on off"
                fi
                ;;
        firewall)
                if ((n == 0)); then
                        words_now="check"
                elif ((n == 1)); then
                        words_now="tcp udp"
                elif ((n == 3)); then
                        words_now=$(_roam_links)
                fi
                ;;
        esac
        COMPREPLY=($(compgen -W "$words_now" -- "$cur"))
} &&
        complete -F _roam roam

# ex: filetype=sh
