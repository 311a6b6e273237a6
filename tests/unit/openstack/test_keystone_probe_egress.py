"""The Keystone probe of `vnfm vim register` obeys the egress policy: an auth URL resolving to
loopback or the cloud-metadata address is not contacted (an operator could otherwise make the
server probe its own local services and read the answer from the 422)."""

from __future__ import annotations

import socket
import threading

from vnfm.adapters.infra.openstack.keystone import probe_keystone
from vnfm.adapters.remote.egress import EgressPolicy
from vnfm.domain.model import Vim


def _vim(url: str) -> Vim:
    return Vim(vim_type="openstack", name="os", access_info={
        "authUrl": url, "username": "admin", "password": "pw", "project": "demo"})


def test_a_probe_of_loopback_or_metadata_is_refused_without_contact() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    contacted: list[bool] = []

    def accept() -> None:
        try:
            listener.accept()
            contacted.append(True)
        except OSError:
            pass

    t = threading.Thread(target=accept)
    t.start()
    try:
        for url in (f"http://127.0.0.1:{port}/v3", "http://169.254.169.254/v3"):
            said = probe_keystone(_vim(url), timeout=2, policy=EgressPolicy.of())
            assert said is not None and "was not probed" in said, said
    finally:
        t.join()
        listener.close()
    assert contacted == []


def test_an_allowed_network_is_probed() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens: the probe is made and says Keystone does not answer
    said = probe_keystone(_vim(f"http://127.0.0.1:{port}/v3"), timeout=2,
                          policy=EgressPolicy.of(allow=["127.0.0.0/8"]))
    assert said is not None and "does not answer" in said, said
