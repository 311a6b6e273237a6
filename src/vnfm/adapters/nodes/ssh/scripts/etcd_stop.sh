#!/bin/bash
# Stop the etcd member started by etcd_start.sh; optionally wipe its data.
# Inputs: WIPE (0|1) DATA_DIR DEADLINE_S. Output: "@@ changed=true|false".
set -euo pipefail
: "${WIPE:?}" "${DATA_DIR:?}" "${DEADLINE_S:?}"
pidfile=/run/vnfm/etcd.pid
changed=false
if [ -s "$pidfile" ]; then
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    changed=true
    deadline=$((SECONDS + DEADLINE_S))
    while kill -0 "$pid" 2>/dev/null; do
      if [ "$SECONDS" -ge "$((deadline + 5))" ]; then echo "etcd (pid $pid) survived SIGKILL" >&2; exit 1; fi
      if [ "$SECONDS" -ge "$deadline" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
      sleep 0.02
    done
  fi
  rm -f "$pidfile"
fi
if [ "$WIPE" = 1 ] && [ -d "$DATA_DIR" ] && [ -n "$(ls -A "$DATA_DIR")" ]; then
  rm -rf "${DATA_DIR:?}"/*
  changed=true
fi
echo "@@ changed=$changed"
