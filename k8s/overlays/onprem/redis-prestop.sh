#!/bin/sh
# preStop of a Redis node: a primary that is about to stop (rolling update,
# drain) hands its role to a replica first, so clients move within about a
# second instead of after the Sentinels' down-after-milliseconds.
# Env: REDIS_PORT, SENTINEL_PORT, REDIS_GROUP, REDISCLI_AUTH.
set -u
role() { timeout 3 redis-cli --no-auth-warning -p "$REDIS_PORT" role 2>/dev/null | head -n 1; }
[ "$(role)" = master ] || exit 0
timeout 3 redis-cli --no-auth-warning -p "$SENTINEL_PORT" sentinel failover "$REDIS_GROUP" >/dev/null 2>&1 || exit 0
i=0
while [ "$i" -lt 20 ]; do
  sleep 1
  [ "$(role)" = slave ] && exit 0
  i=$((i + 1))
done
