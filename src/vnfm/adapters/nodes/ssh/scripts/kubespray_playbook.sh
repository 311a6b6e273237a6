#!/bin/bash
# On the operator's Ansible server: run PLAYBOOK (its historic name) of the Kubespray tree ROOT
# from where the tree's release keeps it (LAYOUTS: one known layout a line, "label|PLAYBOOK's
# path there|what the tree must have"; the first the tree fits is used; none: refused), on OWNER's
# inventory INV (INV/HOSTS_FILE, extra variables INV/VARS_FILE, then EXTRA_VARS: one plain name=value a line,
# validated by the VNFM), limited to LIMIT (comma separated) when given, with --become when BECOME=yes.
# Nodes are reached with the private key VNFM_RUN_KEY (exported; held by an ssh-agent of this run
# only, never written to a file) and their host keys are checked against INV/KNOWN_HOSTS (the keys
# the VNFM pinned; Kubespray's ansible.cfg, which turns checking off, is overridden). Other
# exported VNFM_* variables are secrets the inventory reads with env lookups. Stdin is /dev/null:
# a playbook that prompts fails instead of waiting. The run ends after TIMEOUT_S seconds.
# Output: "@@ changed=true", "@@ path=<the playbook's path in the tree>", "@@ seconds=N",
# "@@ recap=host:ok:changed:unreachable:failed ...".
# A failed run: the end of Ansible's output, then the failing task, on stderr.
set -euo pipefail
: "${ROOT:?}" "${INV:?}" "${OWNER:?}" "${OWNER_FILE:?}" "${HOSTS_FILE:?}" "${KNOWN_HOSTS:?}" "${VARS_FILE:?}"
: "${PLAYBOOK:?}" "${TIMEOUT_S:?}" "${VNFM_RUN_KEY:?}"
LIMIT=${LIMIT:-}; BECOME=${BECOME:-no}; EXTRA_VARS=${EXTRA_VARS:-}

if [ "$(head -c 200 "$INV/$OWNER_FILE" 2>/dev/null || true)" != "$OWNER" ]; then
  unset VNFM_RUN_KEY
  echo "no inventory of this cluster at $INV" >&2; exit 3
fi
path="" known=""
while IFS='|' read -r label lpath req; do
  [ -n "$label" ] || continue
  ok=1
  for f in $req; do [ -e "$ROOT/$f" ] || { ok=0; break; }; done
  if [ "$ok" = 1 ]; then path=$lpath; break; fi
  known="$known; $label: ${req// /, }"
done <<< "${LAYOUTS:?}"
if [ -z "$path" ]; then
  unset VNFM_RUN_KEY
  echo "no Kubespray tree at $ROOT: it fits none of the known release layouts (${known#; })" >&2; exit 3
fi
[ -f "$ROOT/$path" ] || { unset VNFM_RUN_KEY; echo "no $path ($PLAYBOOK) in the Kubespray tree $ROOT ($label)" >&2; exit 3; }

ansible=$(command -v ansible-playbook || true)
for d in "$ROOT/venv/bin" "$ROOT/.venv/bin" "$HOME/.local/bin"; do
  if [ -z "$ansible" ] && [ -x "$d/ansible-playbook" ]; then ansible="$d/ansible-playbook"; fi
done
[ -n "$ansible" ] || { unset VNFM_RUN_KEY; echo "ansible-playbook is not installed on the Ansible server" >&2; exit 3; }

work=$(mktemp -d)
agent_pid=""
cleanup() {
  if [ -n "$agent_pid" ]; then kill "$agent_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
chmod 700 "$work"
eval "$(ssh-agent -s -a "$work/agent.sock")" >/dev/null
agent_pid=$SSH_AGENT_PID
printf '%s\n' "$VNFM_RUN_KEY" | ssh-add -q - 2>/dev/null || { echo "the run key was refused by ssh-agent" >&2; exit 3; }
unset VNFM_RUN_KEY

args=(-i "$INV/$HOSTS_FILE" -e "@$INV/$VARS_FILE")
if [ -n "$LIMIT" ]; then args+=(--limit "$LIMIT"); fi
if [ "$BECOME" = yes ]; then args+=(--become); fi
while IFS= read -r kv; do
  if [ -n "$kv" ]; then args+=(-e "$kv"); fi
done <<< "$EXTRA_VARS"

export ANSIBLE_HOST_KEY_CHECKING=True
export ANSIBLE_SSH_ARGS="-o ControlMaster=no -o UserKnownHostsFile=$INV/$KNOWN_HOSTS -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o PasswordAuthentication=no -o BatchMode=yes"
export ANSIBLE_RETRY_FILES_ENABLED=False ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
export ANSIBLE_PYTHON_INTERPRETER=auto_silent ANSIBLE_LOCAL_TEMP="$work/tmp"

log="$work/run.log"
start=$SECONDS
rc=0
(cd "$ROOT" && timeout --kill-after=30 "$TIMEOUT_S" "$ansible" "${args[@]}" "$path") >"$log" 2>&1 || rc=$?
took=$((SECONDS - start))
recap=$(awk '/^PLAY RECAP/ {r=1; next}
  r && / : ok=/ { h=$1; o=c=u=f=0
    for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1]=="ok") o=kv[2]; if (kv[1]=="changed") c=kv[2];
      if (kv[1]=="unreachable") u=kv[2]; if (kv[1]=="failed") f=kv[2] }
    printf "%s:%s:%s:%s:%s ", h, o, c, u, f }' "$log")
if [ "$rc" -ne 0 ]; then
  task=$(awk '/^TASK \[/ {t=$0} /^(fatal|failed): / && !found {found=t} END {print found}' "$log" | tr -d '*' | sed 's/ *$//')
  error=$(grep -m1 -E '^(fatal|failed): ' "$log" | cut -c1-400 || true)
  tail -n 8 "$log" | cut -c1-300 >&2
  if [ "$rc" -eq 124 ]; then echo "$PLAYBOOK timed out after ${TIMEOUT_S}s" >&2; fi
  echo "failing task: ${task:-none reported (exit $rc)}" >&2
  if [ -n "$error" ]; then echo "error: $error" >&2; fi
  exit 1
fi
echo "@@ changed=true"
echo "@@ path=$path"
echo "@@ seconds=$took"
echo "@@ recap=$recap"
