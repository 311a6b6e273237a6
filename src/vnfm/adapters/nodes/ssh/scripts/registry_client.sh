#!/bin/bash
# Node-side configuration for a private registry REGISTRY (host:port):
#   CERTS_DIR/REGISTRY/hosts.toml (containerd) and ca.crt (when CA_PEM is set),
#   CONTAINERS_CERTS_DIR/REGISTRY/ca.crt (podman, skopeo, cri-o),
#   REGISTRIES_CONF_DIR/vnfm-REGISTRY.conf when PLAIN_HTTP=1 (insecure registry), removed otherwise.
# Inputs: REGISTRY HOSTS_TOML CA_PEM PLAIN_HTTP REGISTRIES_CONF CERTS_DIR CONTAINERS_CERTS_DIR
#         REGISTRIES_CONF_DIR. Output: "@@ changed=true|false".
set -euo pipefail
: "${REGISTRY:?}" "${HOSTS_TOML:?}" "${PLAIN_HTTP:?}" "${CERTS_DIR:?}" "${CONTAINERS_CERTS_DIR:?}" "${REGISTRIES_CONF_DIR:?}"
CA_PEM=${CA_PEM:-}
REGISTRIES_CONF=${REGISTRIES_CONF:-}
changed=false
put() {  # path content
  mkdir -p "$(dirname "$1")"
  local tmp
  tmp=$(mktemp "$(dirname "$1")/.vnfm.XXXXXX")
  printf '%s\n' "$2" > "$tmp"
  chmod 644 "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; changed=true; fi
}
drop() {  # path
  if [ -e "$1" ]; then rm -f "$1"; changed=true; fi
}
put "$CERTS_DIR/$REGISTRY/hosts.toml" "$HOSTS_TOML"
if [ -n "$CA_PEM" ]; then
  put "$CERTS_DIR/$REGISTRY/ca.crt" "$CA_PEM"
  put "$CONTAINERS_CERTS_DIR/$REGISTRY/ca.crt" "$CA_PEM"
else
  drop "$CERTS_DIR/$REGISTRY/ca.crt"
  drop "$CONTAINERS_CERTS_DIR/$REGISTRY/ca.crt"
fi
conf="$REGISTRIES_CONF_DIR/vnfm-${REGISTRY//:/_}.conf"
if [ "$PLAIN_HTTP" = 1 ]; then put "$conf" "$REGISTRIES_CONF"; else drop "$conf"; fi
echo "@@ changed=$changed"
