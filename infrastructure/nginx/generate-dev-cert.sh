#!/bin/sh
# Self-signed TLS certificate for https://localhost, for development only.
# Usage: generate-dev-cert.sh DIR  -> DIR/dev.crt and DIR/dev.key
# Idempotent: an existing pair is kept, so browsers that were told to trust it
# keep trusting it. POSIX sh, because the compose `certs` service runs it with
# alpine's ash.
set -eu

dir=${1:?usage: generate-dev-cert.sh DIR}
crt="$dir/dev.crt"
key="$dir/dev.key"

if [ -s "$crt" ] && [ -s "$key" ]; then
  echo "dev certificate already in $dir; keeping it"
  exit 0
fi

mkdir -p "$dir"
umask 077
# P-256 instead of RSA: smaller and faster, and every client we care about speaks it.
# 825 days is the longest validity Apple's TLS clients accept for a server certificate.
# -config /dev/null keeps the system openssl.cnf's CA extensions out of the certificate.
openssl req -x509 -config /dev/null -new -nodes \
  -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -days 825 -subj "/CN=localhost" \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -addext "basicConstraints=critical,CA:FALSE" \
  -addext "keyUsage=critical,digitalSignature" \
  -addext "extendedKeyUsage=serverAuth" \
  -keyout "$key.tmp" -out "$crt.tmp"
# Renamed only once both exist, so an interrupted run never leaves half a pair that the check above would keep.
mv "$key.tmp" "$key"
mv "$crt.tmp" "$crt"
chmod 644 "$crt"
echo "wrote $crt and $key (self-signed for localhost and 127.0.0.1, 825 days)"
