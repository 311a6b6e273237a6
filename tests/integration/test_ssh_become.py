"""Node steps through a non-root login (a cloud image's `ubuntu`): commands become root with
`sudo -n`, while the login user's own files (authorized_keys, a file copied into its home) stay
the login user's. Real sshd and sudo on a test host."""

from __future__ import annotations

import asyncssh
import pytest

from tests.integration.conftest import require
from vnfm.adapters.nodes.ssh.access import SshAccess
from vnfm.adapters.remote.ssh import RemoteCommandFailed, SshExecutor, SshTarget
from vnfm.nodesteps.kubespray import AuthorizedKey
from vnfm.service.ports import NodeHost, NodeLogin

pytestmark = pytest.mark.integration

ADD_USERS = r"""
set -eu
for u in ops stranger; do
  id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"
  usermod -p '*' "$u"   # no password, but not locked (sshd without PAM refuses locked accounts)
  install -d -m 700 -o "$u" -g "$u" "/home/$u/.ssh"
  printf '%s\n' "$PUB" > "/home/$u/.ssh/authorized_keys"
  chown "$u:" "/home/$u/.ssh/authorized_keys"; chmod 600 "/home/$u/.ssh/authorized_keys"
done
printf 'ops ALL=(ALL) NOPASSWD:ALL\n' > /etc/sudoers.d/ops
chmod 440 /etc/sudoers.d/ops
"""


async def _users(ssh: SshExecutor, host: SshTarget, pub: str) -> None:
    await ssh.run_script(host, ADD_USERS, env_secrets={"PUB": pub}, check=True, name="add users")


async def test_non_root_login_runs_node_work_as_root_through_sudo(make_hosts, ssh: SshExecutor) -> None:
    require("sudo", "useradd")
    (h,) = make_hosts(1)
    key = asyncssh.import_private_key(h.bed.client_key_pem)
    pub = key.export_public_key().decode().strip()
    await _users(ssh, h.target(), pub)
    ops = SshTarget(h.address, username="ops", private_key=h.bed.client_key_pem,
                    known_host_key=h.host_key, become=True)
    async with SshExecutor() as ex:
        r = await ex.run(ops, ["id", "-un"], check=True)
        assert r.stdout == "root\n"
        r = await ex.run_script(ops, 'echo "$(id -u) $VNFM_LOGIN_USER $VNFM_LOGIN_HOME $SECRET"',
                                env_secrets={"SECRET": "s3"}, check=True)
        assert r.stdout.split() == ["0", "ops", "/home/ops", "s3"]
        await ex.put_file(ops, "/etc/vnfm-become/test.conf", "x=1\n", mode=0o640)
        st = await ssh.run(h.target(), ["stat", "-c", "%U %a", "/etc/vnfm-become/test.conf"], check=True)
        assert st.stdout.split() == ["root", "640"]
        assert await ex.get_file(ops, "/etc/vnfm-become/test.conf") == b"x=1\n"
        # the same login without `become` stays itself (the operator's Ansible server)
        plain = SshTarget(h.address, username="ops", private_key=h.bed.client_key_pem, known_host_key=h.host_key)
        assert (await ex.run(plain, ["id", "-un"], check=True)).stdout == "ops\n"
        # sudo that would need a password fails at once (-n), saying so; nothing hangs on a prompt
        stranger = SshTarget(h.address, username="stranger", private_key=h.bed.client_key_pem,
                             known_host_key=h.host_key, become=True)
        with pytest.raises(RemoteCommandFailed) as ei:
            await ex.run(stranger, ["true"], check=True, timeout=30)
        assert "sudo" in str(ei.value)


async def test_authorized_key_step_through_sudo_keeps_the_login_users_file(make_hosts, ssh: SshExecutor) -> None:
    """What the Kubespray driver does on each node before Ansible logs in as the node's user."""
    require("sudo", "useradd")
    (h,) = make_hosts(1)
    pub = asyncssh.import_private_key(h.bed.client_key_pem).export_public_key().decode().strip()
    await _users(ssh, h.target(), pub)
    run_key = asyncssh.generate_private_key("ssh-ed25519")
    run_pub = run_key.export_public_key().decode().strip()
    login = NodeLogin("ops", private_key=h.bed.client_key_pem)
    pins = {"vnfc-1": h.host_key}
    session = SshAccess(timeout=60).session("inst-1", [NodeHost(h.address, login, vnfc_id="vnfc-1")], pins)
    try:
        res = await session.run(h.address, AuthorizedKey(marker="vnfm-inst-1", public_key=run_pub))
        assert res.changed
    finally:
        await session.close()
    st = await ssh.run(h.target(), ["stat", "-c", "%U %a", "/home/ops/.ssh/authorized_keys", "/home/ops/.ssh"],
                       check=True)
    assert st.stdout.split() == ["ops", "600", "ops", "700"]
    root_keys = await ssh.run(h.target(), ["cat", "/root/.ssh/authorized_keys"], check=True)
    assert "vnfm-inst-1" not in root_keys.stdout  # the login user's file got the key, not root's
    # the run key now logs in as the node's user (sshd read the file as that user)
    run_target = SshTarget(h.address, username="ops", private_key=run_key.export_private_key().decode(),
                           known_host_key=h.host_key)
    async with SshExecutor() as ex:
        assert (await ex.run(run_target, ["id", "-un"], check=True)).stdout == "ops\n"
