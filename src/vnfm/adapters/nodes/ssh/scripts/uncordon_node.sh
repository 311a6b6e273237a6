#!/bin/bash
# On a control plane: make NODE schedulable again (no-op when not cordoned; fails when absent).
# Output "@@ changed=true|false".
set -euo pipefail
: "${NODE:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
if ! kubectl get node "$NODE" >/dev/null 2>&1; then
  echo "node $NODE is not in the cluster (already removed)" >&2
  exit 1
fi
cordoned=$(kubectl get node "$NODE" -o jsonpath='{.spec.unschedulable}' 2>/dev/null || true)
if [ "$cordoned" = true ]; then
  kubectl uncordon "$NODE" >/dev/null
  echo "@@ changed=true"
else
  echo "@@ changed=false"
fi
