#!/bin/bash
# On a control plane: create or update PersistentVolume PV_NAME from MANIFEST (YAML, on stdin).
# A PV's NFS source is immutable: when NFS_SERVER/NFS_PATH differ from the existing PV's, an
# unbound PV is deleted and created again; a Bound one fails (its claim is named).
# Inputs: PV_NAME MANIFEST NFS_SERVER NFS_PATH. Output: "@@ changed=true|false".
set -euo pipefail
: "${PV_NAME:?}" "${MANIFEST:?}" "${NFS_SERVER:?}" "${NFS_PATH:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
if kubectl get pv "$PV_NAME" >/dev/null 2>&1; then
  cur=$(kubectl get pv "$PV_NAME" -o 'jsonpath={.spec.nfs.server} {.spec.nfs.path}')
  if [ "$cur" != "$NFS_SERVER $NFS_PATH" ]; then
    phase=$(kubectl get pv "$PV_NAME" -o 'jsonpath={.status.phase}')
    if [ "$phase" = Bound ]; then
      claim=$(kubectl get pv "$PV_NAME" -o 'jsonpath={.spec.claimRef.namespace}/{.spec.claimRef.name}')
      echo "PersistentVolume $PV_NAME points at '$cur' and is Bound to $claim: cannot move it to $NFS_SERVER:$NFS_PATH" >&2
      exit 1
    fi
    kubectl delete pv "$PV_NAME" --wait=true >/dev/null
  fi
fi
out=$(printf '%s\n' "$MANIFEST" | kubectl apply -f -)
case $out in
  *unchanged*) echo "@@ changed=false" ;;
  *) echo "@@ changed=true" ;;
esac
