#!/bin/bash
# The cluster's admin kubeconfig. MODE=read (on a control plane): prints KUBECONFIG_PATH in base64.
# MODE=install (on the external load balancer): VNFM_KUBECONFIG_B64 (exported secret, base64)
# becomes KUBECONFIG_PATH and the login user's ~/.kube/config (mode 0600), so that kubectl works
# there (the kubectl jump host). Output: "@@ changed=true|false", "@@ kubectl=<path>|missing",
# or "@@ kubeconfig_b64=...".
set -euo pipefail
: "${MODE:?}" "${KUBECONFIG_PATH:?}"
case "$MODE" in
  read)
    [ -r "$KUBECONFIG_PATH" ] || { echo "$KUBECONFIG_PATH: no such file (not a control plane?)" >&2; exit 3; }
    echo "@@ changed=false"
    echo "@@ kubeconfig_b64=$(base64 -w0 < "$KUBECONFIG_PATH")"
    ;;
  install)
    : "${VNFM_KUBECONFIG_B64:?}"
    umask 077
    tmp=$(mktemp)
    trap 'rm -f "$tmp"' EXIT
    printf '%s' "$VNFM_KUBECONFIG_B64" | base64 -d > "$tmp"
    unset VNFM_KUBECONFIG_B64
    changed=false
    mkdir -p "$HOME/.kube"
    for dest in "$KUBECONFIG_PATH" "$HOME/.kube/config"; do
      mkdir -p "$(dirname "$dest")"
      if ! cmp -s "$tmp" "$dest"; then
        cp "$tmp" "$dest.vnfm-new"
        chmod 600 "$dest.vnfm-new"
        mv -f "$dest.vnfm-new" "$dest"
        changed=true
      fi
    done
    echo "@@ changed=$changed"
    echo "@@ kubectl=$(command -v kubectl || echo missing)"
    ;;
  *) echo "unknown MODE $MODE" >&2; exit 2 ;;
esac
