#!/bin/bash
# On a node: the login user's ~/.ssh/authorized_keys holds exactly one line ending in " MARKER"
# (PUBLIC_KEY followed by MARKER as its comment), or none when PUBLIC_KEY is empty. Other lines
# stay. Output: "@@ changed=true|false".
set -euo pipefail
: "${MARKER:?}"
PUBLIC_KEY=${PUBLIC_KEY:-}
dir="$HOME/.ssh"
file="$dir/authorized_keys"
mkdir -p "$dir"
chmod 700 "$dir"
touch "$file"
tmp=$(mktemp "$dir/.authorized_keys.XXXXXX")
trap 'rm -f "$tmp"' EXIT
awk -v m=" $MARKER" 'length($0) < length(m) || substr($0, length($0) - length(m) + 1) != m' "$file" > "$tmp"
if [ -n "$PUBLIC_KEY" ]; then printf '%s %s\n' "$PUBLIC_KEY" "$MARKER" >> "$tmp"; fi
chmod 600 "$tmp"
if cmp -s "$tmp" "$file"; then
  echo "@@ changed=false"
else
  mv -f "$tmp" "$file"
  echo "@@ changed=true"
fi
