#!/bin/bash
# The registry's image on this host, tagged TAG.
#   MODE=check: is the archive with SHA256 loaded (marker) and TAG present? ("@@ loaded=true|false")
#   MODE=load:  `docker load` the archive at ~/STAGED (copied over SFTP), tag the image it names as
#               TAG, record SHA256, delete the archive.
#   MODE=pull:  `docker pull TAG` unless it is present.
# Inputs: MODE TAG; for check/load: SHA256 STAGED; for pull: DEADLINE_S.
# Output: "@@ changed=true|false", "@@ image=<TAG>", "@@ loaded=..." (check).
set -euo pipefail
: "${MODE:?}" "${TAG:?}"
marker=/var/lib/vnfm/registry-image.sha256
if ! docker info >/dev/null 2>&1; then
  echo "Docker is not running on this host (install it first)" >&2
  exit 1
fi
present() { docker image inspect "$TAG" >/dev/null 2>&1; }
case "$MODE" in
check)
  : "${SHA256:?}"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$SHA256 $TAG" ] && present; then
    echo "@@ loaded=true"
  else
    echo "@@ loaded=false"
  fi
  echo "@@ changed=false"
  ;;
load)
  : "${SHA256:?}" "${STAGED:?}"
  file="${VNFM_LOGIN_HOME:-$HOME}/$STAGED"  # copied over SFTP into the login's home
  if [ ! -s "$file" ]; then echo "the image archive $file is missing or empty" >&2; exit 1; fi
  got=$(sha256sum "$file" | cut -d' ' -f1)
  if [ "$got" != "$SHA256" ]; then
    echo "the image archive $file has sha256 $got, expected $SHA256 (damaged in transfer?)" >&2
    exit 1
  fi
  if ! out=$(docker load -i "$file" 2>&1); then
    echo "docker load failed:" >&2
    printf '%s\n' "$out" | tail -n 15 >&2
    exit 1
  fi
  # "Loaded image: name:tag" (Docker, podman) or "Loaded image ID: sha256:..." (an untagged archive)
  ref=$(printf '%s\n' "$out" | sed -n 's/^Loaded image: //p; s/^Loaded image ID: //p' | tail -n 1 | tr -d '[:space:]')
  if [ -z "$ref" ]; then
    echo "docker load named no image:" >&2
    printf '%s\n' "$out" | tail -n 15 >&2
    exit 1
  fi
  if [ "$ref" != "$TAG" ] && [ "$ref" != "docker.io/library/$TAG" ]; then
    docker tag "$ref" "$TAG"
  fi
  present || { echo "image $TAG is not present after loading $ref" >&2; exit 1; }
  mkdir -p "${marker%/*}"
  printf '%s %s\n' "$SHA256" "$TAG" > "$marker"
  rm -f "$file"
  echo "@@ image=$TAG"
  echo "@@ changed=true"
  ;;
pull)
  : "${DEADLINE_S:?}"
  if present; then echo "@@ image=$TAG"; echo "@@ changed=false"; exit 0; fi
  if ! out=$(timeout "${DEADLINE_S%.*}" docker pull "$TAG" 2>&1); then
    echo "docker pull $TAG failed (no image_path was given; can the VM reach the registry?):" >&2
    printf '%s\n' "$out" | tail -n 15 >&2
    exit 1
  fi
  echo "@@ image=$TAG"
  echo "@@ changed=true"
  ;;
*)
  echo "unknown MODE $MODE" >&2
  exit 2
  ;;
esac
