#!/bin/bash
# On a node: the login user's ~/.ssh/authorized_keys holds exactly one line ending in " MARKER"
# (PUBLIC_KEY followed by MARKER as its comment), or none when PUBLIC_KEY is empty. Other lines
# stay. Output: "@@ changed=true|false". Run through sudo (VNFM_LOGIN_HOME / VNFM_LOGIN_USER set),
# it edits the login user's file and leaves it owned by that user (sshd reads it as the user).
set -euo pipefail
: "${MARKER:?}"
PUBLIC_KEY=${PUBLIC_KEY:-}
home=${VNFM_LOGIN_HOME:-$HOME}
owner=${VNFM_LOGIN_USER:-$(id -un)}
dir="$home/.ssh"
file="$dir/authorized_keys"
mkdir -p "$dir"
chmod 700 "$dir"
touch "$file"
tmp=$(mktemp "$dir/.authorized_keys.XXXXXX")
trap 'rm -f "$tmp"' EXIT
awk -v m=" $MARKER" 'length($0) < length(m) || substr($0, length($0) - length(m) + 1) != m' "$file" > "$tmp"
if [ -n "$PUBLIC_KEY" ]; then printf '%s %s\n' "$PUBLIC_KEY" "$MARKER" >> "$tmp"; fi
chmod 600 "$tmp"
if [ "$(id -un)" != "$owner" ]; then chown "$owner:" "$dir" "$tmp"; fi
if cmp -s "$tmp" "$file"; then
  echo "@@ changed=false"
else
  mv -f "$tmp" "$file"
  echo "@@ changed=true"
fi
