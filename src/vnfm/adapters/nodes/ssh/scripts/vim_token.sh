#!/bin/bash
# On a control plane: ServiceAccount SA in NS bound to cluster-admin, a long-lived token Secret,
# and the cluster CA. Output: "@@ token=", "@@ ca_pem_b64=", "@@ changed=true|false" (stdout only).
set -euo pipefail
: "${SA:?}" "${NS:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
changed=false
if ! kubectl -n "$NS" get serviceaccount "$SA" >/dev/null 2>&1; then
  kubectl -n "$NS" create serviceaccount "$SA" >/dev/null; changed=true
fi
if ! kubectl get clusterrolebinding "$SA" >/dev/null 2>&1; then
  kubectl create clusterrolebinding "$SA" --clusterrole=cluster-admin --serviceaccount="$NS:$SA" >/dev/null
  changed=true
fi
if ! kubectl -n "$NS" get secret "$SA-token" >/dev/null 2>&1; then
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: $SA-token
  namespace: $NS
  annotations:
    kubernetes.io/service-account.name: $SA
YAML
  changed=true
fi
end=$((SECONDS + 60))
token=""
while [ -z "$token" ]; do
  token=$(kubectl -n "$NS" get secret "$SA-token" -o jsonpath='{.data.token}' 2>/dev/null || true)
  [ -n "$token" ] && break
  [ $SECONDS -lt $end ] || { echo "token of ServiceAccount $SA was not issued within 60s" >&2; exit 1; }
  sleep 1
done
printf '@@ token=%s\n' "$(printf '%s' "$token" | base64 -d)"
printf '@@ ca_pem_b64=%s\n' "$(base64 -w0 /etc/kubernetes/pki/ca.crt)"
echo "@@ changed=$changed"
