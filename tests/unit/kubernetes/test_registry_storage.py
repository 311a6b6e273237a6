"""Seeds 003 (private registries on every node) and 001 (storage server, NFS, PersistentVolumes) on the
simulated cloud's twin, driven by the real LCM engine."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from vnfm.adapters.mgmt.cluster import params as P
from vnfm.domain.errors import BadRequest, UnprocessableEntity
from vnfm.domain.model import OpState

from .conftest import PARAMS, K8s

R = "additionalParams.k8s_cluster_installation_param"
REG_PW = "user01-registry-pw"

REGISTRIES: list[dict[str, Any]] = [  # seed 003's request, verbatim
    {"connection_type": "0", "server": "192.168.0.10:5000"},
    {"connection_type": "1", "server": "registry.example.com", "username": "user01", "password": REG_PW,
     "certificate_path": "Files/registries/ca.crt", "hosts_string": "192.168.0.20 registry.example.com"},
]

STORAGE: dict[str, Any] = {  # seed 001's request, verbatim
    "storage_server": {
        "ssh_cp_name": "storage_server_CP",
        "username": "ubuntu",
        "password": "ubuntu",
        "cinder_volume_setup_params": [{"volume_resource_id": "storage_server_volume", "mount_to": "/volume"}],
        "nfs_server_setup_params": [
            {"export_dir": "/volume/nfs/pv1", "export_to": "10.10.0.0/24"},
            {"export_dir": "/volume/nfs/pv2", "export_to": "10.10.0.0/24"},
            {"export_dir": "/volume/nfs/pv3", "export_to": "10.10.0.0/24"},
        ],
    },
    "pv_registration_params": [
        {"pv_manifest_file_path": "Files/kubernetes/nfs-pv1.yaml", "nfs_server_cp": "storage_server_CP"},
        {"pv_manifest_file_path": "Files/kubernetes/nfs-pv2.yaml", "nfs_server_cp": "storage_server_CP"},
        {"pv_manifest_file_path": "Files/kubernetes/nfs-pv3.yaml", "nfs_server_cp": "storage_server_CP"},
    ],
}


def with_(**extra: Any) -> dict[str, Any]:
    p = copy.deepcopy(PARAMS)
    p["k8s_cluster_installation_param"].update(copy.deepcopy(extra))
    return p


def _hosts_of(k8s: K8s, inst_id: str) -> dict[str, dict[str, Any]]:
    st = k8s.state(inst_id)
    names = {n["server_id"]: n for n in st["nodes"].values()}
    return {names[sid]["name"]: h for sid, h in st["hosts"].items() if sid in names}


# ============================================================================= seed 003
async def test_registries_on_every_node_then_added_then_healed(k8s: K8s) -> None:
    app = k8s.app
    inst_id, occ = await k8s.instantiate("simple", with_(private_registry_connection_info=REGISTRIES))
    v = k8s.view(inst_id)
    assert sorted(v["registries"]) == sorted(v["nodes"]) == ["masternode-0", "workernode-0", "workernode-1"]
    for node, cfg in v["registries"].items():
        regs = cfg["registries"]
        assert regs["192.168.0.10:5000"] == {"scheme": "http",
                                             "hosts_toml": "/etc/containerd/certs.d/192.168.0.10:5000/hosts.toml",
                                             "ca_sha256": None, "hosts_entry": None}, node
        https = regs["registry.example.com"]
        assert https["scheme"] == "https" and https["ca_sha256"] and \
            https["hosts_entry"] == ["192.168.0.20", "registry.example.com"]
        assert cfg["containerd"]["config_path"] == "/etc/containerd/certs.d"
        assert list(cfg["containerd"]["auth"]) == ["registry.example.com"]
        assert cfg["containerd"]["restarts"] == 1
    hosts = _hosts_of(k8s, inst_id)
    assert hosts["workernode-0"]["etc_hosts"]["vnfm-registry-registry.example.com"] == \
        [["192.168.0.20", ["registry.example.com"]]]
    # the registry password is in no event, no view, no stored state
    inst = app.instances.get(inst_id)
    for text in (str(occ.events), str(v), str(k8s.state(inst_id)), str(inst.driver_state)):
        assert REG_PW not in text

    # ---- scale out: exactly the added node is configured; the others are not touched again
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                 "numberOfSteps": 1}))
    v = k8s.view(inst_id)
    assert sorted(v["registries"]) == ["masternode-0", "workernode-0", "workernode-1", "workernode-2"]
    assert all(c["containerd"]["restarts"] == 1 for c in v["registries"].values())

    # ---- heal a worker: its new VM is configured from the stored instantiate parameters
    w0 = next(x for x in app.instances.get(inst_id).resources.vnfcs if x.name == "workerNode-0")
    await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [w0.id]}))
    v = k8s.view(inst_id)
    assert sorted(v["registries"]["workernode-0"]["registries"]) == ["192.168.0.10:5000", "registry.example.com"]
    assert len(v["registries"]) == 4  # the healed node's old server is gone, the new one is configured

    # ---- heal entire: every new VM
    await k8s.done(app.instances.heal(inst_id, {}))
    v = k8s.view(inst_id)
    assert sorted(v["registries"]) == sorted(v["nodes"]) and len(v["nodes"]) == 4


async def test_registry_ca_missing_from_package_is_refused_naming_the_key(k8s: K8s) -> None:
    """Refused when the request arrives (422), before any occurrence or VM exists."""
    regs = copy.deepcopy(REGISTRIES)
    regs[1]["certificate_path"] = "Files/registries/missing.crt"
    with pytest.raises(UnprocessableEntity) as e:
        await k8s.instantiate("simple", with_(private_registry_connection_info=regs), ok=False)
    assert e.value.detail == f"{R}.private_registry_connection_info[1].certificate_path: " \
                             "'Files/registries/missing.crt' is not a file of the VNF package"
    assert k8s.app.instances.op_list() == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"connection_type": "2"}, "[1].connection_type: must be '0' or '1'"),
        ({"connection_type": None}, "[1].connection_type: is required"),
        ({"server": "https://registry.example.com/v2"}, "[1].server: 'https://registry.example.com/v2' must be a "
                                                        "host[:port] without scheme or path"),
        ({"server": "192.168.0.10:5000"}, "[1].server: '192.168.0.10:5000' is also "
                                          "private_registry_connection_info[0].server"),
        ({"password": None}, "[1]: give both 'username' and 'password' (or neither)"),
        ({"hosts_string": "registry.example.com"}, "[1].hosts_string: 'registry.example.com' must be "
                                                   "'<IP address> <FQDN>'"),
        ({"hosts_string": "host1 registry.example.com"}, "[1].hosts_string: 'host1' is not an IP address"),
        ({"certificate_path": "../../etc/passwd"}, "[1].certificate_path: '../../etc/passwd' must be a relative "
                                                   "path inside the VNF package"),
        ({"connection_type": 0}, "[1].certificate_path: a CA certificate needs connection_type 1 (HTTPS)"),
    ],
)
def test_registry_validation_names_the_key(change: dict[str, Any], message: str) -> None:
    regs = copy.deepcopy(REGISTRIES)
    for k, val in change.items():
        if val is None:
            regs[1].pop(k)
        else:
            regs[1][k] = val
    with pytest.raises(BadRequest) as e:
        P.parse(with_(private_registry_connection_info=regs))
    assert e.value.detail.startswith(f"{R}.private_registry_connection_info{message}"), e.value.detail
    assert REG_PW not in e.value.detail


def test_seed_003_registries_parse() -> None:
    cp = P.parse(with_(private_registry_connection_info=REGISTRIES))
    http, https = cp.registries
    assert (http.https, http.server, http.username) == (False, "192.168.0.10:5000", None)
    assert (https.https, https.host, https.certificate_path, https.hosts_entry) == \
        (True, "registry.example.com", "Files/registries/ca.crt", ("192.168.0.20", "registry.example.com"))
    assert REG_PW not in repr(cp)


# ============================================================================= seed 001
async def test_storage_server_exports_and_pvs_then_k8s_scale_heal_leave_it_alone(k8s: K8s) -> None:
    app = k8s.app
    inst_id, occ = await k8s.instantiate("simple_pv", with_(**STORAGE))
    inst = app.instances.get(inst_id)
    storage = next(x for x in inst.resources.vnfcs if x.vdu_id == "storage_server")
    nfs_addr = storage.address("storage_server_CP", floating_first=False)
    v = k8s.view(inst_id)
    assert sorted(v["nodes"]) == ["masternode-0", "workernode-0", "workernode-1"]  # not a cluster node
    vol_id = storage.storages[0].volume_id
    assert v["volumes"][vol_id]["fs"] == "ext4" and v["volumes"][vol_id]["formats"] == 1
    (sid, srv), = v["storage"].items()
    assert sid == storage.server_id
    assert srv["mounts"] == {"/volume": vol_id}
    assert srv["fstab"]["/volume"] == f"UUID={v['volumes'][vol_id]['uuid']} /volume ext4 defaults,nofail 0 2"
    assert [(e["path"], e["clients"]) for e in srv["nfs"]["exports"]] == [
        (f"/volume/nfs/pv{i}", ["10.10.0.0/24"]) for i in (1, 2, 3)]
    assert all(e["volume_uuid"] == v["volumes"][vol_id]["uuid"] for e in srv["nfs"]["exports"])
    assert sorted(v["pvs"]) == ["nfs-pv1", "nfs-pv2", "nfs-pv3"]
    assert {(p["nfs_server"], p["nfs_path"], p["phase"]) for p in v["pvs"].values()} == {
        (nfs_addr, f"/volume/nfs/pv{i}", "Available") for i in (1, 2, 3)}
    assert v["nfs_clients"] == ["masternode-0", "workernode-0", "workernode-1"]
    assert any("nfs-pv1, nfs-pv2, nfs-pv3 registered" in e["message"] for e in occ.events)
    assert "ubuntu" not in str([e["message"] for e in occ.events])

    snapshot = copy.deepcopy(k8s.state(inst_id)["hosts"][storage.server_id])
    pvs_before = copy.deepcopy(v["pvs"])
    # ---- scale out and heal a worker: the new nodes get the NFS client; the storage server is untouched
    await k8s.done(app.instances.scale(inst_id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                 "numberOfSteps": 1}))
    w0 = next(x for x in app.instances.get(inst_id).resources.vnfcs if x.name == "workerNode-0")
    await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [w0.id]}))
    v = k8s.view(inst_id)
    assert v["nfs_clients"] == ["masternode-0", "workernode-0", "workernode-1", "workernode-2"]
    assert k8s.state(inst_id)["hosts"][storage.server_id] == snapshot
    assert v["pvs"] == pvs_before
    kept = app.instances.get(inst_id).resources.by_id(storage.id)
    assert kept is not None and kept.server_id == storage.server_id


async def test_heal_storage_server_keeps_volume_remounts_reexports_and_re_registers_pvs(k8s: K8s) -> None:
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple_pv", with_(**STORAGE))
    storage = next(x for x in app.instances.get(inst_id).resources.vnfcs if x.vdu_id == "storage_server")
    vol_id = storage.storages[0].volume_id
    uuid = k8s.view(inst_id)["volumes"][vol_id]["uuid"]
    twin = k8s.twin(inst_id)

    # a PV in use blocks the heal (seed 001: heal_start checks no PV is in use), naming PV and claim
    twin.bind_pv("nfs-pv2", "default/data-db-0")
    occ = await k8s.wait(app.instances.heal(inst_id, {"vnfcInstanceId": [storage.id]}))
    assert occ.operation_state == OpState.FAILED_TEMP
    assert "PersistentVolumes in use: nfs-pv2 (claim default/data-db-0)" in str(occ.error)
    assert sorted(k8s.view(inst_id)["pvs"]) == ["nfs-pv1", "nfs-pv2", "nfs-pv3"]  # all or none

    # released: the retry heals it
    twin.bind_pv("nfs-pv2", None)
    occ = await k8s.done(app.instances.retry(occ.id))
    healed = app.instances.get(inst_id).resources.by_id(storage.id)
    assert healed is not None and healed.server_id != storage.server_id
    assert healed.storages[0].volume_id == vol_id  # the volume was kept
    v = k8s.view(inst_id)
    assert v["volumes"][vol_id]["formats"] == 1 and v["volumes"][vol_id]["uuid"] == uuid  # not formatted again
    srv = v["storage"][healed.server_id]
    assert srv["mounts"] == {"/volume": vol_id} and len(srv["nfs"]["exports"]) == 3
    assert storage.server_id not in v["storage"]
    addr = healed.address("storage_server_CP", floating_first=False)
    assert {p["nfs_server"] for p in v["pvs"].values()} == {addr} and sorted(v["pvs"]) == \
        ["nfs-pv1", "nfs-pv2", "nfs-pv3"]
    assert "pvs_affected" not in app.instances.get(inst_id).driver_state["kubeadm"]
    assert any("PersistentVolume(s) nfs-pv1, nfs-pv2, nfs-pv3 are affected" in e["message"] for e in occ.events)
    # the cluster nodes were not touched by this heal
    assert sorted(v["nodes"]) == ["masternode-0", "workernode-0", "workernode-1"]


async def test_heal_storage_server_happy_path_deletes_then_registers_the_pvs_again(k8s: K8s) -> None:
    """No PV in use: heal_start deletes the PVs, heal_end registers them again pointing at the new
    server. A PV replaced in place instead (not deleted first) would show a second registration."""
    app = k8s.app
    inst_id, _ = await k8s.instantiate("simple_pv", with_(**STORAGE))
    storage = next(x for x in app.instances.get(inst_id).resources.vnfcs if x.vdu_id == "storage_server")
    pvs = [f"nfs-pv{i}" for i in (1, 2, 3)]
    assert k8s.state(inst_id)["pv_registrations"] == dict.fromkeys(pvs, 1)
    occ = await k8s.done(app.instances.heal(inst_id, {"vnfcInstanceId": [storage.id]}))
    healed = app.instances.get(inst_id).resources.by_id(storage.id)
    assert healed is not None and healed.server_id != storage.server_id
    new = healed.address("storage_server_CP", floating_first=False)
    # each PV was deleted and created again (a second registration), pointing at the healed server
    assert k8s.state(inst_id)["pv_registrations"] == dict.fromkeys(pvs, 2)
    assert {n: (p["nfs_server"], p["phase"]) for n, p in k8s.state(inst_id)["pvs"].items()} == \
        dict.fromkeys(pvs, (new, "Available"))
    msgs = [e["message"] for e in occ.events]
    removed = next(i for i, m in enumerate(msgs) if "are affected; checking they are not in use and removing" in m)
    registered = next(i for i, m in enumerate(msgs) if f"nfs-pv1, nfs-pv2, nfs-pv3 registered (NFS server {new})" in m)
    assert removed < registered


async def test_storage_params_on_a_flavour_without_storage_server_are_refused_naming_the_key(k8s: K8s) -> None:
    with pytest.raises(UnprocessableEntity) as e:
        await k8s.instantiate("simple", with_(**STORAGE), ok=False)
    assert e.value.detail.startswith(f"{R}.storage_server.ssh_cp_name: 'storage_server_CP' is not a CP of "
                                     "flavour 'simple'")
    assert k8s.app.instances.op_list() == []


async def test_pv_manifest_missing_or_path_not_exported_fails_naming_the_key(k8s: K8s) -> None:
    p = with_(**STORAGE)
    p["k8s_cluster_installation_param"]["pv_registration_params"][2]["pv_manifest_file_path"] = "Files/nope.yaml"
    with pytest.raises(UnprocessableEntity) as e:  # refused when the request arrives
        await k8s.instantiate("simple_pv", p, ok=False)
    assert e.value.detail == f"{R}.pv_registration_params[2].pv_manifest_file_path: 'Files/nope.yaml' is not a " \
                             "file of the VNF package"
    p = with_(**STORAGE)
    p["k8s_cluster_installation_param"]["storage_server"]["nfs_server_setup_params"].pop(0)
    _, occ = await k8s.instantiate("simple_pv", p, ok=False)
    assert f"{R}.pv_registration_params[0].pv_manifest_file_path: PersistentVolume 'nfs-pv1' uses NFS path " \
           "/volume/nfs/pv1, which no storage_server.nfs_server_setup_params[].export_dir exports" in str(occ.error)
    p = with_(**STORAGE)
    p["k8s_cluster_installation_param"]["storage_server"]["cinder_volume_setup_params"][0][
        "volume_resource_id"] = "other_volume"
    with pytest.raises(UnprocessableEntity) as e:
        await k8s.instantiate("simple_pv", p, ok=False)
    assert e.value.detail == f"{R}.storage_server.cinder_volume_setup_params[0].volume_resource_id: " \
                             "'other_volume' is not a virtual storage of VDU 'storage_server' (it has: " \
                             "storage_server_volume)"


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("storage_server", "cinder_volume_setup_params"), [], ".storage_server.cinder_volume_setup_params: at "
                                                               "least one volume to mount is required"),
        (("storage_server", "cinder_volume_setup_params", 0, "mount_to"), "volume",
         ".storage_server.cinder_volume_setup_params[0].mount_to: 'volume' must be a plain absolute path"),
        (("storage_server", "nfs_server_setup_params", 1, "export_to"), "everyone",
         ".storage_server.nfs_server_setup_params[1].export_to: 'everyone' is not an address or network"),
        (("storage_server", "nfs_server_setup_params", 2, "export_dir"), "/volume/nfs/pv1",
         ".storage_server.nfs_server_setup_params[2].export_dir: '/volume/nfs/pv1' is also"),
        (("storage_server", "password"), None, ".storage_server: give 'password' or 'ssh_private_key'"),
        (("storage_server", "ssh_cp_name"), None, ".storage_server.ssh_cp_name: is required"),
        (("pv_registration_params", 0, "nfs_server_cp"), None, ".pv_registration_params[0].nfs_server_cp: is required"),
        (("pv_registration_params",), {"a": 1}, ".pv_registration_params: must be a list, got dict"),
        (("storage_server",), None, ".storage_server: is required when pv_registration_params is given"),
    ],
)
def test_storage_validation_names_the_key(path: tuple[Any, ...], value: Any, message: str) -> None:
    p = with_(**STORAGE)
    d: Any = p["k8s_cluster_installation_param"]
    for k in path[:-1]:
        d = d[k]
    if value is None:
        del d[path[-1]]
    else:
        d[path[-1]] = value
    with pytest.raises(BadRequest) as e:
        P.parse(p)
    assert e.value.detail.startswith(f"{R}{message}"), e.value.detail


def test_seed_001_storage_parses() -> None:
    cp = P.parse(with_(**STORAGE))
    assert cp.storage_server is not None
    assert [(v.volume_resource_id, v.mount_to) for v in cp.storage_server.volumes] == [("storage_server_volume",
                                                                                      "/volume")]
    assert [e.export_dir for e in cp.storage_server.exports] == [f"/volume/nfs/pv{i}" for i in (1, 2, 3)]
    assert [r.pv_manifest_file_path for r in cp.pv_registrations] == [f"Files/kubernetes/nfs-pv{i}.yaml"
                                                                      for i in (1, 2, 3)]
    assert "ubuntu'" not in repr(cp.storage_server).replace("username='ubuntu'", "")
