#!/bin/bash
# Serve NFSv4 exports with nfs-ganesha (userspace server, FSAL VFS).
# Inputs: GANESHA_CONF (the whole file) CONF_PATH PIDFILE EXPORT_PATHS (one per line)
#         PORT CHECK_ADDR (address to probe for readiness) DEADLINE_S.
# The configuration is installed when it differs; ganesha is (re)started then; the script
# returns once the server accepts TCP connections. Output: "@@ changed=true|false".
set -euo pipefail
: "${GANESHA_CONF:?}" "${CONF_PATH:?}" "${PIDFILE:?}" "${EXPORT_PATHS:?}" "${PORT:?}" "${CHECK_ADDR:?}" "${DEADLINE_S:?}"
deadline=$((SECONDS + ${DEADLINE_S%.*}))
while IFS= read -r p; do
  [ -n "$p" ] && mkdir -p "$p"
done <<< "$EXPORT_PATHS"
mkdir -p "$(dirname "$CONF_PATH")" "$(dirname "$PIDFILE")" /var/log/ganesha /var/lib/nfs/ganesha

pid=""
if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then pid=$(cat "$PIDFILE"); fi
new=$(mktemp "$(dirname "$CONF_PATH")/.ganesha.conf.XXXXXX")
trap 'rm -f "$new"' EXIT
printf '%s\n' "$GANESHA_CONF" > "$new"
chmod 644 "$new"

if [ -n "$pid" ] && [ -f "$CONF_PATH" ] && cmp -s "$new" "$CONF_PATH"; then
  echo "@@ changed=false"
  exit 0
fi
mv -f "$new" "$CONF_PATH"
trap - EXIT

if [ -n "$pid" ]; then
  kill "$pid"
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$((deadline + 5))" ]; then echo "nfs-ganesha (pid $pid) survived SIGKILL" >&2; exit 1; fi
    if [ "$SECONDS" -ge "$deadline" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    sleep 0.02
  done
fi
rm -f "$PIDFILE"
ganesha.nfsd -f "$CONF_PATH" -L /var/log/ganesha/ganesha.log -p "$PIDFILE" -N NIV_EVENT
until (exec 3<>"/dev/tcp/$CHECK_ADDR/$PORT") 2>/dev/null; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "nfs-ganesha does not accept connections on $CHECK_ADDR:$PORT after ${DEADLINE_S}s:" >&2
    tail -n 20 /var/log/ganesha/ganesha.log >&2 || true
    exit 1
  fi
  sleep 0.02
done
echo "@@ changed=true"
