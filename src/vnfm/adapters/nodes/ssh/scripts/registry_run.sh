#!/bin/bash
# The private registry's container NAME from IMAGE: port PORT published (the registry listens on
# 5000 inside), data in DATA_DIR (/var/lib/registry inside), restart policy RESTART, HTTPS when
# TLS_CERT is given (certificate and key installed in CERT_DIR, the key 0600). The container is
# replaced only when its configuration (a label with a digest of image id, port, paths, TLS files)
# differs. Returns once GET URL/v2/ answers (200 or 401), within DEADLINE_S.
# Inputs: NAME IMAGE PORT DATA_DIR CERT_DIR RESTART URL DEADLINE_S TLS_CERT (PEM or empty);
#         secret (env): TLS_KEY (PEM or empty).
# Output: "@@ changed=true|false", "@@ repositories=a,b,..." (the registry's catalog).
set -euo pipefail
: "${NAME:?}" "${IMAGE:?}" "${PORT:?}" "${DATA_DIR:?}" "${CERT_DIR:?}" "${RESTART:?}" "${URL:?}" "${DEADLINE_S:?}"
TLS_CERT=${TLS_CERT:-}
key=${TLS_KEY:-}
unset TLS_KEY  # the container and docker must not inherit it
deadline=$((SECONDS + ${DEADLINE_S%.*}))
if ! docker info >/dev/null 2>&1; then
  echo "Docker is not running on this host (install it first)" >&2
  exit 1
fi
image_id=$(docker image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null) || {
  echo "image $IMAGE is not present (load or pull it first)" >&2; exit 1; }
mkdir -p "$DATA_DIR"
install_file() {  # path mode content
  local tmp
  tmp=$(mktemp "${1%/*}/.vnfm.XXXXXX")
  chmod "$2" "$tmp"
  printf '%s\n' "$3" > "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; fi
}
tls_args=()
tls_digest=none
if [ -n "$TLS_CERT" ]; then
  (umask 077; mkdir -p "$CERT_DIR")
  chmod 0755 "$CERT_DIR"
  install_file "$CERT_DIR/tls.crt" 644 "$TLS_CERT"
  install_file "$CERT_DIR/tls.key" 600 "$key"
  tls_digest=$(cat "$CERT_DIR/tls.crt" "$CERT_DIR/tls.key" | sha256sum | cut -d' ' -f1)
  tls_args=(-v "$CERT_DIR:/vnfm-certs:ro" -e REGISTRY_HTTP_TLS_CERTIFICATE=/vnfm-certs/tls.crt
            -e REGISTRY_HTTP_TLS_KEY=/vnfm-certs/tls.key)
fi
key=""
config=$(printf '%s\n' "$image_id" "$PORT" "$DATA_DIR" "$RESTART" "$tls_digest" | sha256sum | cut -d' ' -f1)
current=$(docker inspect --format '{{index .Config.Labels "vnfm.config"}} {{.State.Running}}' "$NAME" 2>/dev/null || true)
changed=false
start() {
  docker rm -f "$NAME" >/dev/null 2>&1 || true
  if ! out=$(docker run -d --name "$NAME" --restart="$RESTART" -p "$PORT:5000" -v "$DATA_DIR:/var/lib/registry" \
      -e REGISTRY_HTTP_ADDR=:5000 "${tls_args[@]}" --label "vnfm.config=$config" "$IMAGE" 2>&1 </dev/null); then
    echo "docker run of the registry failed:" >&2
    printf '%s\n' "$out" | tail -n 15 >&2
    exit 1
  fi
  changed=true
}
if [ "$current" != "$config true" ]; then start; fi
answers() {
  code=$(curl -ksS -m 5 -o /dev/null -w '%{http_code}' "$URL/v2/" 2>/dev/null) && { [ "$code" = 200 ] || [ "$code" = 401 ]; }
}
# a container the runtime reports running may be stale (its host was restarted): when it does not
# answer within a grace period, it is started again once
grace=$((SECONDS + 5))
code=""
until answers; do
  if [ "$changed" = false ] && [ "$SECONDS" -ge "$grace" ]; then start; fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "the registry did not answer GET $URL/v2/ within ${DEADLINE_S}s (last status: ${code:-none}):" >&2
    docker ps -a --filter "name=^${NAME}\$" --format '{{.Status}}' >&2 2>/dev/null || true
    docker logs --tail 15 "$NAME" 2>&1 | tail -n 15 >&2 || true
    exit 1
  fi
  sleep 0.2
done
catalog=$(curl -ksS -m 10 "$URL/v2/_catalog?n=1000" 2>/dev/null || true)
repos=$(printf '%s' "$catalog" | sed -n 's/.*"repositories":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr -d '[:space:]')
echo "@@ repositories=$repos"
echo "@@ changed=$changed"
