#!/bin/bash
# Remove the member called MEMBER_NAME and, when PEER_URL is set, the member with that peer URL
# (a member added by a join that never started has no name yet). No-op when there is none.
# etcd's strict reconfiguration check answers "unhealthy cluster" until the leader has seen every
# member for 5 s: retry until DEADLINE_S. Inputs: ENDPOINTS MEMBER_NAME DEADLINE_S [PEER_URL].
# Output: "@@ changed=true|false", "@@ id=<hex>[,<hex>]" of the members removed.
set -euo pipefail
: "${ENDPOINTS:?}" "${MEMBER_NAME:?}" "${DEADLINE_S:?}"
PEER_URL=${PEER_URL:-}
export ETCDCTL_API=3
# @include etcd_tools
etcdctl_bin=$(need_etcd_tool etcdctl)
ctl() { "$etcdctl_bin" --endpoints="$ENDPOINTS" --dial-timeout=2s --command-timeout=5s "$@"; }
deadline=$((SECONDS + ${DEADLINE_S%.*}))
removed=()
while :; do
  # "ID, status, name, peer urls, client urls, is learner"; several peer URLs are joined by ","
  # (the list is read whole first: awk stopping early would make etcdctl die of SIGPIPE)
  members=$(ctl member list)
  id=$(awk -F', ' -v n="$MEMBER_NAME" -v u="$PEER_URL" '
    { hit = ($3 == n); if (u != "") { k = split($4, urls, ","); for (i = 1; i <= k; i++) if (urls[i] == u) hit = 1 } }
    hit && !found { print $1; found = 1 }' <<<"$members")
  if [ -z "$id" ]; then
    if [ ${#removed[@]} -eq 0 ]; then echo "@@ changed=false"; exit 0; fi
    echo "@@ changed=true"
    (IFS=,; echo "@@ id=${removed[*]}")
    exit 0
  fi
  if err=$(ctl member remove "$id" 2>&1 >/dev/null); then
    removed+=("$id")
    continue
  fi
  case $err in
    *"member not found"*|*"unhealthy cluster"*|*"timed out"*|*"leader changed"*|*"no leader"*|*"context deadline"*) ;;
    *) echo "member remove $MEMBER_NAME: $err" >&2; exit 1 ;;
  esac
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "member remove $MEMBER_NAME still refused after ${DEADLINE_S}s: $err" >&2
    exit 1
  fi
  sleep 0.2
done
