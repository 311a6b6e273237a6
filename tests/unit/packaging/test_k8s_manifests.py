"""A CNF's manifests, checked before anything is applied: every refusal names file and object."""

from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity
from vnfm.packaging.k8s_manifests import def_files, load


class Files:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read(self, path: str) -> bytes:
        return self.files[path].encode()

    def exists(self, path: str) -> bool:
        return path in self.files


DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}
"""
SVC = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80, nodePort: %s}]}\n"
NS = "apiVersion: v1\nkind: Namespace\nmetadata: {name: cnf}\n"


def refused(files: dict[str, str], paths: list[str] | None = None) -> str:
    with pytest.raises(UnprocessableEntity) as e:
        load(Files(files), paths or list(files))
    return str(e.value)


def test_objects_come_in_apply_order_with_their_namespace() -> None:
    ms = load(Files({"a.yaml": DEPLOY + "---\n" + SVC % 30001, "b.yaml": NS}), ["a.yaml", "b.yaml"])
    assert [(m.kind, m.namespace, m.name) for m in ms] == [
        ("Namespace", None, "cnf"), ("Service", "default", "web"), ("Deployment", "default", "web")]


def test_refusals_name_the_file_and_the_object() -> None:
    assert "a.yaml: Service 'web' (document 1): spec.ports[0].nodePort must be in 30000-32767" in refused(
        {"a.yaml": SVC % 80})
    assert "a.yaml: Deployment 'web' (document 1): apiVersion must be apps/v1" in refused(
        {"a.yaml": DEPLOY.replace("apps/v1", "extensions/v1beta1")})
    assert "b.yaml: Deployment 'default/web': defined twice (also in a.yaml)" in refused(
        {"a.yaml": DEPLOY, "b.yaml": DEPLOY})
    assert "does not match" in refused({"a.yaml": DEPLOY.replace("{app: web}}, spec", "{app: x}}, spec")})
    assert "metadata.name" in refused({"a.yaml": DEPLOY.replace("name: web}", "name: Web_1}")})
    assert "x.yaml is not a file of the package" in refused({}, ["x.yaml"])


def test_def_files_must_be_a_list_of_paths() -> None:
    assert def_files({}) == []
    assert def_files({"lcm-kubernetes-def-files": ["a.yaml"]}) == ["a.yaml"]
    with pytest.raises(UnprocessableEntity):
        def_files({"lcm-kubernetes-def-files": "a.yaml"})
