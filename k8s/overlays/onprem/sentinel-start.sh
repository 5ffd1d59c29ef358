#!/bin/sh
# Starts this node's Sentinel, watching the primary that find-primary.sh
# names. Its file (SENTINEL_CONF, on the node's volume) is written afresh at
# each start but for the primary, which it keeps: the Sentinels learn the rest
# (replicas, peers, epochs) from each other within seconds.
# Env: SELF, SENTINEL_PORT, REDIS_PORT, REDIS_GROUP, REDIS_PASSWORD, BIND,
# SENTINEL_QUORUM, SENTINEL_DOWN_AFTER_MS, SENTINEL_FAILOVER_TIMEOUT_MS (60 s
# when unset: a failed election is tried again after twice this), and
# find-primary.sh's.
set -eu
primary="$(sh "$(dirname "$0")/find-primary.sh")"
umask 077
{
  echo "port $SENTINEL_PORT"
  echo "bind $BIND"
  echo "dir $(dirname "$SENTINEL_CONF")"
  echo "sentinel resolve-hostnames yes"
  echo "sentinel announce-hostnames yes"
  echo "sentinel announce-ip $SELF"
  echo "requirepass \"$REDIS_PASSWORD\""
  echo "sentinel sentinel-pass \"$REDIS_PASSWORD\""
  echo "sentinel monitor $REDIS_GROUP $primary $REDIS_PORT $SENTINEL_QUORUM"
  echo "sentinel auth-pass $REDIS_GROUP \"$REDIS_PASSWORD\""
  echo "sentinel down-after-milliseconds $REDIS_GROUP $SENTINEL_DOWN_AFTER_MS"
  echo "sentinel failover-timeout $REDIS_GROUP ${SENTINEL_FAILOVER_TIMEOUT_MS:-60000}"
  echo "sentinel parallel-syncs $REDIS_GROUP 1"
} >"$SENTINEL_CONF.new"
mv "$SENTINEL_CONF.new" "$SENTINEL_CONF"
echo "sentinel-start: $SELF watches $primary"
exec redis-server "$SENTINEL_CONF" --sentinel
