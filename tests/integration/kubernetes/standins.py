"""RECORDING STAND-INS for kubeadm, kubelet, systemctl, apt and friends, installed on PATH
(/usr/local/sbin) inside integration test hosts. They are NOT Kubernetes: kubeadm, kubelet and the
API server cannot run on these machines. Every stand-in appends its argv (shell-quoted) to
/var/log/vnfm-standin/argv.log, so tests can assert which commands the driver's node scripts ran,
in which order, and that no secret was ever on a command line.

kubectl is the REAL one (kubeapi.py), and the API it talks to is the simulator's Kubernetes API
(kubeapi.SimApi, on the test bridge): the stand-in `kubeadm init` / `join --control-plane` leave
that API's admin kubeconfig in /etc/kubernetes/admin.conf, and `init` / `join` register the node
with it as its kubelet would (a Node object, Ready at once). Bootstrap tokens and certificate keys
are kept as sha256 in the REAL etcd cluster the stand-in `kubeadm init` / `join --control-plane`
start on the masters with TLS (kubeadm's etcd PKI paths), so etcd membership, the driver's etcd
steps and its HAProxy and /etc/hosts steps are real. systemd units are marker files. The CNI
manifest kubeadm_init.sh applies from raw.githubusercontent.com is served by `calico_mirror` on the
init host (a small calico-node DaemonSet, over HTTPS with a test CA the host trusts).
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.integration.harness import TestHost
from tests.integration.kubernetes.kubeapi import SimApi, install_kubectl
from vnfm.adapters.remote.ssh import SshExecutor

LOG_DIR = "/var/log/vnfm-standin"
ARGV_LOG = f"{LOG_DIR}/argv.log"
EVENTS_LOG = f"{LOG_DIR}/events.log"

COMMON = r"""# sourced by every recording stand-in (NOT the real programs)
LOG=/var/log/vnfm-standin
mkdir -p "$LOG" /var/lib/vnfm-standin/units
record() {
  local line=$1 a
  shift
  for a in "$@"; do line+=" $(printf '%q' "$a")"; done
  printf '%s\n' "$line" >> "$LOG/argv.log"
}
event() { printf '%s\n' "$*" >> "$LOG/events.log"; }
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
register_node() {  # name address control-plane(0|1): what the node's kubelet does with the API
  local labels="\"kubernetes.io/hostname\":\"$1\""
  [ "$3" = 1 ] && labels+=",\"node-role.kubernetes.io/control-plane\":\"\""
  local fmt='{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{%s}},'
  fmt+='"status":{"addresses":[{"type":"InternalIP","address":"%s"}]}}'
  # shellcheck disable=SC2059
  printf "$fmt" "$1" "$labels" "$2" | kubectl --kubeconfig /etc/vnfm-standin/admin.conf apply -f - >/dev/null
}
admin_conf() { install -m 0600 /etc/vnfm-standin/admin.conf /etc/kubernetes/admin.conf; }
PKI=/etc/kubernetes/pki/etcd
ectl() {
  ETCDCTL_API=3 etcdctl --endpoints="$(cat /etc/vnfm-standin/etcd-endpoints)" --cacert=$PKI/ca.crt \
    --cert=$PKI/healthcheck-client.crt --key=$PKI/healthcheck-client.key --dial-timeout=2s \
    --command-timeout=5s "$@"
}
"""

SIMPLE = r"""#!/bin/bash
# recording stand-in for NAME (NOT the real program)
. /usr/local/lib/vnfm-standin/common.sh
record NAME "$@"
"""

CONTAINERD = r"""#!/bin/bash
# recording stand-in for containerd (NOT the real program)
. /usr/local/lib/vnfm-standin/common.sh
record containerd "$@"
if [ "${1:-} ${2:-}" = "config default" ]; then printf '[plugins]\n  SystemdCgroup = false\n'; fi
"""

GPG = r"""#!/bin/bash
# recording stand-in for gpg (NOT the real program)
. /usr/local/lib/vnfm-standin/common.sh
record gpg "$@"
cat >/dev/null
while [ $# -gt 0 ]; do
  if [ "$1" = -o ]; then : > "$2"; shift; fi
  shift
done
"""

SYSTEMCTL = r"""#!/bin/bash
# recording stand-in for systemctl (NOT the real program): units are marker files
. /usr/local/lib/vnfm-standin/common.sh
record systemctl "$@"
U=/var/lib/vnfm-standin/units
case ${1:-} in
  is-active)
    unit=${*: -1}
    [ -f "$U/$unit" ] || exit 3 ;;
  enable)
    if [ "${2:-}" = --now ]; then touch "$U/$3"; fi ;;
  start|restart|reload-or-restart)
    touch "$U/$2" ;;
  stop)
    rm -f "$U/$2" ;;
esac
exit 0
"""

KUBEADM_CHECK = r"""# what the stand-in kubeadm checks of its command line and configuration files, as kubeadm
# (v1.30, config API kubeadm.k8s.io/v1beta3) refuses them: unknown commands and flags, a config
# document of another apiVersion/kind, unknown fields (kubeadm decodes strictly), missing or
# malformed values (addresses, ports, CIDRs, node names, versions, token and hash formats).
# Of kubeadm's preflight checks, only DirAvailable--var-lib-etcd (a non-empty /var/lib/etcd refused
# unless --ignore-preflight-errors names it, as for a restore) is made, by the stand-in itself.
# NOT checked (the real kubeadm would): other preflight checks of the host (swap, ports in use, the
# container runtime answering on criSocket, cgroup driver), the reachability of
# controlPlaneEndpoint and that the CA hash matches what the API server serves (the stand-in
# compares with the local CA), and fields of these kinds the scripts never write.
import ipaddress, re, sys, yaml
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
FIELDS = {
    "InitConfiguration": {"apiVersion", "kind", "localAPIEndpoint", "nodeRegistration", "bootstrapTokens",
                          "certificateKey", "skipPhases", "patches"},
    "ClusterConfiguration": {"apiVersion", "kind", "kubernetesVersion", "controlPlaneEndpoint", "networking",
                             "apiServer", "etcd", "controllerManager", "scheduler", "dns", "certificatesDir",
                             "imageRepository", "clusterName", "featureGates"},
    "JoinConfiguration": {"apiVersion", "kind", "discovery", "nodeRegistration", "controlPlane", "caCertPath",
                          "skipPhases", "patches"},
}
def fail(msg):
    print(f"stand-in kubeadm: {msg}", file=sys.stderr)
    sys.exit(1)
def keys(d, allowed, what):
    unknown = set(d) - set(allowed)
    if unknown:
        fail(f"{what}: strict decoding error: unknown field(s) {sorted(unknown)}")
    return d
def ip(v, what):
    try:
        ipaddress.ip_address(str(v))
    except ValueError:
        fail(f"{what}: {v!r} is not a valid IP address")
def endpoint(v, what):
    host, _, port = str(v).rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        fail(f"{what}: {v!r} is not host:port")
def cidr(v, what):
    for part in str(v).split(","):
        try:
            ipaddress.ip_network(part, strict=False)
        except ValueError:
            fail(f"{what}: {part!r} is not a valid CIDR")
def node_registration(nr):
    if set(nr) - {"name", "criSocket", "taints", "kubeletExtraArgs", "ignorePreflightErrors", "imagePullPolicy"}:
        fail(f"nodeRegistration: unknown field(s) {sorted(set(nr) - {'name', 'criSocket'})}")
    if not NAME.match(str(nr.get("name", ""))) or len(str(nr["name"])) > 63:
        fail(f"nodeRegistration.name: {nr.get('name')!r} is not a valid node name")
    if not str(nr.get("criSocket", "unix://")).startswith("unix://"):
        fail(f"nodeRegistration.criSocket: {nr.get('criSocket')!r} is not a unix:// URL")
def api_endpoint(le, what):
    keys(le, ("advertiseAddress", "bindPort"), what)
    ip(le.get("advertiseAddress"), f"{what}.advertiseAddress")
    if not isinstance(le.get("bindPort", 6443), int) or not 0 < le.get("bindPort", 6443) < 65536:
        fail(f"{what}.bindPort: {le.get('bindPort')!r} is not a port")
def config(path, want):
    try:
        docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        fail(f"unable to read config from {path!r}: {e}")
    kinds = {}
    for d in docs:
        if d.get("apiVersion") != "kubeadm.k8s.io/v1beta3":
            fail(f"{path}: apiVersion {d.get('apiVersion')!r} is not kubeadm.k8s.io/v1beta3")
        if d.get("kind") not in want:
            fail(f"{path}: kind {d.get('kind')!r} is not one of {sorted(want)}")
        unknown = set(d) - FIELDS[d["kind"]]
        if unknown:
            fail(f"{path}: strict decoding error: unknown field(s) {sorted(unknown)} in {d['kind']}")
        kinds[d["kind"]] = d
    return kinds
argv = sys.argv[1:]
def shape():
    if argv == ["init", "phase", "upload-certs", "--upload-certs"]:
        return "phase"
    if len(argv) == 6 and argv[:5] in (["init", "phase", "certs", "apiserver", "--config"],
                                       ["init", "phase", "upload-config", "kubeadm", "--config"]):
        return "cluster-phase"
    if len(argv) == 4 and argv[:2] == ["init", "--config"] and argv[3] == "--upload-certs":
        return "init"
    if len(argv) == 5 and argv[:2] == ["init", "--config"] and argv[3:] == [
            "--upload-certs", "--ignore-preflight-errors=DirAvailable--var-lib-etcd"]:
        return "init"  # a restore: etcd's data directory restored from a snapshot
    if len(argv) == 4 and argv[:3] == ["token", "create", "--ttl"]:
        return "token"
    if len(argv) == 3 and argv[:2] == ["join", "--config"]:
        return "join"
    return "reset" if argv == ["reset", "-f"] else None
key = shape()
if key is None:
    fail(f"unknown command or flags: kubeadm {' '.join(argv)}")
if key == "token":
    if not re.fullmatch(r"\d+(h|m|s)", argv[3]):
        fail(f"invalid argument {argv[3]!r} for --ttl: not a duration")
elif key == "init":
    k = config(argv[2], {"InitConfiguration", "ClusterConfiguration"})
    init, cluster = k.get("InitConfiguration") or fail("no InitConfiguration"), k.get("ClusterConfiguration") or {}
    api_endpoint(init.get("localAPIEndpoint") or {}, "localAPIEndpoint")
    node_registration(init.get("nodeRegistration") or {})
    if not re.fullmatch(r"v\d+\.\d+\.\d+", str(cluster.get("kubernetesVersion", ""))):
        fail(f"kubernetesVersion: {cluster.get('kubernetesVersion')!r} is not vX.Y.Z")
    endpoint(cluster.get("controlPlaneEndpoint"), "controlPlaneEndpoint")
    net = keys(cluster.get("networking") or {}, ("podSubnet", "serviceSubnet", "dnsDomain"), "networking")
    cidr(net.get("podSubnet"), "networking.podSubnet")
    cidr(net.get("serviceSubnet"), "networking.serviceSubnet")
    for san in (cluster.get("apiServer") or {}).get("certSANs") or []:
        if not (NAME.match(str(san)) or re.fullmatch(r"[0-9a-fA-F.:]+", str(san))):
            fail(f"apiServer.certSANs: {san!r} is neither an IP address nor a DNS name")
        if re.fullmatch(r"[0-9a-fA-F.:]+", str(san)):
            ip(san, "apiServer.certSANs")
elif key == "cluster-phase":  # a ClusterConfiguration as kubeadm-config holds it, endpoint and SANs changed
    cluster = config(argv[5], {"InitConfiguration", "ClusterConfiguration"}).get("ClusterConfiguration") \
        or fail("no ClusterConfiguration")
    endpoint(cluster.get("controlPlaneEndpoint"), "controlPlaneEndpoint")
    for san in (cluster.get("apiServer") or {}).get("certSANs") or []:
        ip(san, "apiServer.certSANs")
elif key == "join":
    j = config(argv[2], {"JoinConfiguration"}).get("JoinConfiguration") or fail("no JoinConfiguration")
    disc = keys(j.get("discovery") or {}, ("bootstrapToken", "file", "tlsBootstrapToken", "timeout"), "discovery")
    bt = disc.get("bootstrapToken") or fail("discovery.bootstrapToken: Required value")
    keys(bt, ("apiServerEndpoint", "token", "caCertHashes", "unsafeSkipCAVerification"), "discovery.bootstrapToken")
    endpoint(bt.get("apiServerEndpoint"), "discovery.bootstrapToken.apiServerEndpoint")
    if not re.fullmatch(r"[a-z0-9]{6}\.[a-z0-9]{16}", str(bt.get("token", ""))):
        fail("discovery.bootstrapToken.token: the bootstrap token is not of the form [a-z0-9]{6}.[a-z0-9]{16}")
    hashes = bt.get("caCertHashes") or []
    if not hashes or not all(re.fullmatch(r"sha256:[0-9a-f]{64}", str(h)) for h in hashes):
        fail("discovery.bootstrapToken.caCertHashes: want sha256:<64 hex digits>")
    node_registration(j.get("nodeRegistration") or {})
    cp = j.get("controlPlane")
    if cp is not None:
        keys(cp, ("localAPIEndpoint", "certificateKey"), "controlPlane")
        api_endpoint(cp.get("localAPIEndpoint") or {}, "controlPlane.localAPIEndpoint")
        if not re.fullmatch(r"[0-9a-f]{64}", str(cp.get("certificateKey", ""))):
            fail("controlPlane.certificateKey: want 64 hex digits")
"""

KUBEADM = r"""#!/bin/bash
# recording stand-in for kubeadm (NOT the real program). Its command line and configuration files
# are checked first (kubeadm_check.py: what it checks, and what it cannot). init / join
# --control-plane start a REAL etcd member (TLS, kubeadm's PKI paths); tokens and certificate keys
# are checked against sha256 records in etcd; the join configuration (which holds the secrets) is
# never copied.
set -euo pipefail
. /usr/local/lib/vnfm-standin/common.sh
record kubeadm "$@"
/usr/bin/python3 /usr/local/lib/vnfm-standin/kubeadm_check.py "$@"
val() { sed -n "s/^ *$1: *\"\{0,1\}\([^\"]*\)\"\{0,1\} *\$/\1/p" "$2" | head -n 1; }
ca_hash() {
  openssl x509 -pubkey -in /etc/kubernetes/pki/ca.crt | openssl rsa -pubin -outform der 2>/dev/null \
    | openssl dgst -sha256 -hex | sed 's/^.* //'
}
local_health() {
  ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379 --cacert=$PKI/ca.crt \
    --cert=$PKI/healthcheck-client.crt --key=$PKI/healthcheck-client.key --dial-timeout=1s \
    --command-timeout=2s endpoint health >/dev/null 2>&1
}
local_status() {  # a learner answers `endpoint status` (not `endpoint health`: no linearizable reads)
  ETCDCTL_API=3 etcdctl --endpoints=https://127.0.0.1:2379 --cacert=$PKI/ca.crt \
    --cert=$PKI/healthcheck-client.crt --key=$PKI/healthcheck-client.key --dial-timeout=1s \
    --command-timeout=2s endpoint status >/dev/null 2>&1
}
start_etcd() {  # name address state initial-cluster [data-dir] [learner]
  mkdir -p /var/lib/etcd /run/vnfm-standin
  chmod 700 /var/lib/etcd
  nohup setsid etcd --name "$1" --data-dir "${5:-/var/lib/etcd/data}" \
    --listen-peer-urls "https://$2:2380" --initial-advertise-peer-urls "https://$2:2380" \
    --listen-client-urls "https://$2:2379,https://127.0.0.1:2379" --advertise-client-urls "https://$2:2379" \
    --initial-cluster "$4" --initial-cluster-state "$3" --initial-cluster-token vnfm-standin \
    --cert-file $PKI/server.crt --key-file $PKI/server.key --trusted-ca-file $PKI/ca.crt --client-cert-auth \
    --peer-cert-file $PKI/server.crt --peer-key-file $PKI/server.key --peer-trusted-ca-file $PKI/ca.crt \
    --peer-client-cert-auth >"$LOG/etcd.log" 2>&1 </dev/null &
  echo $! > /run/vnfm-standin/etcd.pid
  local end=$((SECONDS + 30))
  local ready=local_health
  if [ "${6:-}" = learner ]; then ready=local_status; fi
  until $ready; do
    kill -0 "$(cat /run/vnfm-standin/etcd.pid)" 2>/dev/null || { tail -n 20 "$LOG/etcd.log" >&2; exit 1; }
    [ $SECONDS -lt $end ] || { echo "stand-in etcd $1 not healthy within 30s" >&2; exit 1; }
    sleep 0.1
  done
}
case "${1:-} ${2:-}" in
  "init --config")
    cfg=$3
    cp "$cfg" "$LOG/kubeadm-init.yaml"
    node=$(val name "$cfg"); addr=$(val advertiseAddress "$cfg")
    if [ -n "$(ls -A /var/lib/etcd 2>/dev/null)" ]; then  # kubeadm's preflight check DirAvailable
      [ "${5:-}" = --ignore-preflight-errors=DirAvailable--var-lib-etcd ] || {
        echo "[preflight] [ERROR DirAvailable--var-lib-etcd]: /var/lib/etcd is not empty" >&2
        exit 1; }
      [ -d /var/lib/etcd/member ] || { echo "stand-in kubeadm: /var/lib/etcd holds no etcd member" >&2; exit 1; }
      start_etcd "$node" "$addr" new "$node=https://$addr:2380" /var/lib/etcd  # etcd on the restored data
      event "init $node on the existing etcd data"
    else
      start_etcd "$node" "$addr" new "$node=https://$addr:2380"
    fi
    mkdir -p /etc/kubernetes/manifests
    : > /etc/kubernetes/manifests/kube-apiserver.yaml
    admin_conf
    register_node "$node" "$addr" 1
    event "init $node" ;;
  "token create")
    tok="$(openssl rand -hex 3).$(openssl rand -hex 8)"
    ectl put "/standin/bootstrap-tokens/$(sha "$tok")" valid >/dev/null
    printf '%s\n' "$tok" ;;
  "init phase")
    case $3 in
      upload-certs)
        key=$(openssl rand -hex 32)
        ectl put "/standin/certificate-keys/$(sha "$key")" valid >/dev/null
        printf '[upload-certs] Using certificate key:\n%s\n' "$key" ;;
      certs)  # as kubeadm: an existing certificate is kept; else a new one with the SANs (self-signed here)
        crt=/etc/kubernetes/pki/apiserver.crt
        if [ -f "$crt" ]; then event "certs apiserver kept"; exit 0; fi
        sans=$(awk '/^  certSANs:/ { f = 1; next } f && /^  - / { sub(/^  - /, ""); gsub(/"/, ""); print; next }
                    { f = 0 }' "$6" | sed 's/^/IP:/' | paste -sd, -)
        cp "$6" "$LOG/kubeadm-certs.yaml"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=kube-apiserver \
          -keyout /etc/kubernetes/pki/apiserver.key -out "$crt" -addext "subjectAltName=$sans" 2>/dev/null
        event "certs apiserver $sans" ;;
      upload-config)
        KUBECONFIG=/etc/kubernetes/admin.conf kubectl -n kube-system create configmap kubeadm-config \
          --from-file=ClusterConfiguration="$6" --dry-run=client -o yaml \
          | KUBECONFIG=/etc/kubernetes/admin.conf kubectl apply -f - >/dev/null
        event "upload-config" ;;
    esac ;;
  "join --config")
    cfg=$3
    event "join-config-mode $(stat -c %a "$cfg") dir-mode $(stat -c %a "$(dirname "$cfg")")"
    tok=$(val token "$cfg"); node=$(val name "$cfg")
    hash=$(sed -n 's/^ *caCertHashes: \["\(.*\)"\]$/\1/p' "$cfg")
    [ "$(ectl get --print-value-only "/standin/bootstrap-tokens/$(sha "$tok")")" = valid ] \
      || { echo "stand-in kubeadm: the bootstrap token was rejected" >&2; exit 1; }
    [ "$hash" = "sha256:$(ca_hash)" ] || { echo "stand-in kubeadm: CA hash mismatch" >&2; exit 1; }
    cp=0
    if grep -q '^controlPlane:' "$cfg"; then
      cp=1
      key=$(val certificateKey "$cfg"); addr=$(val advertiseAddress "$cfg")
      [ "$(ectl get --print-value-only "/standin/certificate-keys/$(sha "$key")")" = valid ] \
        || { echo "stand-in kubeadm: the certificate key was rejected" >&2; exit 1; }
      # kubeadm >= 1.29 (EtcdLearnerMode, on by default): the member joins as a learner and is
      # promoted once it is in sync with the leader (etcd refuses the promotion before)
      end=$((SECONDS + 30))
      until out=$(ectl member add "$node" --learner --peer-urls="https://$addr:2380" 2>&1); do
        [ $SECONDS -lt $end ] || { echo "stand-in kubeadm: etcd member add failed: $out" >&2; exit 1; }
        sleep 0.2
      done
      ic=$(printf '%s\n' "$out" | sed -n 's/^ETCD_INITIAL_CLUSTER="\(.*\)"$/\1/p')
      id=$(printf '%s\n' "$out" | sed -n 's/^Member  *\([0-9a-f]*\) added to cluster.*/\1/p')
      [ -n "$id" ] || { echo "stand-in kubeadm: no member id in: $out" >&2; exit 1; }
      start_etcd "$node" "$addr" existing "$ic" "" learner
      end=$((SECONDS + 60))
      until pout=$(ectl member promote "$id" 2>&1); do
        [ $SECONDS -lt $end ] || { echo "stand-in kubeadm: learner $node not promoted: $pout" >&2; exit 1; }
        sleep 0.2
      done
      until local_health; do
        [ $SECONDS -lt $end ] || { echo "stand-in kubeadm: etcd $node not healthy after promotion" >&2; exit 1; }
        sleep 0.1
      done
      event "etcd learner $node promoted"
      admin_conf
    fi
    mkdir -p /etc/kubernetes
    # the kubelet's kubeconfig (the TLS bootstrap's), naming the API server it joined through
    printf 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://%s\n  name: default-cluster\n' \
      "$(val apiServerEndpoint "$cfg")" > /etc/kubernetes/kubelet.conf
    touch /var/lib/vnfm-standin/units/kubelet  # kubeadm's kubelet-start phase (re)starts the kubelet
    register_node "$node" "$(hostname -I | cut -d' ' -f1)" "$cp"
    event "join $node control-plane=$cp token-sha256=$(sha "$tok")" ;;
  "reset -f")
    # what kubeadm reset removes that a join would trip on (the harness-made PKI is kept), and the
    # kubelet it stops
    rm -f /etc/kubernetes/kubelet.conf /etc/kubernetes/bootstrap-kubelet.conf /etc/kubernetes/admin.conf \
      /var/lib/vnfm-standin/units/kubelet
    rm -rf /etc/kubernetes/manifests
    event "reset" ;;
  *) ;;
esac
"""

KUBELET = r"""#!/bin/bash
# stand-in for kubelet (NOT the real program): the node scripts never run the kubelet themselves
# (systemd does: `systemctl enable --now kubelet`, a marker file here), so any call is refused.
. /usr/local/lib/vnfm-standin/common.sh
record kubelet "$@"
echo "stand-in kubelet: not to be run by node scripts (got: kubelet $*)" >&2
exit 1
"""

CRICTL = r"""#!/bin/bash
# recording stand-in for crictl (NOT the real program): `ps -q --name REGEX` lists one container id
# per static pod whose manifest is in /etc/kubernetes/manifests (the kubelet runs a static pod while
# its manifest is there, and stops it when it goes); any other call is refused.
. /usr/local/lib/vnfm-standin/common.sh
record crictl "$@"
if [ $# -ne 4 ] || [ "$1 $2 $3" != "ps -q --name" ]; then
  echo "stand-in crictl: unsupported call: crictl $*" >&2; exit 1
fi
for m in /etc/kubernetes/manifests/*.yaml; do
  [ -f "$m" ] || continue
  n=$(basename "$m" .yaml)
  if grep -Eq "$4" <<<"$n"; then printf '%s\n' "$(printf '%s' "$n" | sha256sum | cut -c1-13)"; fi
done
"""

RECORD_ONLY = ("apt-get", "apt-mark", "hostnamectl", "swapoff", "modprobe", "sysctl", "curl", "keepalived")
PROGRAMS = (*RECORD_ONLY, "containerd", "gpg", "systemctl", "kubeadm", "kubelet", "crictl")


def standin_scripts() -> dict[str, str]:
    out = {name: SIMPLE.replace("NAME", name) for name in RECORD_ONLY}
    out.update({"containerd": CONTAINERD, "gpg": GPG, "systemctl": SYSTEMCTL, "kubeadm": KUBEADM, "kubelet": KUBELET,
                "crictl": CRICTL})
    return out


# ============================================================================= PKI
def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _pem_cert(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


@dataclass
class Pki:
    """kubeadm's layout: the cluster CA (RSA, as kubeadm makes it: its public key hash is the
    discovery hash) and etcd's CA, per-host server/peer certificates and the healthcheck client."""

    k8s_ca: str
    etcd_ca: str
    etcd_ca_key: ec.EllipticCurvePrivateKey
    client_cert: str
    client_key: str

    @staticmethod
    def create() -> Pki:
        now = datetime.datetime.now(datetime.UTC)
        k8s_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        k8s_ca = (x509.CertificateBuilder().subject_name(_name("kubernetes")).issuer_name(_name("kubernetes"))
                  .public_key(k8s_key.public_key()).serial_number(x509.random_serial_number())
                  .not_valid_before(now - datetime.timedelta(minutes=5))
                  .not_valid_after(now + datetime.timedelta(days=1))
                  .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                  .sign(k8s_key, hashes.SHA256()))
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = (x509.CertificateBuilder().subject_name(_name("etcd-ca")).issuer_name(_name("etcd-ca"))
              .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(minutes=5))
              .not_valid_after(now + datetime.timedelta(days=1))
              .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
              .sign(ca_key, hashes.SHA256()))
        pki = Pki(_pem_cert(k8s_ca), _pem_cert(ca), ca_key, "", "")
        pki.client_cert, pki.client_key = pki.leaf("kube-etcd-healthcheck-client", [], server=False)
        return pki

    def leaf(self, cn: str, addresses: list[str], *, server: bool = True) -> tuple[str, str]:
        now = datetime.datetime.now(datetime.UTC)
        key = ec.generate_private_key(ec.SECP256R1())
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] + ([ExtendedKeyUsageOID.SERVER_AUTH] if server else [])
        b = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name("etcd-ca"))
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.ExtendedKeyUsage(usages), critical=False))
        if addresses:
            b = b.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), *(x509.IPAddress(ipaddress.ip_address(a)) for a in addresses)]),
                critical=False)
        return _pem_cert(b.sign(self.etcd_ca_key, hashes.SHA256())), _pem_key(key)


async def install(ssh: SshExecutor, host: TestHost, pki: Pki, etcd_hosts: list[TestHost], api: SimApi) -> None:
    """Put the stand-ins and the real kubectl on PATH, and the PKI / etcd endpoints a kubeadm-made
    host would have; the admin kubeconfig of the simulated API for the stand-in kubeadm."""
    t = host.target()
    await install_kubectl(ssh, host)
    await ssh.put_file(t, "/etc/vnfm-standin/admin.conf", api.kubeconfig(), mode=0o600)
    await ssh.put_file(t, "/usr/local/lib/vnfm-standin/common.sh", COMMON, mode=0o644)
    await ssh.put_file(t, "/usr/local/lib/vnfm-standin/kubeadm_check.py", KUBEADM_CHECK, mode=0o644)
    for name, text in standin_scripts().items():
        await ssh.put_file(t, f"/usr/local/sbin/{name}", text, mode=0o755)
    endpoints = ",".join(f"https://{h.address}:2379" for h in etcd_hosts)
    await ssh.put_file(t, "/etc/vnfm-standin/etcd-endpoints", endpoints + "\n", mode=0o644)
    cert, key = pki.leaf(host.name, [host.address, "127.0.0.1"])
    files = {
        "/etc/kubernetes/pki/ca.crt": (pki.k8s_ca, 0o644),
        "/etc/kubernetes/pki/etcd/ca.crt": (pki.etcd_ca, 0o644),
        "/etc/kubernetes/pki/etcd/server.crt": (cert, 0o644),
        "/etc/kubernetes/pki/etcd/server.key": (key, 0o600),
        "/etc/kubernetes/pki/etcd/healthcheck-client.crt": (pki.client_cert, 0o644),
        "/etc/kubernetes/pki/etcd/healthcheck-client.key": (pki.client_key, 0o600),
    }
    for path, (text, mode) in files.items():
        await ssh.put_file(t, path, text, mode=mode)
    res = await ssh.run(t, "for p in " + " ".join(PROGRAMS) + "; do command -v $p; done", check=True)
    resolved = res.stdout.split()
    assert resolved == [f"/usr/local/sbin/{p}" for p in PROGRAMS], f"stand-ins are not first on PATH: {resolved}"


async def argv_log(ssh: SshExecutor, host: TestHost) -> list[str]:
    res = await ssh.run(host.target(), f"cat {ARGV_LOG} 2>/dev/null || true", check=True)
    return res.stdout.splitlines()


async def events(ssh: SshExecutor, host: TestHost) -> list[str]:
    res = await ssh.run(host.target(), f"cat {EVENTS_LOG} 2>/dev/null || true", check=True)
    return res.stdout.splitlines()


async def files_containing(ssh: SshExecutor, host: TestHost, secret: str, *dirs: str) -> list[str]:
    """Files under `dirs` on the host that contain `secret` (the pattern travels on stdin)."""
    res = await ssh.run(host.target(), ["sh", "-c", 'grep -rlF -f - "$@" 2>/dev/null || true', "grep", *dirs],
                        stdin=secret + "\n", check=True)
    return res.stdout.split()


CALICO = """# what the stand-in mirror serves for calico.yaml (NOT Calico): the DaemonSet kubeadm_init.sh edits
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: calico-node
  namespace: kube-system
spec:
  selector:
    matchLabels: {k8s-app: calico-node}
  template:
    metadata:
      labels: {k8s-app: calico-node}
    spec:
      tolerations: [{operator: Exists}]
      containers:
      - name: calico-node
        image: docker.io/calico/node:v3.28.1
        env: [{name: CALICO_IPV4POOL_CIDR, value: 192.168.0.0/16}]
"""
MIRROR = r"""import http.server, ssl, sys
# stand-in for raw.githubusercontent.com on this host (NOT GitHub): serves the CNI manifest only
BODY = open(sys.argv[1], "rb").read()
PATH = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == PATH
        self.send_response(200 if ok else 404)
        self.send_header("Content-Length", str(len(BODY) if ok else 0))
        self.end_headers()
        if ok:
            self.wfile.write(BODY)
httpd = http.server.HTTPServer(("127.0.0.1", 443), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("/etc/vnfm-standin/mirror.crt", "/etc/vnfm-standin/mirror.key")
httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
httpd.serve_forever()
"""


async def calico_mirror(ssh: SshExecutor, host: TestHost, version: str = "v3.28.1") -> None:
    """raw.githubusercontent.com answers on the host itself (an /etc/hosts line, a certificate of a
    test CA appended to the host's trust store) with `CALICO` at the path kubeadm_init.sh fetches."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("vnfm-test-mirror-ca")).issuer_name(_name("vnfm-test-mirror-ca"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name("raw.githubusercontent.com")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("raw.githubusercontent.com")]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    t = host.target()
    await ssh.put_file(t, "/etc/vnfm-standin/mirror.crt", _pem_cert(cert), mode=0o644)
    await ssh.put_file(t, "/etc/vnfm-standin/mirror.key", _pem_key(key), mode=0o600)
    await ssh.put_file(t, "/etc/vnfm-standin/calico.yaml", CALICO, mode=0o644)
    await ssh.put_file(t, "/etc/vnfm-standin/mirror.py", MIRROR, mode=0o644)
    await ssh.put_file(t, "/etc/vnfm-standin/mirror-ca.crt", _pem_cert(ca), mode=0o644)
    path = f"/projectcalico/calico/{version}/manifests/calico.yaml"
    await ssh.run(t, "cat /etc/vnfm-standin/mirror-ca.crt >> /etc/ssl/certs/ca-certificates.crt && "
                     "echo '127.0.0.1 raw.githubusercontent.com' >> /etc/hosts || exit 1\n"
                     f"nohup setsid /usr/bin/python3 /etc/vnfm-standin/mirror.py /etc/vnfm-standin/calico.yaml {path} "
                     ">/var/log/vnfm-mirror.log 2>&1 </dev/null & for i in $(seq 500); do "
                     "(exec 3<>/dev/tcp/127.0.0.1/443) 2>/dev/null && exit 0; sleep 0.01; done; exit 1", check=True)
