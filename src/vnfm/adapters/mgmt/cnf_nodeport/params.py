"""`additionalParams.lcm-kubernetes-external-lb` as seed 002 writes it (snake_case, or the camelCase
Tacker reports back): `external_lb_param.ssh_ip` / `ssh_username` / `ssh_password` (or
`ssh_private_key`). `script_path` names the reference's shell script: it must be a file of the
package (as the reference requires), but nothing of the package is run."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from vnfm.domain.params import Declared, IpAddress, Login, PackagePath, Params, PrivateKey, Secret, doc

KEY = "lcm-kubernetes-external-lb"


class LbLogin(Params):
    ssh_ip: IpAddress = doc("address of the load balancer VM (alias `sshIp`)", "002", default=..., alias="ssh_ip",
                            aliases=("sshIp",))
    username: Login = doc("SSH login (alias `sshUsername`)", "002", default=..., alias="ssh_username",
                          aliases=("sshUsername",))
    password: Secret | None = doc("SSH password (alias `sshPassword`)", "002", alias="ssh_password",
                                  aliases=("sshPassword",), required="one of ssh_password, ssh_private_key")
    private_key: PrivateKey | None = doc("private key text instead of the password (alias `sshPrivateKey`)",
                                         alias="ssh_private_key", aliases=("sshPrivateKey",),
                                         required="one of ssh_password, ssh_private_key")

    @model_validator(mode="after")
    def _login(self) -> LbLogin:
        if self.password is None and self.private_key is None:
            raise ValueError("ssh_password or ssh_private_key is required")
        return self


class ExternalLb(Params):
    script_path: PackagePath | None = doc("the reference's LB script in the package (alias `scriptPath`)", "002",
                                          alias="script_path", aliases=("scriptPath",),
                                          inert="vnfm configures the load balancer's HAProxy itself and never runs "
                                                "package code; the file must exist in the package")
    login: LbLogin = doc("the load balancer VM (alias `externalLbParam`)", "002", default=...,
                         alias="external_lb_param", aliases=("externalLbParam",))

    @property
    def ssh_ip(self) -> str:
        return self.login.ssh_ip

    @property
    def username(self) -> str:
        return self.login.username

    @property
    def password(self) -> str | None:
        return self.login.password

    @property
    def private_key(self) -> str | None:
        return self.login.private_key


class CnfNodePortRoot(Params):
    """The NodePort driver's additionalParams keys."""

    lb: ExternalLb | None = doc("the external load balancer that gets the CNF's NodePorts", "002", alias=KEY)


# only instantiate carries it; a later request's replaces it whole
DECLARED = Declared("cnf-nodeport", CnfNodePortRoot, merge_depth=1)


def parse(params: dict[str, Any]) -> ExternalLb | None:
    """The external LB of the request, None when the request names none; BadRequest naming the key."""
    return DECLARED.parse(params).lb
