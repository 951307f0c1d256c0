#!/bin/bash
# Makes a throw-away test CA and a server certificate signed by it.
# Usage: mkcerts.sh DIR NAME [SAN...]   (SAN: DNS:host or IP:addr)
# Leaves DIR/ca.pem, DIR/NAME.pem, DIR/NAME.key. Never installed into the system's store.
set -euo pipefail
dir=$1 name=$2
shift 2
mkdir -p "$dir"
cd "$dir"
if [ ! -f ca.pem ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
                -subj "/CN=roam test CA" >/dev/null 2>&1
fi
san=$(IFS=,; echo "$*")
openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" \
        -subj "/CN=$name" >/dev/null 2>&1
openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
        -out "$name.pem" -extfile <(printf 'subjectAltName=%s\n' "$san") >/dev/null 2>&1
rm -f "$name.csr"
