"""The Kubernetes version rules (domain/k8s_versions.py)."""

from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.k8s_versions import K8sVersion, check_upgrade, skew_problem


def test_parse_and_order() -> None:
    assert K8sVersion.parse("v1.31.2") == K8sVersion(1, 31, 2) and str(K8sVersion.parse("1.9.10")) == "1.9.10"
    assert K8sVersion.parse("1.30.10") > K8sVersion.parse("1.30.9")
    for bad in ("1.30", "2.0.0", "1.30.4-rc.1", "", "1.30.4 "):
        with pytest.raises(ValueError):
            K8sVersion.parse(bad)


@pytest.mark.parametrize(("api", "kubelet", "ok"), [
    ("1.31.0", "1.31.0", True), ("1.31.0", "1.28.9", True), ("1.31.0", "1.27.9", False),
    ("1.31.0", "1.31.1", False), ("1.31.0", "1.32.0", False),
])
def test_skew_policy(api: str, kubelet: str, ok: bool) -> None:
    assert (skew_problem(api, kubelet) is None) is ok


def test_one_minor_at_a_time() -> None:
    check_upgrade("p", "1.30.4", "1.31.0")
    check_upgrade("p", "1.30.4", "1.30.9")
    for target, text in (("1.32.0", "1.30.4; 1.32.0 is 2 minor versions up"), ("1.30.4", "not newer"),
                         ("1.29.9", "not newer")):
        with pytest.raises(UnprocessableEntity) as e:
            check_upgrade("p", "1.30.4", target)
        assert e.value.detail.startswith("p: ") and text in e.value.detail
