#!/bin/bash
# On a control plane: delete the PersistentVolumes PV_NAMES (one per line), all or none: when any
# is Bound to a claim, nothing is deleted and the claims are named. Output: "@@ changed=true|false".
set -euo pipefail
: "${PV_NAMES:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
present=()
bound=()
while IFS= read -r pv; do
  [ -n "$pv" ] || continue
  kubectl get pv "$pv" >/dev/null 2>&1 || continue
  present+=("$pv")
  if [ "$(kubectl get pv "$pv" -o 'jsonpath={.status.phase}')" = Bound ]; then
    bound+=("$pv (claim $(kubectl get pv "$pv" -o 'jsonpath={.spec.claimRef.namespace}/{.spec.claimRef.name}'))")
  fi
done <<< "$PV_NAMES"
if [ "${#bound[@]}" -gt 0 ]; then
  printf 'PersistentVolumes in use: %s\n' "${bound[*]}" >&2
  exit 1
fi
if [ "${#present[@]}" -eq 0 ]; then
  echo "@@ changed=false"
  exit 0
fi
kubectl delete pv "${present[@]}" --wait=true >/dev/null
echo "@@ changed=true"
