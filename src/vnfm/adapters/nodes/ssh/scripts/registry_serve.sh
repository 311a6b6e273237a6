#!/bin/bash
# Run a Docker registry (distribution, Debian package docker-registry).
# Inputs: REGISTRY_CONFIG (config.yml text) CONFIG_DIR PIDFILE STORAGE_DIR PORT DEADLINE_S
#         TLS_CERT (PEM or empty); secret, exported: TLS_KEY (PEM or empty).
# Files are installed when they differ (the key 0600); the registry is (re)started then; the
# script returns once it answers on its port. Output: "@@ changed=true|false".
set -euo pipefail
: "${REGISTRY_CONFIG:?}" "${CONFIG_DIR:?}" "${PIDFILE:?}" "${STORAGE_DIR:?}" "${PORT:?}" "${DEADLINE_S:?}"
TLS_CERT=${TLS_CERT:-}
key=${TLS_KEY:-}
unset TLS_KEY  # the registry process must not inherit it
deadline=$((SECONDS + ${DEADLINE_S%.*}))
mkdir -p "$CONFIG_DIR" "$STORAGE_DIR" "$(dirname "$PIDFILE")" /var/log/vnfm
changed=false
install_file() {  # path mode content
  local tmp
  tmp=$(mktemp "$(dirname "$1")/.vnfm.XXXXXX")
  chmod "$2" "$tmp"
  printf '%s\n' "$3" > "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv -f "$tmp" "$1"; changed=true; fi
}
umask 077
install_file "$CONFIG_DIR/config.yml" 644 "$REGISTRY_CONFIG"
if [ -n "$TLS_CERT" ]; then
  install_file "$CONFIG_DIR/tls.crt" 644 "$TLS_CERT"
  install_file "$CONFIG_DIR/tls.key" 600 "$key"
fi
key=""

pid=""
if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then pid=$(cat "$PIDFILE"); fi
if [ -n "$pid" ] && [ "$changed" = false ]; then
  echo "@@ changed=false"
  exit 0
fi
if [ -n "$pid" ]; then
  kill "$pid"
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$((deadline + 5))" ]; then echo "docker-registry (pid $pid) survived SIGKILL" >&2; exit 1; fi
    if [ "$SECONDS" -ge "$deadline" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    sleep 0.02
  done
fi
nohup setsid docker-registry serve "$CONFIG_DIR/config.yml" >/var/log/vnfm/registry.log 2>&1 </dev/null &
pid=$!
echo "$pid" > "$PIDFILE"
until (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do
  if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
    echo "docker-registry is not listening on :$PORT:" >&2
    tail -n 20 /var/log/vnfm/registry.log >&2 || true
    exit 1
  fi
  sleep 0.02
done
echo "@@ changed=true"
