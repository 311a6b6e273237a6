"""The private-registry VNF's SSH handlers: what travels as plain inputs and what as secrets, the
image copied over SFTP only when it is not loaded yet, and the steps' own checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from vnfm.adapters.nodes.ssh import registry_vnf as H
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import NodeStep
from vnfm.nodesteps.registry_vnf import DockerLoadImage, InstallDocker, RunRegistryContainer

T = SshTarget("192.0.2.10", username="root", password="pw-not-used-here")
SHA = "a" * 64
CERT = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
KEY = "-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----"


class Runner:
    def __init__(self, outputs: dict[str, list[dict[str, str]]]) -> None:
        self.outputs = outputs
        self.calls: list[tuple[str, dict[str, str], dict[str, str]]] = []
        self.uploads: list[tuple[str, str]] = []

    async def script(self, target: SshTarget, step: NodeStep, name: str, inputs: Mapping[str, str],
                     secrets: Mapping[str, str] | None = None, timeout: float | None = None) -> dict[str, str]:
        self.calls.append((name, dict(inputs), dict(secrets or {})))
        return self.outputs[name].pop(0)

    async def upload(self, target: SshTarget, step: NodeStep, local_path: str, remote_path: str,
                     timeout: float | None = None) -> None:
        self.uploads.append((local_path, remote_path))


async def test_the_image_is_copied_and_loaded_only_when_it_is_not_loaded_yet() -> None:
    step = DockerLoadImage("/pkg/Files/images/private_registry.tar", SHA, "Files/images/private_registry.tar")
    r = Runner({"docker_image": [{"loaded": "false", "changed": "false"}, {"image": "registry:latest",
                                                                         "changed": "true"}]})
    res = await H.load_image(r, T, step)
    assert res.changed and r.uploads == [(step.source, step.staged)]
    assert [c[1]["MODE"] for c in r.calls] == ["check", "load"]
    r = Runner({"docker_image": [{"loaded": "true", "changed": "false"}]})
    res = await H.load_image(r, T, step)
    assert not res.changed and r.uploads == [] and len(r.calls) == 1


async def test_the_tls_key_and_proxy_urls_travel_as_secrets_only() -> None:
    r = Runner({"registry_run": [{"repositories": "demo/tiny,other", "changed": "true"}],
                "docker_install": [{"installed": "true", "changed": "true"}]})
    res = await H.run_registry(r, T, RunRegistryContainer("10.0.0.5", port=5443, tls_cert_pem=CERT, tls_key_pem=KEY))
    assert res.data == {"url": "https://10.0.0.5:5443", "repositories": ["demo/tiny", "other"]}
    proxy = "http://user:proxy-pw@proxy.example:3128"
    await H.install_docker(r, T, InstallDocker(http_proxy=proxy, https_proxy=proxy))
    for _, inputs, secrets in r.calls:
        assert "secret-key-material" not in str(inputs) and "proxy-pw" not in str(inputs)
        assert secrets
    assert r.calls[0][2] == {"TLS_KEY": KEY} and r.calls[1][2]["HTTP_PROXY_URL"] == proxy
    assert "secret-key-material" not in repr(RunRegistryContainer("10.0.0.5", tls_cert_pem=CERT, tls_key_pem=KEY))
    assert "proxy-pw" not in repr(InstallDocker(http_proxy=proxy))


@pytest.mark.parametrize(("make", "message"), [
    (lambda: RunRegistryContainer("10.0.0.5", port=0), "port"),
    (lambda: RunRegistryContainer("not-an-ip"), "IP"),
    (lambda: RunRegistryContainer("10.0.0.5", tls_cert_pem=CERT), "go together"),
    (lambda: RunRegistryContainer("10.0.0.5", image="Bad Image"), "image reference"),
    (lambda: DockerLoadImage("relative.tar", SHA, "x"), "absolute"),
    (lambda: DockerLoadImage("/a.tar", "xyz", "x"), "sha256"),
    (lambda: InstallDocker(http_proxy="ftp://proxy"), "http_proxy"),
])
def test_steps_refuse_bad_values(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()
