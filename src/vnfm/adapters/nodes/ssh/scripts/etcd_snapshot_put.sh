#!/bin/bash
# Move the uploaded file UPLOADED to SNAPSHOT when its digest is SHA256 (no-op when SNAPSHOT
# already has that digest). Output: "@@ changed=true|false".
set -euo pipefail
: "${UPLOADED:?}" "${SNAPSHOT:?}" "${SHA256:?}"
if [ -f "$SNAPSHOT" ] && [ "$(sha256sum "$SNAPSHOT" | cut -d' ' -f1)" = "$SHA256" ]; then
  rm -f -- "$UPLOADED"
  echo "@@ changed=false"; exit 0
fi
[ "$(sha256sum "$UPLOADED" | cut -d' ' -f1)" = "$SHA256" ] \
  || { rm -f -- "$UPLOADED"; echo "the uploaded snapshot's digest differs" >&2; exit 1; }
install -d -m 0700 "$(dirname "$SNAPSHOT")"
install -m 0600 "$UPLOADED" "$SNAPSHOT"
rm -f -- "$UPLOADED"
echo "@@ changed=true"
