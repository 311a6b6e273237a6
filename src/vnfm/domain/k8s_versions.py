"""Kubernetes version rules, in one place: parsing, the version skew policy between a node's
kubelet and the API server, and how far one upgrade may go.

- Skew (kubernetes.io/releases/version-skew-policy): a kubelet is never newer than the API
  server, and at most three minor versions older.
- Upgrades (kubeadm: "skipping MINOR versions when upgrading is unsupported"): one minor version
  at a time, never down; a patch upgrade within the minor is allowed. A larger jump is refused
  when the request arrives, naming both versions (upgrade step by step).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vnfm.domain.errors import UnprocessableEntity

_VERSION = re.compile(r"^v?(1)\.([0-9]{1,2})\.([0-9]{1,3})$")
MAX_KUBELET_MINORS_OLDER = 3


@dataclass(frozen=True, order=True)
class K8sVersion:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> K8sVersion:
        m = _VERSION.match(str(text))
        if m is None:
            raise ValueError(f"{text!r} is not a Kubernetes version like 1.30.4")
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def minors_after(self, other: K8sVersion) -> int:
        """How many minor versions `self` is ahead of `other` (negative: behind)."""
        return self.minor - other.minor


def skew_problem(api_server: str, kubelet: str) -> str | None:
    """Why a kubelet at `kubelet` may not run against an API server at `api_server` (None: it may)."""
    api, node = K8sVersion.parse(api_server), K8sVersion.parse(kubelet)
    if node > api:
        return f"a kubelet {node} would be newer than the cluster's API server {api}"
    if api.minors_after(node) > MAX_KUBELET_MINORS_OLDER:
        return (f"a kubelet {node} would be {api.minors_after(node)} minor versions older than the cluster's API "
                f"server {api} (at most {MAX_KUBELET_MINORS_OLDER})")
    return None


def check_node_version(path: str, api_server: str, kubelet: str) -> None:
    """422 naming `path` when a node at `kubelet` may not join or stay in a cluster at `api_server`."""
    why = skew_problem(api_server, kubelet)
    if why is not None:
        raise UnprocessableEntity(f"{path}: {why} (Kubernetes version skew policy)")


def check_upgrade(path: str, current: str, target: str) -> None:
    """422 naming `path` and both versions unless `current` -> `target` is one upgrade: newer, and
    at most one minor version up."""
    cur, new = K8sVersion.parse(current), K8sVersion.parse(target)
    if new <= cur:
        raise UnprocessableEntity(f"{path}: {new} is not newer than the cluster's Kubernetes {cur}")
    if new.minors_after(cur) > 1:
        raise UnprocessableEntity(f"{path}: the cluster runs Kubernetes {cur}; {new} is {new.minors_after(cur)} "
                                  f"minor versions up and an upgrade goes one minor version at a time (to "
                                  f"1.{cur.minor + 1}.x first)")


def is_upgrade(current: str, target: str) -> bool:
    return K8sVersion.parse(target) > K8sVersion.parse(current)
