#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The roam test world: network namespaces that shape a device (roamd's home) and the
# networks its uplinks attach to. See tests/world/README.md and `world.sh help`.
#
# Everything lives in namespaces named roam-NAME-*; state in /run/roam-world/NAME; a cgroup
# subtree roam-world-NAME under the cgroup2 mount. The host's network namespace, its
# /etc/resolv.conf and its dhcpcd/dnsmasq files are never touched.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
                exec sudo -- "$0" "$@"
        fi
        echo "world.sh: must run as root (and sudo is not installed)" >&2
        exit 1
fi

HERE=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
BASE=/run/roam-world
SUFFIXES="dev tv inet home living dead"
NETWORKS="home living dead"
UPLINKS="wifi0 cell0 eth0"
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

die() { echo "world.sh: $*" >&2; exit 1; }
log() { [ -n "${WORLD_QUIET:-}" ] || echo "world: $*" >&2; }

usage() {
        cat <<EOF
usage: world.sh COMMAND ...
  up NAME [--roamd PATH] [--roam PATH] [--no-wait]
                               build world NAME (waits for wifi0/cell0 leases unless --no-wait)
  down NAME                    tear world NAME down (idempotent, works on half-built worlds)
  down-all                     tear every world down
  roamd-start NAME [ARGS...]   start roamd in the device, wait for org.roam1 on the bus
  roamd-stop NAME [SIGNAL]     send SIGNAL (default TERM) and wait until roamd is gone
  roamd-kill9 NAME             SIGKILL roamd and wait until it is gone
  roamd-signal NAME SIGNAL     send a signal to roamd, do not wait
  roamd-pid NAME               print roamd's pid (exit 1 when not running)
  move NAME UPLINK NETWORK     re-attach UPLINK (wifi0|cell0|eth0|extra link) to home|living|dead
  carrier NAME UPLINK on|off   restore/cut the carrier of UPLINK
  internet NAME on|off         connect/cut the home network's way to the internet
  dhcpcd-restart NAME          restart the device's dhcpcd from scratch, wait for leases
  add-link NAME IFNAME         add a veth IFNAME to the device (peer in the dead network)
  del-link NAME IFNAME         remove it again
  exec NAME SUFFIX CMD...      run CMD in namespace roam-NAME-SUFFIX
                               (dev: device mount+uts+net namespaces, bus address set)
  status NAME [ARGS...]        run 'roam status ARGS' inside the device
  env NAME                     print shell assignments describing the world
  list                         list worlds
EOF
}

check_name() {
        [[ "${1:-}" =~ ^[A-Za-z0-9_]{1,16}$ ]] ||
                die "bad world name '${1:-}' (1-16 characters of [A-Za-z0-9_])"
}

cgroup2_mount() {
        # Field 5 is the mount point; after the ' - ' separator comes the fs type.
        awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
                /proc/self/mountinfo
}

setvars() {
        NAME=$1
        W=$BASE/$NAME
        NS_DEV=roam-$NAME-dev
        NS_TV=roam-$NAME-tv
        NS_INET=roam-$NAME-inet
        NS_HOME=roam-$NAME-home
        NS_LIVING=roam-$NAME-living
        NS_DEAD=roam-$NAME-dead
        CG2=$(cgroup2_mount)
        CGW=${CG2:+$CG2/roam-world-$NAME}
        BUS=unix:path=$W/bus
}

innet() { # innet NS CMD...
        local ns=$1; shift
        nsenter --net=/run/netns/"$ns" -- "$@"
}

indev() { # indev CMD...: the device's mount, uts and net namespaces
        local wd=/
        [ -d "$PWD" ] && wd=$PWD
        nsenter --mount="$W/mnt" --uts="$W/uts" --net=/run/netns/"$NS_DEV" --wd="$wd" -- \
                env DBUS_SYSTEM_BUS_ADDRESS="$BUS" "$@"
}

# spawn SUBCGROUP LOG CMD...: run CMD in the background in cgroup roam-world-NAME/SUBCGROUP
# with default signal dispositions and no inherited stdio. Prints the pid.
spawn() {
        local sub=$1 logf=$2; shift 2
        if [ -n "$CGW" ]; then
                mkdir -p "$CGW/$sub"
        fi
        (
                if [ -n "$CGW" ]; then echo "$BASHPID" >"$CGW/$sub/cgroup.procs"; fi
                exec env --default-signal "$@" </dev/null >>"$logf" 2>&1
        ) &
        echo $!
}

# run_in_cg SUBCGROUP CMD...: run CMD in the foreground inside the world cgroup (for daemons
# that fork themselves).
run_in_cg() {
        local sub=$1; shift
        if [ -n "$CGW" ]; then
                mkdir -p "$CGW/$sub"
        fi
        (
                if [ -n "$CGW" ]; then echo "$BASHPID" >"$CGW/$sub/cgroup.procs"; fi
                exec env --default-signal "$@" </dev/null
        )
}

alive() { # alive PID: running and not a zombie
        local pid=$1 st
        [ -n "$pid" ] && [ -r /proc/"$pid"/stat ] || return 1
        st=$(awk '{ sub(/^.*\) /, ""); print $1 }' /proc/"$pid"/stat 2>/dev/null) || return 1
        [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

wait_until() { # wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds
        local deadline=$((SECONDS + $1)); shift
        local n=0
        while ! "$@"; do
                if [ $SECONDS -ge $deadline ]; then return 1; fi
                n=$((n + 1))
                sleep 0.1
        done
}

nooffload() { # nooffload NS IF: veth hands DHCP replies with partial checksums otherwise
        innet "$1" ethtool -K "$2" tx off >/dev/null 2>&1 || true
}

sysctl_ns() { # sysctl_ns NS KEY=VALUE...
        local ns=$1; shift
        innet "$ns" sysctl -q -w "$@" >/dev/null
}

# ---------------------------------------------------------------------------------------------
# up

write_configs() {
        mkdir -p "$W/etc-roam" "$W/var-lib-roam" "$W/var-lib-dhcpcd" "$W/etc-upper" \
                "$W/etc-work" "$W/varlib-upper" "$W/varlib-work" "$W/devrun"
        cat >"$W/roamd.conf.default" <<EOF
[Daemon]
LogLevel=debug
[Bearers]
wifi0=wifi
cell0=cellular
eth0=ethernet
EOF
        # Connectivity probes against the world's own check server, when this roamd has
        # them (it checks the file; an older roamd refuses the unknown section).
        cat >"$W/probe.conf" <<EOF
[Probe]
HttpURL=http://probe.roam.test/roam-probe
HttpsURL=https://probe.roam.test/roam-probe
ExpectBody=roam-online\n
ExpectAddresses=203.0.113.10 2001:db8:ff::10
CAFile=$W/ca/ca.pem
EOF
        cat "$W/roamd.conf.default" "$W/probe.conf" >"$W/roamd.conf.probe"
        if [ -x "$ROAMD" ] && "$ROAMD" --check-config --config "$W/roamd.conf.probe" \
                >/dev/null 2>"$W/probe.check"; then
                mv "$W/roamd.conf.probe" "$W/roamd.conf.default"
        elif [ -x "$ROAMD" ]; then
                log "roamd refuses the [Probe] section, running without it: $(head -c 300 "$W/probe.check")"
        fi
        rm -f "$W/roamd.conf.probe" "$W/probe.check"
        cp "$W/roamd.conf.default" "$W/etc-roam/roamd.conf"
        echo "# written by dhcpcd inside world $NAME" >"$W/resolv.conf"

        cat >"$W/dhcpcd.conf" <<EOF
# dhcpcd of the roam test world $NAME (device namespace)
allowinterfaces wifi0 cell0 eth0
# No udev in the world: do not wait for it to initialise interfaces.
nodev
duid
persistent
noarp
noipv4ll
option rapid_commit
option domain_name_servers, domain_name, domain_search
option interface_mtu
require dhcp_server_identifier
# dhcpcd 9.4.1 has no name for the RFC 8910 captive portal options: define them.
define 114 string captive_portal_uri
option captive_portal_uri
define6 103 string captive_portal_uri
# Keep hooks away from the host's hostname, NTP and timezone.
nohook hostname, ntp, chrony, timesyncd, openntpd, wpa_supplicant, timezone, yp, lookup-hostname
EOF

        local policy=$REPO/data/org.roam1.conf
        [ -r "$policy" ] || die "missing $policy"
        cat >"$W/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- Private system bus of roam test world $NAME, modelled on Debian's system.conf. -->
<busconfig>
  <type>system</type>
  <fork/>
  <pidfile>$W/dbus.pid</pidfile>
  <auth>EXTERNAL</auth>
  <listen>unix:path=$W/bus</listen>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"
          send_member="UpdateActivationEnvironment"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Debug.Stats"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Debug.Stats"/>
  </policy>
  <include>$policy</include>
</busconfig>
EOF
}

make_ca() { # a CA of the world and a certificate for the check server
        local d=$W/ca
        mkdir -p "$d"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -keyout "$d/ca.key" -out "$d/ca.pem" -days 30 -subj "/CN=roam world $NAME CA" \
                -addext basicConstraints=critical,CA:TRUE \
                -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -keyout "$d/probe.key" -out "$d/probe.csr" -subj "/CN=probe.roam.test" 2>/dev/null
        printf '%s\n' "subjectAltName=DNS:probe.roam.test,IP:203.0.113.10,IP:2001:db8:ff::10" \
                "basicConstraints=CA:FALSE" "extendedKeyUsage=serverAuth" >"$d/probe.ext"
        openssl x509 -req -in "$d/probe.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
                -CAcreateserial -out "$d/probe.pem" -days 30 -extfile "$d/probe.ext" 2>/dev/null
        chmod 0644 "$d/ca.pem"
}

mk_router_bridge() { # NS V4/PLEN V6/PLEN (either may be empty)
        local ns=$1 a4=$2 a6=$3
        innet "$ns" ip link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0
        if [ -n "$a4" ]; then innet "$ns" ip addr add "$a4" dev br0; fi
        if [ -n "$a6" ]; then innet "$ns" ip addr add "$a6" dev br0 nodad; fi
        innet "$ns" ip link set br0 up
        nooffload "$ns" br0
}

attach_port() { # attach_port NS PORT: enslave PORT to NS's br0 and set it up
        local ns=$1 port=$2
        sysctl_ns "$ns" "net.ipv6.conf.$port.disable_ipv6=1" || true
        innet "$ns" ip link set "$port" master br0
        innet "$ns" ip link set "$port" up
        nooffload "$ns" "$port"
}

start_dnsmasq() { # NET V4RANGE ROUTER DNS4 DNS6 V6RANGE DOMAIN EXTRA...
        local net=$1 range4=$2 router=$3 dns4=$4 dns6=$5 range6=$6 domain=$7; shift 7
        local ns=roam-$NAME-$net
        run_in_cg "$net" nsenter --net=/run/netns/"$ns" -- dnsmasq \
                --conf-file=/dev/null --user=root --group=root \
                --no-resolv --no-hosts --no-ping --bind-interfaces --interface=br0 \
                --dhcp-authoritative --dhcp-rapid-commit \
                --dhcp-leasefile="$W/$net-dnsmasq.leases" \
                --pid-file="$W/$net-dnsmasq.pid" \
                --log-facility="$W/$net-dnsmasq.log" --log-dhcp --log-queries \
                --dhcp-range="$range4" --dhcp-range="$range6" \
                --enable-ra --ra-param=br0,10,1800 \
                --dhcp-option=option:router,"$router" \
                --dhcp-option=option:dns-server,"$dns4" \
                --dhcp-option=option6:dns-server,"[$dns6]" \
                --domain="$domain" \
                --dhcp-option=option:domain-search,"$domain" \
                --dhcp-option=option6:domain-search,"$domain" \
                --address=/probe.roam.test/203.0.113.10 \
                --address=/probe.roam.test/2001:db8:ff::10 --local=/test/ \
                "$@" >>"$W/$net-dnsmasq.out" 2>&1
}

build_world() {
        local ns
        mkdir -p "$W"
        echo "$ROAMD" >"$W/roamd-path"
        echo "$ROAM" >"$W/roam-path"
        # A private mount of the world directory, so the device's mount namespace can be
        # bound into it.
        mount --bind "$W" "$W"
        mount --make-private "$W"
        make_ca
        write_configs
        if [ -n "$CGW" ]; then mkdir -p "$CGW"; fi

        for s in $SUFFIXES; do
                ns=roam-$NAME-$s
                ip netns add "$ns"
                innet "$ns" ip link set lo up
        done
        # Nothing in the dead network may answer, not even IPv6 link-local.
        sysctl_ns "$NS_DEAD" net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1

        log "internet"
        innet "$NS_INET" ip addr add 203.0.113.10/32 dev lo
        innet "$NS_INET" ip addr add 2001:db8:ff::10/128 dev lo
        innet "$NS_HOME" ip link add wan0 type veth peer name isp0 netns "$NS_INET"
        innet "$NS_INET" ip addr add 198.51.100.2/30 dev isp0
        innet "$NS_INET" ip addr add 2001:db8:100::2/64 dev isp0 nodad
        innet "$NS_INET" ip link set isp0 up
        nooffload "$NS_INET" isp0
        innet "$NS_HOME" ip addr add 198.51.100.1/30 dev wan0
        innet "$NS_HOME" ip addr add 2001:db8:100::1/64 dev wan0 nodad
        innet "$NS_HOME" ip link set wan0 up
        nooffload "$NS_HOME" wan0
        innet "$NS_INET" ip route add 192.0.2.0/26 via 198.51.100.1
        innet "$NS_INET" ip -6 route add 2001:db8:1::/64 via 2001:db8:100::1
        WORLD_PIDS+=("$(spawn inet "$W/inet-httpd.log" nsenter --net=/run/netns/"$NS_INET" -- \
                "$PY" "$HERE/httpd.py" --port 80 --pidfile "$W/inet-httpd.pid" \
                --tls-port 443 --cert "$W/ca/probe.pem" --key "$W/ca/probe.key" \
                --route '/roam-probe=roam-online\n')")

        log "home"
        # Routers answer every probe with ICMP: the kernel's ICMP rate limit would turn a quick
        # "unreachable" into a timeout after a few probe rounds, and verdicts into noise.
        sysctl_ns "$NS_HOME" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
                net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
        mk_router_bridge "$NS_HOME" 192.0.2.1/26 2001:db8:1::1/64
        innet "$NS_HOME" ip route add default via 198.51.100.2
        innet "$NS_HOME" ip -6 route add default via 2001:db8:100::2

        log "living room"
        sysctl_ns "$NS_LIVING" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
                net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
        mk_router_bridge "$NS_LIVING" 192.0.2.65/26 2001:db8:2::1/64
        # No way out: the internet is unreachable (ICMP), not silently dropped.
        innet "$NS_LIVING" ip route add unreachable default
        innet "$NS_LIVING" ip -6 route add unreachable default
        innet "$NS_TV" ip link add tv0 type veth peer name up-tv0 netns "$NS_LIVING"
        innet "$NS_TV" ip addr add 192.0.2.70/26 dev tv0
        innet "$NS_TV" ip addr add 2001:db8:2::70/64 dev tv0 nodad
        innet "$NS_TV" ip link set tv0 up
        innet "$NS_TV" ip route add default via 192.0.2.65
        nooffload "$NS_TV" tv0
        attach_port "$NS_LIVING" up-tv0
        WORLD_PIDS+=("$(spawn tv "$W/tv-httpd.log" nsenter --net=/run/netns/"$NS_TV" -- \
                "$PY" "$HERE/httpd.py" --port 80 --pidfile "$W/tv-httpd.pid" \
                --route '/=roam-tv\n')")

        log "dead network"
        mk_router_bridge "$NS_DEAD" "" ""

        log "device"
        innet "$NS_DEV" ip link add wifi0 type veth peer name up-wifi0 netns "$NS_HOME"
        innet "$NS_DEV" ip link add cell0 type veth peer name up-cell0 netns "$NS_LIVING"
        innet "$NS_DEV" ip link add eth0 type veth peer name up-eth0 netns "$NS_DEAD"
        attach_port "$NS_HOME" up-wifi0
        attach_port "$NS_LIVING" up-cell0
        attach_port "$NS_DEAD" up-eth0
        for l in $UPLINKS; do innet "$NS_DEV" ip link set "$l" up; done

        start_dnsmasq home 192.0.2.10,192.0.2.59,255.255.255.192,5m 192.0.2.1 192.0.2.1 \
                2001:db8:1::1 2001:db8:1::100,2001:db8:1::1ff,64,1h home.test
        start_dnsmasq living 192.0.2.80,192.0.2.120,255.255.255.192,5m 192.0.2.65 192.0.2.65 \
                2001:db8:2::1 2001:db8:2::100,2001:db8:2::1ff,64,1h living.test \
                --address=/tv.living.test/192.0.2.70 --address=/tv.living.test/2001:db8:2::70

        log "device mount namespace"
        : >"$W/mnt"
        : >"$W/uts"
        unshare --mount="$W/mnt" --uts="$W/uts" --propagation private -- hostname "roam-$NAME"
        # Mount a fresh sysfs from inside the device's network namespace (roamd classifies
        # links from /sys/class/net), cgroup2 below it, private /run, /etc, /var/lib.
        nsenter --mount="$W/mnt" --uts="$W/uts" --net=/run/netns/"$NS_DEV" --wd=/ -- \
                /bin/bash -euo pipefail -c '
W=$1
umount -n -R /sys
mount -n -t sysfs sysfs /sys
mount -n -t cgroup2 cgroup2 /sys/fs/cgroup
mount -n -t tmpfs -o mode=0755 tmpfs "$W/devrun"
mkdir -p "$W/devrun/roam-world/${W##*/}" "$W/devrun/dhcpcd" "$W/devrun/dbus" "$W/devrun/lock"
mount -n --bind "$W" "$W/devrun/roam-world/${W##*/}"
mount -n --move "$W/devrun" /run
mount -n -t overlay overlay -o "lowerdir=/etc,upperdir=$W/etc-upper,workdir=$W/etc-work" /etc
mkdir -p /etc/roam
mount -n --bind "$W/etc-roam" /etc/roam
mount -n --bind "$W/resolv.conf" /etc/resolv.conf
mount -n -t overlay overlay -o "lowerdir=/var/lib,upperdir=$W/varlib-upper,workdir=$W/varlib-work" /var/lib
mkdir -p /var/lib/roam /var/lib/dhcpcd
mount -n --bind "$W/var-lib-roam" /var/lib/roam
mount -n --bind "$W/var-lib-dhcpcd" /var/lib/dhcpcd
' world-devns "$W"

        log "bus"
        run_in_cg bus nsenter --mount="$W/mnt" --uts="$W/uts" --net=/run/netns/"$NS_DEV" --wd=/ -- \
                dbus-daemon --config-file="$W/bus.conf" >>"$W/dbus.log" 2>&1
        [ -S "$W/bus" ] || die "dbus-daemon did not create $W/bus"

        log "dhcpcd"
        start_dhcpcd

        wait_until 10 test -s "$W/inet-httpd.pid" || die "internet HTTP server did not start"
        wait_until 10 test -s "$W/tv-httpd.pid" || die "TV HTTP server did not start"
}

start_dhcpcd() {
        run_in_cg dhcpcd nsenter --mount="$W/mnt" --uts="$W/uts" --net=/run/netns/"$NS_DEV" --wd=/ -- \
                dhcpcd --config "$W/dhcpcd.conf" --logfile "$W/dhcpcd.log" --debug -b -M \
                >>"$W/dhcpcd.out" 2>&1
}

# dhcpcd-restart NAME: kill the device's dhcpcd, forget what it configured, start it again
# and wait for the leases. (A burst of thousands of rtnetlink messages overflows dhcpcd's
# route socket; dhcpcd 9.4.1 then loses track of its IPv6 default routes.)
cmd_dhcpcd_restart() {
        need_world "${1:-}"
        if [ -n "$CGW" ] && [ -e "$CGW/dhcpcd/cgroup.kill" ]; then
                echo 1 >"$CGW/dhcpcd/cgroup.kill"
                wait_until 10 grep -q '^populated 0' "$CGW/dhcpcd/cgroup.events" ||
                        die "dhcpcd did not die"
        else
                indev pkill -9 -x dhcpcd || true
        fi
        for l in $UPLINKS; do
                indev ip addr flush dev "$l" scope global 2>/dev/null || true
                indev ip route flush dev "$l" 2>/dev/null || true
                indev ip -6 route flush dev "$l" 2>/dev/null || true
        done
        indev sh -c 'rm -rf /run/dhcpcd/*' || true
        start_dhcpcd
        wait_until 40 has_lease wifi0 && wait_until 20 has_lease cell0 ||
                die "no leases after restarting dhcpcd"
}

has_lease() { # has_lease IF: global v4 + v6 addresses and v4 + v6 default routes
        local ifn=$1
        indev ip -4 addr show dev "$ifn" scope global | grep -q inet &&
                indev ip -6 addr show dev "$ifn" scope global -tentative | grep -q inet6 &&
                indev ip -4 route show default dev "$ifn" | grep -q . &&
                indev ip -6 route show default dev "$ifn" | grep -q .
}

cmd_up() {
        local name=${1:-}
        check_name "$name"; shift
        setvars "$name"
        ROAMD=$REPO/build/service/roamd
        ROAM=$REPO/build/tui/roam
        local nowait=
        while [ $# -gt 0 ]; do
                case $1 in
                --roamd) ROAMD=$(readlink -f "$2"); shift 2 ;;
                --roamd=*) ROAMD=$(readlink -f "${1#*=}"); shift ;;
                --roam) ROAM=$(readlink -f "$2"); shift 2 ;;
                --roam=*) ROAM=$(readlink -f "${1#*=}"); shift ;;
                --no-wait) nowait=1; shift ;;
                *) die "up: unknown option $1" ;;
                esac
        done
        [ ! -e "$W" ] || die "world $NAME exists ($W): run 'world.sh down $NAME' first"
        for s in $SUFFIXES; do
                [ ! -e /run/netns/roam-$NAME-$s ] || die "namespace roam-$NAME-$s exists: run 'world.sh down $NAME' first"
        done
        for t in ip nsenter unshare dnsmasq dhcpcd dbus-daemon ethtool busctl openssl "$PY"; do
                command -v "$t" >/dev/null || die "missing $t"
        done
        WORLD_PIDS=()
        UP_DONE=
        trap 'rc=$?; if [ -z "$UP_DONE" ]; then echo "world.sh: up $NAME failed, tearing it down" >&2; WORLD_QUIET=1 do_down || true; fi; exit $rc' EXIT
        trap 'exit 130' INT TERM
        build_world
        if [ -z "$nowait" ]; then
                log "waiting for leases on wifi0 and cell0"
                if ! wait_until 40 has_lease wifi0 || ! wait_until 20 has_lease cell0; then
                        indev ip addr >&2 || true
                        indev ip route >&2 || true
                        indev ip -6 route >&2 || true
                        tail -n 40 "$W/dhcpcd.log" >&2 || true
                        die "the device got no leases (see $W/dhcpcd.log)"
                fi
        fi
        UP_DONE=1
        log "world $NAME is up (bus: $BUS)"
}

# ---------------------------------------------------------------------------------------------
# down

ns_inode() { stat -L -c %i "$1" 2>/dev/null || true; }

# world_pids: every process in one of the world's network namespaces or in its device mount
# namespace, or in its cgroup subtree.
world_pids() {
        local inodes=() f p l
        for s in $SUFFIXES; do
                f=/run/netns/roam-$NAME-$s
                [ -e "$f" ] && inodes+=("net:[$(ns_inode "$f")]")
        done
        [ -f "$W/mnt" ] && mountpoint -q "$W/mnt" 2>/dev/null && inodes+=("mnt:[$(ns_inode "$W/mnt")]")
        for p in /proc/[0-9]*; do
                p=${p#/proc/}
                [ "$p" = $$ ] && continue
                for l in "$(readlink /proc/"$p"/ns/net 2>/dev/null)" "$(readlink /proc/"$p"/ns/mnt 2>/dev/null)"; do
                        [ -n "$l" ] || continue
                        for i in "${inodes[@]}"; do
                                if [ "$l" = "$i" ]; then echo "$p"; continue 3; fi
                        done
                done
        done
        if [ -n "$CGW" ] && [ -d "$CGW" ]; then
                find "$CGW" -name cgroup.procs -exec cat {} + 2>/dev/null || true
        fi
}

do_down() {
        local pids n=0
        set +e
        if [ -n "$CGW" ] && [ -e "$CGW/cgroup.kill" ]; then
                echo 1 >"$CGW/cgroup.kill" 2>/dev/null
        fi
        while :; do
                pids=$(world_pids | sort -u | grep -vx "$$")
                [ -z "$pids" ] && break
                # shellcheck disable=SC2086
                kill -9 $pids 2>/dev/null
                n=$((n + 1))
                if [ $n -gt 100 ]; then
                        echo "world.sh: processes of world $NAME refuse to die: $pids" >&2
                        break
                fi
                sleep 0.05
                # zombies have no namespaces: they drop out of world_pids by themselves
        done
        for f in "$W/mnt" "$W/uts"; do
                if mountpoint -q "$f" 2>/dev/null; then umount "$f" || umount -l "$f"; fi
        done
        for s in $SUFFIXES; do
                if [ -e /run/netns/roam-$NAME-$s ]; then ip netns del roam-$NAME-$s; fi
        done
        if [ -n "$CGW" ] && [ -d "$CGW" ]; then
                # deepest first
                find "$CGW" -depth -type d | while read -r d; do
                        wait_until 5 grep -q '^populated 0' "$d/cgroup.events" 2>/dev/null
                        rmdir "$d" 2>/dev/null || echo "world.sh: cannot remove cgroup $d" >&2
                done
        fi
        n=0
        while mountpoint -q "$W" 2>/dev/null && [ $n -lt 10 ]; do
                umount "$W" 2>/dev/null || umount -l "$W"
                n=$((n + 1))
        done
        rm -rf "$W"
        rmdir "$BASE" 2>/dev/null
        set -e
        return 0
}

cmd_down() {
        check_name "${1:-}"
        setvars "$1"
        do_down
}

world_names() {
        local n s f
        {
                if [ -d "$BASE" ]; then
                        for f in "$BASE"/*; do [ -d "$f" ] && echo "${f##*/}"; done
                fi
                for f in /run/netns/roam-*; do
                        [ -e "$f" ] || continue
                        n=${f#/run/netns/roam-}
                        for s in $SUFFIXES; do
                                if [ "${n%-"$s"}" != "$n" ]; then echo "${n%-"$s"}"; fi
                        done
                done
                local cg2
                cg2=$(cgroup2_mount)
                if [ -n "$cg2" ]; then
                        for f in "$cg2"/roam-world-*; do
                                [ -d "$f" ] && echo "${f##*/roam-world-}"
                        done
                fi
        } | sort -u
}

cmd_down_all() {
        local n
        for n in $(world_names); do
                [[ "$n" =~ ^[A-Za-z0-9_]{1,16}$ ]] || continue
                (setvars "$n"; do_down)
        done
}

# ---------------------------------------------------------------------------------------------
# roamd

need_world() {
        check_name "${1:-}"
        setvars "$1"
        [ -d "$W" ] && [ -e /run/netns/"$NS_DEV" ] || die "no world $NAME (run 'world.sh up $NAME')"
        ROAMD=$(cat "$W/roamd-path" 2>/dev/null || echo "$REPO/build/service/roamd")
        ROAM=$(cat "$W/roam-path" 2>/dev/null || echo "$REPO/build/tui/roam")
}

roamd_pid() {
        local pid
        pid=$(cat "$W/roamd.pid" 2>/dev/null) || return 1
        alive "$pid" || return 1
        echo "$pid"
}

bus_has_roamd() {
        busctl --address="$BUS" call org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus NameHasOwner s org.roam1 2>/dev/null | grep -q true
}

cmd_roamd_start() {
        need_world "${1:-}"; shift
        [ -x "$ROAMD" ] || die "no roamd binary at $ROAMD (build it: ninja -C build)"
        if roamd_pid >/dev/null; then die "roamd already runs in world $NAME (pid $(roamd_pid))"; fi
        local wd=/ pid
        echo "=== roamd-start $(date '+%F %T.%N') ===" >>"$W/roamd.log"
        pid=$(spawn roamd "$W/roamd.log" nsenter --mount="$W/mnt" --uts="$W/uts" \
                --net=/run/netns/"$NS_DEV" --wd="$wd" -- \
                env DBUS_SYSTEM_BUS_ADDRESS="$BUS" "$ROAMD" --config /etc/roam/roamd.conf "$@")
        echo "$pid" >"$W/roamd.pid"
        local deadline=$((SECONDS + 20))
        while ! bus_has_roamd; do
                if ! alive "$pid"; then
                        tail -n 20 "$W/roamd.log" >&2
                        die "roamd exited before it took org.roam1 (log: $W/roamd.log)"
                fi
                if [ $SECONDS -ge $deadline ]; then
                        tail -n 20 "$W/roamd.log" >&2
                        die "roamd did not take org.roam1 within 20 s (log: $W/roamd.log)"
                fi
                sleep 0.05
        done
        echo "$pid"
}

wait_gone() { # wait_gone PID SECONDS
        wait_until "$2" eval '! alive '"$1"
}

cmd_roamd_stop() {
        need_world "${1:-}"
        local sig=${2:-TERM} pid
        pid=$(roamd_pid) || { rm -f "$W/roamd.pid"; return 0; }
        kill -s "$sig" "$pid"
        if ! wait_gone "$pid" 10; then
                die "roamd (pid $pid) did not exit within 10 s of SIG$sig"
        fi
        rm -f "$W/roamd.pid"
}

cmd_roamd_kill9() {
        cmd_roamd_stop "${1:-}" KILL
}

cmd_roamd_signal() {
        need_world "${1:-}"
        local pid
        pid=$(roamd_pid) || die "roamd does not run in world $NAME"
        kill -s "${2:?signal}" "$pid"
}

cmd_roamd_pid() {
        need_world "${1:-}"
        roamd_pid
}

# ---------------------------------------------------------------------------------------------
# links

peer_of() { # peer name of a device-side uplink
        case $1 in
        wifi0 | cell0 | eth0) echo "up-$1" ;;
        *) echo "dl$(printf %s "$1" | md5sum | cut -c1-12)" ;;
        esac
}

find_peer_ns() { # find_peer_ns PEER: print the network holding it
        local n
        for n in $NETWORKS; do
                if innet "roam-$NAME-$n" ip link show dev "$1" >/dev/null 2>&1; then
                        echo "$n"; return 0
                fi
        done
        return 1
}

cmd_move() {
        need_world "${1:-}"
        local up=${2:?uplink} net=${3:?network} peer from
        [[ " $NETWORKS " = *" $net "* ]] || die "unknown network $net (one of: $NETWORKS)"
        peer=$(peer_of "$up")
        from=$(find_peer_ns "$peer") || die "uplink $up (peer $peer) not found"
        [ "$from" != "$net" ] || return 0
        innet "roam-$NAME-$from" ip link set "$peer" nomaster
        innet "roam-$NAME-$from" ip link set "$peer" netns "roam-$NAME-$net"
        attach_port "roam-$NAME-$net" "$peer"
}

cmd_carrier() {
        need_world "${1:-}"
        local up=${2:?uplink} how=${3:?on|off} peer from
        peer=$(peer_of "$up")
        from=$(find_peer_ns "$peer") || die "uplink $up (peer $peer) not found"
        case $how in
        on) innet "roam-$NAME-$from" ip link set "$peer" up ;;
        off) innet "roam-$NAME-$from" ip link set "$peer" down ;;
        *) die "carrier: on or off, not $how" ;;
        esac
}

cmd_internet() { # the home router's way to the internet: on or off (unreachable)
        need_world "${1:-}"
        case ${2:-} in
        on)
                innet "$NS_HOME" ip route replace default via 198.51.100.2
                innet "$NS_HOME" ip -6 route replace default via 2001:db8:100::2 ;;
        off)
                innet "$NS_HOME" ip route replace unreachable default
                innet "$NS_HOME" ip -6 route replace unreachable default ;;
        *) die "internet: on or off" ;;
        esac
}

cmd_add_link() {
        need_world "${1:-}"
        local ifn=${2:?ifname} peer
        peer=$(peer_of "$ifn")
        innet "$NS_DEV" ip link add "$ifn" type veth peer name "$peer" netns "$NS_DEAD"
        attach_port "$NS_DEAD" "$peer"
        innet "$NS_DEV" ip link set "$ifn" up
}

cmd_del_link() {
        need_world "${1:-}"
        innet "$NS_DEV" ip link del "${2:?ifname}"
}

cmd_exec() {
        need_world "${1:-}"
        local s=${2:?namespace suffix}; shift 2
        [ $# -gt 0 ] || die "exec: no command"
        if [ "$s" = dev ]; then
                indev "$@"
        else
                [[ " $SUFFIXES " = *" $s "* ]] || die "unknown namespace suffix $s (one of: $SUFFIXES)"
                nsenter --net=/run/netns/"roam-$NAME-$s" -- "$@"
        fi
}

cmd_status() {
        need_world "${1:-}"; shift
        [ -x "$ROAM" ] || die "no roam client at $ROAM"
        indev "$ROAM" status "$@"
}

cmd_env() {
        need_world "${1:-}"
        cat <<EOF
WORLD_NAME=$NAME
WORLD_DIR=$W
DBUS_SYSTEM_BUS_ADDRESS=$BUS
WORLD_CGROUP=$CGW
WORLD_ROAMD=$ROAMD
WORLD_ROAM=$ROAM
EOF
}

cmd=${1:-help}
[ $# -gt 0 ] && shift
case $cmd in
up) cmd_up "$@" ;;
down) cmd_down "$@" ;;
down-all) cmd_down_all ;;
roamd-start) cmd_roamd_start "$@" ;;
roamd-stop) cmd_roamd_stop "$@" ;;
roamd-kill9) cmd_roamd_kill9 "$@" ;;
roamd-signal) cmd_roamd_signal "$@" ;;
roamd-pid) cmd_roamd_pid "$@" ;;
move) cmd_move "$@" ;;
carrier) cmd_carrier "$@" ;;
internet) cmd_internet "$@" ;;
dhcpcd-restart) cmd_dhcpcd_restart "$@" ;;
add-link) cmd_add_link "$@" ;;
del-link) cmd_del_link "$@" ;;
exec) cmd_exec "$@" ;;
status) cmd_status "$@" ;;
env) cmd_env "$@" ;;
list) world_names ;;
help | -h | --help) usage ;;
*) usage >&2; exit 2 ;;
esac
