#!/bin/bash
# On a control plane: cordon NODE and evict its pods through the eviction API (PDBs respected,
# DaemonSet and mirror pods skipped, emptyDir allowed) within DEADLINE_S. A missing node is a no-op,
# and so is a node that is already cordoned with nothing left to evict.
# On timeout the blocking pods are named. Output "@@ changed=true|false".
set -euo pipefail
: "${NODE:?}" "${DEADLINE_S:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
if ! kubectl get node "$NODE" >/dev/null 2>&1; then echo "@@ changed=false"; exit 0; fi
# pods a drain evicts: all but DaemonSet pods and mirror (static) pods, whose owner is the Node
evictable() {
  kubectl get pods -A --field-selector "spec.nodeName=$NODE" \
    -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}:{.metadata.ownerReferences[0].kind}{"\n"}{end}' \
    2>/dev/null | grep -v -e ':DaemonSet$' -e ':Node$' -e '^$' | cut -d: -f1 || true
}
cordoned=$(kubectl get node "$NODE" -o jsonpath='{.spec.unschedulable}' 2>/dev/null || true)
before=$(evictable)
if kubectl drain "$NODE" --ignore-daemonsets --delete-emptydir-data --timeout="${DEADLINE_S%.*}s" >/dev/null 2>&1; then
  if [ "$cordoned" = true ] && [ -z "$before" ]; then echo "@@ changed=false"; else echo "@@ changed=true"; fi
  exit 0
fi
left=$(evictable | tr '\n' ' ')
echo "drain of $NODE did not finish within ${DEADLINE_S}s; blocking pods: ${left:-unknown}" >&2
exit 1
