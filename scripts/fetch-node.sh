#!/usr/bin/env bash
# Prints the bin directory of Node <version> for this machine, fetched once
# from npm's node-linux-<arch> package (the official binary, checked against
# the registry's integrity hash by `npm pack`) into a cache that outlives clones.
#
#   PATH="$(bash scripts/fetch-node.sh 24.21.0):$PATH" node -v
set -euo pipefail
version=${1:?usage: fetch-node.sh <version>}
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "fetch-node: no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac
dir="${XDG_CACHE_HOME:-$HOME/.cache}/inferq/node-v$version-linux-$arch"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-$arch@$version" >/dev/null && tar xzf ./*.tgz)
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir" && mv "$tmp/package" "$dir"
fi
"$dir/bin/node" -v >/dev/null
echo "$dir/bin"
