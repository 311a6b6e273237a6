#!/bin/bash
# On a control plane: a fresh bootstrap token (30 min), the CA hash, a fresh certificate key.
# Output: "@@ token=", "@@ ca_cert_hash=", "@@ certificate_key=", "@@ changed=false" (stdout only).
set -euo pipefail
export KUBECONFIG=/etc/kubernetes/admin.conf
token=$(kubeadm token create --ttl 30m)
hash=$(openssl x509 -pubkey -in /etc/kubernetes/pki/ca.crt | openssl rsa -pubin -outform der 2>/dev/null \
  | openssl dgst -sha256 -hex | sed 's/^.* //')
key=$(kubeadm init phase upload-certs --upload-certs 2>/dev/null | tail -1)
printf '@@ token=%s\n@@ ca_cert_hash=sha256:%s\n@@ certificate_key=%s\n@@ changed=false\n' "$token" "$hash" "$key"
