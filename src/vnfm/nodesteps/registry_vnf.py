"""The Docker private-registry VNF (seed 003, first half): Docker installed on the VM, the registry
image loaded from a package file (or pulled), the registry container run with its data on the VM's
disk or on a mounted volume, answering on `GET http(s)://<address>:<port>/v2/`.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import ClassVar
from urllib.parse import urlsplit

from vnfm.domain.params import check_no_proxy as domain_no_proxy
from vnfm.domain.params import check_proxy_url
from vnfm.nodesteps.base import NodeStep, _check_path, _check_port

# a Docker image reference: [registry[:port]/]path[:tag] (no digest form: images are loaded by tag)
_COMPONENT = r"[a-z0-9]+([._-][a-z0-9]+)*"
_IMAGE_REF = re.compile(rf"^{_COMPONENT}(:[0-9]{{1,5}})?(/{_COMPONENT})*(:[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?$")
_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]{0,63}$")
_CONTAINER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_NO_PROXY = re.compile(r"^[A-Za-z0-9.,:/*\[\]_-]*$")


def check_image_ref(value: str) -> None:
    if not _IMAGE_REF.match(value) or len(value) > 255:
        raise ValueError(f"image {value!r} is not a Docker image reference (e.g. registry:latest)")


def check_proxy(what: str, value: str | None) -> None:
    """A proxy URL fit for the files it lands in (systemd drop-in, apt.conf, environment); the
    message never echoes it (credentials)."""
    if value is None:
        return
    try:
        check_proxy_url(value)
    except ValueError:
        raise ValueError(f"{what} must be an http:// or https:// URL") from None


def check_no_proxy(value: str) -> None:
    if not _NO_PROXY.match(value):
        raise ValueError(f"no_proxy {value!r} holds characters other than hosts, CIDRs and commas")
    try:
        domain_no_proxy(value)
    except ValueError as e:
        raise ValueError(f"no_proxy: {e}") from None


@dataclass(frozen=True)
class InstallDocker(NodeStep):
    """Docker running on the host: nothing to do when `docker info` answers; a Docker that is
    installed but stopped is started; otherwise docker-ce is installed from Docker's apt repository
    (Ubuntu only) with the proxy settings for apt and for the daemon's pulls. Proxy URLs may carry
    credentials: they reach the host as secrets."""

    kind: ClassVar[str] = "docker-install"
    http_proxy: str | None = field(default=None, repr=False)
    https_proxy: str | None = field(default=None, repr=False)
    no_proxy: str = ""
    apt_repository: str = "https://download.docker.com/linux/ubuntu"
    packages: tuple[str, ...] = ("docker-ce", "docker-ce-cli", "containerd.io")
    deadline_s: float = 120.0  # for the daemon to answer once started

    def __post_init__(self) -> None:
        object.__setattr__(self, "packages", tuple(self.packages))
        check_proxy("http_proxy", self.http_proxy)
        check_proxy("https_proxy", self.https_proxy)
        check_no_proxy(self.no_proxy)
        parts = urlsplit(self.apt_repository)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.username or \
                not re.match(r"^[A-Za-z0-9:/._-]+$", self.apt_repository):
            raise ValueError(f"apt repository {self.apt_repository!r} is not a plain http(s) URL")
        if not self.packages or not all(_PACKAGE.match(p) for p in self.packages):
            raise ValueError("packages must be Debian package names")
        if not 0 < self.deadline_s <= 3600:
            raise ValueError("deadline_s must be within (0, 3600]")


@dataclass(frozen=True)
class DockerLoadImage(NodeStep):
    """The image archive `source` (a file on the VNFM's side: the package's `image_path`, made by
    `docker save` or an OCI archive) copied to the host over SFTP and `docker load`ed, then tagged
    `tag`. Nothing is copied when the archive with this `sha256` was loaded before and `tag`
    exists. `name` (the package path) is what messages show."""

    kind: ClassVar[str] = "docker-load-image"
    source: str
    sha256: str
    name: str
    tag: str = "registry:latest"
    upload_dir: str = ".vnfm-upload"  # relative to the login's home directory

    def __post_init__(self) -> None:
        if not self.source.startswith("/"):
            raise ValueError(f"source {self.source!r} must be an absolute path")
        if not _SHA256.match(self.sha256):
            raise ValueError("sha256 must be 64 lowercase hex digits")
        check_image_ref(self.tag)
        if not re.match(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$", self.upload_dir) or ".." in self.upload_dir:
            raise ValueError(f"upload dir {self.upload_dir!r} must be a plain relative path")

    @property
    def staged(self) -> str:
        return f"{self.upload_dir}/image-{self.sha256[:16]}.tar"

    def describe(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class DockerPullImage(NodeStep):
    """`docker pull image` (Docker Hub, or a mirror the daemon is configured with): when the
    request gives no image file."""

    kind: ClassVar[str] = "docker-pull-image"
    image: str = "registry:latest"
    deadline_s: float = 600.0

    def __post_init__(self) -> None:
        check_image_ref(self.image)

    def describe(self) -> str:
        return f"{self.kind} {self.image}"


@dataclass(frozen=True)
class RunRegistryContainer(NodeStep):
    """The registry container `name` from `image`, publishing `port` (the registry listens on 5000
    inside), its data under `data_dir` (`/var/lib/registry` inside), restarting always; HTTPS with
    the certificate and key (installed under `cert_dir`, the key 0600) when given. It is replaced
    only when something changed (image, port, data dir, TLS files). The step returns once
    `GET <scheme>://<address>:<port>/v2/` answers (within `deadline_s`), with the repositories the
    registry holds (its catalog)."""

    kind: ClassVar[str] = "docker-registry-run"
    address: str
    image: str = "registry:latest"
    port: int = 5000
    data_dir: str = "/var/lib/vnfm-private-registry"
    name: str = "private_registry"
    tls_cert_pem: str | None = None
    tls_key_pem: str | None = field(default=None, repr=False)
    cert_dir: str = "/etc/vnfm/private-registry"
    restart: str = "always"
    deadline_s: float = 60.0

    def __post_init__(self) -> None:
        ipaddress.ip_address(self.address)
        check_image_ref(self.image)
        _check_port("registry port", self.port)
        _check_path("data dir", self.data_dir)
        _check_path("cert dir", self.cert_dir)
        if not _CONTAINER.match(self.name):
            raise ValueError(f"container name {self.name!r} must be 1-63 of [A-Za-z0-9_.-]")
        if self.restart not in ("always", "unless-stopped", "on-failure", "no"):
            raise ValueError(f"restart policy {self.restart!r} is not a Docker restart policy")
        if (self.tls_cert_pem is None) != (self.tls_key_pem is None):
            raise ValueError("tls_cert_pem and tls_key_pem go together")
        if self.tls_cert_pem is not None and "BEGIN CERTIFICATE" not in self.tls_cert_pem:
            raise ValueError("tls_cert_pem is not a PEM certificate")
        if self.tls_key_pem is not None and "PRIVATE KEY" not in self.tls_key_pem:
            raise ValueError("tls_key_pem is not a PEM private key")
        if not 0 < self.deadline_s <= 3600:
            raise ValueError("deadline_s must be within (0, 3600]")

    @property
    def tls(self) -> bool:
        return self.tls_cert_pem is not None

    @property
    def url(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def describe(self) -> str:
        return f"{self.kind} {self.name} on :{self.port}"
