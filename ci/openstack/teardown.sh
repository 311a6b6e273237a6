#!/usr/bin/env bash
# Stops every process bringup.sh started (by the process ids it recorded: each runs in its own
# session, so its process group goes too) and, with --wipe, deletes the state directory
# (databases, logs, configuration, credentials). The install cache is kept.
set -uo pipefail
STATE="${VNFM_OS_STATE:-/var/tmp/vnfm-openstack}"
PIDS="$STATE/pids"
stop_group() {  # stop_group SECONDS NAME...: TERM to all, then KILL what is left after SECONDS
  local secs=$1 name pid alive=(); shift
  for name in "$@"; do
    [ -f "$PIDS/$name" ] || continue
    pid=$(cat "$PIDS/$name")
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
      alive+=("$pid")
    fi
    rm -f "$PIDS/$name"
  done
  local deadline=$(($(date +%s) + secs))
  for pid in "${alive[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null; fi
  done
}
if [ -d "$PIDS" ]; then
  # the services first (nova-compute ignores SIGTERM for a while: it gets 5 s), then MQ, DB, epmd
  services=()
  for f in "$PIDS"/*; do
    case "${f##*/}" in rabbitmq | mariadb | epmd | '*') ;; *) services+=("${f##*/}") ;; esac
  done
  stop_group 5 "${services[@]}"
  stop_group 15 rabbitmq mariadb
  stop_group 5 epmd
  echo "local OpenStack stopped"
fi
if [ "${1:-}" = --wipe ]; then rm -rf "$STATE"; fi
