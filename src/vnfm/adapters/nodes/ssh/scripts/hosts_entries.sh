#!/bin/bash
# Own the block "# BEGIN $BLOCK ... # END $BLOCK" of HOSTS_FILE: replace it by BLOCK_TEXT
# (empty: remove it). The rest of the file is kept. The file is rewritten in place (same inode:
# /etc/hosts may be a bind mount) and only when it changes.
# Inputs: BLOCK BLOCK_TEXT HOSTS_FILE. Output: "@@ changed=true|false".
set -euo pipefail
: "${BLOCK:?}" "${HOSTS_FILE:?}"
BLOCK_TEXT=${BLOCK_TEXT:-}
touch "$HOSTS_FILE"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
awk -v b="$BLOCK" '
  $0 == "# BEGIN " b || index($0, "# BEGIN " b " ") == 1 { skip = 1; next }
  skip && $0 == "# END " b { skip = 0; next }
  !skip { print }
' "$HOSTS_FILE" > "$tmp"
if [ -n "$BLOCK_TEXT" ]; then printf '%s\n' "$BLOCK_TEXT" >> "$tmp"; fi
if cmp -s "$tmp" "$HOSTS_FILE"; then
  echo "@@ changed=false"
else
  cat "$tmp" > "$HOSTS_FILE"
  echo "@@ changed=true"
fi
