#!/bin/bash
# On a control plane: cordon NODE and evict its pods through the eviction API (PDBs respected,
# DaemonSet and mirror pods skipped, emptyDir allowed) within DEADLINE_S. A missing node is a no-op.
# On timeout the blocking pods are named. Output "@@ changed=true|false".
set -euo pipefail
: "${NODE:?}" "${DEADLINE_S:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
if ! kubectl get node "$NODE" >/dev/null 2>&1; then echo "@@ changed=false"; exit 0; fi
if kubectl drain "$NODE" --ignore-daemonsets --delete-emptydir-data --timeout="${DEADLINE_S%.*}s" >/dev/null 2>&1; then
  echo "@@ changed=true"; exit 0
fi
left=$(kubectl get pods -A --field-selector "spec.nodeName=$NODE" \
  -o jsonpath='{range .items[?(@.metadata.ownerReferences[0].kind!="DaemonSet")]}{.metadata.namespace}/{.metadata.name} {end}')
echo "drain of $NODE did not finish within ${DEADLINE_S}s; blocking pods: ${left:-unknown}" >&2
exit 1
