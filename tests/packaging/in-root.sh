#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Run by run.sh inside the throwaway root (chroot into an overlay over /): installs the
# .debs in DIR, checks what they put where, removes and purges them.
# Usage: in-root.sh DIR
set -euo pipefail
debs=$1
failed=0
fail() {
        echo "packaging: FAIL: $*" >&2
        failed=1
}
ok() { echo "packaging: ok: $*"; }

export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin
# Nothing started from the maintainer scripts (there is no systemd in here anyway).
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d

for p in roam roamd roam-gio; do
        if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
                echo "packaging: $p is installed on this machine already; this test needs it not to be" >&2
                exit 1
        fi
done

dpkg -i "$debs"/roamd_*.deb "$debs"/roam_*.deb "$debs"/roam-gio_*.deb >/tmp/dpkg-install.log 2>&1 ||
        { cat /tmp/dpkg-install.log; fail "dpkg -i"; exit 1; }
ok "dpkg -i roamd roam roam-gio"

# The GIO module in GIO's module directory, and in its cache: libglib2.0-0's file trigger on
# that directory ran gio-querymodules (GLib reads the cache, not the directory).
gio_dir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/gio/modules
[ -e "$gio_dir/libgioroam.so" ] || fail "$gio_dir/libgioroam.so is missing"
grep -q "^libgioroam.so: .*gio-network-monitor" "$gio_dir/giomodule.cache" 2>/dev/null ||
        fail "giomodule.cache does not name libgioroam.so (no gio-querymodules trigger?)"
ok "libgioroam.so in $gio_dir and its giomodule.cache"

# Files in place.
files=(
        /usr/bin/roam /usr/sbin/roamd
        /lib/systemd/system/roamd.service
        /usr/share/dbus-1/system.d/org.roam1.conf
        /usr/share/dbus-1/system-services/org.roam1.service
        /usr/share/polkit-1/actions/org.roam1.policy
        /etc/roam/roamd.conf /etc/roam/apps.d /etc/roam/networks.d /etc/roam/firewall.d
        /usr/share/man/man1/roam.1.gz /usr/share/man/man8/roamd.8.gz
        /usr/share/man/man5/roamd.conf.5.gz /usr/share/man/man5/roam-apps.d.5.gz
        /usr/share/man/man5/roam-networks.d.5.gz
        /usr/share/bash-completion/completions/roam
        /usr/share/zsh/vendor-completions/_roam
        /usr/share/fish/vendor_completions.d/roam.fish
        /usr/share/roam/themes/default.theme
        /usr/share/roam/examples/apps.d/mail.conf
        /usr/share/roam/examples/networks.d/home.conf
        /usr/share/roam/examples/firewall.d/home.conf
)
for f in "${files[@]}"; do
        [ -e "$f" ] || fail "$f is missing"
done
ok "${#files[@]} files in place"

# Enabled the Debian way: dh_installsystemd's postinst made the WantedBy and Alias links.
for l in /etc/systemd/system/multi-user.target.wants/roamd.service \
        /etc/systemd/system/dbus-org.roam1.service; do
        [ -L "$l" ] || fail "$l: the unit was not enabled by the postinst"
done
ok "roamd.service enabled (postinst)"
# roam-wait-online.service is opt-in: shipped, never enabled by the package (tests/system
# checks on a booted system that it is never started either).
[ -e /lib/systemd/system/roam-wait-online.service ] || fail "roam-wait-online.service is not shipped"
[ -L /etc/systemd/system/network-online.target.wants/roam-wait-online.service ] &&
        fail "the postinst enabled roam-wait-online.service (it is opt-in)"
ok "roam-wait-online.service shipped, not enabled"

roam --help >/tmp/roam-help.txt || fail "roam --help exits $?"
grep -q '^Commands:' /tmp/roam-help.txt || fail "roam --help printed no commands"
roam --version >/dev/null || fail "roam --version"
roamd --version >/dev/null || fail "roamd --version"
roamd --check-config >/dev/null || fail "roamd --check-config of the installed /etc/roam/roamd.conf"
# Packages are built without fault injection.
if roamd --test-faults=/dev/null --check-config >/dev/null 2>&1; then
        fail "the packaged roamd accepts --test-faults"
fi
if roamd --help | grep -q -e --test-faults; then
        fail "the packaged roamd's --help lists the test-only --test-faults"
fi
ok "roam --help, roamd --check-config; no --test-faults"

systemd-analyze verify /lib/systemd/system/roamd.service >/tmp/verify.log 2>&1 ||
        { cat /tmp/verify.log; fail "systemd-analyze verify roamd.service"; }
ok "systemd-analyze verify (its Documentation= man pages included)"

# The D-Bus policy and activation file, read by a real dbus-daemon on a private socket: a
# broken file makes it refuse to start; org.roam1 must be activatable; root may own the
# name and nobody else may.
# The distribution's own system bus configuration (which includes system.d/*.conf), on a
# socket of our own; its /run/dbus is in this root's private /run.
mkdir -p /run/dbus
cat >/tmp/bus.conf <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <include ignore_missing="no">/usr/share/dbus-1/system.conf</include>
  <listen>unix:path=/tmp/roam-bus</listen>
  <!-- Again on its own: system.conf skips a system.d file it cannot parse, this fails. -->
  <include ignore_missing="no">/usr/share/dbus-1/system.d/org.roam1.conf</include>
</busconfig>
EOF
# The address is printed once the bus is ready; EOF instead when the daemon refused to start.
coproc BUS { exec dbus-daemon --config-file=/tmp/bus.conf --nofork --nopidfile --print-address=1 2>/tmp/bus.log; }
bus=$BUS_PID
if read -t 10 -r _ <&"${BUS[0]}"; then
        addr=unix:path=/tmp/roam-bus
        dbus-send --bus="$addr" --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                org.freedesktop.DBus.ListActivatableNames 2>&1 | grep -q '"org.roam1"' ||
                fail "org.roam1 is not activatable on the bus"
        own='import dbus, sys
b = dbus.bus.BusConnection(sys.argv[1])
print(b.request_name("org.roam1", dbus.bus.NAME_FLAG_DO_NOT_QUEUE))'
        [ "$(/usr/bin/python3 -c "$own" "$addr" 2>&1)" = 1 ] || fail "root may not own org.roam1"
        if setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c "$own" "$addr" \
                >/tmp/own.log 2>&1; then
                fail "user nobody may own org.roam1"
        fi
        grep -q AccessDenied /tmp/own.log || { cat /tmp/own.log; fail "nobody: not AccessDenied"; }
        kill "$bus"
        wait "$bus" 2>/dev/null || true
        ok "dbus-daemon accepts the policy; org.roam1 activatable, owned by root only"
else
        cat /tmp/bus.log
        fail "dbus-daemon refused the configuration with org.roam1.conf"
fi

dtd=/usr/share/polkit-1/policyconfig-1.dtd
valid=""
if [ -e $dtd ]; then
        # polkitd's DTD, when it is installed: valid, not only well-formed.
        valid="--dtdvalid $dtd"
fi
xmllint --noout --nonet $valid /usr/share/polkit-1/actions/org.roam1.policy ||
        fail "xmllint $valid org.roam1.policy"
xmllint --noout --nonet /usr/share/dbus-1/system.d/org.roam1.conf || fail "xmllint org.roam1.conf"
ok "xmllint ${valid:-(well-formed)}: the polkit actions; the D-Bus policy"

# Every page renders, without groff warnings, and man finds it by name.
for page in roam.1 roamd.8 roamd.conf.5 roam-apps.d.5 roam-networks.d.5; do
        path=$(man -w "${page%.*}" 2>/dev/null | head -1) || true
        [ -n "$path" ] || fail "man -w ${page%.*}: not found"
        f=/usr/share/man/man${page##*.}/$page.gz
        out=$(MANWIDTH=80 man --warnings -l "$f" 2>/tmp/man.err) || fail "man -l $f"
        [ -s /tmp/man.err ] && { cat /tmp/man.err; fail "man -l $f: warnings"; }
        grep -q '^NAME' <<<"$out" || fail "man -l $f: no NAME section"
done
ok "man -l renders the 5 pages"

# bash: bash-completion's loader finds the file by the command's name.
out=$(bash -c 'source /usr/share/bash-completion/bash_completion
        _completion_loader roam
        complete -p roam
        COMP_WORDS=(roam netw); COMP_CWORD=1; COMP_LINE="roam netw"; COMP_POINT=9
        _roam; echo "${COMPREPLY[*]}"' 2>&1)
grep -q '^complete -F _roam roam$' <<<"$out" || { echo "$out"; fail "bash: complete -p roam"; }
grep -qx 'network' <<<"$out" || { echo "$out"; fail "bash: roam netw<TAB> is not network"; }
ok "bash completion loads (complete -p roam) and completes"
if command -v zsh >/dev/null; then
        zsh -n /usr/share/zsh/vendor-completions/_roam || fail "zsh -n _roam"
        ok "zsh completion parses"
fi
if command -v fish >/dev/null; then
        fish -n /usr/share/fish/vendor_completions.d/roam.fish || fail "fish -n roam.fish"
        out=$(fish -c 'complete -C "roam netw"' 2>&1)
        grep -q '^network' <<<"$out" || { echo "$out"; fail "fish: roam netw<TAB> is not network"; }
        ok "fish completion parses and completes"
fi

# roamd's state as a running roamd would leave it.
mkdir -p /var/lib/roam
echo '# roamd writes this file' >/var/lib/roam/apps.state

dpkg -r roam-gio >/tmp/dpkg-remove.log 2>&1 || { cat /tmp/dpkg-remove.log; fail "dpkg -r roam-gio"; }
[ ! -e "$gio_dir/libgioroam.so" ] || fail "dpkg -r roam-gio left the module"
! grep -q "^libgioroam.so" "$gio_dir/giomodule.cache" 2>/dev/null ||
        fail "giomodule.cache still names libgioroam.so after dpkg -r roam-gio"
ok "dpkg -r roam-gio: the module gone from GIO's directory and cache"
dpkg -P roam-gio >/tmp/dpkg-purge.log 2>&1 || { cat /tmp/dpkg-purge.log; fail "dpkg -P roam-gio"; }

dpkg -r roam roamd >/tmp/dpkg-remove.log 2>&1 || { cat /tmp/dpkg-remove.log; fail "dpkg -r"; }
[ ! -e /usr/sbin/roamd ] && [ ! -e /usr/bin/roam ] || fail "dpkg -r left the programs"
[ -e /etc/roam/roamd.conf ] || fail "dpkg -r removed the conffile (only purge may)"
[ -e /var/lib/roam/apps.state ] || fail "dpkg -r removed roamd's state (only purge may)"
ok "dpkg -r: programs gone; conffile and state kept"

dpkg -P roam roamd >/tmp/dpkg-purge.log 2>&1 || { cat /tmp/dpkg-purge.log; fail "dpkg -P"; }
left=()
for f in "${files[@]}" /etc/roam /var/lib/roam /usr/share/roam /usr/share/doc/roam /usr/share/doc/roamd \
        /etc/systemd/system/multi-user.target.wants/roamd.service \
        /etc/systemd/system/dbus-org.roam1.service /var/lib/systemd/deb-systemd-helper-enabled/roamd.service.dsh-also; do
        [ -e "$f" ] || [ -L "$f" ] && left+=("$f")
done
[ ${#left[@]} = 0 ] || fail "purge left: ${left[*]}"
for p in roam roamd roam-gio; do
        st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        case $st in
        "" | *not-installed) ;;
        *) fail "$p is still known to dpkg: $st" ;;
        esac
done
ok "dpkg -P: nothing left behind"

exit $failed
