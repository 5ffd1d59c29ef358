#!/bin/sh
# Prints the host of the Sentinel group's primary, for redis-start.sh and
# sentinel-start.sh: as the first Sentinel that answers names it; else (a new
# group, or every pod starting at once) as this node's Sentinel last recorded
# it in SENTINEL_CONF; else the first of REDIS_NODES.
# Env: REDIS_NODES (hosts, space-separated), SENTINEL_PORT, REDIS_GROUP,
# SENTINEL_CONF, REDISCLI_AUTH (the Sentinels' password).
set -eu
for node in $REDIS_NODES; do
  host="$(timeout 3 redis-cli --no-auth-warning -h "$node" -p "$SENTINEL_PORT" sentinel get-master-addr-by-name "$REDIS_GROUP" 2>/dev/null | head -n 1)" || host=""
  # Nothing, an error or a nil reply: ask the next.
  case "$host" in "" | *" "*) continue ;; esac
  echo "$host"
  exit 0
done
if [ -f "$SENTINEL_CONF" ]; then
  host="$(awk -v g="$REDIS_GROUP" '$1 == "sentinel" && $2 == "monitor" && $3 == g { print $4 }' "$SENTINEL_CONF")"
  if [ -n "$host" ]; then
    echo "$host"
    exit 0
  fi
fi
set -- $REDIS_NODES
echo "$1"
