"""A control plane's certificates over SSH: expiry read with openssl, renewal with kubeadm."""

from __future__ import annotations

from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.certs import KUBESPRAY, CertExpiry, CertRenew, _CertStep

KUBESPRAY_KUBEADM_CONFIG = "/etc/kubernetes/kubeadm-config.yaml"


def _listing(step: _CertStep) -> str:
    return "\n".join(f"{f.name} {f.kind} {'optional' if f.optional else 'required'} {f.path}" for f in step.files)


async def _read(ex: ScriptRunner, t: SshTarget, step: _CertStep) -> dict[str, object]:
    out = await ex.script(t, step, "cert_expiry", {"CERTS": _listing(step)})
    not_after: dict[str, int] = {}
    for f in step.files:
        value = out.get(f"cert.{f.name}")
        if value is not None and value.isdigit():
            not_after[f.name] = int(value)
        elif f"missing.{f.name}" not in out:
            raise StepFailed(t.host, step, f"no expiry date was read for certificate {f.name} ({f.path})")
    return {"not_after": not_after, "missing": sorted(k[len("missing."):] for k in out if k.startswith("missing."))}


async def expiry(ex: ScriptRunner, t: SshTarget, step: CertExpiry) -> StepResult:
    return StepResult(False, await _read(ex, t, step))


async def renew(ex: ScriptRunner, t: SshTarget, step: CertRenew) -> StepResult:
    config = KUBESPRAY_KUBEADM_CONFIG if step.layout == KUBESPRAY else ""
    apiserver = next(f.path for f in step.files if f.name == "apiserver")
    out = await ex.script(t, step, "cert_renew", {"DEADLINE_S": f"{step.deadline_s:g}", "KUBEADM_CONFIG": config,
                                                  "APISERVER_CERT": apiserver}, timeout=step.deadline_s + 120)
    return StepResult(changed(out), await _read(ex, t, step))


HANDLERS: dict[type, Handler] = {
    CertExpiry: expiry,
    CertRenew: renew,
}
