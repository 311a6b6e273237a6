#!/bin/bash
# Remove the member called MEMBER_NAME (no-op when absent). etcd's strict reconfiguration check
# answers "unhealthy cluster" until the leader has seen every member for 5 s: retry until
# DEADLINE_S. Inputs: ENDPOINTS MEMBER_NAME DEADLINE_S. Output: "@@ changed=true|false".
set -euo pipefail
: "${ENDPOINTS:?}" "${MEMBER_NAME:?}" "${DEADLINE_S:?}"
export ETCDCTL_API=3
ctl() { etcdctl --endpoints="$ENDPOINTS" --dial-timeout=2s --command-timeout=5s "$@"; }
deadline=$((SECONDS + ${DEADLINE_S%.*}))
while :; do
  # "ID, status, name, peer urls, client urls, is learner"
  id=$(ctl member list | awk -F', ' -v n="$MEMBER_NAME" '$3 == n { print $1 }')
  if [ -z "$id" ]; then
    echo "@@ changed=false"
    exit 0
  fi
  if err=$(ctl member remove "$id" 2>&1 >/dev/null); then
    echo "@@ changed=true"
    echo "@@ id=$id"
    exit 0
  fi
  case $err in
    *"member not found"*) echo "@@ changed=false"; exit 0 ;;
    *"unhealthy cluster"*|*"timed out"*|*"leader changed"*|*"no leader"*|*"context deadline"*) ;;
    *) echo "member remove $MEMBER_NAME: $err" >&2; exit 1 ;;
  esac
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "member remove $MEMBER_NAME still refused after ${DEADLINE_S}s: $err" >&2
    exit 1
  fi
  sleep 0.2
done
