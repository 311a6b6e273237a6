from __future__ import annotations

import pytest

from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.scaling import scaled_levels, target_counts
from vnfm.domain.vnfd import Vnfd
from vnfm.examples import example_csar
from vnfm.packaging.csar import read_csar
from vnfm.packaging.tosca import parse_vnfd

from ..helpers import parse_files, single_files

HOOKS = {"instantiate_end", "terminate_end", "scale_start", "scale_end", "heal_start", "heal_end"}


@pytest.fixture(scope="module")
def vnfd() -> Vnfd:
    return parse_vnfd(read_csar(example_csar()))


def test_example_vnf_properties(vnfd: Vnfd) -> None:
    assert vnfd.id == "5f2a9c1e-7b3d-4e8a-9c6f-1d2e3f4a5b6c"
    assert (vnfd.version, vnfd.provider, vnfd.product_name, vnfd.software_version) == (
        "1.0",
        "Company",
        "Sample K8s Cluster",
        "1.0",
    )
    assert set(vnfd.flavours) == {"simple", "ha", "simple_pv"}


def test_example_simple_flavour(vnfd: Vnfd) -> None:
    fl = vnfd.flavour("simple")
    assert set(fl.vdus) == {"masterNode", "workerNode"}
    master, worker = fl.vdus["masterNode"], fl.vdus["workerNode"]
    assert (master.min_instances, master.max_instances) == (1, 1)
    assert (worker.min_instances, worker.max_instances) == (2, 6)
    assert master.memory_mb == 4096 and master.num_cpus == 2
    assert master.sw_image == "ubuntu-20.04-server-cloudimg-amd64"
    assert {c.id: (c.vdu_id, c.virtual_link) for c in fl.cps.values()} == {
        "masterNode_CP1": ("masterNode", None),
        "workerNode_CP2": ("workerNode", None),
    }
    assert fl.aspect("worker_instance").max_scale_level == 4
    assert fl.aspect("master_instance").max_scale_level == 0
    assert fl.aspect_deltas["worker_instance"] == {"delta_1": {"workerNode": 1}}
    assert fl.initial_deltas == {"masterNode": 1, "workerNode": 2}
    assert fl.default_level == "instantiation_level_1"
    assert fl.level("instantiation_level_2").scale_levels == {"master_instance": 0, "worker_instance": 2}
    assert fl.level("instantiation_level_2").vdu_counts == {"masterNode": 1, "workerNode": 4}
    assert set(fl.hooks) == HOOKS and set(fl.hooks.values()) == {"mgmt-drivers-kubernetes"}
    art = fl.artifacts["mgmt-drivers-kubernetes"]
    assert (art.type, art.file) == ("tosca.artifacts.Implementation.Python", "Scripts/kubernetes_mgmt.py")
    # The model drives the scaling arithmetic as expected.
    assert target_counts(fl, None, {"master_instance": 0, "worker_instance": 0}) == {
        "masterNode": 1,
        "workerNode": 2,
    }
    assert target_counts(fl, None, {"worker_instance": 4}) == {"masterNode": 1, "workerNode": 6}
    with pytest.raises(UnprocessableEntity):
        scaled_levels(fl, {"worker_instance": 4}, "worker_instance", 1, True)


def test_example_ha_flavour(vnfd: Vnfd) -> None:
    fl = vnfd.flavour("ha")
    assert (fl.vdus["masterNode"].min_instances, fl.vdus["masterNode"].max_instances) == (3, 3)
    assert fl.vdus["workerNode"].max_instances == 6
    assert target_counts(fl, "instantiation_level_1", {}) == {"masterNode": 3, "workerNode": 2}
    with pytest.raises(UnprocessableEntity):
        scaled_levels(fl, {}, "master_instance", 1, True)
    assert set(fl.hooks) == HOOKS


def test_example_simple_pv_flavour(vnfd: Vnfd) -> None:
    fl = vnfd.flavour("simple_pv")
    assert set(fl.vdus) == {"masterNode", "workerNode", "storage_server"}
    assert fl.vdus["storage_server"].storages == ("storage_server_volume",)
    assert fl.storages["storage_server_volume"].size_gb == 1.0
    assert fl.cps["storage_server_CP"].vdu_id == "storage_server"
    assert target_counts(fl, None, {}) == {"masterNode": 1, "workerNode": 2, "storage_server": 1}


def test_single_file_vnfd() -> None:
    v = parse_files(single_files())
    assert (v.id, v.version, v.provider, v.software_version) == ("d-1", "2.0", "Acme", "3.1")
    fl = v.flavour("only")
    assert fl.vdus["VDU1"].name == "vdu-one" and fl.vdus["VDU1"].memory_mb == 512
    assert fl.vdus["VDU1"].storages == ("VOL1",) and fl.storages["VOL1"].size_gb == 0.5
    assert fl.cps["CP1"].virtual_link == "VL1" and fl.cps["CP1"].order == 1
    assert fl.virtual_links["VL1"].cidr == "10.0.0.0/24"
    assert fl.hooks == {"instantiate_end": "noop-driver", "heal_end": "Scripts/driver.py"}
    assert fl.artifacts["noop-driver"].file == "Scripts/driver.py"
    assert fl.aspect_deltas == {"vdu1_aspect": {"d1": {"VDU1": 1}}}
