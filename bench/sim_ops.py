"""The simulated cloud alone, without the engine: what a cluster's infrastructure and node steps
cost it (a benchmark: prints figures, asserts nothing).

`N` times: deploy a VNF of 1 master + 2 workers with the simulator's infrastructure driver (ports,
floating IPs, servers, boot), then run on the twin the node steps a kubeadm install sends (host
keys, prepare x3, init, ready, join info x2, join x2, ready x2, label x2). Nothing else runs in
the process, so its CPU is steadier than an instantiate's; under valgrind the instruction count
is exact (subtract a run with `--n 0` for the start-up):

    .venv/bin/python bench/sim_ops.py --n 20
    valgrind --tool=callgrind --callgrind-out-file=/dev/null .venv/bin/python bench/sim_ops.py --n 5
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from pathlib import Path

from vnfm.adapters.infra.simulator import SimCloud, SimConfig, SimulatorInfraDriver
from vnfm.adapters.infra.simulator.twin.executor import TwinExecutor
from vnfm.domain.model import Vim
from vnfm.domain.vnfd import Cp, Flavour, Vdu, Vnfd
from vnfm.nodesteps.kubeadm import JoinInfo, KubeadmInit, KubeadmJoin, PrepareNode
from vnfm.nodesteps.kubernetes import LabelNode, WaitNodeReady
from vnfm.service.ports import InfraContext

COUNTS = {"masterNode": 1, "workerNode": 2}
FLAVOUR = Flavour(
    id="simple",
    vdus={"masterNode": Vdu("masterNode", "masterNode", min_instances=1, max_instances=3),
          "workerNode": Vdu("workerNode", "workerNode", min_instances=2, max_instances=12)},
    cps={"masterNode_CP1": Cp("masterNode_CP1", "masterNode"), "workerNode_CP2": Cp("workerNode_CP2", "workerNode")},
)
VNFD = Vnfd(id=str(uuid.uuid4()), version="1.0", provider="bench", product_name="bench", software_version="1.0",
            flavours={"simple": FLAVOUR})


def _ctx() -> InfraContext:
    return InfraContext(instance_id=str(uuid.uuid4()), op_id=str(uuid.uuid4()), vnfd=VNFD, flavour=FLAVOUR,
                        package=None, vim=Vim(vim_type="simulator", name="sim"), ext_virtual_links=[],
                        progress=lambda _text: None)


async def one(cloud: SimCloud) -> None:
    ctx = _ctx()
    res = await SimulatorInfraDriver(cloud).deploy(ctx, COUNTS)
    nodes = [(v.vdu_id, v.cps[0].ip_addresses[0]) for v in res.vnfcs]
    master = next(a for vdu, a in nodes if vdu == "masterNode")
    workers = [a for vdu, a in nodes if vdu == "workerNode"]
    name = {a: f"node-{i}" for i, (_, a) in enumerate(nodes)}
    ex = TwinExecutor(cloud, ctx.instance_id)
    await ex.verify_host_keys([a for _, a in nodes])
    for _, a in nodes:
        await ex.run(a, PrepareNode(name[a], "1.30.4"))
    endpoint = f"{master}:6443"
    await ex.run(master, KubeadmInit(name[master], master, endpoint, "10.244.0.0/16", "10.96.0.0/12", "1.30.4"))
    await ex.run(master, WaitNodeReady(name[master]))
    for w in workers:
        info = (await ex.run(master, JoinInfo())).data
        await ex.run(w, KubeadmJoin(name[w], w, endpoint, False, info["token"], info["ca_cert_hash"]))
        await ex.run(master, WaitNodeReady(name[w]))
        await ex.run(master, LabelNode(name[w], (("node-role.kubernetes.io/worker", ""),)))


async def run(n: int) -> None:
    with tempfile.TemporaryDirectory(prefix="vnfm-simops-") as tmp:
        cloud = SimCloud.at(Path(tmp) / "simcloud.db", SimConfig(boot_time=0, api_latency=0, delete_time=0))
        await one(cloud)  # warm-up
        each: list[float] = []
        for _ in range(n):
            c0 = time.thread_time()
            await one(cloud)
            each.append(time.thread_time() - c0)
        if each:
            each.sort()
            print(f"{n} clusters: CPU per cluster least {each[0] * 1000:.2f} ms, "
                  f"median {each[len(each) // 2] * 1000:.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20)
    asyncio.run(run(ap.parse_args().n))


if __name__ == "__main__":
    main()
