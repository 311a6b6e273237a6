#!/bin/bash
# kubeadm upgrade on this node. MODE=apply (the first control plane: `kubeadm upgrade apply`),
# node-cp (another control plane), node-worker (a worker: its kubelet configuration), all at
# K8S_VERSION with kubeadm already at that version; MODE=revert puts back the control plane's
# static-pod manifests kubeadm backed up before upgrading from K8S_VERSION.
# Checks first: a node done at that version is a no-op. Output: "@@ changed=true|false".
set -euo pipefail
: "${MODE:?}" "${K8S_VERSION:?}"
export KUBECONFIG=/etc/kubernetes/admin.conf
marker=/etc/vnfm/kubeadm-upgraded
manifests=/etc/kubernetes/manifests
apiserver_at() {  # the version this host's API server manifest runs
  sed -nE 's#.*image: .*/kube-apiserver:v([0-9.]+).*#\1#p' "$manifests/kube-apiserver.yaml" 2>/dev/null
}
kubeadm_at() {
  have=$(kubeadm version -o short)
  [ "$have" = "v$K8S_VERSION" ] || { echo "kubeadm is $have, not v$K8S_VERSION: install it first" >&2; exit 1; }
}
case "$MODE" in
  apply)
    if [ "$(apiserver_at)" = "$K8S_VERSION" ]; then echo "@@ changed=false"; exit 0; fi
    kubeadm_at
    kubeadm upgrade apply -y "v$K8S_VERSION" >/dev/null
    ;;
  node-cp)
    if [ "$(apiserver_at)" = "$K8S_VERSION" ]; then echo "@@ changed=false"; exit 0; fi
    kubeadm_at
    kubeadm upgrade node >/dev/null
    ;;
  node-worker)
    if [ -f "$marker" ] && [ "$(cat "$marker")" = "$K8S_VERSION" ]; then echo "@@ changed=false"; exit 0; fi
    kubeadm_at
    kubeadm upgrade node >/dev/null
    mkdir -p /etc/vnfm
    printf '%s' "$K8S_VERSION" > "$marker"
    ;;
  revert)
    if [ "$(apiserver_at)" = "$K8S_VERSION" ]; then echo "@@ changed=false"; exit 0; fi
    backup=""
    # the newest backup of that version (kubeadm names them with a timestamp: later sorts last)
    for d in /etc/kubernetes/tmp/kubeadm-backup-manifests-*; do
      if grep -q "kube-apiserver:v$K8S_VERSION" "$d/kube-apiserver.yaml" 2>/dev/null; then backup=$d; fi
    done
    [ -n "$backup" ] || { echo "no backup of the v$K8S_VERSION control-plane manifests on this host" >&2; exit 1; }
    for f in kube-apiserver kube-controller-manager kube-scheduler; do
      install -m 0600 "$backup/$f.yaml" "$manifests/$f.yaml"
    done
    ;;
  *) echo "unknown MODE $MODE" >&2; exit 2 ;;
esac
echo "@@ changed=true"
