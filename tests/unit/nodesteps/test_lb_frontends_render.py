"""LbFrontends over SSH without a host: the rendered files (checked by the real `haproxy -c` when
it is installed), what the handler hands the script, and the script's refusals run locally on
temporary files (a port of another owner, a configuration HAProxy rejects: neither starts HAProxy)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from vnfm.adapters.nodes.ssh import lb
from vnfm.adapters.nodes.ssh.base import parse_output, script_text
from vnfm.adapters.nodes.ssh.render import lb_main_config_path, render_lb_main, render_lb_owner
from vnfm.adapters.remote.ssh import SshTarget, script_payload
from vnfm.nodesteps import NodeStep
from vnfm.nodesteps.lb import Backend, Frontend, LbFrontends, PoolRef, ServerPool


def cluster(conf_dir: str = "/etc/haproxy/vnfm.d", pidfile: str = "/run/haproxy.pid") -> LbFrontends:
    return LbFrontends(
        "cluster",
        (Frontend("k8s-api", 8383, (Backend("master1", "10.0.0.1", 6443), Backend("master2", "fd00::2", 6443))),),
        conf_dir=conf_dir, pidfile=pidfile,
        pools=(ServerPool("nodeport", (("master1", "10.0.0.1"), ("worker1", "10.0.0.5"), ("worker6", "fd00::6"))),),
    )


def cnf(owner: str, port: int, *hosts: str, conf_dir: str = "/etc/haproxy/vnfm.d",
        pidfile: str = "/run/haproxy.pid") -> LbFrontends:
    return LbFrontends(owner, (Frontend("web", port, tuple(Backend(f"n{i}", h, port) for i, h in enumerate(hosts))),),
                       conf_dir=conf_dir, pidfile=pidfile)


def test_main_config_sits_beside_the_owners_directory() -> None:
    assert lb_main_config_path("/etc/haproxy/vnfm.d") == "/etc/haproxy/vnfm.cfg"
    assert lb_main_config_path("/etc/haproxy/vnfm.d/") == "/etc/haproxy/vnfm.cfg"
    assert lb_main_config_path("/srv/lb") == "/srv/lb.cfg"
    main = render_lb_main(cluster())
    assert "  master-worker\n" in main and "  pidfile /run/haproxy.pid\n" in main
    assert "stats socket /run/haproxy-vnfm.sock mode 600 level admin expose-fd listeners" in main
    assert "  mode tcp\n" in main and "\nfrontend" not in main and "bind" not in main


def test_owner_file_renders_frontends_backends_and_pools() -> None:
    text = render_lb_owner(cluster())
    assert text.startswith("# managed by vnfm: the part of owner cluster (ports 8383)")
    assert ("frontend vnfm_cluster_fe_k8s-api\n  mode tcp\n  bind :8383\n  default_backend vnfm_cluster_be_k8s-api\n"
            in text)
    assert "backend vnfm_cluster_be_k8s-api\n  mode tcp\n  balance roundrobin\n" in text
    assert "  server master1 10.0.0.1:6443 check\n" in text and "  server master2 [fd00::2]:6443 check\n" in text
    # a pool's servers have no port: they take the port the client connected to (NodePorts)
    pool = text[text.index("backend vnfm_cluster_pool_nodeport"):]
    assert pool.splitlines()[3:] == ["  server master1 10.0.0.1", "  server worker1 10.0.0.5",
                                     "  server worker6 [fd00::6]"]
    assert render_lb_owner(cluster()) == text  # deterministic: the script's comparison relies on it


def test_owner_without_frontends_or_pools_has_no_file() -> None:
    assert render_lb_owner(LbFrontends("cnf-x", ())) == ""
    pools_only = LbFrontends("cnf-x", (), pools=(ServerPool("p", (("w1", "10.0.0.5"),)),))
    assert "backend vnfm_cnf-x_pool_p" in render_lb_owner(pools_only)
    assert "(ports none)" in render_lb_owner(pools_only)


@pytest.mark.parametrize("bad", [
    dict(owner="a b"), dict(owner="x;reboot"), dict(owner="../etc"),
    dict(frontends=(Frontend("web", 80, (("n1", "10.0.0.1", 80),)), Frontend("web2", 80, ()))),
    dict(conf_dir="/etc/haproxy/$(id)"),
])
def test_nothing_unvalidated_reaches_the_files_or_the_shell(bad: dict[str, object]) -> None:
    args: dict[str, object] = {"owner": "cnf-a", "frontends": ()} | bad
    with pytest.raises(ValueError):
        LbFrontends(**args)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Frontend("web", 80, (("n1", "10.0.0.1;rm -rf /", 80),))


def pooled(owner: str, port: int, conf_dir: str = "/etc/haproxy/vnfm.d", pool: str = "nodeport") -> LbFrontends:
    """A CNF's part routed to the cluster's NodePort pool (which the cluster keeps current)."""
    return LbFrontends(owner, (Frontend("web", port, (), pool=PoolRef("cluster", pool)),), conf_dir=conf_dir)


def test_a_frontend_routed_to_another_owners_pool_has_no_backend_of_its_own() -> None:
    text = render_lb_owner(pooled("cnf-b", 30090))
    assert ("frontend vnfm_cnf-b_fe_web\n  mode tcp\n  bind :30090\n  default_backend vnfm_cluster_pool_nodeport\n"
            in text)
    assert "\nbackend" not in text and "server" not in text
    with pytest.raises(ValueError, match="backends or a pool"):
        Frontend("web", 80, (("n1", "10.0.0.1", 80),), pool=PoolRef("cluster", "nodeport"))
    with pytest.raises(ValueError):
        Frontend("web", 80, (), pool=PoolRef("cluster", "no de;port"))


def _haproxy_check(conf_dir: Path, parts: list[LbFrontends]) -> subprocess.CompletedProcess[str]:
    Path(lb_main_config_path(str(conf_dir))).write_text(render_lb_main(parts[0]))
    for p in parts:
        (conf_dir / f"{p.owner}.cfg").write_text(render_lb_owner(p))
    return subprocess.run(["haproxy", "-c", "-f", lb_main_config_path(str(conf_dir)), "-f", str(conf_dir)],
                          capture_output=True, text=True, timeout=20)


def test_haproxy_accepts_a_pool_route_and_refuses_one_to_a_missing_pool(tmp_path: Path) -> None:
    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not installed (apt-get install haproxy)")
    ok, bad = tmp_path / "ok", tmp_path / "bad"
    ok.mkdir()
    bad.mkdir()
    r = _haproxy_check(ok, [cluster(str(ok)), pooled("cnf-b", 30090, str(ok))])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _haproxy_check(bad, [cluster(str(bad)), pooled("cnf-b", 30090, str(bad), pool="gone")])
    assert r.returncode != 0 and "vnfm_cluster_pool_gone" in r.stdout + r.stderr


def test_rendered_configuration_passes_haproxy_check(tmp_path: Path) -> None:
    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not installed (apt-get install haproxy)")
    conf_dir = tmp_path / "vnfm.d"
    conf_dir.mkdir()
    parts = [cluster(str(conf_dir)), cnf("cnf-a", 30080, "10.0.0.5", "10.0.0.6", conf_dir=str(conf_dir))]
    Path(lb_main_config_path(str(conf_dir))).write_text(render_lb_main(parts[0]))
    for p in parts:
        (conf_dir / f"{p.owner}.cfg").write_text(render_lb_owner(p))
    r = subprocess.run(["haproxy", "-c", "-f", lb_main_config_path(str(conf_dir)), "-f", str(conf_dir)],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WARNING" not in r.stdout + r.stderr


class Recorder:
    def __init__(self, out: dict[str, str]) -> None:
        self.out = out
        self.calls: list[tuple[str, Mapping[str, str]]] = []

    async def script(self, target: SshTarget, step: NodeStep, name: str, inputs: Mapping[str, str],
                     secrets: Mapping[str, str] | None = None, timeout: float | None = None) -> dict[str, str]:
        assert secrets is None
        self.calls.append((name, dict(inputs)))
        return self.out


async def test_handler_hands_the_rendered_files_to_the_script() -> None:
    rec = Recorder({"changed": "true", "action": "reload", "master_pid": "42"})
    step = cnf("cnf-a", 30080, "10.0.0.5", "10.0.0.6")
    res = await lb.HANDLERS[LbFrontends](rec, SshTarget("lb", username="root"), step)
    assert res.changed and res.data == {"ports": [30080], "action": "reload", "master_pid": 42}
    name, inputs = rec.calls[0]
    assert name == "lb_frontends"
    assert inputs["CONF_DIR"] == "/etc/haproxy/vnfm.d" and inputs["MAIN_CFG"] == "/etc/haproxy/vnfm.cfg"
    assert inputs["OWNER"] == "cnf-a" and inputs["PORTS"] == "30080"
    assert inputs["OWNER_TEXT"] == render_lb_owner(step) and inputs["MAIN_TEXT"] == render_lb_main(step)
    rec.out = {"changed": "false", "action": "none", "master_pid": "42"}
    res = await lb.HANDLERS[LbFrontends](rec, SshTarget("lb", username="root"), LbFrontends("cnf-a", ()))
    assert not res.changed and res.data["ports"] == []
    assert rec.calls[1][1]["OWNER_TEXT"] == "" and rec.calls[1][1]["PORTS"] == ""


def run_script(step: LbFrontends) -> subprocess.CompletedProcess[str]:
    inputs = {"CONF_DIR": step.conf_dir, "MAIN_CFG": lb_main_config_path(step.conf_dir),
              "MAIN_TEXT": render_lb_main(step), "OWNER": step.owner, "OWNER_TEXT": render_lb_owner(step),
              "PORTS": " ".join(str(f.port) for f in step.frontends), "PIDFILE": step.pidfile, "DEADLINE_S": "5"}
    return subprocess.run(["bash", "-s"], input=script_payload(script_text("lb_frontends"), None, inputs),
                          capture_output=True, text=True, timeout=30)


def snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and p.name != ".lock"}


def test_script_refuses_a_port_of_another_owner_and_a_broken_configuration(tmp_path: Path) -> None:
    """Both refusals happen before HAProxy would be started or reloaded, so they run here on files."""
    if shutil.which("haproxy") is None or shutil.which("flock") is None:
        pytest.skip("haproxy or flock is not installed")
    conf_dir, pidfile = tmp_path / "vnfm.d", str(tmp_path / "run/haproxy.pid")
    conf_dir.mkdir()
    main = Path(lb_main_config_path(str(conf_dir)))
    b = cnf("cnf-b", 30090, "10.0.0.5", conf_dir=str(conf_dir), pidfile=pidfile)
    main.write_text(render_lb_main(b))
    (conf_dir / "cnf-b.cfg").write_text(render_lb_owner(b))
    a = cnf("cnf-a", 30080, "10.0.0.5", conf_dir=str(conf_dir), pidfile=pidfile)
    (conf_dir / "cnf-a.cfg").write_text(render_lb_owner(a))
    before = snapshot(tmp_path)

    r = run_script(cnf("cnf-c", 30090, "10.0.0.7", conf_dir=str(conf_dir), pidfile=pidfile))
    assert r.returncode == 4, r.stderr
    assert f"port(s) 30090 already served for owner cnf-b ({conf_dir}/cnf-b.cfg)" in r.stderr
    assert snapshot(tmp_path) == before

    broken = cnf("cnf-a", 30081, "no-such-node.invalid", conf_dir=str(conf_dir), pidfile=pidfile)
    r = run_script(broken)
    assert r.returncode == 3, r.stderr
    assert "haproxy rejected" in r.stderr and "no-such-node.invalid" in r.stderr
    assert snapshot(tmp_path) == before  # cnf-a's previous file is back, nothing left behind
    assert parse_output(r.stdout) == {}
    assert not Path(pidfile).exists()

    # a new owner whose configuration is broken leaves no file at all
    r = run_script(cnf("cnf-d", 30100, "no-such-node.invalid", conf_dir=str(conf_dir), pidfile=pidfile))
    assert r.returncode == 3 and snapshot(tmp_path) == before
