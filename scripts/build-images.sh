#!/usr/bin/env bash
# Builds the api and worker images from the Dockerfile as it is, with podman
# (or docker), on a base made here when no registry can be reached.
#
#   scripts/build-images.sh [tag]          (default tag: dev)
#   NODE_IMAGE=node:24-bookworm-slim scripts/build-images.sh   (a registry base instead)
#
# Without NODE_IMAGE it makes the base from Debian's and npm's packages
# (scripts/local-base-image.sh). podman builds in Docker's image format: the
# OCI format it uses by default has no HEALTHCHECK, and the images' checks
# would be dropped without a word. Prints each image's build time and size.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-dev}
engine=${ENGINE:-$(command -v podman || command -v docker || true)}
[ -n "$engine" ] || { echo "build-images: needs podman or docker" >&2; exit 1; }
format=()
[ "$(basename "$engine")" = podman ] && format=(--format docker)

start=$SECONDS
base=${NODE_IMAGE:-$(bash scripts/local-base-image.sh)}
echo "base $base ($((SECONDS - start)) s)"
for target in api worker; do
  start=$SECONDS
  "$engine" build "${format[@]}" --quiet --build-arg NODE_IMAGE="$base" --target "$target" -t "localhost/inferq-$target:$tag" . >/dev/null
  size=$("$engine" image inspect --format '{{.Size}}' "localhost/inferq-$target:$tag")
  echo "localhost/inferq-$target:$tag built in $((SECONDS - start)) s, $((size / 1000000)) MB"
done
