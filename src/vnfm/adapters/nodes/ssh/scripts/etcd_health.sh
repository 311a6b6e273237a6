#!/bin/bash
# Health of etcd endpoints, waiting up to WAIT_S seconds for all of them to be healthy.
# Inputs: ENDPOINTS (comma separated) WAIT_S; optional exported ETCDCTL_CACERT/CERT/KEY.
# Output: "@@ healthy=true|false", "@@ health=<etcdctl json>".
set -euo pipefail
: "${ENDPOINTS:?}" "${WAIT_S:?}"
export ETCDCTL_API=3
# @include etcd_tools
etcdctl_bin=$(need_etcd_tool etcdctl)
deadline=$((SECONDS + ${WAIT_S%.*}))
while :; do
  healthy=true
  out=$("$etcdctl_bin" --endpoints="$ENDPOINTS" --dial-timeout=1s --command-timeout=2s endpoint health -w json 2>/dev/null) \
    || healthy=false
  if [ "$healthy" = true ] || [ "$SECONDS" -ge "$deadline" ]; then break; fi
  sleep 0.05
done
echo "@@ healthy=$healthy"
echo "@@ health=$(printf '%s' "$out" | tr -d '\n')"
