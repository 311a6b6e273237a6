"""The certificate steps' SSH scripts on a test host (issue 27 item 1): openssl-generated,
short-lived (2 days) certificates in kubeadm's layout and in Kubespray's; expiry read by
cert_expiry.sh with the real openssl; renewal by cert_renew.sh against RECORDING STAND-INS for
kubeadm (`certs renew all` re-signs the leaves for a year with the real openssl, as kubeadm would),
crictl (lists two control-plane pod sandboxes, records stopp/rmp; removing the API server's
"restarts" an `openssl s_server` on :6443 serving the certificate file of the time, so the script's
check that the renewed certificate is served is real) and kubectl (its /readyz fails once, then
answers: the script's wait loop is exercised). The stand-ins are test code, NOT
Kubernetes."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests.integration.conftest import require
from tests.integration.kubernetes.standins import Pki
from vnfm.adapters.mgmt.cluster import etcd
from vnfm.adapters.mgmt.cluster.topology import Cluster, Node
from vnfm.adapters.mgmt.kubespray.driver import check_etcd
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.domain.errors import OperationFailed
from vnfm.domain.resources import Vnfc
from vnfm.nodesteps.base import StepFailed
from vnfm.nodesteps.certs import KUBESPRAY, CertExpiry, CertRenew

pytestmark = pytest.mark.integration
DAY = 86400
LOG = "/var/log/certs-standin.log"

# Makes a CA (kept when it exists) and the leaves of a layout, valid DAYS days, with the real openssl.
MKCERTS = r"""#!/bin/bash
# mkcerts LAYOUT DAYS [renew]: "renew" re-signs only what `kubeadm certs renew all` renews
set -euo pipefail
layout=$1 days=$2 mode=${3:-all} node=master-1 root=${ROOT:-}
if [ "$layout" = kubeadm ]; then pki=$root/etc/kubernetes/pki; else pki=$root/etc/kubernetes/ssl; fi
mkdir -p "$pki/etcd" "$root/etc/ssl/etcd/ssl" "$root/tmp"
if [ ! -f "$pki/ca.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/ca.key" \
    -out "$pki/ca.crt" -subj /CN=kubernetes -days 3650
fi
leaf() {  # cert-path cn
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${1%.*}.key" \
    -subj "/CN=$2" -out "$root/tmp/leaf.csr"
  openssl x509 -req -in "$root/tmp/leaf.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days "$days" -out "$1"
}
if [ "$layout" = kubeadm ]; then
  for n in apiserver apiserver-kubelet-client apiserver-etcd-client front-proxy-client \
           etcd/server etcd/peer etcd/healthcheck-client; do leaf "$pki/$n.crt" "${n//\//-}"; done
else
  for n in apiserver apiserver-kubelet-client front-proxy-client; do leaf "$pki/$n.crt" "$n"; done
  if [ "$mode" = all ]; then  # Kubespray's own etcd certificates: not kubeadm's to renew
    leaf "$root/etc/ssl/etcd/ssl/member-$node.pem" "member-$node"
    leaf "$root/etc/ssl/etcd/ssl/node-$node.pem" "node-$node"
  fi
fi
leaf "$root/tmp/admin.crt" kubernetes-admin
{
  printf 'apiVersion: v1\nkind: Config\nusers:\n- name: kubernetes-admin\n  user:\n'
  printf '    client-certificate-data: %s\n' "$(base64 -w0 "$root/tmp/admin.crt")"
  printf '    client-key-data: %s\n' "$(base64 -w0 "$root/tmp/admin.key")"
} > "$root/etc/kubernetes/admin.conf"
"""
KUBEADM = r"""#!/bin/bash
# RECORDING STAND-IN for kubeadm (NOT kubeadm): `certs renew all` re-signs the leaves for a year
echo "kubeadm $*" >> /var/log/certs-standin.log
[ "$1 $2 $3" = "certs renew all" ] || exit 2
if [ "${4:-}" = --config ]; then layout=kubespray; else layout=kubeadm; fi
mkcerts "$layout" 365 renew >/dev/null 2>&1
"""
CRICTL = r"""#!/bin/bash
# RECORDING STAND-IN for crictl (NOT crictl): two control-plane pod sandboxes; removing the API
# server's one "restarts" it (fake-apiserver, as the kubelet would from its manifest)
echo "crictl $*" >> /var/log/certs-standin.log
case "$1" in
  pods) printf 'sandbox-apiserver\nsandbox-etcd\n' ;;
  rmp) if [ "$2" = sandbox-apiserver ]; then fake-apiserver; fi ;;
esac
"""
# NOT an API server: openssl s_server on :6443 serving the API server's certificate of the time
FAKE_APISERVER = r"""#!/bin/bash
if [ -f /run/fake-apiserver.pid ]; then kill "$(cat /run/fake-apiserver.pid)" 2>/dev/null || true; fi
if [ -d /etc/kubernetes/pki ]; then d=/etc/kubernetes/pki; else d=/etc/kubernetes/ssl; fi
setsid openssl s_server -accept 6443 -cert "$d/apiserver.crt" -key "$d/apiserver.key" -quiet \
  </dev/null >/dev/null 2>&1 &
echo $! > /run/fake-apiserver.pid
"""
KUBECTL = r"""#!/bin/bash
# RECORDING STAND-IN for kubectl (NOT kubectl): /readyz fails once (the restart), then answers
echo "kubectl $*" >> /var/log/certs-standin.log
if [ -f /run/readyz-once ]; then echo ok; exit 0; fi
touch /run/readyz-once
exit 1
"""


async def _setup(ssh: SshExecutor, host: Any, layout: str) -> SshStepExecutor:
    t = host.target()
    for name, text in (("mkcerts", MKCERTS), ("kubeadm", KUBEADM), ("crictl", CRICTL), ("kubectl", KUBECTL),
                       ("fake-apiserver", FAKE_APISERVER)):
        await ssh.put_file(t, f"/usr/local/sbin/{name}", text, mode=0o755)
    res = await ssh.run(t, f"mkdir -p /etc/kubernetes && mkcerts {layout} 2 2>&1 && fake-apiserver")
    assert res.ok, res.stdout[-2000:]
    return SshStepExecutor(ssh, {host.address: t})


async def _log(ssh: SshExecutor, host: Any) -> list[str]:
    return (await ssh.run(host.target(), f"cat {LOG}", check=True)).stdout.splitlines()


async def test_kubeadm_layout_read_with_openssl_and_renewed(make_hosts: Any, ssh: SshExecutor) -> None:
    require("openssl")
    host, = make_hosts(1)
    steps = await _setup(ssh, host, "kubeadm")
    now = time.time()
    got = (await steps.run(host.address, CertExpiry("master-1"))).data
    assert got["missing"] == ["super-admin.conf"]  # optional: kubeadm < 1.29, or a joined master
    leaves = {k: v for k, v in got["not_after"].items() if k != "ca"}
    assert set(leaves) == {"apiserver", "apiserver-kubelet-client", "apiserver-etcd-client", "front-proxy-client",
                           "etcd-server", "etcd-peer", "etcd-healthcheck-client", "admin.conf"}
    assert all(abs(t - (now + 2 * DAY)) < 600 for t in leaves.values()), leaves
    assert got["not_after"]["ca"] > now + 3000 * DAY

    renewed = await steps.run(host.address, CertRenew("master-1", deadline_s=30))
    assert renewed.changed
    assert all(abs(t - (now + 365 * DAY)) < 600 for k, t in renewed.data["not_after"].items() if k != "ca")
    log = await _log(ssh, host)
    assert log[0] == "kubeadm certs renew all"
    assert "crictl rmp sandbox-apiserver" in log and "crictl rmp sandbox-etcd" in log
    readyz = [x for x in log if x.startswith("kubectl get --raw=/readyz")]
    assert len(readyz) >= 2 and "--tls-server-name=kubernetes" in readyz[0]  # waited through one failure
    served = await ssh.run(host.target(), "openssl s_client -connect 127.0.0.1:6443 </dev/null 2>/dev/null"
                                          " | openssl x509 -noout -enddate", check=True)
    assert served.stdout.strip() == (await ssh.run(host.target(), "openssl x509 -noout -enddate -in "
                                                   "/etc/kubernetes/pki/apiserver.crt", check=True)).stdout.strip()

    # no control-plane pod sandbox to restart: the renewal fails, saying so (never silently unserved)
    await ssh.put_file(host.target(), "/usr/local/sbin/crictl", "#!/bin/bash\n", mode=0o755)
    with pytest.raises(StepFailed, match="crictl found no control-plane pod sandbox"):
        await steps.run(host.address, CertRenew("master-1", deadline_s=5))

    # a required certificate that is missing fails the read, naming it
    await ssh.run(host.target(), "rm /etc/kubernetes/pki/etcd/peer.crt", check=True)
    with pytest.raises(StepFailed, match="etcd-peer: /etc/kubernetes/pki/etcd/peer.crt does not exist"):
        await steps.run(host.address, CertExpiry("master-1"))


async def test_kubespray_layout(make_hosts: Any, ssh: SshExecutor) -> None:
    require("openssl")
    host, = make_hosts(1)
    steps = await _setup(ssh, host, "kubespray")
    got = (await steps.run(host.address, CertExpiry("master-1", KUBESPRAY))).data
    assert set(got["not_after"]) == {"apiserver", "apiserver-kubelet-client", "front-proxy-client", "etcd-member",
                                     "apiserver-etcd-client", "admin.conf", "ca"} and got["missing"] == []
    renewed = await steps.run(host.address, CertRenew("master-1", KUBESPRAY, deadline_s=30))
    assert renewed.data["not_after"]["apiserver"] > time.time() + 300 * DAY
    assert renewed.data["not_after"]["etcd-member"] < time.time() + 3 * DAY  # Kubespray's etcd: not kubeadm's
    assert (await _log(ssh, host))[0] == "kubeadm certs renew all --config /etc/kubernetes/kubeadm-config.yaml"


async def test_kubespray_etcd_checked_with_its_own_client_certificate(make_hosts: Any, ssh: SshExecutor) -> None:
    """The renewal's etcd check of a Kubespray cluster (kubespray/driver.check_etcd) against a REAL
    etcd with client-certificate authentication and Kubespray's files (/etc/ssl/etcd/ssl: ca.pem,
    member-<node>.pem, admin-<node>.pem, made here with the cryptography library), over real SSH
    with the etcd_member_list / etcd_health scripts: passes with one member per master, fails when
    a member is missing, and kubeadm's etcd PKI paths, absent on such a host, fail as etcdctl does."""
    require("etcd", "etcdctl")
    host = make_hosts(1)[0]
    t, node, ssl_dir = host.target(), "masternode-0", "/etc/ssl/etcd/ssl"
    pki = Pki.create()
    member, member_key = pki.leaf(f"etcd-member-{node}", [host.address, "127.0.0.1"])
    admin, admin_key = pki.leaf(f"etcd-admin-{node}", [], server=False)
    for name, text, mode in (("ca.pem", pki.etcd_ca, 0o644), (f"member-{node}.pem", member, 0o644),
                             (f"member-{node}-key.pem", member_key, 0o600), (f"admin-{node}.pem", admin, 0o644),
                             (f"admin-{node}-key.pem", admin_key, 0o600)):
        await ssh.put_file(t, f"{ssl_dir}/{name}", text, mode=mode)
    m = f"{ssl_dir}/member-{node}"
    started = await ssh.run(t, (
        f"mkdir -p /var/lib/etcd; nohup setsid etcd --name etcd1 --data-dir /var/lib/etcd/kubespray "
        f"--listen-peer-urls https://{host.address}:2380 --initial-advertise-peer-urls https://{host.address}:2380 "
        f"--listen-client-urls https://{host.address}:2379,https://127.0.0.1:2379 "
        f"--advertise-client-urls https://{host.address}:2379 --initial-cluster etcd1=https://{host.address}:2380 "
        f"--cert-file {m}.pem --key-file {m}-key.pem --trusted-ca-file {ssl_dir}/ca.pem --client-cert-auth "
        f"--peer-cert-file {m}.pem --peer-key-file {m}-key.pem --peer-trusted-ca-file {ssl_dir}/ca.pem "
        "--peer-client-cert-auth >/var/log/etcd-kubespray.log 2>&1 </dev/null & echo $! >/run/etcd-kubespray.pid"))
    assert started.ok, started.stderr
    try:
        await _check_kubespray_etcd(ssh, host, node)
    finally:
        await ssh.run(t, "kill $(cat /run/etcd-kubespray.pid)")


async def _check_kubespray_etcd(ssh: SshExecutor, host: Any, node: str) -> None:
    t = host.target()
    steps = SshStepExecutor(ssh, {host.address: t})
    master = Node(Vnfc(id="vnfc-m0", vdu_id="masterNode", server_id="srv-0"), "master", node, host.address,
                  host.address)
    # check_members runs steps and records what it saw in the driver state
    cluster = cast(Cluster, SimpleNamespace(ex=steps, ctx=SimpleNamespace(state={})))
    await check_etcd(cluster, master, [master])  # its readiness: EtcdHealth waits up to 30 s
    other = Node(Vnfc(id="vnfc-m1", vdu_id="masterNode", server_id="srv-1"), "master", "masternode-1",
                 host.address, host.address)
    with pytest.raises(OperationFailed, match="etcd members are"):
        await check_etcd(cluster, master, [master, other])
    with pytest.raises(StepFailed):  # kubeadm's stacked-etcd client certificate: not on a Kubespray host
        await etcd.check_members(cluster, master, [master])
