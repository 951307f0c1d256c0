#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# roam on a real Debian 12, booted: a root filesystem made by mmdebstrap (cached on this
# machine), booted with systemd-nspawn (systemd 252 as its PID 1, dbus-daemon, polkitd,
# NetworkManager, chrony), its only network a veth into a namespace world of this test's
# own. The .debs are installed with apt as a user would, and checked against the real
# daemons: install, journal, roam run, polkit, reload, restart, wait-online, NTP from DHCP,
# remove and purge. See tests/system/README.md. Needs root.
# Usage: tests/system/run.sh [--keep]
#   ROAM_SYSTEM_DEBS=DIR   the .debs to install (default: built here, as tests/packaging does)
#   ROAM_SYSTEM_CACHE=DIR  where the root filesystem tarball is kept (/var/cache/roam-system-test)
set -uo pipefail
# grep -q for the end of a pipeline: it reads its input to the end (a writer that gets
# SIGPIPE from a grep -q that matched early fails the pipeline under pipefail).
gq() {
        grep -q "$@"
        local r=$?
        cat >/dev/null
        return $r
}

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/system
start=$SECONDS
keep=0
[ "${1:-}" = "--keep" ] && keep=1
[ "$(id -u)" = 0 ] || { echo "system: needs root" >&2; exit 1; }
for t in mmdebstrap systemd-nspawn nsenter; do
        command -v $t >/dev/null || { echo "system: $t is missing (tools/install-deps.sh installs it)" >&2; exit 1; }
done

# What the booted system has: what roamd and roam depend on (debian/control, and the
# libraries dpkg-shlibdeps finds), what the checks use, and the daemons the seams are with.
# The container has no route to the registry: apt installs the .debs offline.
packages=(
        systemd systemd-sysv dbus libpam-systemd polkitd pkexec network-manager chrony
        iproute2 nftables iputils-ping dhcpcd-base procps
        libcurl4 libc-ares2 libnl-3-200 libnl-route-3-200 libnftnl11 libmnl0 libjson-c5
        libncursesw6 libtinfo6 libsystemd0 libxml2 zlib1g mobile-broadband-provider-info tzdata
        libglib2.0-0 libqrencode4
)
suite=bookworm
cache=${ROAM_SYSTEM_CACHE:-/var/cache/roam-system-test}
key=$(printf '%s\n' 1 "$suite" minbase "${packages[@]}" | sha256sum | cut -c1-16)
tarball=$cache/rootfs-$suite-$key.tar

name=roam-sys-$$
ns=$name          # the container's network namespace
world=$name-world # the gateway, DHCP, DNS and the check server
work=/var/tmp/$name
root=$work/root
password=roam-systest-pw
failed=0
nspawn_pid=
leader=

fail() {
        echo "system: FAIL: $*" >&2
        failed=$((failed + 1))
}
ok() { echo "system: ok: $*"; }
say() { echo "system: $*"; }

# What a killed earlier run left: its nspawn, namespaces, mounts and root, by name.
sweep() {
        local d pid n p
        for d in /var/tmp/roam-sys-*; do
                [ -d "$d" ] || continue
                pid=${d##*roam-sys-}
                [[ $pid =~ ^[0-9]+$ ]] || continue
                [ -d "/proc/$pid" ] && [ "$pid" != $$ ] && continue
                [ "$pid" = $$ ] && continue
                n=roam-sys-$pid
                say "removing what run $pid left ($d)"
                for p in $(pgrep -x systemd-nspawn); do
                        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | gq -- "-M $n " &&
                                kill -9 "$p" 2>/dev/null
                done
                for p in $(ip netns pids "$n-world" 2>/dev/null) $(ip netns pids "$n" 2>/dev/null); do
                        kill -9 "$p" 2>/dev/null
                done
                ip netns delete "$n-world" 2>/dev/null
                ip netns delete "$n" 2>/dev/null
                grep -o " $d[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
                rm -rf --one-file-system "$d"
        done
        for f in "$cache"/.tmp-*.tar; do # a root filesystem being made when its run was killed
                [ -e "$f" ] || continue
                pid=${f##*.tmp-}
                pid=${pid%.tar}
                [ -d "/proc/$pid" ] || rm -rf "$f"
        done
        for n in $(ip netns list | awk '{print $1}'); do
                [[ $n =~ ^roam-sys-([0-9]+)(-world)?$ ]] || continue
                [ -d "/proc/${BASH_REMATCH[1]}" ] && continue
                ip netns pids "$n" | xargs -r kill -9 2>/dev/null
                ip netns delete "$n"
        done
}

cleanup() {
        local p
        if [ -n "$nspawn_pid" ] && [ -d "/proc/$nspawn_pid" ]; then
                kill -9 "$nspawn_pid" 2>/dev/null
                wait "$nspawn_pid" 2>/dev/null
        fi
        for p in $(ip netns pids "$world" 2>/dev/null) $(ip netns pids "$ns" 2>/dev/null); do
                kill -9 "$p" 2>/dev/null
        done
        wait 2>/dev/null # the world's servers, our children
        ip netns delete "$world" 2>/dev/null
        ip netns delete "$ns" 2>/dev/null
        if [ $keep = 1 ]; then
                say "kept $work"
        else
                rm -rf --one-file-system "$work"
        fi
}

sweep
mkdir -p "$work"
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. The .debs.
debs=${ROAM_SYSTEM_DEBS:-}
if [ -z "$debs" ]; then
        debs=$work/debs
        "$top/tests/packaging/build-debs.sh" "$debs" || { echo "system: building the .debs failed" >&2; exit 1; }
fi
ls "$debs"/roamd_*.deb "$debs"/roam_*.deb "$debs"/roam-gio_*.deb >/dev/null ||
        { echo "system: no roamd_*.deb/roam_*.deb/roam-gio_*.deb in $debs" >&2; exit 1; }

# 2. The root filesystem, made once per package list and kept on this machine.
if [ ! -s "$tarball" ]; then
        mkdir -p "$cache"
        mirror=()
        [ -e /etc/apt/sources.list.d/debian.sources ] && mirror=(/etc/apt/sources.list.d/debian.sources)
        [ -n "${ROAM_SYSTEM_MIRROR:-}" ] && mirror=("$ROAM_SYSTEM_MIRROR")
        say "making the $suite root filesystem (mmdebstrap; cached as $tarball)"
        t0=$SECONDS
        tmp=$cache/.tmp-$$.tar
        if ! mmdebstrap --variant=minbase --format=tar --include="$(IFS=,; echo "${packages[*]}")" \
                "$suite" "$tmp" "${mirror[@]}" >"$work/mmdebstrap.log" 2>&1; then
                rm -f "$tmp"
                if grep -Eq "Failed to fetch|Could not resolve|Temporary failure resolving|Unable to connect|Could not connect|Network is unreachable|Connection timed out|Release file .* is not valid" \
                        "$work/mmdebstrap.log"; then
                        tail -5 "$work/mmdebstrap.log"
                        echo "system: SKIPPED: no registry (mmdebstrap cannot download Debian's packages and no root filesystem is cached in $cache)"
                        exit 0
                fi
                tail -30 "$work/mmdebstrap.log"
                echo "system: mmdebstrap failed (above)" >&2
                exit 1
        fi
        # Only the newest package list's root is kept.
        find "$cache" -maxdepth 1 -name "rootfs-*.tar" ! -name "${tarball##*/}" -delete
        mv "$tmp" "$tarball"
        say "root filesystem made in $((SECONDS - t0)) s"
fi
mkdir "$root"
tar --xattrs --xattrs-include='*' --numeric-owner -C "$root" -xpf "$tarball" ||
        { echo "system: cannot unpack $tarball" >&2; exit 1; }

# 3. What this machine's admin did before installing roam: a user in group sudo (polkit's
# administrators on Debian), a PAM service for the test's logins (pam_systemd: a logind
# session and the user's manager), eth1 left to dhcpcd, chronyd that never sets the clock.
echo systest >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 systest\n' >"$root/etc/hosts"
chroot "$root" useradd -m -s /bin/bash -G sudo alice || { echo "system: useradd" >&2; exit 1; }
echo "alice:$password" | chroot "$root" chpasswd || { echo "system: chpasswd" >&2; exit 1; }
cat >"$root/etc/pam.d/roam-systest" <<'EOF'
@include common-auth
@include common-account
@include common-session
EOF
# dhcpcd asks for NTP servers only when told (Debian's dhcpcd.conf does not).
echo "option ntp_servers" >>"$root/etc/dhcpcd.conf"
mkdir -p "$root/etc/NetworkManager/conf.d"
printf '[keyfile]\nunmanaged-devices=interface-name:eth1\n' \
        >"$root/etc/NetworkManager/conf.d/roam-systest.conf"
# The container has no CAP_SYS_TIME (and must not touch the host's clock): chronyd runs
# with -x, which keeps the clock alone, and its unit's condition on the capability goes.
echo 'DAEMON_OPTS="-F 1 -x"' >"$root/etc/default/chrony"
mkdir -p "$root/etc/systemd/system/chrony.service.d"
printf '[Unit]\nConditionCapability=\n' >"$root/etc/systemd/system/chrony.service.d/roam-systest.conf"
# A service that wants the network online, as many do (a boot is held by what it orders after).
cat >"$root/etc/systemd/system/systest-after-online.service" <<'EOF'
[Unit]
Description=A service that orders after network-online.target
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true

[Install]
WantedBy=multi-user.target
EOF
ln -s /etc/systemd/system/systest-after-online.service \
        "$root/etc/systemd/system/multi-user.target.wants/systest-after-online.service"
mkdir "$root/root/debs"
cp "$debs"/roamd_*.deb "$debs"/roam_*.deb "$debs"/roam-gio_*.deb "$root/root/debs/"
# An unmodified GLib program (tests/world/gio-client.c): its network monitor's type and answer.
mkdir -p "$root/usr/local/bin"
cc -o "$root/usr/local/bin/roam-systest-gio" "$top/tests/world/gio-client.c" \
        $(pkg-config --cflags --libs gio-2.0) ||
        { echo "system: cannot build the GLib program (libglib2.0-dev: tools/install-deps.sh)" >&2; exit 1; }

# 4. The world: eth0 (NetworkManager) and eth1 (dhcpcd), each a veth into the world's
# gateway, created in the namespaces (never on the host). The world hands out addresses,
# DNS (probe.roam.test is its check server) and NTP servers by DHCP.
ip netns add "$ns" && ip netns add "$world" || { echo "system: ip netns add" >&2; exit 1; }
ip -n "$world" link set lo up
ip -n "$world" link add gw0 type veth peer name eth0 netns "$ns"
ip -n "$world" link add gw1 type veth peer name eth1 netns "$ns"
ip -n "$world" addr add 192.0.2.1/24 dev gw0
ip -n "$world" addr add 198.51.100.1/24 dev gw1
ip -n "$world" addr add 203.0.113.10/32 dev lo
ip -n "$world" addr add 203.0.113.99/32 dev lo
ip -n "$world" link set gw0 up
ip -n "$world" link set gw1 up
ip netns exec "$world" dnsmasq --conf-file=/dev/null --keep-in-foreground --no-resolv --no-hosts \
        --bind-interfaces --interface=gw0 --interface=gw1 --except-interface=lo \
        --dhcp-range=set:n0,192.0.2.100,192.0.2.150,1h --dhcp-range=set:n1,198.51.100.100,198.51.100.150,1h \
        --dhcp-option=tag:n0,option:ntp-server,192.0.2.1 --dhcp-option=tag:n1,option:ntp-server,198.51.100.1 \
        --address=/probe.roam.test/203.0.113.10 --dhcp-leasefile="$work/dnsmasq.leases" \
        --pid-file="$work/dnsmasq.pid" --log-facility="$work/dnsmasq.log" &
# Counts what reaches the world from the container for 203.0.113.99 (a denied app's target).
ip netns exec "$world" nft -f - <<'EOF'
table inet systest {
        counter to99 { }
        chain in {
                type filter hook input priority 0;
                ip daddr 203.0.113.99 icmp type echo-request counter name to99
        }
}
EOF
"$top/tests/servers/mkcerts.sh" "$work/ca" probe DNS:probe.roam.test
cp "$work/ca/ca.pem" "$root/root/probe-ca.pem"
probe_pids=()
# The check server on 203.0.113.10, HTTP and HTTPS; each says "ready" once it listens.
start_probe() {
        local spec i=0 line
        probe_pids=()
        for spec in "203.0.113.10:80" "203.0.113.10:443 --tls $work/ca/probe.pem $work/ca/probe.key"; do
                i=$((i + 1))
                rm -f "$work/probe-$i"
                mkfifo "$work/probe-$i"
                # shellcheck disable=SC2086
                ip netns exec "$world" /usr/bin/python3 "$top/tests/servers/roam_testserver.py" \
                        --mode probe --listen $spec >"$work/probe-$i" &
                probe_pids+=($!)
                read -t 10 -r line <"$work/probe-$i" && [ "$line" = ready ] ||
                        { echo "system: the check server did not start" >&2; exit 1; }
        done
}
stop_probe() {
        local p
        for p in "${probe_pids[@]}"; do
                kill "$p" 2>/dev/null
                wait "$p" 2>/dev/null
        done
        probe_pids=()
}

# 5. Booting, entering, stopping. The container keeps CAP_NET_ADMIN (nspawn drops it unless it
# makes the network namespace itself): its namespace is the test's own.
in_ct() {
        nsenter -t "$leader" -a -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}
# A command as a service of the container's systemd (in its cgroup tree, where scopes can
# be made): its output and exit code come back. Options before --, e.g. -p User=alice.
ct_run() {
        local opts=()
        while [ $# -gt 0 ] && [ "$1" != -- ]; do
                opts+=("$1")
                shift
        done
        shift
        in_ct systemd-run --quiet --wait --pipe --collect --service-type=exec \
                -E LANG=C.UTF-8 -E DEBIAN_FRONTEND=noninteractive "${opts[@]}" -- "$@"
}
# As alice, in a logind session of her own (pam_systemd), with her user manager.
as_alice() { ct_run -p User=alice -p PAMName=roam-systest -E HOME=/home/alice "$@"; }

boots=0
boot() {
        local i out
        boots=$((boots + 1))
        SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn -q -D "$root" --register=no --keep-unit \
                --boot --network-namespace-path="/run/netns/$ns" --capability=CAP_NET_ADMIN --console=read-only -M "$name" \
                </dev/null >"$work/console-$boots.log" 2>&1 &
        nspawn_pid=$!
        leader=
        # The container's PID 1 is nspawn's child, once it runs systemd.
        for i in $(seq 200); do
                for p in $(cat /proc/"$nspawn_pid"/task/*/children 2>/dev/null); do
                        [ "$(cat /proc/"$p"/comm 2>/dev/null)" = systemd ] && leader=$p
                done
                [ -n "$leader" ] && break
                [ -d "/proc/$nspawn_pid" ] || break
                sleep 0.05
        done
        [ -n "$leader" ] || { cat "$work/console-$boots.log"; echo "system: the container did not start" >&2; exit 1; }
        # is-system-running --wait waits for the boot to finish; before PID 1's socket exists
        # it cannot connect and is asked again.
        for i in $(seq 120); do
                out=$(in_ct timeout 90 systemctl is-system-running --wait 2>&1)
                case $out in running | degraded | maintenance | stopping) break ;; esac
                sleep 0.25
        done
        state=$out
        # nspawn mounts /proc/sys read-only unless it made the network namespace itself; the
        # namespace is the container's own, so its /proc/sys/net is made writable, as nspawn
        # does for --private-network (dhcpcd sets the link's sysctls).
        in_ct sh -c 'mount --bind /proc/sys/net /proc/sys/net && mount -o remount,bind,rw /proc/sys/net' ||
                fail "boot $boots: cannot make /proc/sys/net writable"
        say "boot $boots: $state"
}
shutdown_ct() {
        in_ct systemctl poweroff >/dev/null 2>&1
        # nspawn ends when the container's systemd has stopped everything.
        if ! timeout 60 tail --pid="$nspawn_pid" -f /dev/null; then
                fail "boot $boots: the container did not power off within 60 s"
                kill -9 "$nspawn_pid"
        fi
        wait "$nspawn_pid" 2>/dev/null
        nspawn_pid=
}
journal_since_boot() { in_ct journalctl -b --no-pager -o cat "$@"; }
unit_prop() { in_ct systemctl show -P "$2" "$1"; }

# ---------------------------------------------------------------------------------------
start_probe
boot
[ "$state" = running ] || { in_ct systemctl --failed --no-pager; fail "boot 1 (before roam): $state"; }

# Check 1: apt installs in bounded time, roamd is active with a clean journal, and
# roam-wait-online is neither enabled nor started by the package.
say "apt-get install /root/debs/roamd_*.deb /root/debs/roam_*.deb /root/debs/roam-gio_*.deb"
t0=$SECONDS
# RuntimeMaxSec bounds a hang (the 90 s of a started wait-online would show as a failure).
if ct_run -p RuntimeMaxSec=80 -- sh -c 'apt-get install -y /root/debs/roamd_*.deb /root/debs/roam_*.deb /root/debs/roam-gio_*.deb' \
        >"$work/apt-install.log" 2>&1; then
        ok "apt-get install: exit 0 ($((SECONDS - t0)) s)"
else
        cat "$work/apt-install.log"
        fail "apt-get install failed (or took more than 80 s)"
fi
[ "$(in_ct systemctl is-active roamd)" = active ] && ok "roamd.service active" ||
        { fail "roamd.service is not active"; in_ct journalctl -u roamd --no-pager | tail -30; }
[ "$(in_ct systemctl is-enabled roamd)" = enabled ] || fail "roamd.service is not enabled"
wo_state=$(in_ct systemctl is-enabled roam-wait-online.service 2>&1)
[ "$wo_state" = disabled ] || fail "roam-wait-online.service after install: $wo_state (not disabled)"
[ "$(unit_prop roam-wait-online.service ActiveEnterTimestampMonotonic)" = 0 ] &&
        [ "$(unit_prop roam-wait-online.service InactiveExitTimestampMonotonic)" = 0 ] &&
        ok "roam-wait-online.service never started by the package" ||
        fail "the package started roam-wait-online.service"
in_ct systemd-analyze verify --man=no roam-wait-online.service >"$work/verify.log" 2>&1 ||
        { cat "$work/verify.log"; fail "systemd-analyze verify roam-wait-online.service"; }

# "Clean": nothing of priority warning or worse from roamd since it started, but for the
# lines allowed in journal-allow.txt (each with its reason).
clean_journal() { # WHAT (journalctl arguments follow)
        local what=$1 bad
        shift
        bad=$(in_ct journalctl --no-pager -o cat -p warning "$@" |
                grep -v -E -f <(grep -v -e '^#' -e '^$' "$here/journal-allow.txt") || true)
        if [ -n "$bad" ]; then
                echo "$bad" | head -20
                fail "$what: roamd logged warnings or errors (above; not in tests/system/journal-allow.txt)"
        else
                ok "$what: no warning or error from roamd"
        fi
}
clean_journal "roamd's start" _SYSTEMD_UNIT=roamd.service

# roamd sees the links: eth0 from NetworkManager's DHCP.
in_ct roam status >"$work/status.txt" 2>&1 || { cat "$work/status.txt"; fail "roam status"; }
grep -q eth0 "$work/status.txt" && ok "roam status shows eth0" || { cat "$work/status.txt"; fail "roam status: no eth0"; }

# The world's check server answers: roam's probes go there (the admin's [Probe] section).
cp "$root/root/probe-ca.pem" "$root/etc/roam/probe-ca.pem"
cat >>"$root/etc/roam/roamd.conf" <<'EOF'

# The system test's check server (tests/system/run.sh).
[Probe]
HttpURL=http://probe.roam.test/roam-probe
HttpsURL=https://probe.roam.test/roam-probe
ExpectBody=roam-online\n
CAFile=/etc/roam/probe-ca.pem

# veth links are "virtual" by sysfs; here they are the machine's ethernet.
[Bearers]
eth*=ethernet
EOF
in_ct roamd --check-config >/dev/null || fail "roamd --check-config with the [Probe] section"
in_ct systemctl reload roamd || fail "systemctl reload roamd (a good configuration)"
if in_ct roam wait-online --timeout 20 >"$work/wait.txt" 2>&1; then
        ok "roam wait-online: online through the world's check server"
else
        cat "$work/wait.txt"
        in_ct roam status
        fail "roam wait-online: not online"
fi

# Check 8: every path roamd writes is allowed by the unit. eth1's DHCP lease (dhcpcd) has an
# NTP server; roamd hands it to chronyd in /run/chrony-dhcp and asks chronyd to reload
# through its command socket (roamd binds its end in /run/chrony).
[ "$(in_ct systemctl is-active chrony)" = active ] || fail "chrony.service is not active in the container"
in_ct ip link set eth1 up
in_ct systemd-run --quiet --unit=systest-dhcpcd -- dhcpcd -4 -B eth1 ||
        fail "dhcpcd on eth1 did not start"
# A network's NTP servers go to chronyd only where the user trusts the network (home, work:
# docs/time.md): the world's network is made home once eth1 has a network roamd knows.
for i in $(seq 80); do
        in_ct roam network trust home eth1 >/dev/null 2>&1 && break
        sleep 0.25
done
in_ct roam network trust home eth1 >/dev/null || fail "roam network trust home eth1"
sources=/run/chrony-dhcp/eth1.sources
# roamd writes it once eth1's verdict is in; chronyd then lists the server.
for i in $(seq 80); do
        in_ct test -s "$sources" && break
        sleep 0.25
done
if in_ct grep -q 198.51.100.1 "$sources" 2>/dev/null; then
        ok "roamd wrote $sources with the lease's NTP server"
else
        in_ct ls -la /run/chrony-dhcp /var/lib/dhcpcd
        in_ct journalctl -u systest-dhcpcd --no-pager | tail
        in_ct roam status
        in_ct journalctl -u roamd --no-pager | grep -i -e time -e chrony | tail
        fail "roamd did not write $sources"
fi
for i in $(seq 40); do
        in_ct chronyc -n sources 2>/dev/null | gq 198.51.100.1 && break
        sleep 0.25
done
in_ct chronyc -n sources 2>/dev/null | gq 198.51.100.1 &&
        ok "chronyd uses the NTP server roamd handed it" ||
        fail "chronyd does not list 198.51.100.1 (roamd's reload request did not reach it?)"
if journal_since_boot _SYSTEMD_UNIT=roamd.service | grep -E -i "read-only file system|permission denied|EROFS|EACCES"; then
        fail "roamd met a path its unit does not allow (above)"
else
        ok "no read-only or permission errors in roamd's journal"
fi

# Check 5: a restart keeps app policies and opens no window. A denied app (an XDG app
# service of alice's user manager) pings 203.0.113.99 without pause across the restart;
# the world counts what arrives.
in_ct loginctl enable-linger alice
for i in $(seq 40); do
        [ "$(in_ct systemctl is-active user@1000.service)" = active ] && break
        sleep 0.25
done
cat >"$root/etc/roam/apps.d/systest-denied.conf" <<'EOF'
[App]
ID=org.roam.SysDenied
Access=deny
EOF
in_ct systemctl reload roamd || fail "systemctl reload roamd (the denied app's policy)"
to99() { ip netns exec "$world" nft list counter inet systest to99 | awk '/packets/ {print $2}'; }
# The counter counts: root's pings (policy system) arrive.
before=$(to99)
ct_run -- ping -n -c 3 -i 0.2 -W 1 203.0.113.99 >/dev/null 2>&1
[ $(($(to99) - before)) = 3 ] && ok "3 pings of the system policy arrive in the world" ||
        fail "the world's counter saw $(($(to99) - before)) of 3 pings of the system policy"
user_run() { in_ct runuser -u alice -- env XDG_RUNTIME_DIR=/run/user/1000 "$@"; }
before=$(to99)
user_run systemd-run --user --quiet --unit=app-systest-org.roam.SysDenied@1.service \
        --slice=app.slice -- ping -n -i 0.005 203.0.113.99 ||
        fail "systemd-run --user app-systest-org.roam.SysDenied@1.service"
for i in $(seq 40); do
        in_ct roam app org.roam.SysDenied 2>/dev/null | gq -i running && break
        sleep 0.25
done
in_ct roam app org.roam.SysDenied >"$work/app.txt" 2>&1
grep -q -i deny "$work/app.txt" || { cat "$work/app.txt"; fail "roam app org.roam.SysDenied: not deny"; }
in_ct nft list tables >"$work/tables-before.txt"
mon=$root/root/nft-monitor.txt
in_ct systemd-run --quiet --unit=systest-nft-monitor -p StandardOutput=file:/root/nft-monitor.txt \
        nft monitor tables || fail "nft monitor"
in_ct systemctl restart roamd || fail "systemctl restart roamd"
[ "$(in_ct systemctl is-active roamd)" = active ] || fail "roamd is not active after restart"
sleep 1 # the app keeps pinging (200 a second) after roamd is back
in_ct systemctl stop systest-nft-monitor
user_run systemctl --user stop app-systest-org.roam.SysDenied@1.service
arrived=$(($(to99) - before))
if [ "$arrived" = 0 ]; then
        ok "restart: not one of the denied app's pings reached the world"
else
        fail "restart: $arrived pings of the denied app (Access=deny) reached the world"
fi
# Deleted and added again in one transaction at start is no window; a delete alone is.
dels=$(grep -c "delete table inet roam" "$mon" || true)
adds=$(grep -c "add table inet roam" "$mon" || true)
[ "$dels" -le "$adds" ] || { cat "$mon"; fail "restart: table inet roam deleted and not added back"; }
if in_ct roam app org.roam.SysDenied | gq -i deny; then
        ok "restart kept the policy of org.roam.SysDenied"
else
        fail "restart: org.roam.SysDenied lost its policy"
fi

# Check 4: a refused reload fails and the old configuration stays.
cp "$root/etc/roam/roamd.conf" "$work/roamd.conf.good"
printf '\n[Probe]\nTimeout=banana\n' >>"$root/etc/roam/roamd.conf"
if in_ct systemctl reload roamd 2>"$work/reload.err"; then
        fail "systemctl reload roamd with a broken roamd.conf exits 0"
else
        ok "systemctl reload roamd with a broken roamd.conf fails"
fi
[ "$(in_ct systemctl is-active roamd)" = active ] || fail "roamd stopped after a refused reload"
cp "$work/roamd.conf.good" "$root/etc/roam/roamd.conf"
printf '[App]\nID=org.roam.SysBroken\nAccess=maybe\n' >"$root/etc/roam/apps.d/systest-broken.conf"
if in_ct roamd --check-config >"$work/check.txt" 2>&1; then
        cat "$work/check.txt"
        fail "roamd --check-config says OK with a broken apps.d file"
elif grep -q systest-broken.conf "$work/check.txt"; then
        ok "roamd --check-config names the broken apps.d file"
else
        cat "$work/check.txt"
        fail "roamd --check-config fails without naming the broken apps.d file"
fi
if in_ct systemctl reload roamd 2>>"$work/reload.err"; then
        fail "systemctl reload roamd with a broken apps.d file exits 0"
else
        ok "systemctl reload roamd with a broken apps.d file fails"
fi
in_ct roam app org.roam.SysDenied | gq -i deny || fail "after the refused reloads org.roam.SysDenied is not deny"
rm -f "$root/etc/roam/apps.d/systest-broken.conf"
in_ct systemctl reload roamd || fail "systemctl reload roamd after the broken file went"

# Check 2: roam run, as root and as alice in her session, lands in a systemd scope with
# its app's policy: the app is denied, and its ping does not reach the world.
cat >"$root/etc/roam/apps.d/systest-run.conf" <<'EOF2'
[App]
ID=org.roam.SysRun
Access=deny
EOF2
in_ct systemctl reload roamd || fail "systemctl reload roamd (org.roam.SysRun's policy)"
# alice runs it on a terminal: polkit may ask for her password (pkttyagent, as in check 3).
alice_pty() {
        /usr/bin/python3 "$here/pty_answer.py" --optional "[Pp]assword" "$password" 60 -- \
                nsenter -t "$leader" -a -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
                LANG=C.UTF-8 TERM=vt100 systemd-run --quiet --wait --pty --collect -p User=alice \
                -p PAMName=roam-systest -E HOME=/home/alice -E TERM=vt100 "$@" | tr -d '\r'
}
run_check() { # WHO (alice_pty or ct_run)
        local who=$1 out cg before
        before=$(to99)
        if ! out=$($who -- roam run --app org.roam.SysRun -- sh -c \
                'cat /proc/self/cgroup; roam app org.roam.SysRun; ping -n -c 2 -W 1 203.0.113.99 >/dev/null 2>&1; echo ping=$?' \
                2>&1); then
                echo "$out"
                fail "roam run --app org.roam.SysRun as $who: failed"
                return
        fi
        cg=$(sed -n 's/^0:://p' <<<"$out")
        case $cg in
        *.scope) ok "roam run --app org.roam.SysRun as $who: in $cg" ;;
        *) echo "$out"; fail "roam run --app org.roam.SysRun as $who: in ${cg:-?}, not a scope" ;;
        esac
        grep -q -i "access: *deny" <<<"$out" && grep -q -F "$cg" <<<"$out" ||
                { echo "$out"; fail "roam run as $who: roam app does not show the scope with access deny"; }
        grep -q "ping=0" <<<"$out" && fail "roam run as $who: the denied app's ping got an answer"
        [ "$(to99)" = "$before" ] && ok "roam run as $who: the app's policy holds (its ping never reached the world)" ||
                fail "roam run as $who: $(($(to99) - before)) pings of the denied app reached the world"
}
run_check ct_run
run_check alice_pty

# Check 2b: GLib programs hear roamd (docs/apps-hear.md): Debian's trigger put roam's GIO
# module in giomodule.cache, a GLib program in alice's session reports roam's monitor, and
# one run as the denied app hears that nothing of it routes.
out=$(as_alice -- /usr/local/bin/roam-systest-gio </dev/null 2>&1)
if gq "^start RoamNetworkMonitor available=1 " <<<"$out"; then
        ok "a GLib program in alice's session: roam's network monitor, network available"
else
        echo "$out"
        fail "a GLib program in alice's session does not report roam's monitor (available)"
fi
out=$(ct_run -- roam run --app org.roam.SysRun -- /usr/local/bin/roam-systest-gio </dev/null 2>&1)
if gq "^start RoamNetworkMonitor available=0 connectivity=local" <<<"$out"; then
        ok "a GLib program as the denied app hears local, not available"
else
        echo "$out"
        fail "a GLib program run as the denied app org.roam.SysRun does not hear local"
fi

# Check 3: alice answers the trust question after polkit asks for her password through
# pkttyagent (roam runs it on a terminal), and without a terminal is refused, clearly.
if out=$(as_alice -- roam network trust work eth0 </dev/null 2>&1); then
        echo "$out"
        fail "roam network trust without an agent succeeded (polkit asked nobody)"
elif grep -q -i netdev <<<"$out"; then
        echo "$out"
        fail "roam network trust without an agent: the refusal suggests group netdev, where polkit decides"
elif grep -q -i -e "authori" -e "polkit" <<<"$out"; then
        ok "roam network trust without an agent is refused: $(head -1 <<<"$out")"
else
        echo "$out"
        fail "roam network trust without an agent: refused without saying why"
fi
if /usr/bin/python3 "$here/pty_answer.py" "[Pp]assword" "$password" 60 -- \
        nsenter -t "$leader" -a -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=vt100 \
        systemd-run --quiet --wait --pty --collect -p User=alice -p PAMName=roam-systest \
        -E HOME=/home/alice -E TERM=vt100 -- roam network trust home eth0 >"$work/trust.txt" 2>&1; then
        ok "roam network trust home eth0: alice answered polkit's question"
else
        cat "$work/trust.txt"
        fail "roam network trust home eth0 through pkttyagent"
fi
in_ct roam network >"$work/network.txt" 2>&1
grep eth0 "$work/network.txt" | gq -i home || { cat "$work/network.txt"; fail "eth0's network is not home after alice's answer"; }

# Check 6: network-online.target is not held by roam unless roam-wait-online is enabled;
# enabled, it waits until a link is validated, or its timeout, and the boot ends running.
shutdown_ct
boot
[ "$state" = running ] || { in_ct systemctl --failed --no-pager; fail "boot $boots (roam installed): $state"; }
[ "$(unit_prop roam-wait-online.service ActiveState)" = inactive ] &&
        [ "$(unit_prop roam-wait-online.service InactiveExitTimestampMonotonic)" = 0 ] &&
        ok "boot $boots: roam-wait-online not run (not enabled)" ||
        fail "boot $boots: roam-wait-online ran without being enabled"
[ "$(unit_prop systest-after-online.service ActiveState)" = active ] || fail "boot $boots: a service after network-online.target did not run"
in_ct systemctl enable roam-wait-online.service >/dev/null 2>&1 || fail "systemctl enable roam-wait-online.service"
shutdown_ct

# Online: held until validated (the shipped unit, its 60 s timeout).
boot
[ "$state" = running ] || { in_ct systemctl --failed --no-pager; fail "boot $boots (wait-online, online): $state"; }
wo_res=$(unit_prop roam-wait-online.service Result)
wo_code=$(unit_prop roam-wait-online.service ExecMainStatus)
[ "$wo_res" = success ] && [ "$wo_code" = 0 ] && ok "boot $boots: roam-wait-online ended online (exit 0)" ||
        { in_ct journalctl -b -u roam-wait-online --no-pager; fail "boot $boots: roam-wait-online $wo_res, exit $wo_code (online world)"; }
t_wo=$(unit_prop roam-wait-online.service ActiveEnterTimestampMonotonic)
t_no=$(unit_prop network-online.target ActiveEnterTimestampMonotonic)
[ "$t_wo" -gt 0 ] && [ "$t_no" -ge "$t_wo" ] && ok "boot $boots: network-online.target after roam-wait-online" ||
        fail "boot $boots: network-online.target ($t_no) not after roam-wait-online ($t_wo)"
shutdown_ct

# Offline: no internet in the world; held until the timeout (the admin's shorter one, as the
# unit's comment says), then the boot ends running.
mkdir -p "$root/etc/systemd/system/roam-wait-online.service.d"
printf '[Service]\nEnvironment=ROAM_WAIT_ONLINE_TIMEOUT=8\n' \
        >"$root/etc/systemd/system/roam-wait-online.service.d/timeout.conf"
stop_probe
boot
[ "$state" = running ] && ok "boot $boots (wait-online enabled, no internet): running" ||
        { in_ct systemctl --failed --no-pager; fail "boot $boots (wait-online enabled, no internet): $state"; }
wo_res=$(unit_prop roam-wait-online.service Result)
wo_code=$(unit_prop roam-wait-online.service ExecMainStatus)
[ "$wo_res" = success ] && [ "$wo_code" = 1 ] || fail "boot $boots: roam-wait-online $wo_res, exit $wo_code (expected: timed out, exit 1, success)"
journal_since_boot -u roam-wait-online | gq -i "not online" &&
        ok "boot $boots: roam-wait-online's journal says not online" ||
        { journal_since_boot -u roam-wait-online; fail "boot $boots: roam-wait-online's journal does not say it is not online"; }
[ "$(unit_prop systest-after-online.service ActiveState)" = active ] || fail "boot $boots: a service after network-online.target did not run"
start_probe

# Check 7: remove and purge leave no kernel state and no file.
in_ct systemctl disable roam-wait-online.service >/dev/null 2>&1
rm -rf "$root/etc/systemd/system/roam-wait-online.service.d"
for i in $(seq 40); do
        in_ct nft list tables 2>/dev/null | gq "inet roam" && break
        sleep 0.25
done
in_ct nft list tables | gq "inet roam" || fail "before remove: no table inet roam (nothing to check)"
in_ct sh -c 'dpkg -L roamd roam' | sort -u >"$work/dpkg-L.txt"
kernel_state() { # WHEN
        local t r
        t=$(in_ct nft list tables | grep -E "inet (roam|usage_by_roamd)$")
        [ -z "$t" ] || fail "$1: nft tables left: $t"
        r=$(in_ct ip rule | grep -E "^2900[01]:")
        [ -z "$r" ] || fail "$1: ip rules left: $r"
        r=$(in_ct ip -4 route show table all | grep -E "table 290[0-9][0-9]\b")
        r+=$(in_ct ip -6 route show table all | grep -E "table 290[0-9][0-9]\b")
        [ -z "$r" ] || fail "$1: routes left in roam's tables: $r"
        [ -z "$t$r" ] && ok "$1: no nft table, ip rule or route of roam's left"
}
ct_run -p RuntimeMaxSec=80 -- apt-get remove -y roamd >"$work/apt-remove.log" 2>&1 ||
        { cat "$work/apt-remove.log"; fail "apt-get remove roamd"; }
kernel_state "apt-get remove roamd"
in_ct test -e /etc/roam/roamd.conf || fail "apt-get remove roamd removed /etc/roam/roamd.conf (only purge may)"
# What the admin (this test) put in /etc/roam is the admin's to remove, as dpkg leaves it.
rm -f "$root"/etc/roam/apps.d/systest-*.conf "$root/etc/roam/probe-ca.pem"
ct_run -p RuntimeMaxSec=80 -- apt-get purge -y roamd roam >"$work/apt-purge.log" 2>&1 ||
        { cat "$work/apt-purge.log"; fail "apt-get purge roamd roam"; }
kernel_state "apt-get purge roamd roam"
left=()
while read -r f; do
        [ -d "$root$f" ] && continue # directories others share (/usr/share/man/man1...)
        [ -e "$root$f" ] || [ -L "$root$f" ] && left+=("$f")
done <"$work/dpkg-L.txt"
for f in /etc/roam /var/lib/roam /run/roam /usr/share/roam /etc/systemd/system/multi-user.target.wants/roamd.service; do
        in_ct test -e "$f" && left+=("$f")
done
for f in $(in_ct sh -c 'ls /run/chrony-dhcp/*.sources 2>/dev/null'); do
        in_ct grep -q "roamd" "$f" && left+=("$f")
done
[ ${#left[@]} = 0 ] && ok "apt-get purge: no file of roam's left" || fail "apt-get purge left: ${left[*]}"
shutdown_ct

say "took $((SECONDS - start)) s ($boots boots)"
if [ $failed -gt 0 ]; then
        echo "system: $failed checks failed" >&2
        keep=1
        exit 1
fi
exit 0
