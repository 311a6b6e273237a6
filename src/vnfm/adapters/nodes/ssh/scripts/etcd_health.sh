#!/bin/bash
# Health of etcd endpoints, waiting up to WAIT_S seconds for all of them to be healthy.
# Inputs: ENDPOINTS (comma separated) WAIT_S; optional exported ETCDCTL_CACERT/CERT/KEY.
# Output: "@@ healthy=true|false", "@@ health=<etcdctl json>".
set -euo pipefail
: "${ENDPOINTS:?}" "${WAIT_S:?}"
export ETCDCTL_API=3
# @include etcd_tools
deadline=$((SECONDS + ${WAIT_S%.*}))
out=""
while :; do
  # looked up each time: a static pod etcd that restarts (certificate renewal) has a new pid
  healthy=true
  if etcdctl_bin=$(etcd_tool etcdctl); then
    out=$("$etcdctl_bin" --endpoints="$ENDPOINTS" --dial-timeout=1s --command-timeout=2s endpoint health -w json \
      2>/dev/null) || healthy=false
  else
    healthy=false
  fi
  if [ "$healthy" = true ] || [ "$SECONDS" -ge "$deadline" ]; then break; fi
  sleep 0.05
done
[ -n "${etcdctl_bin:-}" ] || need_etcd_tool etcdctl >/dev/null  # never found: say so (exit 1)
echo "@@ healthy=$healthy"
echo "@@ health=$(printf '%s' "$out" | tr -d '\n')"
