#!/bin/bash
# PID 1 of one integration-test host. Started by harness.py as
#   nsenter --net=/run/netns/NS unshare --mount --uts --pid --kill-child --propagation private \
#       hostinit.sh HOSTDIR NAME ADDR/PREFIX[,ADDR/PREFIX...]
# It configures the host's network interfaces, mounts a copy-on-write overlay of the machine's
# root file system (upper layer HOSTDIR/upper, prepared by the harness: host key, sshd drop-in,
# hostname, root's password and authorized_keys), gives it its own /proc, /sys, /run and /tmp,
# then becomes tini (reaps orphans) running sshd in the foreground, chrooted into the overlay.
#
# Hermetic: the daemons' state directories are empty in a new host whatever the machine's live
# root holds there (podman storage of another graph driver, old etcd data): most are opaque
# directories of the upper layer (made by the harness); those in VNFM_ITEST_STATE_DIRS (one per
# line: containerd's, whose overlayfs snapshotter cannot work on an overlay) are private
# directories HOSTDIR/state/<path> bound over the overlay. Paths in
# VNFM_ITEST_EXPOSE (one per line: the test's virtualenv and Python when they live under /tmp or
# /run, which each host replaces by its own) are bound read-only at the same place.
set -euo pipefail
dir=${1:?host dir}; name=${2:?host name}; addrs=${3:?address/prefix list}
root="$dir/merged"

{
  echo "link set lo up"
  IFS=',' read -r -a list <<< "$addrs"
  for a in "${list[@]}"; do echo "addr replace $a dev eth0"; done
  echo "link set eth0 up"
} | ip -batch -

mount -t overlay overlay -o "lowerdir=/,upperdir=$dir/upper,workdir=$dir/work" "$root"
mount --rbind /dev "$root/dev"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
if [ -d /sys/fs/cgroup ]; then mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup" || true; fi
mount -t tmpfs -o mode=755 tmpfs "$root/run"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
while IFS= read -r d; do
  if [ -z "$d" ]; then continue; fi
  mkdir -p "$dir/state$d" "$root$d"
  mount --bind "$dir/state$d" "$root$d"
done <<< "${VNFM_ITEST_STATE_DIRS:-}"
while IFS= read -r p; do
  if [ -z "$p" ] || [ ! -e "$p" ]; then continue; fi
  mkdir -p "$root$p"
  mount --rbind "$p" "$root$p"
  mount -o remount,bind,ro "$root$p"
done <<< "${VNFM_ITEST_EXPOSE:-}"
mkdir -p "$root/run/sshd"
hostname "$name"
exec chroot "$root" /usr/bin/tini -- /usr/sbin/sshd -D -e
