"""A cluster and the CNFs on its Kubernetes VIM (issue 22, items 4 and 5), on the simulated cloud:
the cluster's terminate is refused while CNFs use its VIM (unless `ignore_dependent_cnfs`); a CNF
whose cluster is gone still terminates and is deleted; CNF NodePort frontends route to the
cluster's NodePort pool, which follows the cluster's nodes through scale; an LB heal re-applies
every CNF's part; a heal entire of the cluster names the CNFs that need a heal."""

from __future__ import annotations

import pytest

from vnfm.domain.errors import BadRequest, Conflict
from vnfm.domain.model import OpState

from .conftest import K8s
from .test_cnf import cluster, cnf_body, frontends, onboard

WORKERS = {"aspectId": "worker_instance", "numberOfSteps": 1}


def _events(k8s: K8s, op_id: str) -> str:
    return " | ".join(e["message"] for e in k8s.app.instances.op_get(op_id).events)


def _pool_view(k8s: K8s, cluster_id: str) -> list[str]:
    from vnfm.adapters.infra.simulator.twin import instance_state

    state = instance_state(k8s.app.sim, cluster_id)
    assert state is not None
    return sorted(state["external_lb"]["pools"]["nodeport"])


async def _cnf(k8s: K8s, vim_id: str, lb_ip: str) -> str:
    cnf = k8s.app.instances.create({"vnfdId": onboard(k8s, "cnf_nodeport")})
    await k8s.done(k8s.app.instances.instantiate(cnf.id, cnf_body(vim_id, lb_ip)))
    return cnf.id


async def test_cluster_terminate_is_refused_while_a_cnf_uses_it_then_the_cnf_can_always_go(k8s: K8s) -> None:
    app = k8s.app
    cluster_id, vim_id, lb_ip = await cluster(k8s)
    cnf_id = await _cnf(k8s, vim_id, lb_ip)
    name = app.instances.get(cnf_id).vnf_instance_name

    with pytest.raises(Conflict, match=f"used by CNF instance\\(s\\) {name} \\({cnf_id}\\).*ignore_dependent_cnfs"):
        app.instances.terminate(cluster_id, {"terminationType": "FORCEFUL"})
    with pytest.raises(BadRequest, match="additionalParams.ignore_dependent_cnfs must be true or false"):
        app.instances.terminate(cluster_id, {"terminationType": "FORCEFUL",
                                             "additionalParams": {"ignore_dependent_cnfs": "yes"}})
    occ = await k8s.done(app.instances.terminate(cluster_id, {"terminationType": "FORCEFUL",
                                                              "additionalParams": {"ignore_dependent_cnfs": True}}))
    assert f"under CNF instance(s) {name} ({cnf_id})" in _events(k8s, occ.id)
    assert app.vims.get(vim_id) is None

    # the CNF's VIM is gone: its terminate says so and completes; then it can be deleted
    occ = await k8s.done(app.instances.terminate(cnf_id, {"terminationType": "GRACEFUL"}))
    said = _events(k8s, occ.id)
    assert f"VIM {vim_id} is no longer registered" in said and "already gone" in said
    assert "NodePort frontends are already gone" in said
    assert app.instances.get(cnf_id).instantiation_state.value == "NOT_INSTANTIATED"
    app.instances.delete(cnf_id)


async def test_cnf_frontends_follow_the_cluster_through_scale_and_lb_heal(k8s: K8s) -> None:
    app = k8s.app
    cluster_id, vim_id, lb_ip = await cluster(k8s)
    cnf_id = await _cnf(k8s, vim_id, lb_ip)
    fe = frontends(k8s, cluster_id)
    pool = _pool_view(k8s, cluster_id)
    assert sorted(a.split(":")[0] for a in fe["30422"]) == pool

    # ---- scale out: the new worker serves the CNF's NodePorts; scale in: the removed one no longer does
    await k8s.done(app.instances.scale(cluster_id, {"type": "SCALE_OUT", **WORKERS}))
    grown = _pool_view(k8s, cluster_id)
    assert len(grown) == len(pool) + 1
    assert sorted(a.split(":")[0] for a in frontends(k8s, cluster_id)["30422"]) == grown
    await k8s.done(app.instances.scale(cluster_id, {"type": "SCALE_IN", **WORKERS}))
    assert sorted(a.split(":")[0] for a in frontends(k8s, cluster_id)["30422"]) == pool

    # ---- heal of the LB's VNFC: its new VM gets the cluster's part and the CNF's again
    lb = next(v for v in app.instances.get(cluster_id).resources.vnfcs if v.vdu_id == "externalLB")
    occ = await k8s.done(app.instances.heal(cluster_id, {"vnfcInstanceId": [lb.id]}))
    assert frontends(k8s, cluster_id) == fe
    assert "of CNF" in _events(k8s, occ.id) and "re-applied" in _events(k8s, occ.id)

    # ---- heal entire of the cluster: the CNF is named as needing a heal
    occ = await k8s.done(app.instances.heal(cluster_id, {}))
    assert f"CNF instance(s) {app.instances.get(cnf_id).vnf_instance_name} ({cnf_id})" in _events(k8s, occ.id)
    assert "heal each of them (entire) afterwards" in _events(k8s, occ.id)
    assert app.instances.op_get(occ.id).operation_state == OpState.COMPLETED


async def test_the_twin_lb_refuses_a_route_to_a_missing_pool_as_haproxy_c_does(k8s: K8s) -> None:
    from vnfm.adapters.infra.simulator.twin import instance_state
    from vnfm.nodesteps.base import StepFailed
    from vnfm.nodesteps.lb import Frontend, LbFrontends, PoolRef

    cluster_id, vim_id, lb_ip = await cluster(k8s)
    cnf_id = await _cnf(k8s, vim_id, lb_ip)
    ex = k8s.twin(cluster_id)
    before = instance_state(k8s.app.sim, cluster_id)
    with pytest.raises(StepFailed, match="unable to find required default_backend 'vnfm_cluster_pool_gone'"):
        await ex.run(lb_ip, LbFrontends("cnf-x", (Frontend("web", 30999, (), pool=PoolRef("cluster", "gone")),)))
    # the cluster's part cannot drop the pool the CNF routes to
    with pytest.raises(StepFailed, match=f"vnfm_cnf-{cnf_id}_fe_.*unable to find required default_backend"):
        await ex.run(lb_ip, LbFrontends("cluster", ()))
    assert instance_state(k8s.app.sim, cluster_id) == before


async def test_a_kubeadm_cluster_knows_its_cnfs_too(k8s: K8s) -> None:
    """The same rule on a cluster the kubeadm driver built (a CNF without a load balancer)."""
    app = k8s.app
    cluster_id, _ = await k8s.instantiate("simple")
    vim_id = app.instances.get(cluster_id).driver_state["kubeadm"]["vim_id"]
    cnf = app.instances.create({"vnfdId": onboard(k8s, "cnf_nodeport")})
    body = cnf_body(vim_id, "192.0.2.1", **{"lcm-kubernetes-def-files": ["Files/kubernetes/deployment.yaml"]})
    body["additionalParams"].pop("lcm-kubernetes-external-lb")
    await k8s.done(app.instances.instantiate(cnf.id, body))
    with pytest.raises(Conflict, match=f"used by CNF instance\\(s\\) .*{cnf.id}"):
        app.instances.terminate(cluster_id, {"terminationType": "GRACEFUL"})
    occ = await k8s.done(app.instances.heal(cluster_id, {}))
    assert f"({cnf.id}) run on this cluster's Kubernetes VIM" in _events(k8s, occ.id)
    await k8s.done(app.instances.terminate(cluster_id, {"terminationType": "FORCEFUL",
                                                        "additionalParams": {"ignore_dependent_cnfs": True}}))
    occ = await k8s.done(app.instances.terminate(cnf.id, {"terminationType": "FORCEFUL"}))
    assert "already gone" in _events(k8s, occ.id)
    app.instances.delete(cnf.id)
    # nothing depends on a cluster without CNFs: its terminate needs no flag
    other, _ = await k8s.instantiate("simple")
    await k8s.done(app.instances.terminate(other, {"terminationType": "FORCEFUL"}))
