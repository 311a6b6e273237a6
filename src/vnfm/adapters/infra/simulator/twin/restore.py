"""The single-master restore on the twin (nodesteps/restore.py, `KubeadmInit(existing_etcd=True)`).

As strict as the real programs where it matters:
- the cluster's identity is its CA (`cluster.ca_cert_hash`): `PkiFetch` reads it from a control
  plane, `PkiPut` installs it on a host (the files must be one consistent set; a host holding
  another CA refuses); `kubeadm init` on a host without it generates a new CA, and every kubelet
  that trusts the old one (a worker's `trusts_ca`, set when it joined) stays NotReady;
- `EtcdRestoreMember` needs the snapshot file on the host with its digest, refuses a corrupt one
  (as etcdutl's hash check does), a host where etcd already runs, and a host not prepared (a stock
  host has no etcdutl: the script takes it from kubeadm's etcd image through containerd). It cannot
  check that the image can be pulled (registry reachability) or that kubeadm knows the version;
- `kubeadm init` refuses a non-empty etcd data directory unless told to ignore it
  (`DirAvailable--var-lib-etcd`), and then serves the snapshot's content: objects created after
  the snapshot are gone; the etcd membership is the new member alone;
- a kubelet pointed at another API server address than the cluster's endpoint stays NotReady until
  `KubeletServer` points it there (restarted: Ready after the usual delay).
"""

from __future__ import annotations

import base64
import copy
import time
from typing import Any

from vnfm.adapters.infra.simulator.twin import cluster
from vnfm.adapters.infra.simulator.twin.base import TwinHost, empty, fake_ca, kubelet_trusts, node_on, sha
from vnfm.adapters.infra.simulator.twin.upgrade import ETCD_CONTENT, _host
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.kubeadm import KubeadmInit
from vnfm.nodesteps.restore import PKI_FILES, EtcdRestoreMember, KubeletServer, PkiFetch, PkiPut


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def pki_files(ca_pem: str) -> dict[str, str]:
    """The twin's PKI of the cluster whose CA certificate is `ca_pem`: every file bound to that CA."""
    ca_hash = "sha256:" + sha(ca_pem)
    return {f: _b64(ca_pem if f == "ca.crt" else f"twin {f} of {ca_hash}\n") for f in PKI_FILES}


def pki_fetch(tw: TwinHost, host: str, sid: str, step: PkiFetch) -> StepResult:
    def fn(st: dict[str, Any]) -> dict[str, str]:
        if node_on(st, sid, "master") is None or not st["cluster"].get("ca_pem"):
            raise StepFailed(host, step, "this host is not a control plane: /etc/kubernetes/pki/ca.key does not exist")
        return pki_files(str(st["cluster"]["ca_pem"]))

    return StepResult(False, {"files": tw.tx(fn)})


def pki_put(tw: TwinHost, host: str, sid: str, step: PkiPut) -> StepResult:
    files = dict(step.files)
    ca_pem = base64.b64decode(files["ca.crt"]).decode()
    if pki_files(ca_pem) != files:
        raise StepFailed(host, step, "the PKI files are not one set (a key does not belong to ca.crt)")

    def fn(st: dict[str, Any]) -> bool:
        h = _host(st, sid)
        have = h.get("pki")
        if have is not None and have["ca_pem"] == ca_pem:
            return False
        if have is not None:
            raise StepFailed(host, step, "another certificate authority is installed in /etc/kubernetes/pki")
        h["pki"] = {"ca_pem": ca_pem}
        return True

    return StepResult(tw.tx(fn))


def restore_member(tw: TwinHost, host: str, sid: str, step: EtcdRestoreMember) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        h = _host(st, sid)
        done = h.get("etcd_data")
        if done is not None and done["sha256"] == step.sha256:
            return False
        if node_on(st, sid, "master") is not None or done is not None:
            raise StepFailed(host, step, f"an etcd member already runs on this host ({step.data_dir} in use)")
        if not h.get("prepared"):  # a stock host's etcdutl comes from the etcd image, through containerd
            raise StepFailed(host, step, "no etcdutl on this host, and no kubeadm to take it from the etcd image")
        s = (h.get("snapshots") or {}).get(step.path)
        if s is None or s["sha256"] != step.sha256:
            raise StepFailed(host, step, f"no snapshot with that digest at {step.path}")
        if s.get("content") is None:
            raise StepFailed(host, step, "Error: snapshot file integrity check failed (the snapshot is corrupt)")
        h["etcd_data"] = {"sha256": step.sha256, "name": step.name, "peer_url": step.peer_url,
                          "content": copy.deepcopy(s["content"])}
        return True

    return StepResult(tw.tx(fn))


def init(tw: TwinHost, host: str, sid: str, step: KubeadmInit) -> StepResult:
    """kubeadm init: on a restored etcd data directory only with `existing_etcd` (kubeadm's preflight
    check DirAvailable--var-lib-etcd otherwise)."""
    restored = tw.peek(lambda st: copy.deepcopy((st["hosts"].get(sid) or {}).get("etcd_data")))
    if restored is not None and not step.existing_etcd:
        raise StepFailed(host, step, "[preflight] DirAvailable--var-lib-etcd: /var/lib/etcd is not empty")
    if restored is None:
        return cluster.init(tw, host, sid, step)

    def fn(st: dict[str, Any]) -> bool:
        h = _host(st, sid)
        if not h.get("prepared"):
            raise StepFailed(host, step, "node is not prepared (containerd/kubeadm missing)")
        node = st["nodes"].get(step.node)
        if h.get("initialized_from") == restored["sha256"] and node is not None and node.get("server_id") == sid:
            return False
        ca_pem, ca_hash = ((h["pki"]["ca_pem"], "sha256:" + sha(h["pki"]["ca_pem"])) if h.get("pki")
                           else fake_ca())  # no CA files: kubeadm generates a new CA
        for k in ETCD_CONTENT:  # the API server serves the restored etcd
            st.pop(k, None)
            if k in restored["content"]:
                st[k] = copy.deepcopy(restored["content"][k])
        for k, v in empty().items():
            st.setdefault(k, v)
        st["cluster"] = {**st["cluster"], "initialized": True, "endpoint": step.control_plane_endpoint,
                         "ca_pem": ca_pem, "ca_cert_hash": ca_hash, "version": step.version,
                         "cert_sans": list(step.cert_sans), "token_sha256": [], "cert_key_sha256": []}
        st["etcd"] = {"members": {}}
        st["nodes"].pop(step.node, None)  # the kubelet registers the same Node name again
        for n in st["nodes"].values():
            if n["role"] == "master":  # a dead master's Node object: its kubelet is gone
                n["ready"], n["ready_at"] = False, float("inf")
            elif not kubelet_trusts(st, n):
                n["ready"] = False
        cluster.register(tw, st, sid, step.node, "master", step.advertise_address, ready_now=True, first=True)
        st["etcd"]["members"] = {restored["name"]: {"name": restored["name"], "peer_url": restored["peer_url"],
                                                    "healthy": True}}
        h["initialized_from"] = restored["sha256"]
        return True

    return StepResult(tw.tx(fn))


def kubelet_server(tw: TwinHost, host: str, sid: str, step: KubeletServer) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        n = node_on(st, sid)
        if n is None:
            raise StepFailed(host, step, "no kubelet of the cluster runs on this host (/etc/kubernetes/kubelet.conf)")
        h = _host(st, sid)
        if h.get("kubelet_server") == step.endpoint:
            return False
        h["kubelet_server"] = step.endpoint
        node = st["nodes"][n["name"]]  # the kubelet restarts
        node["ready"], node["ready_at"] = False, time.time() + tw.config.ready_delay
        return True

    return StepResult(tw.tx(fn))


HANDLERS: dict[type, Any] = {
    PkiFetch: pki_fetch,
    PkiPut: pki_put,
    EtcdRestoreMember: restore_member,
    KubeadmInit: init,
    KubeletServer: kubelet_server,
}
