#!/bin/bash
# notAfter of a control plane's certificates, read from the files with openssl (not from the table
# `kubeadm certs check-expiration` prints: Kubespray's etcd certificates are not kubeadm's).
# Input: CERTS, one certificate a line: "<name> <x509|kubeconfig> <required|optional> <path>"
# (the layouts: nodesteps/certs.py). A kubeconfig's certificate is its embedded
# client-certificate-data. Output: "@@ cert.<name>=<Unix time>", "@@ missing.<name>=<path>" for an
# absent optional file, "@@ changed=false". An absent or unreadable required file fails, naming it.
set -euo pipefail
: "${CERTS:?}"
failed=0
while read -r name kind need path; do
  [ -n "${name:-}" ] || continue
  if [ ! -f "$path" ]; then
    if [ "$need" = optional ]; then echo "@@ missing.$name=$path"; continue; fi
    echo "certificate $name: $path does not exist" >&2; failed=1; continue
  fi
  if [ "$kind" = kubeconfig ]; then
    data=$(sed -n 's/^[[:space:]]*client-certificate-data:[[:space:]]*//p' "$path" | head -n 1)
    if [ -z "$data" ]; then
      echo "certificate $name: $path embeds no client-certificate-data" >&2; failed=1; continue
    fi
    end=$(printf '%s' "$data" | base64 -d | openssl x509 -noout -enddate 2>/dev/null) || end=""
  else
    end=$(openssl x509 -noout -enddate -in "$path" 2>/dev/null) || end=""
  fi
  if [ -z "$end" ]; then echo "certificate $name: $path is not a PEM certificate" >&2; failed=1; continue; fi
  echo "@@ cert.$name=$(date -u -d "${end#notAfter=}" +%s)"
done <<< "$CERTS"
[ "$failed" = 0 ] || exit 1
echo "@@ changed=false"
