#!/bin/bash
# containerd's CRI settings for private registries, in CONFIG_FILE:
#  - registry config_path = CONFIG_PATH (where the per-registry hosts.toml and CA live) when the
#    config lacks it (containerd 1.x writes config_path = ""); a configured path is left alone;
#  - a marked block with the registries' credentials (exported secrets AUTH_V2 for containerd
#    1.x, AUTH_V3 for a version = 3 config; empty removes it). The file is 0600 while it holds any.
# containerd is restarted (and waited for) only when the file changed.
# Inputs: CONFIG_PATH CONFIG_FILE DEADLINE_S. Output: "@@ changed=true|false".
set -euo pipefail
: "${CONFIG_PATH:?}" "${CONFIG_FILE:?}" "${DEADLINE_S:?}"
auth_v2=${AUTH_V2:-}
auth_v3=${AUTH_V3:-}
unset AUTH_V2 AUTH_V3
if [ ! -f "$CONFIG_FILE" ]; then
  echo "$CONFIG_FILE does not exist: containerd is not installed (prepare the node first)" >&2
  exit 1
fi
umask 077
new=$(mktemp "$(dirname "$CONFIG_FILE")/.vnfm-config.XXXXXX")
trap 'rm -f "$new" "$new.2"' EXIT
if grep -Eq '^[[:space:]]*version[[:space:]]*=[[:space:]]*3' "$CONFIG_FILE"; then
  section="[plugins.'io.containerd.cri.v1.images'.registry]"
  auth=$auth_v3
else
  section='[plugins."io.containerd.grpc.v1.cri".registry]'
  auth=$auth_v2
fi
sed '/^# BEGIN vnfm-registry-auth/,/^# END vnfm-registry-auth/d' "$CONFIG_FILE" > "$new"
if grep -Eq '^[[:space:]]*config_path[[:space:]]*=[[:space:]]*(""|'"''"')[[:space:]]*$' "$new"; then
  sed -i -E 's|^([[:space:]]*config_path[[:space:]]*=[[:space:]]*).*$|\1"'"$CONFIG_PATH"'"|' "$new"
elif ! grep -Eq '^[[:space:]]*config_path[[:space:]]*=' "$new"; then
  if awk -v s="$section" '{t=$0; sub(/^[ \t]+/, "", t)} t==s {f=1} END {exit !f}' "$new"; then
    awk -v s="$section" -v l="  config_path = \"$CONFIG_PATH\"" \
      '{print; t=$0; sub(/^[ \t]+/, "", t)} t==s && !d {print l; d=1}' "$new" > "$new.2"
    mv -f "$new.2" "$new"
  else
    printf '\n%s\n  config_path = "%s"\n' "$section" "$CONFIG_PATH" >> "$new"
  fi
fi
mode=644
if [ -n "$auth" ]; then
  printf '# BEGIN vnfm-registry-auth (managed by vnfm)\n%s\n# END vnfm-registry-auth\n' "$auth" >> "$new"
  mode=600
fi
unset auth auth_v2 auth_v3
chmod "$mode" "$new"
if cmp -s "$new" "$CONFIG_FILE" && [ "$(stat -c %a "$CONFIG_FILE")" = "$mode" ]; then
  echo "@@ changed=false"
  exit 0
fi
mv -f "$new" "$CONFIG_FILE"
systemctl restart containerd
deadline=$((SECONDS + ${DEADLINE_S%.*}))
until systemctl is-active --quiet containerd; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "containerd is not active ${DEADLINE_S}s after its restart" >&2
    exit 1
  fi
  sleep 0.2
done
echo "@@ changed=true"
