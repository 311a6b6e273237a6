#!/bin/bash
# PID 1 of one integration-test host. Started by harness.py as
#   nsenter --net=/run/netns/NS unshare --mount --uts --pid --kill-child --propagation private \
#       hostinit.sh HOSTDIR NAME ADDR/PREFIX
# It configures the host's network interfaces, mounts a copy-on-write overlay of the machine's
# root file system (upper layer HOSTDIR/upper, prepared by the harness: host key, sshd drop-in,
# hostname, root's password and authorized_keys), gives it its own /proc, /sys, /run and /tmp,
# then becomes tini (reaps orphans) running sshd in the foreground, chrooted into the overlay.
set -euo pipefail
dir=${1:?host dir}; name=${2:?host name}; addr=${3:?address/prefix}
root="$dir/merged"

ip -batch - <<IP
link set lo up
addr replace $addr dev eth0
link set eth0 up
IP

mount -t overlay overlay -o "lowerdir=/,upperdir=$dir/upper,workdir=$dir/work" "$root"
mount --rbind /dev "$root/dev"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
if [ -d /sys/fs/cgroup ]; then mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup" || true; fi
mount -t tmpfs -o mode=755 tmpfs "$root/run"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mkdir -p "$root/run/sshd"
hostname "$name"
exec chroot "$root" /usr/bin/tini -- /usr/sbin/sshd -D -e
