#!/bin/bash
# The NFS client a kubelet needs to mount NFS PersistentVolumes (nfs-common: mount.nfs).
# Output: "@@ changed=true|false".
set -euo pipefail
if command -v mount.nfs >/dev/null 2>&1 || [ -x /sbin/mount.nfs ] || [ -x /usr/sbin/mount.nfs ]; then
  echo "@@ changed=false"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q nfs-common
echo "@@ changed=true"
