#!/bin/bash
# Prepare an Ubuntu 22.04/24.04 host for kubeadm: hostname, no swap, kernel modules and sysctls,
# containerd (systemd cgroups), kubelet/kubeadm/kubectl pinned to K8S_VERSION, proxy settings.
# Inputs: NODE K8S_VERSION NO_PROXY_LIST; secrets (env): HTTP_PROXY_URL HTTPS_PROXY_URL.
# Output: "@@ changed=true|false".
set -euo pipefail
: "${NODE:?}" "${K8S_VERSION:?}"
NO_PROXY_LIST=${NO_PROXY_LIST:-}
HTTP_PROXY_URL=${HTTP_PROXY_URL:-}
HTTPS_PROXY_URL=${HTTPS_PROXY_URL:-}
marker=/etc/vnfm/k8s-prepared
want="$NODE $K8S_VERSION"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] && command -v kubeadm >/dev/null; then
  echo "@@ changed=false"; exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# apt and curl may print the proxy URL, credentials included, in their errors: run them with their
# stderr passed through a filter that masks "scheme://user:password@" as "scheme://***@"
# (the exit status stays the command's: pipefail). The caller masks the error text again.
masked() {
  { "$@" 2>&1 1>&3 3>&- | sed -E 's#([A-Za-z][A-Za-z0-9+.-]*://)[^:/@[:space:]]*:[^@/[:space:]]+@#\1***@#g' >&2; } 3>&1
}
umask 022
hostnamectl set-hostname "$NODE"
swapoff -a
sed -ri '/\sswap\s/s/^#?/#/' /etc/fstab
printf 'overlay\nbr_netfilter\n' > /etc/modules-load.d/k8s.conf
modprobe overlay
modprobe br_netfilter
printf 'net.bridge.bridge-nf-call-iptables = 1\nnet.bridge.bridge-nf-call-ip6tables = 1\nnet.ipv4.ip_forward = 1\n' \
  > /etc/sysctl.d/99-kubernetes.conf
sysctl --system >/dev/null
if [ -n "$HTTP_PROXY_URL$HTTPS_PROXY_URL" ]; then
  (umask 077
   mkdir -p /etc/systemd/system/containerd.service.d
   # the values are checked (nodesteps: no quote, backslash, blank or control character); systemd
   # expands % specifiers, so a %-encoded credential is written as %%
   printf '[Service]\nEnvironment="HTTP_PROXY=%s" "HTTPS_PROXY=%s" "NO_PROXY=%s"\n' \
     "${HTTP_PROXY_URL//%/%%}" "${HTTPS_PROXY_URL//%/%%}" "${NO_PROXY_LIST//%/%%}" \
     > /etc/systemd/system/containerd.service.d/http-proxy.conf
   printf 'Acquire::http::Proxy "%s";\nAcquire::https::Proxy "%s";\n' "$HTTP_PROXY_URL" "$HTTPS_PROXY_URL" \
     > /etc/apt/apt.conf.d/95vnfm-proxy)
  export http_proxy=$HTTP_PROXY_URL https_proxy=$HTTPS_PROXY_URL no_proxy=$NO_PROXY_LIST
fi
unset HTTP_PROXY_URL HTTPS_PROXY_URL
masked apt-get update -q
masked apt-get install -y -q containerd apt-transport-https ca-certificates curl gpg
mkdir -p /etc/containerd
containerd config default | sed 's/SystemdCgroup = false/SystemdCgroup = true/' > /etc/containerd/config.toml
systemctl daemon-reload
systemctl restart containerd
minor=${K8S_VERSION%.*}
install -d -m 0755 /etc/apt/keyrings
# the key goes through a file, not a pipe: curl's failure stops the script before gpg runs
key=$(mktemp)
masked curl -fsSL -o "$key" "https://pkgs.k8s.io/core:/stable:/v${minor}/deb/Release.key" || { rm -f "$key"; exit 1; }
gpg --batch --yes --dearmor -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg <"$key"
rm -f "$key"
echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v${minor}/deb/ /" \
  > /etc/apt/sources.list.d/kubernetes.list
masked apt-get update -q
apt-mark unhold kubelet kubeadm kubectl >/dev/null 2>&1 || true
masked apt-get install -y -q --allow-downgrades "kubelet=${K8S_VERSION}-*" "kubeadm=${K8S_VERSION}-*" "kubectl=${K8S_VERSION}-*"
apt-mark hold kubelet kubeadm kubectl >/dev/null
systemctl enable --now kubelet
mkdir -p /etc/vnfm
printf '%s' "$want" > "$marker"
echo "@@ changed=true"
