#!/bin/bash
# On a control plane: the cluster's identity under PKI_DIR (kubeadm's kubernetes, etcd and front-proxy
# CAs, the service-account key pair: FILES, space-separated relative paths), each in base64 on stdout
# only (never in a log). Output: "@@ changed=false", "@@ file:<path>=<base64>" per file.
set -euo pipefail
: "${PKI_DIR:?}" "${FILES:?}"
read -r -a files <<< "$FILES"
for f in "${files[@]}"; do
  [ -s "$PKI_DIR/$f" ] || { echo "$PKI_DIR/$f does not exist (not a kubeadm control plane?)" >&2; exit 1; }
done
echo "@@ changed=false"
for f in "${files[@]}"; do
  echo "@@ file:$f=$(base64 -w0 < "$PKI_DIR/$f")"
done
