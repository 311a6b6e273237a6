"""Docker registry steps: a registry over HTTP and over HTTPS with a private CA, push and pull
with skopeo, and the node-side registry configuration (containerd hosts.toml, CA files,
/etc/hosts entry) checked by pulling on the node by name without any TLS flag."""

from __future__ import annotations

import datetime
import gzip
import hashlib
import io
import ipaddress
import json
import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.integration.conftest import require
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor
from vnfm.nodesteps import RegistryClientConfig, RegistryServe

pytestmark = pytest.mark.integration
REG_NAME = "registry.vnfm.test"


# ============================================================================= fixtures' helpers
def build_oci_image(root: Path, tag: str = "1.0") -> str:
    """A one-layer OCI image layout (no container engine needed). Returns 'oci:DIR:TAG'."""
    blobs = root / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def blob(data: bytes) -> tuple[str, int]:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        return f"sha256:{digest}", len(data)

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        content = b"hello from a tiny test image\n"
        info = tarfile.TarInfo("hello.txt")
        info.size, info.mode, info.mtime = len(content), 0o644, 0
        tar.addfile(info, io.BytesIO(content))
    layer = raw.getvalue()
    layer_digest, layer_size = blob(gzip.compress(layer, mtime=0))
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Cmd": ["/hello.txt"]},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(layer).hexdigest()}"]},
    }
    cfg_digest, cfg_size = blob(json.dumps(config).encode())
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfg_digest,
                   "size": cfg_size},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest,
                    "size": layer_size}],
    }
    m_digest, m_size = blob(json.dumps(manifest).encode())
    (root / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    (root / "index.json").write_text(json.dumps({
        "schemaVersion": 2,
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": m_digest,
                       "size": m_size, "annotations": {"org.opencontainers.image.ref.name": tag}}],
    }))
    return f"oci:{root}:{tag}"


def make_ca_and_cert(ip: str) -> tuple[str, str, str]:
    """(ca_pem, server_cert_pem, server_key_pem) for REG_NAME and `ip`."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vnfm test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, REG_NAME)]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(REG_NAME),
                                                    x509.IPAddress(ipaddress.ip_address(ip))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return ca.public_bytes(pem).decode(), cert.public_bytes(pem).decode(), key_pem.decode()


def skopeo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["skopeo", "--insecure-policy", *args], capture_output=True, text=True, timeout=60)


# ============================================================================= test
async def test_registry_push_pull_and_node_config(make_hosts, ssh: SshExecutor, tmp_path: Path) -> None:
    require("docker-registry", "skopeo")
    reg, node = make_hosts(2)
    steps = SshStepExecutor(ssh, {reg.address: reg.target(), node.address: node.target()})
    image = build_oci_image(tmp_path / "img")
    ca_pem, cert_pem, key_pem = make_ca_and_cert(reg.address)

    http = RegistryServe(port=5000, storage_dir="/var/lib/registry-http", config_dir="/etc/docker/registry-http",
                         pidfile="/run/registry-http.pid")
    https = RegistryServe(port=5443, storage_dir="/var/lib/registry-https",
                          config_dir="/etc/docker/registry-https", pidfile="/run/registry-https.pid",
                          tls_cert_pem=cert_pem, tls_key_pem=key_pem)
    assert key_pem not in repr(https)
    assert (await steps.run(reg.address, http)).changed
    assert (await steps.run(reg.address, https)).changed
    assert not (await steps.run(reg.address, https)).changed
    mode = await ssh.run(reg.target(), ["stat", "-c", "%a", "/etc/docker/registry-https/tls.key"], check=True)
    assert mode.stdout.strip() == "600"

    # HTTP push / pull
    r = skopeo("copy", "--dest-tls-verify=false", image, f"docker://{reg.address}:5000/demo/tiny:1.0")
    assert r.returncode == 0, r.stderr
    r = skopeo("copy", "--src-tls-verify=false", f"docker://{reg.address}:5000/demo/tiny:1.0",
               f"oci:{tmp_path / 'pulled-http'}:1.0")
    assert r.returncode == 0, r.stderr

    # HTTPS with the private CA; without the CA it is refused
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "ca.crt").write_text(ca_pem)
    r = skopeo("copy", "--dest-cert-dir", str(certs), image, f"docker://{reg.address}:5443/demo/tiny:1.0")
    assert r.returncode == 0, r.stderr
    r = skopeo("copy", "--src-cert-dir", str(certs), f"docker://{reg.address}:5443/demo/tiny:1.0",
               f"oci:{tmp_path / 'pulled-https'}:1.0")
    assert r.returncode == 0, r.stderr
    pulled = json.loads((tmp_path / "pulled-https" / "index.json").read_text())
    assert pulled["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] == "1.0"
    r = skopeo("inspect", "--cert-dir", str(tmp_path / "img"), f"docker://{reg.address}:5443/demo/tiny:1.0")
    assert r.returncode != 0 and "certificate" in r.stderr

    # node side: before the configuration the node can neither resolve nor trust the registry
    by_name_tls = f"docker://{REG_NAME}:5443/demo/tiny:1.0"
    by_name_http = f"docker://{REG_NAME}:5000/demo/tiny:1.0"
    before = await ssh.run(node.target(), ["skopeo", "--insecure-policy", "inspect", by_name_tls], timeout=60)
    assert not before.ok

    tls_cfg = RegistryClientConfig(f"{REG_NAME}:5443", ca_pem=ca_pem, hosts_entry=(reg.address, REG_NAME))
    assert (await steps.run(node.address, tls_cfg)).changed
    assert not (await steps.run(node.address, tls_cfg)).changed
    after = await ssh.run(node.target(), ["skopeo", "--insecure-policy", "inspect", by_name_tls], timeout=60)
    assert after.ok, after.stderr
    assert json.loads(after.stdout)["Name"] == f"{REG_NAME}:5443/demo/tiny"

    hosts_toml = tomllib.loads(
        (await ssh.get_file(node.target(), f"/etc/containerd/certs.d/{REG_NAME}:5443/hosts.toml")).decode()
    )
    assert hosts_toml["server"] == f"https://{REG_NAME}:5443"
    host_entry = hosts_toml["host"][f"https://{REG_NAME}:5443"]
    assert host_entry["ca"] == f"/etc/containerd/certs.d/{REG_NAME}:5443/ca.crt"
    assert "pull" in host_entry["capabilities"]
    assert (await ssh.get_file(node.target(), host_entry["ca"])).decode().strip() == ca_pem.strip()
    etc_hosts = (await ssh.get_file(node.target(), "/etc/hosts")).decode()
    assert f"{reg.address} {REG_NAME}" in etc_hosts.splitlines()
    assert f"127.0.1.1 {node.name}" in etc_hosts.splitlines()  # the rest of the file is kept

    # plain HTTP registry: insecure registry drop-in for containers tools, http:// in hosts.toml
    http_cfg = RegistryClientConfig(f"{REG_NAME}:5000", plain_http=True, hosts_entry=(reg.address, REG_NAME))
    assert (await steps.run(node.address, http_cfg)).changed
    plain = await ssh.run(node.target(), ["skopeo", "--insecure-policy", "inspect", by_name_http], timeout=60)
    assert plain.ok, plain.stderr
    toml_http = tomllib.loads(
        (await ssh.get_file(node.target(), f"/etc/containerd/certs.d/{REG_NAME}:5000/hosts.toml")).decode()
    )
    assert toml_http["server"] == f"http://{REG_NAME}:5000"
    lines = (await ssh.get_file(node.target(), "/etc/hosts")).decode().splitlines()
    assert lines.count(f"{reg.address} {REG_NAME}") == 1
