#!/bin/bash
# Shared by the etcd scripts: adapters/nodes/ssh/base.py puts it in place of their include line.
# etcd_tool NAME (etcd, etcdctl or etcdutl): the path of that program, found on PATH first, else
# beside the running etcd: a stock kubeadm control plane runs etcd only inside its static pod,
# whose image (registry.k8s.io/etcd) keeps etcd, etcdctl and etcdutl (3.5 on) in /usr/local/bin;
# they are reached through /proc/<pid>/root, etcd itself through /proc/<pid>/exe (static Go
# programs: they run from the host). Fails (status 1, nothing printed) when neither has it.
etcd_tool() {
  local name=$1 pid exe dir c
  if c=$(command -v "$name" 2>/dev/null); then printf '%s\n' "$c"; return 0; fi
  # the oldest etcd: the cluster's member (a drill's scratch etcd starts later)
  pid=$(pgrep -o -x etcd 2>/dev/null) || return 1
  if [ "$name" = etcd ]; then
    if [ -e "/proc/$pid/exe" ]; then printf '%s\n' "/proc/$pid/exe"; return 0; fi
    return 1
  fi
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || exe=""
  dir=${exe%/*}
  for c in "/proc/$pid/root/usr/local/bin/$name" ${dir:+"/proc/$pid/root$dir/$name"} ${dir:+"$dir/$name"}; do
    if [ -f "$c" ] && [ -x "$c" ]; then printf '%s\n' "$c"; return 0; fi
  done
  return 1
}

# need_etcd_tool NAME: etcd_tool NAME, or a clear error on stderr and exit 1
need_etcd_tool() {
  etcd_tool "$1" && return 0
  echo "no $1 on this host: not on PATH, and no running etcd (a kubeadm static pod's image keeps it in" \
       "/usr/local/bin, read through /proc/<pid>/root) to take it from" >&2
  exit 1
}
