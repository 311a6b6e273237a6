#!/bin/bash
# Members of the etcd cluster. Inputs: ENDPOINTS. Output: "@@ members=<etcdctl json>".
set -euo pipefail
: "${ENDPOINTS:?}"
export ETCDCTL_API=3
# @include etcd_tools
etcdctl_bin=$(need_etcd_tool etcdctl)
out=$("$etcdctl_bin" --endpoints="$ENDPOINTS" --dial-timeout=2s --command-timeout=5s member list -w json)
echo "@@ members=$(printf '%s' "$out" | tr -d '\n')"
