#!/bin/bash
# Installs the Debian 12 packages roam needs to build, run the demo world and its tests.
# Only missing packages are installed; nothing is done when all are present.
set -euo pipefail

packages=(
        # build
        meson ninja-build pkg-config gcc clang libclang-rt-14-dev clang-format
        libsystemd-dev libnl-3-dev libnl-route-3-dev libnftnl-dev libmnl-dev libncurses-dev libjson-c-dev
        libcurl4-openssl-dev libssl-dev libc-ares-dev libxml2-dev ca-certificates openssl
        zlib1g-dev
        # roam wifi share: the QR code (encoding)
        libqrencode-dev
        # the cellular network's country from its MCC (roamd-tzdb.c reads it at run time)
        mobile-broadband-provider-info
        # the world and its tests
        iproute2 iputils-ping ethtool nftables dnsmasq-base dhcpcd5 dbus-daemon util-linux procps
        python3 python3-dbus python3-pytest python3-pytest-xdist python3-dbusmock systemd curl
        # WiFi: the real wpa_supplicant (wired driver in a namespace); bus waits on signals
        wpasupplicant python3-gi
        # 802.1X: hostapd's own EAP server on a veth (driver=wired) answers a real PEAP exchange
        hostapd
        # world.sh's waits for a bus name (gdbus wait)
        libglib2.0-bin
        # the GIO network monitor module (gio/: libgioroam.so)
        libglib2.0-dev
        # screenshot tests of the TUI (a virtual terminal)
        python3-pyte
        # the libraries of Debian's chronyd and chronyc, which tools/fetch-chronyd.sh unpacks
        # for the time tests and bench_time.py (the chrony package itself is never installed:
        # it would start a clock daemon on the host)
        libc6 libcap2 libedit2 libgnutls30 libnettle8 libseccomp2
        # the captive portal's login browser (tests/world/test_portal.py)
        w3m
        # the firewall's coexistence test: iptables-nft rules next to table inet roam
        iptables
        # man pages, the Debian packages and their install test (tests/packaging)
        scdoc debhelper dpkg-dev fakeroot lintian libxml2-utils man-db bash-completion zsh fish
        # the system test (tests/system): a Debian 12 root made by mmdebstrap, booted by
        # systemd-nspawn (--no-install-recommends, as everything here: systemd-container's
        # recommended libnss-mymachines would edit the host's nsswitch.conf)
        mmdebstrap systemd-container
)

missing=()
for p in "${packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
                missing+=("$p")
        fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Installing dhcpcd5 or dnsmasq must not start host-wide daemons: policy-rc.d refuses.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' > "$policy"
        chmod +x "$policy"
        created_policy=1
fi
trap '[ $created_policy = 1 ] && rm -f "$policy"' EXIT
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
