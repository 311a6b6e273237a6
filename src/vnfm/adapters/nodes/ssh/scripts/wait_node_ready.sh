#!/bin/bash
# On a control plane: wait until node NODE is Ready (deadline DEADLINE_S). Output "@@ changed=false".
set -euo pipefail
: "${NODE:?}" "${DEADLINE_S:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
end=$((SECONDS + ${DEADLINE_S%.*}))
while :; do
  st=$(kubectl get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
  [ "$st" = True ] && break
  if [ $SECONDS -ge $end ]; then
    if [ -z "$st" ]; then why="it is not registered"; else why="its kubelet reports NotReady"; fi
    echo "node $NODE did not become Ready within ${DEADLINE_S}s: $why" >&2; exit 1
  fi
  sleep 2
done
echo "@@ changed=false"
