#!/bin/bash
# On a host with the admin kubeconfig: wait (DEADLINE_S) until node NODE is Ready and its kubelet
# reports vK8S_VERSION. Output: "@@ changed=false".
set -euo pipefail
: "${NODE:?}" "${K8S_VERSION:?}" "${DEADLINE_S:?}"
export KUBECONFIG=${KUBECONFIG:-/etc/kubernetes/admin.conf}
end=$((SECONDS + ${DEADLINE_S%.*}))
while :; do
  ready=$(kubectl get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
  seen=$(kubectl get node "$NODE" -o jsonpath='{.status.nodeInfo.kubeletVersion}' 2>/dev/null || true)
  [ "$ready" = True ] && [ "$seen" = "v$K8S_VERSION" ] && break
  if [ "$SECONDS" -ge "$end" ]; then
    echo "node $NODE is not Ready at v$K8S_VERSION within ${DEADLINE_S}s: Ready=${ready:-unknown} at ${seen:-unknown}" >&2
    exit 1
  fi
  sleep 2
done
echo "@@ changed=false"
