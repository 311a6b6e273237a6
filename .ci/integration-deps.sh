#!/bin/bash
# Install the Debian packages the integration tests (tests/integration) need.
# Idempotent and quiet: when everything is installed it only runs dpkg-query (well under a second);
# `apt-get update` runs once, and only when a package is missing.
set -euo pipefail

PACKAGES=(
  iproute2 util-linux procps      # ip netns / bridge / veth, nsenter + unshare, pkill-free process checks
  openssh-server openssh-client   # one sshd per test host
  sudo passwd                     # non-root node logins become root with sudo -n (useradd in tests)
  tini                            # PID 1 of each test host (reaps orphaned daemons)
  etcd-server etcd-client         # etcd membership steps
  haproxy                         # load balancer steps
  nfs-ganesha nfs-ganesha-vfs     # userspace NFS server (this kernel has no nfsd)
  libnfs-utils                    # nfs-ls / nfs-cat: userspace NFS client (no kernel NFS client)
  nfs-common                      # mount.nfs: what nfs_client.sh checks for on a node (the node-script test)
  docker-registry skopeo          # private registry, push / pull
  podman runc curl                # the private-registry VNF's container runtime (podman as docker) and /v2/ probes
  mmdebstrap                      # the Containerfile's base image made here (tests/integration/test_container_image.py)
  keepalived                      # the HA control plane's VIP (VRRP), failover checked by traffic
  containerd                      # the nodes' container runtime: loads the registry/mirror config vnfm writes
  shellcheck                      # lint of src/vnfm/nodesteps/scripts/*.sh
  python3                         # the TCP backend stub of the HAProxy test runs in the hosts
  openssl ca-certificates
  postgresql                      # PostgreSQL repository tests (throwaway cluster per test session)
  prometheus                      # promtool + prometheus: checks of deploy/prometheus/vnfm-rules.yml (tests/api/test_alerting*)
  chromium chromium-driver        # the web console's browser test (tests/browser: Selenium drives chromedriver)
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "integration-deps: not root, cannot install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "integration-deps: installing ${missing[*]}" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
