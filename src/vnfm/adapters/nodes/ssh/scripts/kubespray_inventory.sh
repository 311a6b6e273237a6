#!/bin/bash
# On the operator's Ansible server: one cluster's Kubespray inventory directory INV, marked as
# OWNER's by the file INV/OWNER_FILE. MODE:
#   check   the Kubespray tree at ROOT fits one of the known release LAYOUTS (one a line:
#           "label|a playbook's path|what the tree must have", the first that fits is the tree's),
#           and INV is free (missing or empty) or OWNER's; nothing is written
#   claim   as check, then (first time) INV is a copy of ROOT/inventory/sample marked as OWNER's
#   write   as claim, then
#           HOSTS_FILE, KNOWN_HOSTS and VARS_FILE are set to HOSTS_B64, KNOWN_B64, VARS_B64
#           (base64), each replaced whole and only when it differs
#   read    prints OWNER's HOSTS_FILE and KNOWN_HOSTS (base64); "@@ exists=false" without one
#   edit    OWNER's HOSTS_FILE and KNOWN_HOSTS set to HOSTS_B64, KNOWN_B64
#   delete  INV removed when it is OWNER's (missing: nothing to do); nothing else is touched
# Another cluster's inventory (another mark, or an inventory nobody marked) is refused, exit 3.
# Output: "@@ changed=true|false", "@@ created=true|false", "@@ layout=LABEL" (check, claim, write).
set -euo pipefail
: "${MODE:?}" "${INV:?}" "${OWNER:?}" "${OWNER_FILE:?}" "${HOSTS_FILE:?}" "${KNOWN_HOSTS:?}" "${VARS_FILE:?}"
ROOT=${ROOT:-}
mark="$INV/$OWNER_FILE"

refuse() { echo "$*" >&2; exit 3; }

layout=""
check_tree() {
  local label req f ok known=""
  while IFS='|' read -r label _ req; do
    [ -n "$label" ] || continue
    ok=1
    for f in $req; do [ -e "$ROOT/$f" ] || { ok=0; break; }; done
    if [ "$ok" = 1 ]; then layout=$label; return 0; fi
    known="$known; $label: ${req// /, }"
  done <<< "${LAYOUTS:?}"
  refuse "no Kubespray tree at $ROOT: it fits none of the known release layouts (${known#; })"
}

# 0: INV is OWNER's; 1: INV is free (missing or empty); refuses anything else
whose() {
  if [ ! -e "$INV" ]; then return 1; fi
  [ -d "$INV" ] || refuse "$INV is not a directory"
  if [ -f "$mark" ]; then
    local cur
    cur=$(head -c 200 "$mark")
    [ "$cur" = "$OWNER" ] || refuse "$INV holds the inventory of another cluster ($cur); give another transferring_inventory_path"
    return 0
  fi
  if [ -z "$(ls -A "$INV")" ]; then return 1; fi
  refuse "$INV holds an inventory that is not this cluster's (no $OWNER_FILE mark); give another transferring_inventory_path"
}

# put_file NAME B64: replace INV/NAME by the decoded text when it differs (mode 0600, atomic);
# sets changed=true when it did
put_file() {
  local name=$1 tmp
  tmp=$(mktemp "$INV/.vnfm.XXXXXX")
  printf '%s' "$2" | base64 -d > "$tmp"
  chmod 600 "$tmp"
  if cmp -s "$tmp" "$INV/$name"; then
    rm -f "$tmp"
  else
    mv -f "$tmp" "$INV/$name"
    changed=true
  fi
}

# claim: a free INV becomes a copy of the sample marked as OWNER's (staged, then moved in place)
claim() {
  if whose; then return 0; fi
  local parent staged
  parent=$(dirname "$INV")
  mkdir -p "$parent"
  staged=$(mktemp -d "$parent/.vnfm-inventory.XXXXXX")
  cp -a "$ROOT/inventory/sample/." "$staged/"
  printf '%s' "$OWNER" > "$staged/$OWNER_FILE"
  if [ -d "$INV" ]; then rmdir "$INV"; fi
  mv "$staged" "$INV"
  chmod 700 "$INV"
  created=true
  changed=true
}

changed=false
created=false
case "$MODE" in
  check)
    check_tree
    whose || true
    ;;
  claim)
    check_tree
    claim
    ;;
  write)
    check_tree
    claim
    put_file "$HOSTS_FILE" "${HOSTS_B64:?}"
    put_file "$KNOWN_HOSTS" "${KNOWN_B64-}"
    put_file "$VARS_FILE" "${VARS_B64:?}"
    ;;
  read)
    if whose && [ -f "$INV/$HOSTS_FILE" ]; then
      echo "@@ exists=true"
      echo "@@ hosts_b64=$(base64 -w0 < "$INV/$HOSTS_FILE")"
      if [ -f "$INV/$KNOWN_HOSTS" ]; then echo "@@ known_b64=$(base64 -w0 < "$INV/$KNOWN_HOSTS")"; fi
    else
      echo "@@ exists=false"
    fi
    ;;
  edit)
    whose || refuse "no inventory of this cluster at $INV"
    put_file "$HOSTS_FILE" "${HOSTS_B64:?}"
    put_file "$KNOWN_HOSTS" "${KNOWN_B64-}"
    ;;
  delete)
    if whose; then
      rm -rf -- "$INV"
      changed=true
    elif [ -d "$INV" ]; then
      rmdir -- "$INV"  # an empty directory a failed first write left
    fi
    ;;
  *) echo "unknown MODE $MODE" >&2; exit 2 ;;
esac
echo "@@ changed=$changed"
echo "@@ created=$created"
if [ -n "$layout" ]; then echo "@@ layout=$layout"; fi
