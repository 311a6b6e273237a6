#!/bin/bash
# The snapshot at SNAPSHOT in base64, when its digest is SHA256 and it is at most MAX_BYTES.
# Output: "@@ changed=false", "@@ content=<base64>".
set -euo pipefail
: "${SNAPSHOT:?}" "${SHA256:?}" "${MAX_BYTES:?}"
[ -f "$SNAPSHOT" ] || { echo "no snapshot at $SNAPSHOT" >&2; exit 1; }
size=$(stat -c %s "$SNAPSHOT")
if [ "$size" -gt "$MAX_BYTES" ]; then
  echo "the snapshot is $size bytes, more than the $MAX_BYTES allowed" >&2; exit 1
fi
[ "$(sha256sum "$SNAPSHOT" | cut -d' ' -f1)" = "$SHA256" ] \
  || { echo "the snapshot at $SNAPSHOT is not the one expected (digest differs)" >&2; exit 1; }
echo "@@ changed=false"
echo "@@ content=$(base64 -w0 < "$SNAPSHOT")"
