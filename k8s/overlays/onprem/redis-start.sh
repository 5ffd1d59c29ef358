#!/bin/sh
# Starts this node's Redis: the primary when the Sentinels name this node
# (on a new group: the first node), else a replica of the node they name. A
# primary that restarts after a failover so comes back as a replica; should a
# Sentinel name a stale primary, the Sentinels turn it into a replica of the
# current one when they see it.
# Env: SELF (this node's host), REDIS_PORT, REDIS_PASSWORD, RUN_DIR, BIND,
# DATA_DIR, REDIS_CONF, and find-primary.sh's.
set -eu
primary="$(sh "$(dirname "$0")/find-primary.sh")"
conf="$RUN_DIR/redis.conf"
umask 077
{
  echo "include $REDIS_CONF"
  echo "port $REDIS_PORT"
  echo "bind $BIND"
  echo "dir $DATA_DIR"
  echo "requirepass \"$REDIS_PASSWORD\""
  echo "masterauth \"$REDIS_PASSWORD\""
  # Pod IPs change; the Sentinels and clients follow names.
  echo "replica-announce-ip $SELF"
  if [ "$primary" != "$SELF" ]; then echo "replicaof $primary $REDIS_PORT"; fi
} >"$conf"
echo "redis-start: $SELF starts as $([ "$primary" = "$SELF" ] && echo primary || echo "replica of $primary")"
exec redis-server "$conf"
