#!/bin/bash
# PACKAGES (space separated, of kubeadm kubelet kubectl) at exactly K8S_VERSION from the
# pkgs.k8s.io repository of its minor version (upgrade or downgrade), held; the kubelet is
# restarted when it changed. Output: "@@ changed=true|false".
set -euo pipefail
: "${PACKAGES:?}" "${K8S_VERSION:?}"
export DEBIAN_FRONTEND=noninteractive
read -r -a pkgs <<<"$PACKAGES"
todo=()
for p in "${pkgs[@]}"; do
  have=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || true)
  [ "${have%%-*}" = "$K8S_VERSION" ] || todo+=("$p=${K8S_VERSION}-*")
done
if [ "${#todo[@]}" -eq 0 ]; then echo "@@ changed=false"; exit 0; fi
minor=${K8S_VERSION%.*}
echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v${minor}/deb/ /" \
  > /etc/apt/sources.list.d/kubernetes.list
key=$(mktemp)
curl -fsSL -o "$key" "https://pkgs.k8s.io/core:/stable:/v${minor}/deb/Release.key" || { rm -f "$key"; exit 1; }
gpg --batch --yes --dearmor -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg <"$key"
rm -f "$key"
apt-get update -q
apt-mark unhold "${pkgs[@]}" >/dev/null
apt-get install -y -q --allow-downgrades --allow-change-held-packages "${todo[@]}"
apt-mark hold "${pkgs[@]}" >/dev/null
case " ${pkgs[*]} " in
  *" kubelet "*) systemctl daemon-reload; systemctl restart kubelet ;;
esac
echo "@@ changed=true"
