#!/bin/bash
# Add member MEMBER_NAME with PEER_URL (no-op when a member already has that peer URL); with
# LEARNER=1 as a learner (no vote until `member promote`; etcd allows one learner at a time).
# Inputs: ENDPOINTS MEMBER_NAME PEER_URL DEADLINE_S [LEARNER=0|1].
# Output: "@@ changed=true|false", "@@ initial_cluster=n1=url1,...".
set -euo pipefail
: "${ENDPOINTS:?}" "${MEMBER_NAME:?}" "${PEER_URL:?}" "${DEADLINE_S:?}"
LEARNER=${LEARNER:-0}
case $LEARNER in 0) learner=() ;; 1) learner=(--learner) ;; *) echo "LEARNER must be 0 or 1" >&2; exit 2 ;; esac
export ETCDCTL_API=3
# @include etcd_tools
etcdctl_bin=$(need_etcd_tool etcdctl)
ctl() { "$etcdctl_bin" --endpoints="$ENDPOINTS" --dial-timeout=2s --command-timeout=5s "$@"; }
# initial cluster from the member list: started members by name, unstarted ones (no name yet)
# only if it is this one
cluster_of() {
  awk -F', ' -v n="$MEMBER_NAME" -v u="$PEER_URL" '
    { name = $3; if ($4 == u) name = n; if (name != "") { printf "%s%s=%s", sep, name, $4; sep = "," } }'
}
deadline=$((SECONDS + ${DEADLINE_S%.*}))
while :; do
  list=$(ctl member list)
  if printf '%s\n' "$list" | awk -F', ' -v u="$PEER_URL" '$4 == u { f = 1 } END { exit !f }'; then
    echo "@@ changed=false"
    echo "@@ initial_cluster=$(printf '%s\n' "$list" | cluster_of)"
    exit 0
  fi
  if err=$(ctl member add "$MEMBER_NAME" --peer-urls="$PEER_URL" "${learner[@]}" 2>&1 >/dev/null); then
    echo "@@ changed=true"
    echo "@@ initial_cluster=$(ctl member list | cluster_of)"
    exit 0
  fi
  case $err in
    *"unhealthy cluster"*|*"timed out"*|*"leader changed"*|*"no leader"*|*"context deadline"*) ;;
    *) echo "member add $MEMBER_NAME: $err" >&2; exit 1 ;;
  esac
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "member add $MEMBER_NAME still refused after ${DEADLINE_S}s: $err" >&2
    exit 1
  fi
  sleep 0.2
done
