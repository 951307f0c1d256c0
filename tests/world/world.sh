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
SUFFIXES="dev tv inet home living dead cafe silent httpsblocked mobile v6only delay"
NETWORKS="home living dead cafe silent httpsblocked mobile v6only"
UPLINKS="wifi0 cell0 eth0"
DEFAULT_NETS="wifi0=home cell0=living eth0=dead"
# The device's route metrics (dhcpcd.conf): ethernet wins, then WiFi, then cellular.
METRIC_eth0=100
METRIC_wifi0=600
METRIC_cell0=700
# The VPN (tests/servers/tunvpn.py): its endpoint in the internet, the inner addresses of
# its server and of the device's vpn0, the server's DNS on its inner addresses.
VPN_ENDPOINT4=203.0.113.20
VPN_ENDPOINT6=2001:db8:ff::20
VPN_PORT=1194
VPN_SERVER_INNER="203.0.113.65/26 2001:db8:fe::1/64"
VPN_CLIENT_INNER="203.0.113.66/26 2001:db8:fe::2/64"
VPN_DNS="203.0.113.65 2001:db8:fe::1"
WHOAMI_PORT=7000
# cgroups of the device's services, below the world's cgroup
CG_ROAMD=system.slice/roamd.service
CG_DHCPCD=system.slice/dhcpcd.service
CG_BUS=system.slice/dbus.service
CG_VPN=system.slice/roam-vpn.service
CG_SSHD=system.slice/sshd.service
CG_WPA=system.slice/wpa_supplicant.service
CAFE_API=https://cafe.test/capport
CAFE_PAGE='<!DOCTYPE html><html><head><title>Cafe WiFi</title></head><body><h1>Welcome to the cafe</h1><form method="post" action="/login"><label>Room or table <input name="table"></label><button>Log in</button></form></body></html>\n'
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

die() { echo "world.sh: $*" >&2; exit 1; }
log() { [ -n "${WORLD_QUIET:-}" ] || echo "world: $*" >&2; }

usage() {
        cat <<EOF
usage: world.sh COMMAND ...
  up NAME [--roamd PATH] [--roam PATH] [--no-wait] [--cgroupns]
                               build world NAME (waits for wifi0/cell0 leases unless --no-wait);
                               --cgroupns: the device gets a cgroup namespace rooted at the
                               world's cgroup (its roamd sees no other cgroup; the demo's)
  down NAME                    tear world NAME down (idempotent, works on half-built worlds)
  down-all                     tear every world down
  roamd-start NAME [ARGS...]   start roamd in the device, wait for org.roam1 on the bus
  roamd-stop NAME [SIGNAL]     send SIGNAL (default TERM) and wait until roamd is gone
  roamd-kill9 NAME             SIGKILL roamd and wait until it is gone
  roamd-signal NAME SIGNAL     send a signal to roamd, do not wait
  roamd-pid NAME               print roamd's pid (exit 1 when not running)
  move NAME UPLINK NETWORK     re-attach UPLINK (wifi0|cell0|eth0|extra link) to
                               home|living|dead|cafe|silent|httpsblocked|mobile|v6only
  carrier NAME UPLINK on|off   restore/cut the carrier of UPLINK
  delay NAME UPLINK MS         put a delay line of MS ms each way between UPLINK and its
                               network (0: take it out again)
  uplink NAME UPLINK           print where UPLINK is: NETWORK on|off DELAY_MS
  dns64 NAME on|off            the IPv6-only network's DNS answers ipv4only.arpa (RFC 7050,
                               prefix 2001:db8:64::/96) or does not
  internet NAME on|off         connect/cut the home network's way to the internet
  cafe-login NAME              open the cafe: it forwards to the internet, its DNS tells the
                               truth, its RFC 8908 API says captive false
  cafe-logout NAME             close the cafe again (captive portal)
  cafe-logout-reset NAME       close it as a portal that refuses connections with TCP resets
                               (DNS truthful, HTTP taken to the portal, other TCP reset)
  cafe-portal NAME wispr [S]   the cafe's portal as the demo has it: its form ("Room or
                               table") logs in, and WISPr 1.0 with user guest, password
                               espresso; a login opens the cafe for S seconds (default
                               3600; a login within extends it); plain: the page alone
  reset NAME                   uplinks back to home/living/dead, carrier on, no delay,
                               internet on, cafe closed, VPN down, sshd and wifi off; prints
                               what it changed
  vpn NAME up [4|6]            start the VPN client in the device (tun vpn0, transport over
                               IPv4 or IPv6 to the endpoint), wait until it pings through
  vpn NAME down                stop it (vpn0 disappears)
  vpn NAME status              print "up PID" or "down"
  sshd NAME start|stop         a TCP line echo on port 22 of the device (SSH-like banner)
  wifi NAME on|off             wpa_supplicant for wifi0 (its control-socket double): a
                               station associated with each network's own SSID and BSSID,
                               following move and carrier; off: no wpa_supplicant
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
        NS_CAFE=roam-$NAME-cafe
        NS_SILENT=roam-$NAME-silent
        NS_HTTPSBLOCKED=roam-$NAME-httpsblocked
        NS_MOBILE=roam-$NAME-mobile
        NS_V6ONLY=roam-$NAME-v6only
        NS_DELAY=roam-$NAME-delay
        CG2=$(cgroup2_mount)
        CGW=${CG2:+$CG2/roam-world-$NAME}
        BUS=unix:path=$W/bus
        # up --cgroupns: the device's own cgroup namespace, rooted at the world's cgroup
        CGNS=
        if [ -e "$W/cgroupns.on" ]; then CGNS=$W/cgroupns; fi
}

innet() { # innet NS CMD...
        local ns=$1; shift
        nsenter --net=/run/netns/"$ns" -- "$@"
}

indev() { # indev CMD...: the device's mount, uts and net namespaces
        local wd=/
        [ -d "$PWD" ] && wd=$PWD
        nsenter --mount="$W/mnt" --uts="$W/uts" ${CGNS:+--cgroup="$CGNS"} --net=/run/netns/"$NS_DEV" --wd="$wd" -- \
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

all_gone() { # all_gone PID...: none of them runs (zombies count as gone)
        local p
        for p in "$@"; do
                if alive "$p"; then return 1; fi
        done
}

# wait_event SECONDS "SOURCES" CMD...: CMD is checked once every source is watched, then
# again whenever a source reports a change, until it succeeds (0) or SECONDS pass (1); no
# polling. SOURCES are tests/lib/waitevent.py's options (--file PATH, --netns NS, --pid PID,
# --bus-name ADDRESS NAME), word-split.
wait_event() {
        local secs=$1 src=$2 line fd hp; shift 2
        # shellcheck disable=SC2086
        exec {fd}< <(exec "$PY" "$REPO/tests/lib/waitevent.py" --timeout "$secs" $src)
        hp=$!
        if ! read -r -u "$fd" line || [ "$line" != ready ]; then
                exec {fd}<&-
                return 1
        fi
        while :; do
                if "$@"; then
                        kill "$hp" 2>/dev/null || true
                        exec {fd}<&-
                        return 0
                fi
                if ! read -r -u "$fd" line; then # the helper ended: time is up
                        exec {fd}<&-
                        return 1
                fi
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
vpn0=vpn
[LinkDNS]
vpn0=$VPN_DNS
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
# No random initial delays (RFC 2131 / 4861 / 8415 ask for up to 1-2 s): leases at once.
nodelay
option rapid_commit
option domain_name_servers, domain_name, domain_search
option interface_mtu
require dhcp_server_identifier
# dhcpcd 9.4.1 has no name for the RFC 8910 captive portal options: define them.
define 114 string captive_portal_uri
define6 103 request string captive_portal_uri
option captive_portal_uri
# RFC 4833 time zone (roamd's zone decision takes a lease's zone as a witness).
option posix_timezone, tzdb_timezone
# NTP servers (DHCPv4 option 42, DHCPv6 56 and 31): roamd hands them to chronyd.
option ntp_servers
option dhcp6_ntp_server
option dhcp6_sntp_servers
# Keep hooks away from the host's hostname, NTP and timezone.
nohook hostname, ntp, chrony, timesyncd, openntpd, wpa_supplicant, timezone, yp, lookup-hostname
# Route metrics (IPv4 and IPv6 routes alike), lowest wins: ethernet, then WiFi, then
# cellular, whatever the ifindexes (dhcpcd's default is 1000 + ifindex).
interface eth0
metric $METRIC_eth0
interface wifi0
metric $METRIC_wifi0
interface cell0
metric $METRIC_cell0
EOF

        # The policy is tests/lib/test-bus.conf, shared by every test bus; this adds where
        # the world's bus listens and that it forks once it does.
        local policy=$REPO/tests/lib/test-bus.conf
        [ -r "$policy" ] || die "missing $policy"
        cat >"$W/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- Private system bus of roam test world $NAME. -->
<busconfig>
  <fork/>
  <pidfile>$W/dbus.pid</pidfile>
  <listen>unix:path=$W/bus</listen>
  <include>$policy</include>
</busconfig>
EOF
}

make_cert() { # make_cert NAME CN SAN: a server certificate signed by the world's CA
        local d=$W/ca name=$1 cn=$2 san=$3
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -keyout "$d/$name.key" -out "$d/$name.csr" -subj "/CN=$cn" 2>/dev/null
        printf '%s\n' "subjectAltName=$san" \
                "basicConstraints=CA:FALSE" "extendedKeyUsage=serverAuth" >"$d/$name.ext"
        openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
                -CAcreateserial -out "$d/$name.pem" -days 30 -extfile "$d/$name.ext" 2>/dev/null
}

make_ca() { # a CA of the world and certificates for the check server and the cafe's portal
        local d=$W/ca
        mkdir -p "$d"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -keyout "$d/ca.key" -out "$d/ca.pem" -days 30 -subj "/CN=roam world $NAME CA" \
                -addext basicConstraints=critical,CA:TRUE \
                -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
        make_cert probe probe.roam.test "DNS:probe.roam.test,IP:203.0.113.10,IP:2001:db8:ff::10"
        make_cert cafe cafe.test "DNS:cafe.test,IP:192.0.2.129,IP:2001:db8:3::1"
        chmod 0644 "$d/ca.pem"
}

# Each network's router has a MAC address of its own (locally administered, 02:72:6d = "rm",
# then the network's number): a bridge without one takes the lowest MAC of its ports, and
# with the uplink's veth peer as its only port the "gateway" would move along with the
# uplink, so moving wifi0 from home to the cafe would keep the network's identity (roamd's
# gateway-mac) and with it home's firewall location.
router_mac() { # router_mac NETWORK
        case $1 in
        home) echo 02:72:6d:00:01:01 ;;
        living) echo 02:72:6d:00:02:01 ;;
        dead) echo 02:72:6d:00:03:01 ;;
        cafe) echo 02:72:6d:00:04:01 ;;
        silent) echo 02:72:6d:00:05:01 ;;
        httpsblocked) echo 02:72:6d:00:06:01 ;;
        mobile) echo 02:72:6d:00:07:01 ;;
        v6only) echo 02:72:6d:00:08:01 ;;
        *) die "no router MAC for network '$1'" ;;
        esac
}

# ... and, for wifi0 with `wifi NAME on`, an access point of its own: an SSID (spaces and
# all, as SSIDs have) and a BSSID next to the router's MAC. Moving wifi0 then changes the
# network's identity as on a laptop: roamd names it wifi:SSID:BSSID.
wifi_ssid() { # wifi_ssid NETWORK
        case $1 in
        home) echo "roam home" ;;
        living) echo "roam living room" ;;
        dead) echo "roam dead end" ;;
        cafe) echo "Cafe Libre" ;;
        silent) echo "roam silent" ;;
        httpsblocked) echo "roam no https" ;;
        mobile) echo "roam hotspot" ;;
        v6only) echo "roam v6only" ;;
        *) die "no SSID for network '$1'" ;;
        esac
}

wifi_bssid() { # wifi_bssid NETWORK
        local mac
        mac=$(router_mac "$1")
        echo "${mac%:*}:02"
}

mk_router_bridge() { # NS NETWORK V4/PLEN V6/PLEN (either may be empty)
        local ns=$1 mac a4=$3 a6=$4
        mac=$(router_mac "$2")
        innet "$ns" ip link add br0 address "$mac" type bridge stp_state 0 forward_delay 0 \
                mcast_snooping 0
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

# cafe_state captive|captive-reset|open: the cafe's portal. Captive: DNS from the LAN goes to
# the liar on port 5300 (every name is the router), nothing is forwarded, the RFC 8908 API says
# captive. Captive-reset, a portal of another make: DNS tells the truth, HTTP to anywhere is
# taken to the portal's own server (which redirects to the login page), every other TCP
# connection is refused with a reset, the rest dropped. Open: the truth, forwarding, and
# "captive": false. One nft transaction either way.
cafe_state() {
        local how=$1 json
        {
                echo 'add table inet cafe'
                echo 'add chain inet cafe lan_dns { type nat hook prerouting priority dstnat; policy accept; }'
                echo 'add chain inet cafe lan_out { type filter hook forward priority filter; policy accept; }'
                echo 'flush chain inet cafe lan_dns'
                echo 'flush chain inet cafe lan_out'
                if [ "$how" = captive ]; then
                        echo 'add rule inet cafe lan_dns iifname "br0" meta nfproto ipv4 meta l4proto { tcp, udp } th dport 53 dnat ip to 192.0.2.129:5300'
                        echo 'add rule inet cafe lan_dns iifname "br0" meta nfproto ipv6 meta l4proto { tcp, udp } th dport 53 dnat ip6 to [2001:db8:3::1]:5300'
                        echo 'add rule inet cafe lan_out iifname "br0" oifname != "br0" counter drop'
                elif [ "$how" = captive-reset ]; then
                        echo 'add rule inet cafe lan_dns iifname "br0" meta nfproto ipv4 ip daddr != 192.0.2.128/26 tcp dport 80 dnat ip to 192.0.2.129:80'
                        echo 'add rule inet cafe lan_dns iifname "br0" meta nfproto ipv6 ip6 daddr != 2001:db8:3::/64 tcp dport 80 dnat ip6 to [2001:db8:3::1]:80'
                        echo 'add rule inet cafe lan_out iifname "br0" oifname != "br0" meta l4proto tcp counter reject with tcp reset'
                        echo 'add rule inet cafe lan_out iifname "br0" oifname != "br0" counter drop'
                fi
        } | innet "$NS_CAFE" nft -f -
        if [ "$how" != open ]; then
                json='{"captive": true, "user-portal-url": "https://cafe.test/portal", "venue-info-url": "https://cafe.test/venue"}'
        else
                json='{"captive": false, "user-portal-url": "https://cafe.test/portal", "venue-info-url": "https://cafe.test/venue", "seconds-remaining": 3600, "can-extend-session": true}'
        fi
        echo "$json" >"$W/cafe-capport.json.tmp"
        mv "$W/cafe-capport.json.tmp" "$W/cafe-capport.json"
        echo "$how" >"$W/cafe-state"
}

mk_router() { # mk_router NS NETWORK V4/PLEN V6/PLEN: a forwarding router, its LAN bridge br0
        # Routers answer every probe with ICMP: the kernel's ICMP rate limit would turn a quick
        # "unreachable" into a timeout after a few probe rounds, and verdicts into noise.
        sysctl_ns "$1" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
                net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
        mk_router_bridge "$1" "$2" "$3" "$4"
}

# mk_wan NS INETIF R4 I4 R6 I6 LAN4 LAN6: the router's wan0, a /30 + /64 to the internet
# namespace (whose end is INETIF), its default routes there and the internet's route back.
mk_wan() {
        local ns=$1 isp=$2 r4=$3 i4=$4 r6=$5 i6=$6 lan4=$7 lan6=$8
        innet "$ns" ip link add wan0 type veth peer name "$isp" netns "$NS_INET"
        innet "$NS_INET" ip addr add "$i4/30" dev "$isp"
        innet "$NS_INET" ip addr add "$i6/64" dev "$isp" nodad
        innet "$NS_INET" ip link set "$isp" up
        nooffload "$NS_INET" "$isp"
        innet "$ns" ip addr add "$r4/30" dev wan0
        innet "$ns" ip addr add "$r6/64" dev wan0 nodad
        innet "$ns" ip link set wan0 up
        nooffload "$ns" wan0
        innet "$NS_INET" ip route add "$lan4" via "$r4"
        innet "$NS_INET" ip -6 route add "$lan6" via "$r6"
        innet "$ns" ip route add default via "$i4"
        innet "$ns" ip -6 route add default via "$i6"
}

start_dnsmasq() { # NET V4RANGE ROUTER DNS4 DNS6 V6RANGE DOMAIN EXTRA...
        local net=$1 range4=$2 router=$3 dns4=$4 dns6=$5 range6=$6 domain=$7; shift 7
        local ns=roam-$NAME-$net
        # options a test adds (re-read on SIGHUP), e.g. an RFC 4833 time zone
        : >"$W/$net-dhcp-opts"
        run_in_cg "$net" nsenter --net=/run/netns/"$ns" -- dnsmasq \
                --conf-file=/dev/null --user=root --group=root \
                --dhcp-optsfile="$W/$net-dhcp-opts" \
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
        innet "$NS_INET" ip addr add "$VPN_ENDPOINT4/32" dev lo
        innet "$NS_INET" ip addr add "$VPN_ENDPOINT6/128" dev lo
        WORLD_PIDS+=("$(spawn inet "$W/inet-httpd.log" nsenter --net=/run/netns/"$NS_INET" -- \
                "$PY" "$HERE/httpd.py" --port 80 --pidfile "$W/inet-httpd.pid" \
                --tls-port 443 --cert "$W/ca/probe.pem" --key "$W/ca/probe.key" \
                --route '/roam-probe=roam-online\n')")
        WORLD_PIDS+=("$(spawn inet "$W/inet-whoami.log" nsenter --net=/run/netns/"$NS_INET" -- \
                "$PY" "$REPO/tests/servers/whoami.py" --port "$WHOAMI_PORT" \
                --listen 203.0.113.10 --listen 2001:db8:ff::10)")
        # The VPN server: its tun vpns0 holds the inner prefixes; its DNS starts once the tun
        # is there (below).
        local a args=()
        for a in $VPN_SERVER_INNER; do args+=(--addr "$a"); done
        WORLD_PIDS+=("$(spawn inet "$W/vpn-server.log" nsenter --net=/run/netns/"$NS_INET" -- \
                "$PY" "$REPO/tests/servers/tunvpn.py" server --tun vpns0 --port "$VPN_PORT" \
                --listen "$VPN_ENDPOINT4" --listen "$VPN_ENDPOINT6" "${args[@]}")")

        log "home"
        mk_router "$NS_HOME" home 192.0.2.1/26 2001:db8:1::1/64
        mk_wan "$NS_HOME" isp0 198.51.100.1 198.51.100.2 2001:db8:100::1 2001:db8:100::2 \
                192.0.2.0/26 2001:db8:1::/64

        log "living room"
        mk_router "$NS_LIVING" living 192.0.2.65/26 2001:db8:2::1/64
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
        WORLD_PIDS+=("$(spawn tv "$W/tv-whoami.log" nsenter --net=/run/netns/"$NS_TV" -- \
                "$PY" "$REPO/tests/servers/whoami.py" --port "$WHOAMI_PORT" \
                --listen 192.0.2.70 --listen 2001:db8:2::70)")

        log "dead network"
        mk_router_bridge "$NS_DEAD" dead "" ""

        log "cafe"
        mk_router "$NS_CAFE" cafe 192.0.2.129/26 2001:db8:3::1/64
        mk_wan "$NS_CAFE" isp1 198.51.100.5 198.51.100.6 2001:db8:103::1 2001:db8:103::2 \
                192.0.2.128/26 2001:db8:3::/64
        cafe_state captive
        WORLD_PIDS+=("$(spawn cafe "$W/cafe-httpd.log" nsenter --net=/run/netns/"$NS_CAFE" -- \
                "$PY" "$HERE/httpd.py" --port 80 --pidfile "$W/cafe-httpd.pid" \
                --tls-port 443 --cert "$W/ca/cafe.pem" --key "$W/ca/cafe.key" \
                --redirect http://cafe.test/login --html-route "/login=$CAFE_PAGE" \
                --html-route "/portal=$CAFE_PAGE" --capport "/capport=$W/cafe-capport.json")")

        log "silent gateway"
        mk_router "$NS_SILENT" silent 192.0.2.193/26 2001:db8:4::1/64
        # Nothing from the LAN reaches the router but DHCP, DHCPv6 and router/neighbour
        # discovery: no ping, no DNS, no TCP, no ICMP errors (dropped before routing). What
        # goes to whoami's port ($WHOAMI_PORT) is counted apart: a test asserts that its attempt
        # was dropped here (World.whoami_dropped_by_silent()), not that nothing came in a while.
        innet "$NS_SILENT" nft -f - <<'NFT'
table inet silent {
        chain lan {
                type filter hook prerouting priority raw; policy accept;
                iifname != "br0" accept
                udp dport { 67, 547 } accept
                icmpv6 type { nd-router-solicit, nd-neighbor-solicit, nd-neighbor-advert } accept
                meta l4proto { tcp, udp } th dport 7000 counter drop comment "whoami"
                counter drop
        }
}
NFT

        log "https blocked"
        mk_router "$NS_HTTPSBLOCKED" httpsblocked 198.51.100.129/26 2001:db8:5::1/64
        mk_wan "$NS_HTTPSBLOCKED" isp2 198.51.100.9 198.51.100.10 2001:db8:105::1 \
                2001:db8:105::2 198.51.100.128/26 2001:db8:5::/64
        # HTTPS (TCP 443) out of the LAN is refused with a reset; everything else passes.
        innet "$NS_HTTPSBLOCKED" nft -f - <<'NFT'
table inet httpsblocked {
        chain lan_out {
                type filter hook forward priority filter; policy accept;
                iifname "br0" oifname != "br0" tcp dport 443 counter reject with tcp reset
        }
}
NFT

        log "mobile carrier"
        # A cellular carrier: its own prefixes, forwarding to the internet without NAT (the
        # internet sees the device's own addresses).
        mk_router "$NS_MOBILE" mobile 198.51.100.65/26 2001:db8:6::1/64
        mk_wan "$NS_MOBILE" isp3 198.51.100.13 198.51.100.14 2001:db8:106::1 2001:db8:106::2 \
                198.51.100.64/26 2001:db8:6::/64

        log "IPv6-only"
        # No IPv4 on the LAN at all: RAs (SLAAC, RDNSS, DNSSL), no DHCPv4, no DHCPv6; an
        # IPv6-only way to the internet. Its DNS64 part (world.sh dns64) is one record.
        mk_router "$NS_V6ONLY" v6only "" 2001:db8:7::1/64
        innet "$NS_V6ONLY" ip link add wan0 type veth peer name isp4 netns "$NS_INET"
        innet "$NS_INET" ip addr add 2001:db8:107::2/64 dev isp4 nodad
        innet "$NS_INET" ip link set isp4 up
        nooffload "$NS_INET" isp4
        innet "$NS_V6ONLY" ip addr add 2001:db8:107::1/64 dev wan0 nodad
        innet "$NS_V6ONLY" ip link set wan0 up
        nooffload "$NS_V6ONLY" wan0
        innet "$NS_INET" ip -6 route add 2001:db8:7::/64 via 2001:db8:107::1
        innet "$NS_V6ONLY" ip -6 route add default via 2001:db8:107::2

        log "delay lines"
        # Only the delay lines' veth ends live here: they must not speak themselves.
        sysctl_ns "$NS_DELAY" net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1

        log "device"
        # Distinct ifindexes on the two ends of each veth: the kernel's linkwatch handles
        # carrier changes of a veth whose peer has the same ifindex as itself as "not urgent",
        # up to a second late, and a bridge port forwards only once its change is handled:
        # the first DHCP and RS packets after a move would be lost.
        innet "$NS_DEV" ip link add wifi0 index 11 type veth peer name up-wifi0 index 21 \
                netns "$NS_HOME"
        innet "$NS_DEV" ip link add cell0 index 12 type veth peer name up-cell0 index 22 \
                netns "$NS_LIVING"
        innet "$NS_DEV" ip link add eth0 index 13 type veth peer name up-eth0 index 23 \
                netns "$NS_DEAD"
        attach_port "$NS_HOME" up-wifi0
        attach_port "$NS_LIVING" up-cell0
        attach_port "$NS_DEAD" up-eth0
        for l in $UPLINKS; do innet "$NS_DEV" ip link set "$l" up; done

        start_dnsmasq home 192.0.2.10,192.0.2.59,255.255.255.192,5m 192.0.2.1 192.0.2.1 \
                2001:db8:1::1 2001:db8:1::100,2001:db8:1::1ff,64,1h home.test
        start_dnsmasq living 192.0.2.80,192.0.2.120,255.255.255.192,5m 192.0.2.65 192.0.2.65 \
                2001:db8:2::1 2001:db8:2::100,2001:db8:2::1ff,64,1h living.test \
                --address=/tv.living.test/192.0.2.70 --address=/tv.living.test/2001:db8:2::70
        # The cafe: this dnsmasq tells the truth (the LAN reaches it only after login); while
        # captive, DNS from the LAN is sent to the liar on port 5300. Option 114 / DHCPv6 103
        # announce the RFC 8908 API (dnsmasq sends them to clients that ask for them).
        start_dnsmasq cafe 192.0.2.140,192.0.2.180,255.255.255.192,5m 192.0.2.129 192.0.2.129 \
                2001:db8:3::1 2001:db8:3::100,2001:db8:3::1ff,64,1h cafe.test \
                --address=/cafe.test/192.0.2.129 --address=/cafe.test/2001:db8:3::1 \
                --dhcp-option=114,"$CAFE_API" --dhcp-option=option6:103,"$CAFE_API"
        run_in_cg cafe nsenter --net=/run/netns/"$NS_CAFE" -- dnsmasq \
                --conf-file=/dev/null --user=root --group=root \
                --no-resolv --no-hosts --bind-interfaces --interface=br0 --port=5300 \
                --pid-file="$W/cafe-liar.pid" --log-facility="$W/cafe-liar.log" --log-queries \
                --address=/#/192.0.2.129 --address=/#/2001:db8:3::1 >>"$W/cafe-liar.out" 2>&1
        start_dnsmasq silent 192.0.2.200,192.0.2.240,255.255.255.192,5m 192.0.2.193 192.0.2.193 \
                2001:db8:4::1 2001:db8:4::100,2001:db8:4::1ff,64,1h silent.test
        start_dnsmasq httpsblocked 198.51.100.140,198.51.100.180,255.255.255.192,5m \
                198.51.100.129 198.51.100.129 2001:db8:5::1 2001:db8:5::100,2001:db8:5::1ff,64,1h \
                blocked.test
        start_dnsmasq mobile 198.51.100.80,198.51.100.120,255.255.255.192,5m 198.51.100.65 \
                198.51.100.65 2001:db8:6::1 2001:db8:6::100,2001:db8:6::1ff,64,1h mobile.test

        : >"$W/v6only-dns64.hosts"
        run_in_cg v6only nsenter --net=/run/netns/"$NS_V6ONLY" -- dnsmasq \
                --conf-file=/dev/null --user=root --group=root \
                --no-resolv --no-hosts --bind-interfaces --interface=br0 \
                --pid-file="$W/v6only-dnsmasq.pid" \
                --log-facility="$W/v6only-dnsmasq.log" --log-queries \
                --dhcp-range=2001:db8:7::,ra-only,64 \
                --enable-ra --ra-param=br0,10,1800 \
                --dhcp-option=option6:dns-server,"[2001:db8:7::1]" \
                --domain=v6only.test --dhcp-option=option6:domain-search,v6only.test \
                --addn-hosts="$W/v6only-dns64.hosts" \
                --address=/probe.roam.test/2001:db8:ff::10 --local=/test/ \
                >>"$W/v6only-dnsmasq.out" 2>&1

        if [ -n "${UP_CGROUPNS:-}" ]; then
                # The device's cgroup namespace, rooted at the world's cgroup (made by a
                # process in it): the device's cgroup2 mount and /proc/PID/cgroup show the
                # world's subtree only, so the device's roamd governs no cgroup of the host's
                # other sessions. Every process entering the device enters it (CGNS).
                log "device cgroup namespace"
                [ -n "$CGW" ] || die "up --cgroupns: no cgroup2 mount"
                : >"$W/cgroupns"
                (
                        echo "$BASHPID" >"$CGW/cgroup.procs"
                        exec unshare --cgroup="$W/cgroupns" true
                ) || die "up --cgroupns: cannot make the cgroup namespace"
                : >"$W/cgroupns.on"
                CGNS=$W/cgroupns
        fi
        log "device mount namespace"
        : >"$W/mnt"
        : >"$W/uts"
        unshare --mount="$W/mnt" --uts="$W/uts" --propagation private -- hostname "roam-${NAME//_/-}"
        # Mount a fresh sysfs from inside the device's network namespace (roamd classifies
        # links from /sys/class/net), cgroup2 below it, private /run, /etc, /var/lib.
        nsenter --mount="$W/mnt" --uts="$W/uts" ${CGNS:+--cgroup="$CGNS"} --net=/run/netns/"$NS_DEV" --wd=/ -- \
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
        run_in_cg "$CG_BUS" nsenter --mount="$W/mnt" --uts="$W/uts" ${CGNS:+--cgroup="$CGNS"} --net=/run/netns/"$NS_DEV" --wd=/ -- \
                dbus-daemon --config-file="$W/bus.conf" >>"$W/dbus.log" 2>&1
        [ -S "$W/bus" ] || die "dbus-daemon did not create $W/bus"

        log "dhcpcd"
        start_dhcpcd

        wait_event 10 "--file $W/inet-httpd.pid" test -s "$W/inet-httpd.pid" ||
                die "internet HTTP server did not start"
        wait_event 10 "--file $W/tv-httpd.pid" test -s "$W/tv-httpd.pid" ||
                die "TV HTTP server did not start"
        wait_event 10 "--file $W/cafe-httpd.pid" test -s "$W/cafe-httpd.pid" ||
                die "cafe HTTP server did not start"
        wait_event 10 "--file $W/inet-whoami.log" grep -q '^ready' "$W/inet-whoami.log" ||
                die "internet whoami did not start"
        wait_event 10 "--file $W/tv-whoami.log" grep -q '^ready' "$W/tv-whoami.log" ||
                die "TV whoami did not start"
        wait_event 10 "--file $W/vpn-server.log" grep -q '^ready' "$W/vpn-server.log" ||
                die "VPN server did not start"
        log "VPN DNS"
        # Only the VPN's DNS knows vpn-only.test: an answer proves the query went through it.
        local listen=()
        for a in $VPN_DNS; do listen+=(--listen-address="$a"); done
        run_in_cg inet nsenter --net=/run/netns/"$NS_INET" -- dnsmasq \
                --conf-file=/dev/null --user=root --group=root \
                --no-resolv --no-hosts --bind-interfaces "${listen[@]}" \
                --pid-file="$W/vpn-dnsmasq.pid" --log-facility="$W/vpn-dnsmasq.log" \
                --log-queries \
                --address=/vpn-only.test/203.0.113.10 --address=/vpn-only.test/2001:db8:ff::10 \
                --address=/probe.roam.test/203.0.113.10 \
                --address=/probe.roam.test/2001:db8:ff::10 --local=/test/ \
                >>"$W/vpn-dnsmasq.out" 2>&1
}

start_dhcpcd() {
        run_in_cg "$CG_DHCPCD" nsenter --mount="$W/mnt" --uts="$W/uts" ${CGNS:+--cgroup="$CGNS"} --net=/run/netns/"$NS_DEV" --wd=/ -- \
                dhcpcd --config "$W/dhcpcd.conf" --logfile "$W/dhcpcd.log" --debug -b -M \
                >>"$W/dhcpcd.out" 2>&1
}

# dhcpcd-restart NAME: kill the device's dhcpcd, forget what it configured, start it again
# and wait for the leases. (A burst of thousands of rtnetlink messages overflows dhcpcd's
# route socket; dhcpcd 9.4.1 then loses track of its IPv6 default routes.)
cmd_dhcpcd_restart() {
        need_world "${1:-}"
        if [ -n "$CGW" ] && [ -e "$CGW/$CG_DHCPCD/cgroup.kill" ]; then
                echo 1 >"$CGW/$CG_DHCPCD/cgroup.kill"
                wait_event 10 "--file $CGW/$CG_DHCPCD/cgroup.events" \
                        grep -q '^populated 0' "$CGW/$CG_DHCPCD/cgroup.events" ||
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
        wait_event 40 "--netns $NS_DEV" has_lease wifi0 &&
                wait_event 20 "--netns $NS_DEV" has_lease cell0 ||
                die "no leases after restarting dhcpcd"
}

has_lease() { # has_lease IF: global v4 + v6 addresses and v4 + v6 default routes
        local ifn=$1
        indev ip -4 addr show dev "$ifn" scope global | grep -q inet &&
                indev ip -6 addr show dev "$ifn" scope global -tentative | grep -q inet6 &&
                indev ip -4 route show default dev "$ifn" | grep -q . &&
                indev ip -6 route show default dev "$ifn" | grep -q .
}

# up_build NOWAIT: the world, then (unless NOWAIT) the device's leases.
up_build() {
        local nowait=$1
        WORLD_PIDS=()
        build_world
        if [ -z "$nowait" ]; then
                log "waiting for leases on wifi0 and cell0"
                if ! wait_event 40 "--netns $NS_DEV" has_lease wifi0 ||
                        ! wait_event 20 "--netns $NS_DEV" has_lease cell0; then
                        indev ip addr >&2 || true
                        indev ip route >&2 || true
                        indev ip -6 route >&2 || true
                        tail -n 40 "$W/dhcpcd.log" >&2 || true
                        die "the device got no leases (see $W/dhcpcd.log)"
                fi
        fi
}

# up_abort: stop the build (its whole process group, so no step of it runs after `down`),
# then tear down what it built.
up_abort() {
        echo "world.sh: up $NAME failed, tearing it down" >&2
        if [ -n "$UP_PID" ]; then
                kill -KILL -- "-$UP_PID" 2>/dev/null || true
                wait "$UP_PID" 2>/dev/null || true
        fi
        WORLD_QUIET=1 do_down || true
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
                --cgroupns) UP_CGROUPNS=1; shift ;;
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
        UP_DONE=
        UP_PID=
        trap 'rc=$?; if [ -z "$UP_DONE" ]; then up_abort; fi; exit $rc' EXIT
        trap 'exit 130' INT TERM
        # The build runs in a child of its own process group while this shell only waits: a
        # signal interrupts `wait` at once and its trap always runs (CI saw an interrupted `up`
        # leave a half-built world behind, and a SIGTERM during the build's command
        # substitutions once ended this shell without its trap here), and the abort stops all
        # of the build before `down`.
        set -m
        (
                trap - EXIT INT TERM
                up_build "$nowait"
        ) </dev/null &
        UP_PID=$!
        set +m
        wait "$UP_PID"
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
        # One find for every process's two links (a readlink per process and namespace took
        # minutes on a loaded machine).
        if [ ${#inodes[@]} -gt 0 ]; then
                find /proc/[0-9]*/ns/net /proc/[0-9]*/ns/mnt -maxdepth 0 -printf '%p %l\n' 2>/dev/null |
                        awk -v self=$$ -v want="${inodes[*]}" '
                                BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) m[w[i]] = 1 }
                                { split($1, a, "/"); if (a[3] != self && ($2 in m)) print a[3] }' |
                        sort -u
        fi
        if [ -n "$CGW" ] && [ -d "$CGW" ]; then
                find "$CGW" -name cgroup.procs -exec cat {} + 2>/dev/null || true
        fi
}

do_down() {
        local pids n=0 src p
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
                if [ $n -gt 10 ]; then
                        echo "world.sh: processes of world $NAME refuse to die: $pids" >&2
                        break
                fi
                # woken as each of them ends (new ones may have been forked meanwhile)
                src=
                for p in $pids; do src="$src --pid $p"; done
                wait_event 2 "$src" all_gone $pids
                # zombies have no namespaces: they drop out of world_pids by themselves
        done
        for f in "$W/mnt" "$W/uts" "$W/cgroupns"; do
                if mountpoint -q "$f" 2>/dev/null; then umount "$f" || umount -l "$f"; fi
        done
        for s in $SUFFIXES; do
                if [ -e /run/netns/roam-$NAME-$s ]; then ip netns del roam-$NAME-$s; fi
        done
        if [ -n "$CGW" ] && [ -d "$CGW" ]; then
                # deepest first
                find "$CGW" -depth -type d | while read -r d; do
                        wait_event 5 "--file $d/cgroup.events" \
                                grep -q '^populated 0' "$d/cgroup.events" 2>/dev/null
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

# The Environment= settings of the installed unit: roamd runs here as it runs installed.
unit_environment() {
        sed -n 's/^Environment=//p' "$REPO/data/roamd.service.in"
}

# The unit's CapabilityBoundingSet= and NoNewPrivileges= as setpriv arguments: roamd runs
# here with only the capabilities it has installed (no CAP_KILL, for one: it may not signal
# another user's process).
unit_privileges() {
        local caps
        caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$REPO/data/roamd.service.in" |
                tr 'A-Z ' 'a-z\n' | sed -n 's/^cap_\(.*\)/+\1/p' | paste -sd, -)
        [ -n "$caps" ] && echo "--bounding-set=-all,$caps"
        if grep -q '^NoNewPrivileges=yes' "$REPO/data/roamd.service.in"; then
                echo --no-new-privs
        fi
}

cmd_roamd_start() {
        need_world "${1:-}"; shift
        [ -x "$ROAMD" ] || die "no roamd binary at $ROAMD (build it: ninja -C build)"
        if roamd_pid >/dev/null; then die "roamd already runs in world $NAME (pid $(roamd_pid))"; fi
        local wd=/ pid
        echo "=== roamd-start $(date '+%F %T.%N') ===" >>"$W/roamd.log"
        pid=$(spawn "$CG_ROAMD" "$W/roamd.log" nsenter --mount="$W/mnt" --uts="$W/uts" ${CGNS:+--cgroup="$CGNS"} \
                --net=/run/netns/"$NS_DEV" --wd="$wd" -- \
                setpriv $(unit_privileges) -- \
                env DBUS_SYSTEM_BUS_ADDRESS="$BUS" $(unit_environment) "$ROAMD" \
                --config /etc/roam/roamd.conf "$@")
        echo "$pid" >"$W/roamd.pid"
        # woken by the name's owner or roamd's exit, whichever comes first
        wait_event 20 "--bus-name $BUS org.roam1 --pid $pid" \
                eval 'bus_has_roamd || ! alive '"$pid" || true
        if ! bus_has_roamd; then
                tail -n 20 "$W/roamd.log" >&2
                if ! alive "$pid"; then
                        die "roamd exited before it took org.roam1 (log: $W/roamd.log)"
                fi
                die "roamd did not take org.roam1 within 20 s (log: $W/roamd.log)"
        fi
        echo "$pid"
}

wait_gone() { # wait_gone PID SECONDS
        wait_event "$2" "--pid $1" eval '! alive '"$1"
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

# delay_ports UPLINK: sets DD (the delay line's end facing the network, in the delay
# namespace) and DN (its peer, the port on the network's bridge while UPLINK is delayed).
# DD_INDEX/DN_INDEX: their ifindexes, distinct from each other (see the device's links).
delay_ports() {
        local tag
        case $1 in
        wifi0) tag=-$1 DN_INDEX="index 31" DD_INDEX="index 41" ;;
        cell0) tag=-$1 DN_INDEX="index 32" DD_INDEX="index 42" ;;
        eth0) tag=-$1 DN_INDEX="index 33" DD_INDEX="index 43" ;;
        *) tag=$(printf %s "$1" | md5sum | cut -c1-12) DN_INDEX='' DD_INDEX='' ;;
        esac
        DD=dd$tag
        DN=dn$tag
}

has_if() { innet "$1" ip link show dev "$2" >/dev/null 2>&1; }

find_peer_ns() { # find_peer_ns IF: print the network (or "delay") holding interface IF
        local n
        for n in $NETWORKS delay; do
                if has_if "roam-$NAME-$n" "$1"; then
                        echo "$n"; return 0
                fi
        done
        return 1
}

# uplink_port UPLINK: sets PEER (the device link's veth peer), PORT (the interface on the
# network's bridge: PEER, or DN while delayed), NET (that network), DELAYED (0/1).
uplink_port() {
        local where
        PEER=$(peer_of "$1")
        where=$(find_peer_ns "$PEER") || die "uplink $1 (peer $PEER) not found"
        if [ "$where" = delay ]; then
                delay_ports "$1"
                PORT=$DN
                DELAYED=1
                NET=$(find_peer_ns "$DN") || die "uplink $1: delay port $DN not found"
        else
                PORT=$PEER
                DELAYED=0
                NET=$where
        fi
}

dhcpcd_saw() { # dhcpcd_saw LINE IF WORDS: dhcpcd logged "IF: WORDS" after line LINE
        tail -n +"$(($1 + 1))" "$W/dhcpcd.log" 2>/dev/null | grep -q ": $2: $3"
}

carrier_down() { # carrier_down UPLINK NS: set PEER (in NS) down, wait until dhcpcd saw it
        local mark
        mark=$(wc -l <"$W/dhcpcd.log" 2>/dev/null || echo 0)
        innet "$2" ip link set "$PEER" down
        if [[ " $UPLINKS " = *" $1 "* ]]; then
                wait_event 2 "--file $W/dhcpcd.log" dhcpcd_saw "$mark" "$1" "carrier lost" ||
                        true
        fi
}

# move NAME UPLINK NETWORK: like walking from one network to another. The device's carrier
# drops until dhcpcd has seen it (a netns move alone drops it for ~15 ms, which dhcpcd 9.4.1
# may miss: it would then keep the old network's lease), then comes back in the new network.
cmd_move() {
        need_world "${1:-}"
        local up=${2:?uplink} net=${3:?network} cns was_up=0
        [[ " $NETWORKS " = *" $net "* ]] || die "unknown network $net (one of: $NETWORKS)"
        uplink_port "$up"
        [ "$NET" != "$net" ] || return 0
        cns=roam-$NAME-$NET
        [ "$DELAYED" = 0 ] || cns=$NS_DELAY
        if [ "$up" = wifi0 ]; then wifi_tell disassociate; fi
        if is_up "$cns" "$PEER"; then
                was_up=1
                carrier_down "$up" "$cns"
        fi
        innet "roam-$NAME-$NET" ip link set "$PORT" nomaster
        innet "roam-$NAME-$NET" ip link set "$PORT" netns "roam-$NAME-$net"
        attach_port "roam-$NAME-$net" "$PORT"
        if [ "$DELAYED" = 0 ]; then
                [ "$was_up" = 1 ] || innet "roam-$NAME-$net" ip link set "$PEER" down
        elif [ "$was_up" = 1 ]; then
                innet "$NS_DELAY" ip link set "$PEER" up
        fi
        if [ "$up" = wifi0 ] && [ "$was_up" = 1 ]; then
                wifi_tell "associate $(wifi_bssid "$net") $(wifi_ssid "$net")"
        fi
}

peer_ns() { # the namespace holding UPLINK's veth peer (its carrier switch)
        local where
        where=$(find_peer_ns "$(peer_of "$1")") || die "uplink $1 not found"
        echo "roam-$NAME-$where"
}

cmd_carrier() {
        need_world "${1:-}"
        local up=${2:?uplink} how=${3:?on|off} ns
        ns=$(peer_ns "$up")
        case $how in
        on)
                innet "$ns" ip link set "$(peer_of "$up")" up
                if [ "$up" = wifi0 ]; then
                        uplink_port wifi0
                        wifi_tell "associate $(wifi_bssid "$NET") $(wifi_ssid "$NET")"
                fi ;;
        off)
                if [ "$up" = wifi0 ]; then wifi_tell disassociate; fi
                innet "$ns" ip link set "$(peer_of "$up")" down ;;
        *) die "carrier: on or off, not $how" ;;
        esac
}

is_up() { # is_up NS IF: administratively up
        innet "$1" ip -o link show dev "$2" | grep -q '<[^>]*\bUP\b'
}

offloads_off() { # offloads_off NS IF: a packet socket must see (and re-send) plain frames
        innet "$1" ethtool -K "$2" tx off rx off tso off gso off gro off >/dev/null 2>&1 || true
}

stop_delay_line() { # stop_delay_line UPLINK
        local pf=$W/delay-$1.pid pid
        pid=$(cat "$pf" 2>/dev/null) || return 0
        if alive "$pid"; then
                kill "$pid" 2>/dev/null || true
                wait_gone "$pid" 5 || kill -9 "$pid" 2>/dev/null || true
        fi
        rm -f "$pf"
}

start_delay_line() { # start_delay_line UPLINK MS (PEER, DD set)
        local up=$1 ms=$2 logf=$W/delay-$1.log pid
        : >"$logf"
        pid=$(spawn "delay-$up" "$logf" nsenter --net=/run/netns/"$NS_DELAY" -- \
                "$PY" "$REPO/tests/servers/delayline.py" "$PEER" "$DD" "$ms")
        echo "$pid" >"$W/delay-$up.pid"
        echo "$ms" >"$W/delay-$up.ms"
        wait_event 10 "--file $logf" grep -q '^ready' "$logf" ||
                die "the delay line of $up did not start (see $logf)"
}

# delay NAME UPLINK MS: device link -- PEER [delay namespace: delayline.py] DD -- DN [network's
# bridge]. PEER changes namespace, so the device link's carrier drops (until dhcpcd has seen
# it, as in a move: the leases are renewed, through the delay line); MS=0 puts PEER back on
# the bridge the same way. Changing MS only restarts the delay line.
cmd_delay() {
        need_world "${1:-}"
        local up=${2:?uplink} ms=${3:?milliseconds} was_up=0
        [[ "$ms" =~ ^[0-9]{1,5}$ ]] || die "delay: MS must be a whole number of milliseconds"
        ms=$((10#$ms))
        uplink_port "$up"
        delay_ports "$up"
        if [ "$DELAYED" = 1 ]; then
                stop_delay_line "$up"
                if [ "$ms" -gt 0 ]; then
                        start_delay_line "$up" "$ms"
                        return 0
                fi
                if is_up "$NS_DELAY" "$PEER"; then
                        was_up=1
                        carrier_down "$up" "$NS_DELAY"
                fi
                innet "$NS_DELAY" ip link set "$PEER" netns "roam-$NAME-$NET"
                attach_port "roam-$NAME-$NET" "$PEER"
                [ "$was_up" = 1 ] || innet "roam-$NAME-$NET" ip link set "$PEER" down
                innet "roam-$NAME-$NET" ip link del "$DN"
                rm -f "$W/delay-$up.ms"
                return 0
        fi
        [ "$ms" -gt 0 ] || return 0
        offloads_off "$NS_DEV" "$up"
        # shellcheck disable=SC2086
        innet "roam-$NAME-$NET" ip link add "$DN" $DN_INDEX type veth peer name "$DD" $DD_INDEX \
                netns "$NS_DELAY"
        attach_port "roam-$NAME-$NET" "$DN"
        offloads_off "roam-$NAME-$NET" "$DN"
        if is_up "roam-$NAME-$NET" "$PEER"; then
                was_up=1
                carrier_down "$up" "roam-$NAME-$NET"
        fi
        innet "roam-$NAME-$NET" ip link set "$PEER" nomaster
        innet "roam-$NAME-$NET" ip link set "$PEER" netns "$NS_DELAY"
        offloads_off "$NS_DELAY" "$PEER"
        offloads_off "$NS_DELAY" "$DD"
        innet "$NS_DELAY" ip link set "$DD" up
        start_delay_line "$up" "$ms"
        [ "$was_up" = 0 ] || innet "$NS_DELAY" ip link set "$PEER" up
}

cmd_uplink() { # uplink NAME UPLINK: NETWORK on|off DELAY_MS
        need_world "${1:-}"
        local up=${2:?uplink} ms=0 carrier=off
        uplink_port "$up"
        if [ "$DELAYED" = 1 ]; then
                ms=$(cat "$W/delay-$up.ms" 2>/dev/null || echo 0)
                is_up "$NS_DELAY" "$PEER" && carrier=on
        else
                is_up "roam-$NAME-$NET" "$PEER" && carrier=on
        fi
        echo "$NET $carrier $ms"
}

cmd_cafe() { # cafe NAME login|logout
        need_world "${1:-}"
        case ${2:-} in
        login) cafe_state open ;;
        logout) cafe_state captive ;;
        logout-reset) cafe_state captive-reset ;;
        *) die "cafe: login, logout or logout-reset" ;;
        esac
}

# cafe-portal NAME wispr [SESSION_S] | plain: the cafe's portal as the demo shows it: a page
# for people ("Room or table": its form logs in) that is a WISPr 1.0 portal too (user
# CAFE_USER, password CAFE_PASSWORD), tests/servers/wispr_cafe.py on ports 8080/8443 of the
# router, the LAN's HTTP/HTTPS to the router redirected there (nft table inet wisprcafe, as
# test_portal.py does); a login opens the cafe (cafe-login) for SESSION_S seconds (default
# 3600; a login within extends it), then it closes again (cafe-logout). plain: back to
# httpd.py's page alone.
CAFE_USER=guest
CAFE_PASSWORD=espresso
cmd_cafe_portal() {
        need_world "${1:-}"
        local pid session=${3:-3600}
        case ${2:-} in
        wispr)
                [[ $session =~ ^[0-9]+$ ]] && [ "$session" -gt 0 ] || die "cafe-portal: bad session '$session'"
                ! pid_of "$W/cafe-wispr.pid" >/dev/null || die "cafe-portal: wispr runs already"
                rm -f "$W/cafe-wispr.ready"
                : >"$W/cafe-wispr-requests.log"
                pid=$(spawn cafe-wispr "$W/cafe-wispr.log" nsenter --net=/run/netns/"$NS_CAFE" -- \
                        "$PY" "$REPO/tests/servers/wispr_cafe.py" --port 8080 --tls-port 8443 \
                        --cert "$W/ca/cafe.pem" --key "$W/ca/cafe.key" \
                        --log "$W/cafe-wispr-requests.log" --capport-file "$W/cafe-capport.json" \
                        --user "$CAFE_USER" --password "$CAFE_PASSWORD" --people-form \
                        --session "$session" --ready "$W/cafe-wispr.ready" \
                        --on-login "$HERE/world.sh cafe-login $NAME" \
                        --on-logoff "$HERE/world.sh cafe-logout $NAME")
                echo "$pid" >"$W/cafe-wispr.pid"
                wait_event 10 "--file $W/cafe-wispr.ready" test -e "$W/cafe-wispr.ready" || {
                        cat "$W/cafe-wispr.log" >&2
                        stop_service "$W/cafe-wispr.pid" cafe-wispr
                        die "cafe-portal: the WISPr portal did not start"
                }
                innet "$NS_CAFE" nft -f - <<'NFT'
add table inet wisprcafe
add chain inet wisprcafe pre { type nat hook prerouting priority dstnat - 1; }
flush chain inet wisprcafe pre
add rule inet wisprcafe pre iifname "br0" ip daddr 192.0.2.129 tcp dport 80 redirect to :8080
add rule inet wisprcafe pre iifname "br0" ip daddr 192.0.2.129 tcp dport 443 redirect to :8443
add rule inet wisprcafe pre iifname "br0" ip6 daddr 2001:db8:3::1 tcp dport 80 redirect to :8080
add rule inet wisprcafe pre iifname "br0" ip6 daddr 2001:db8:3::1 tcp dport 443 redirect to :8443
NFT
                ;;
        plain)
                innet "$NS_CAFE" nft delete table inet wisprcafe 2>/dev/null || true
                stop_service "$W/cafe-wispr.pid" cafe-wispr
                ;;
        *) die "cafe-portal: wispr [SESSION_S] or plain" ;;
        esac
}

# reset NAME: the network side of the default world; prints one line per change.
cmd_reset() {
        need_world "${1:-}"
        local pair up net f
        if pid_of "$W/vpn.pid" >/dev/null || has_if "$NS_DEV" vpn0; then
                vpn_down
                echo "vpn: down"
        fi
        if pid_of "$W/sshd.pid" >/dev/null; then
                stop_service "$W/sshd.pid" "$CG_SSHD"
                echo "sshd: stopped"
        fi
        if pid_of "$W/wpa.pid" >/dev/null; then
                cmd_wifi "$NAME" off
                echo "wifi: wpa_supplicant stopped"
        fi
        # delay lines of links that are gone (deleted without del-link)
        for f in "$W"/delay-*.pid; do
                [ -e "$f" ] || continue
                up=${f##*/delay-} up=${up%.pid}
                if ! has_if "$NS_DELAY" "$(peer_of "$up")"; then
                        stop_delay_line "$up"
                        delay_ports "$up"
                        net=$(find_peer_ns "$DN") && innet "roam-$NAME-$net" ip link del "$DN"
                        rm -f "$W/delay-$up.ms"
                        echo "$up: stale delay line removed"
                fi
        done
        for pair in $DEFAULT_NETS; do
                up=${pair%%=*} net=${pair#*=}
                uplink_port "$up"
                if [ "$DELAYED" = 1 ]; then
                        cmd_delay "$NAME" "$up" 0
                        echo "$up: delay removed"
                        uplink_port "$up"
                fi
                if [ "$NET" != "$net" ]; then
                        cmd_move "$NAME" "$up" "$net"
                        echo "$up: moved from $NET to $net"
                fi
                if ! is_up "roam-$NAME-$net" "$PEER"; then
                        cmd_carrier "$NAME" "$up" on
                        echo "$up: carrier on"
                fi
        done
        if innet "$NS_HOME" ip route show default | grep -q unreachable ||
                innet "$NS_HOME" ip -6 route show default | grep -q unreachable; then
                cmd_internet "$NAME" on
                echo "internet: on"
        fi
        if [ -s "$W/v6only-dns64.hosts" ]; then
                cmd_dns64 "$NAME" off
                echo "dns64: off"
        fi
        if [ "$(cat "$W/cafe-state" 2>/dev/null)" != captive ]; then
                cafe_state captive
                echo "cafe: captive"
        fi
}

# dns64 NAME on|off: the IPv6-only network's DNS answers ipv4only.arpa with the AAAA records
# a DNS64 synthesizes from its two A records (RFC 7050) in the network-specific prefix
# 2001:db8:64::/96, or not at all (no upstream: refused). dnsmasq re-reads them on SIGHUP.
cmd_dns64() {
        need_world "${1:-}"
        case ${2:-} in
        on) printf '%s ipv4only.arpa\n' 2001:db8:64::c000:aa 2001:db8:64::c000:ab \
                >"$W/v6only-dns64.hosts.tmp" ;;
        off) : >"$W/v6only-dns64.hosts.tmp" ;;
        *) die "dns64: on or off" ;;
        esac
        mv "$W/v6only-dns64.hosts.tmp" "$W/v6only-dns64.hosts"
        kill -HUP "$(cat "$W/v6only-dnsmasq.pid")"
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

# indev_cg SUBCGROUP CMD...: run CMD in the foreground in the device (mount, uts and net
# namespaces), in cgroup roam-world-NAME/SUBCGROUP.
indev_cg() {
        local sub=$1; shift
        run_in_cg "$sub" nsenter --mount="$W/mnt" --uts="$W/uts" ${CGNS:+--cgroup="$CGNS"} --net=/run/netns/"$NS_DEV" \
                --wd=/ -- env DBUS_SYSTEM_BUS_ADDRESS="$BUS" "$@"
}

# spawn_dev SUBCGROUP LOG CMD...: spawn CMD in the device in cgroup SUBCGROUP; prints the pid.
spawn_dev() {
        local sub=$1 logf=$2; shift 2
        spawn "$sub" "$logf" nsenter --mount="$W/mnt" --uts="$W/uts" ${CGNS:+--cgroup="$CGNS"} \
                --net=/run/netns/"$NS_DEV" --wd=/ -- env DBUS_SYSTEM_BUS_ADDRESS="$BUS" "$@"
}

pid_of() { # pid_of FILE: the pid in FILE if that process is alive
        local pid
        pid=$(cat "$1" 2>/dev/null) || return 1
        alive "$pid" || return 1
        echo "$pid"
}

# stop_service PIDFILE SUBCGROUP: TERM (KILL after 5 s) the process, then whatever is left
# in its cgroup.
stop_service() {
        local pid
        if pid=$(pid_of "$1"); then
                kill "$pid" 2>/dev/null || true
                wait_gone "$pid" 5 || kill -9 "$pid" 2>/dev/null || true
                wait_gone "$pid" 5 || true
        fi
        rm -f "$1"
        if [ -n "$CGW" ] && [ -e "$CGW/$2/cgroup.kill" ]; then
                echo 1 >"$CGW/$2/cgroup.kill"
                wait_event 5 "--file $CGW/$2/cgroup.events" \
                        grep -q '^populated 0' "$CGW/$2/cgroup.events" || true
        fi
}

vpn_pings() { # through the tunnel to the server's inner addresses, both families
        local a
        for a in $VPN_SERVER_INNER; do
                indev_cg "$CG_VPN" ping -n -q -c 1 -W 1 -I vpn0 "${a%/*}" >/dev/null 2>&1 || return 1
        done
}

no_vpn0() { ! has_if "$NS_DEV" vpn0; }

vpn_connected() { # vpn_connected LINE: the client logged "connected" after line LINE
        tail -n +"$(($1 + 1))" "$W/vpn-client.log" 2>/dev/null | grep -q '^connected'
}

vpn_is_up() { pid_of "$W/vpn.pid" >/dev/null && has_if "$NS_DEV" vpn0; }

vpn_down() {
        stop_service "$W/vpn.pid" "$CG_VPN"
        wait_event 5 "--netns $NS_DEV" no_vpn0 || die "vpn0 is still there"
}

# vpn NAME up [4|6]: the VPN client (tests/servers/tunvpn.py) in the device, in cgroup
# system.slice/roam-vpn.service: tun vpn0 with the inner addresses (no default route), its
# transport plain UDP to the endpoint through the device's main routing table.
cmd_vpn() {
        need_world "${1:-}"
        local how=${2:-status} fam=${3:-4} server pid a mark args=()
        case $how in
        up)
                case $fam in
                4) server=$VPN_ENDPOINT4 ;;
                6) server=$VPN_ENDPOINT6 ;;
                *) die "vpn up: transport family 4 or 6, not $fam" ;;
                esac
                ! pid_of "$W/vpn.pid" >/dev/null || die "the VPN client runs already (pid $(pid_of "$W/vpn.pid"))"
                ! has_if "$NS_DEV" vpn0 || die "the device has a vpn0 already"
                for a in $VPN_CLIENT_INNER; do args+=(--addr "$a"); done
                echo "=== vpn up $(date '+%F %T.%N') ===" >>"$W/vpn-client.log"
                mark=$(wc -l <"$W/vpn-client.log")
                pid=$(spawn_dev "$CG_VPN" "$W/vpn-client.log" "$PY" "$REPO/tests/servers/tunvpn.py" \
                        client --tun vpn0 --server "$server" --port "$VPN_PORT" "${args[@]}")
                echo "$pid" >"$W/vpn.pid"
                # the client logs "connected" once the server answered its hello; the pings
                # then prove the tunnel (each waits up to a second for its answer)
                if ! wait_event 10 "--netns $NS_DEV" has_if "$NS_DEV" vpn0 ||
                        ! wait_event 10 "--file $W/vpn-client.log" vpn_connected "$mark" ||
                        ! vpn_pings; then
                        tail -n 20 "$W/vpn-client.log" >&2
                        vpn_down
                        die "no ping through the VPN (log: $W/vpn-client.log)"
                fi ;;
        down) vpn_down ;;
        status)
                if vpn_is_up; then echo "up $(pid_of "$W/vpn.pid")"; else echo down; fi ;;
        *) die "vpn: up, down or status" ;;
        esac
}

# sshd NAME start|stop: an SSH-like TCP line echo on port 22 of every device address, in
# cgroup system.slice/sshd.service.
cmd_sshd() {
        need_world "${1:-}"
        local pid
        case ${2:-} in
        start)
                ! pid_of "$W/sshd.pid" >/dev/null || die "sshd runs already"
                : >"$W/sshd.log"
                pid=$(spawn_dev "$CG_SSHD" "$W/sshd.log" "$PY" "$REPO/tests/servers/whoami.py" \
                        --listen :: --port 22 --no-udp --banner SSH-2.0-roam-world-sshd)
                echo "$pid" >"$W/sshd.pid"
                wait_event 10 "--file $W/sshd.log" grep -q '^ready' "$W/sshd.log" || {
                        cat "$W/sshd.log" >&2
                        stop_service "$W/sshd.pid" "$CG_SSHD"
                        die "sshd did not start"
                } ;;
        stop) stop_service "$W/sshd.pid" "$CG_SSHD" ;;
        *) die "sshd: start or stop" ;;
        esac
}

# wifi NAME on|off: the world's wpa_supplicant for wifi0, a station double
# (tests/world/wifi_station.py) with its control socket where roamd looks
# (/run/wpa_supplicant/wifi0 in the device), associated with the network wifi0 is in.
cmd_wifi() {
        need_world "${1:-}"
        local pid
        case ${2:-} in
        on)
                ! pid_of "$W/wpa.pid" >/dev/null || return 0
                uplink_port wifi0
                rm -f "$W/wpa.fifo" "$W/wpa.ready"
                mkfifo -m 0600 "$W/wpa.fifo"
                : >"$W/wpa.log"
                pid=$(spawn_dev "$CG_WPA" "$W/wpa.log" "$PY" "$REPO/tests/world/wifi_station.py" \
                        /run/wpa_supplicant wifi0 "$W/wpa.fifo" "$W/wpa.ready" \
                        "$(wifi_bssid "$NET")" "$(wifi_ssid "$NET")")
                echo "$pid" >"$W/wpa.pid"
                wait_event 10 "--file $W/wpa.ready" test -s "$W/wpa.ready" || {
                        cat "$W/wpa.log" >&2
                        stop_service "$W/wpa.pid" "$CG_WPA"
                        die "the wpa_supplicant double did not start"
                } ;;
        off)
                stop_service "$W/wpa.pid" "$CG_WPA"
                rm -f "$W/wpa.fifo" "$W/wpa.ready" ;;
        *) die "wifi: on or off" ;;
        esac
}

wifi_tell() { # wifi_tell LINE: to the wpa_supplicant double, when it runs
        pid_of "$W/wpa.pid" >/dev/null || return 0
        # the double holds the FIFO open for reading, so this does not block; a double that
        # died meanwhile must not hang the world
        timeout 5 sh -c 'printf "%s\n" "$1" >"$2"' sh "$1" "$W/wpa.fifo" ||
                log "wifi: the wpa_supplicant double did not take '$1'"
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
        local ifn=${2:?ifname}
        if has_if "$NS_DELAY" "$(peer_of "$ifn")"; then
                stop_delay_line "$ifn"
                delay_ports "$ifn"
                innet "roam-$NAME-$(find_peer_ns "$DN")" ip link del "$DN" 2>/dev/null || true
                rm -f "$W/delay-$ifn.ms"
        fi
        innet "$NS_DEV" ip link del "$ifn"
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
delay) cmd_delay "$@" ;;
uplink) cmd_uplink "$@" ;;
cafe-login) cmd_cafe "${1:-}" login ;;
cafe-logout) cmd_cafe "${1:-}" logout ;;
cafe-logout-reset) cmd_cafe "${1:-}" logout-reset ;;
cafe-portal) cmd_cafe_portal "$@" ;;
reset) cmd_reset "$@" ;;
dns64) cmd_dns64 "$@" ;;
internet) cmd_internet "$@" ;;
vpn) cmd_vpn "$@" ;;
sshd) cmd_sshd "$@" ;;
wifi) cmd_wifi "$@" ;;
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
