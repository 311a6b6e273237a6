"""The additionalParams keys the Kubernetes infrastructure driver (CNFs) reads."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from vnfm.domain.params import Declared, Doc, PackagePath, Params, doc

Namespace = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"), Doc("namespace name")]


class KubernetesParams(Params):
    def_files: list[PackagePath] | None = doc("the CNF's manifests in the package, applied in kind order "
                                              "(required on a Kubernetes VIM)", "002",
                                              alias="lcm-kubernetes-def-files")
    namespace: Namespace | None = doc("namespace of the CNF's objects that name none", shown="default")


DECLARED = Declared("Kubernetes infrastructure driver", KubernetesParams)
