#!/bin/bash
# On a control plane: set labels LABELS ("k=v" per line) on node NODE. Output "@@ changed=true|false".
set -euo pipefail
: "${NODE:?}" "${LABELS:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
changed=false
while IFS= read -r kv; do
  [ -n "$kv" ] || continue
  k=${kv%%=*}; v=${kv#*=}
  cur=$(kubectl get node "$NODE" -o "go-template={{index .metadata.labels \"$k\"}}" 2>/dev/null || true)
  labels=$(kubectl get node "$NODE" -o jsonpath='{.metadata.labels}' 2>/dev/null || true)
  if [ "$cur" != "$v" ] || ! grep -q "\"$k\"" <<<"$labels"; then
    kubectl label node "$NODE" --overwrite "$k=$v" >/dev/null
    changed=true
  fi
done <<< "$LABELS"
echo "@@ changed=$changed"
