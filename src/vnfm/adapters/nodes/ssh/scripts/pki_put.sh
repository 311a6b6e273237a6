#!/bin/bash
# Install the cluster's identity from the tar archive UPLOADED (copied by SFTP, mode 0600; exactly
# the relative paths FILES) under PKI_DIR: private keys 0600, certificates and sa.pub 0644, before
# kubeadm runs (it keeps CA files it finds). No-op when every file there has that content; refused
# when another CA is installed there already. The upload is removed whatever happens.
# Output: "@@ changed=true|false".
set -euo pipefail
: "${UPLOADED:?}" "${PKI_DIR:?}" "${FILES:?}"
work=$(mktemp -d)
trap 'rm -rf -- "$work"; rm -f -- "$UPLOADED"' EXIT
read -r -a files <<< "$FILES"
listed=$(tar -tf "$UPLOADED" | sort | tr '\n' ' ')
wanted=$(printf '%s\n' "${files[@]}" | sort | tr '\n' ' ')
[ "$listed" = "$wanted" ] || { echo "the uploaded PKI archive holds $listed, not $wanted" >&2; exit 1; }
tar -xf "$UPLOADED" -C "$work" --no-same-owner --no-same-permissions
if [ -f "$PKI_DIR/ca.crt" ] && ! cmp -s "$PKI_DIR/ca.crt" "$work/ca.crt"; then
  echo "another certificate authority is installed in $PKI_DIR (this host belongs to another cluster)" >&2; exit 1
fi
same=1
for f in "${files[@]}"; do
  cmp -s "$PKI_DIR/$f" "$work/$f" 2>/dev/null || same=0
done
if [ "$same" = 1 ]; then echo "@@ changed=false"; exit 0; fi
install -d -m 0755 "$PKI_DIR" "$PKI_DIR/etcd"
for f in "${files[@]}"; do
  case "$f" in
    *.key) mode=0600 ;;
    *) mode=0644 ;;
  esac
  install -m "$mode" "$work/$f" "$PKI_DIR/$f"
done
echo "@@ changed=true"
