#!/bin/bash
# On a control plane: delete Node NODE (no-op when absent). Output "@@ changed=true|false".
set -euo pipefail
: "${NODE:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
if kubectl get node "$NODE" >/dev/null 2>&1; then
  kubectl delete node "$NODE" --wait=true >/dev/null
  echo "@@ changed=true"
else
  echo "@@ changed=false"
fi
