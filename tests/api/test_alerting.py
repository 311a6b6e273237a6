"""Metrics you can alert on (issue 29 item 2): operation durations, the database's occurrences and
instances by state (the same from every process sharing the database, read at most once per
cache period), build information, process metrics, every known label set at zero; and the shipped
Prometheus rules and Grafana dashboard, whose every metric name and label value is checked against
a live GET /metrics (and the rules with promtool where it is installed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from vnfm.adapters.db.stats import FleetCounts
from vnfm.adapters.metrics_fleet import FleetCollector

from .conftest import Api, ApiFactory, running_api, seed_body, settings_for
from .test_service_ops import sample

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "vnfm-rules.yml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "vnfm-rules.test.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "vnfm-dashboard.json"
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool",
                "offset", "inf", "nan"}
TARGET_LABELS = {"job", "instance"}  # added by Prometheus when it scrapes
BUILTIN = {"up"}  # Prometheus's own series for each scrape target


# ------------------------------------------------------------------ a live /metrics
Samples = dict[str, list[dict[str, str]]]


def samples_of(text: str) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, []).append(dict(s.labels))
    return out


async def _failed_instantiate(api: Api, vnfd_id: str) -> str:
    assert (await api.c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}})).status_code == 204
    inst_id = await api.create_instance(vnfd_id)
    occ = await api.wait_op(await api.task(inst_id, "instantiate", seed_body()))
    assert occ["operationState"] == "FAILED_TEMP", occ
    return inst_id


@pytest.fixture
async def failed(api_factory: ApiFactory) -> Api:
    """An app (database counts not cached) with one instance whose instantiation is FAILED_TEMP."""
    api = await api_factory(metrics_cache_seconds=0)
    _pkg, vnfd_id = await api.onboard()
    await _failed_instantiate(api, vnfd_id)
    return api


async def test_metrics_to_alert_on(failed: Api) -> None:
    before = time.time()
    text = (await failed.c.get("/metrics")).text
    assert sample(text, "vnfm_lcm_op_occs", operation="INSTANTIATE", operation_state="FAILED_TEMP") == 1
    assert sample(text, "vnfm_vnf_instances", instantiation_state="NOT_INSTANTIATED") == 1
    oldest = sample(text, "vnfm_lcm_op_occs_oldest_state_entered_timestamp_seconds", operation_state="FAILED_TEMP")
    assert before - 60 < oldest <= before + 1
    assert 'operation_state="PROCESSING"' not in [ln for ln in text.splitlines() if "oldest" in ln and "{" in ln]
    assert sample(text, "vnfm_operation_duration_seconds_count", operation="INSTANTIATE", outcome="FAILED_TEMP") == 1
    assert sample(text, "vnfm_operation_duration_seconds_sum", operation="INSTANTIATE", outcome="FAILED_TEMP") > 0
    assert sample(text, "vnfm_database_up") == 1 and sample(text, "vnfm_engine_running") == 1
    assert sample(text, "vnfm_build_info", version="0.1.0", database="sqlite") == 1
    got = samples_of(text)
    assert {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "python_info",
            "python_gc_collections_total"} <= set(got)
    # every known label set is there at zero before anything happened to it
    for name, labels in (("vnfm_operations_total", {"operation": "SCALE", "outcome": "COMPLETED"}),
                         ("vnfm_operation_duration_seconds_count", {"operation": "HEAL", "outcome": "FAILED"}),
                         ("vnfm_operations_started_total", {"operation": "TERMINATE"}),
                         ("vnfm_lcm_op_occs", {"operation": "SCALE", "operation_state": "FAILED_TEMP"}),
                         ("vnfm_vnf_instances", {"instantiation_state": "INSTANTIATED"}),
                         ("vnfm_notification_deliveries_total", {"outcome": "failed"})):
        assert labels in got[name], (name, labels)
        assert sample(text, name, **labels) == 0


async def test_every_process_sharing_the_database_reports_the_same(failed: Api) -> None:
    first = failed.core.settings
    other = settings_for(first.data_dir, worker_id="api-only", run_engine=False, metrics_cache_seconds=0)
    async with running_api(other) as api2:
        text = (await api2.c.get("/metrics")).text
    assert sample(text, "vnfm_lcm_op_occs", operation="INSTANTIATE", operation_state="FAILED_TEMP") == 1
    assert sample(text, "vnfm_vnf_instances", instantiation_state="NOT_INSTANTIATED") == 1
    assert "vnfm_engine_running" not in samples_of(text)  # it runs no engine: nothing to be down
    # its own counters saw no operation
    assert sample(text, "vnfm_operation_duration_seconds_count", operation="INSTANTIATE", outcome="FAILED_TEMP") == 0


def test_database_counts_are_cached_and_a_failure_is_reported() -> None:
    now = [100.0]
    answers: list[Any] = [FleetCounts(occurrences={("HEAL", "FAILED_TEMP"): 2}, instances={"INSTANTIATED": 3}),
                          RuntimeError("connection refused to postgresql://u:pw@db")]

    def counts() -> FleetCounts:
        answer = answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]

    fleet = FleetCollector(counts, ttl=5.0, clock=lambda: now[0])
    reg = CollectorRegistry()
    reg.register(fleet)
    text = generate_latest(reg).decode()
    assert sample(text, "vnfm_lcm_op_occs", operation="HEAL", operation_state="FAILED_TEMP") == 2
    assert sample(text, "vnfm_vnf_instances", instantiation_state="INSTANTIATED") == 3
    assert sample(text, "vnfm_database_up") == 1
    answers.pop(0)
    now[0] += 4.9
    for _ in range(50):  # a scrape storm within the period: no query
        assert sample(generate_latest(reg).decode(), "vnfm_vnf_instances", instantiation_state="INSTANTIATED") == 3
    assert fleet.queries == 1
    now[0] += 0.2
    text = generate_latest(reg).decode()
    assert fleet.queries == 2 and sample(text, "vnfm_database_up") == 0
    assert "vnfm_lcm_op_occs{" not in text and "vnfm_vnf_instances{" not in text and "pw" not in text
    generate_latest(reg)
    assert fleet.queries == 2  # the failure is cached too


# ------------------------------------------------------------------ the shipped rules and dashboard
def selectors(expr: str) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """The metric names of a PromQL expression, each with its label matchers (label, op, value)."""
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    e = re.sub(r"\[[^\]]*\]", "", e)  # ranges and subqueries
    out = []
    for m in re.finditer(r"(?<![\w.$])([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?(\s*\()?", e):
        if m[3] or m[1] in PROMQL_WORDS:
            continue  # a function or a keyword
        out.append((m[1], re.findall(r'(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"', m[2] or "")))
    return out


def unknown_names(expr: str, live: Samples) -> list[str]:
    values: dict[str, set[str]] = {}
    for series in live.values():
        for labels in series:
            for k, v in labels.items():
                values.setdefault(k, set()).add(v)
    bad = []
    for name, matchers in selectors(expr):
        if name in BUILTIN:
            continue
        if name not in live:
            bad.append(f"metric {name}")
            continue
        has = set().union(*[set(s) for s in live[name]])
        for label, op, value in matchers:
            if label in TARGET_LABELS:
                continue
            if label not in has:
                bad.append(f"label {name}{{{label}}}")
            elif op in ("=", "=~"):
                wanted = [value] if op == "=" else [v for v in value.split("|") if re.fullmatch(r"\w+", v)]
                bad += [f"value {name}{{{label}={v!r}}}" for v in wanted if v not in values.get(label, set())]
    return bad


def rule_exprs() -> list[tuple[str, str]]:
    doc = yaml.safe_load(RULES.read_text())
    return [(r.get("alert") or r["record"], r["expr"]) for g in doc["groups"] for r in g["rules"]]


def dashboard_exprs() -> list[tuple[str, str]]:
    dash = json.loads(DASHBOARD.read_text())
    out = [(p["title"], t["expr"]) for p in dash["panels"] for t in p["targets"]]
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            metric = re.fullmatch(r"label_values\((\w+),\s*\w+\)", var["query"])
            assert metric, var["query"]
            out.append((f"variable {var['name']}", metric[1]))
    return out


async def test_rules_and_dashboard_use_only_what_metrics_has(failed: Api) -> None:
    live = samples_of((await failed.c.get("/metrics")).text)
    exprs = rule_exprs() + dashboard_exprs()
    assert len(rule_exprs()) >= 6 and len(dashboard_exprs()) >= 12
    bad = {where: unknown_names(expr, live) for where, expr in exprs}
    assert not {k: v for k, v in bad.items() if v}
    used = {name for _, expr in exprs for name, _ in selectors(expr)}
    assert {"vnfm_lcm_op_occs", "vnfm_operation_duration_seconds_bucket", "vnfm_database_up", "up",
            "vnfm_notification_deliveries_total", "vnfm_lcm_op_occs_oldest_state_entered_timestamp_seconds"} <= used
    # the check can fail: a misspelt name, an unknown label, a label value that never occurs
    assert unknown_names('sum(rate(vnfm_operation_total[5m]))', live) == ["metric vnfm_operation_total"]
    assert unknown_names('max(vnfm_lcm_op_occs{state="FAILED_TEMP"})', live) == ["label vnfm_lcm_op_occs{state}"]
    assert unknown_names('vnfm_lcm_op_occs{operation_state=~"FAILED_TEMP|FAILEDTEMP"} > 0', live) == [
        "value vnfm_lcm_op_occs{operation_state='FAILEDTEMP'}"]


def test_dashboard_is_well_formed() -> None:
    dash = json.loads(DASHBOARD.read_text())
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)) and dash["uid"] and dash["title"]
    for p in dash["panels"]:
        g = p["gridPos"]
        assert g["x"] + g["w"] <= 24 and p["targets"], p["title"]
        assert p["datasource"]["uid"] == "${datasource}", p["title"]  # the importer picks the Prometheus


def _promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["promtool", *args], capture_output=True, text=True, timeout=120, input=stdin)


NO_PROMTOOL = pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed here "
                                 "(Debian package prometheus, .ci/integration-deps.sh)")


@NO_PROMTOOL
async def test_promtool_lints_the_live_metrics(failed: Api) -> None:
    text = (await failed.c.get("/metrics")).text
    res = _promtool("check", "metrics", stdin=text)
    assert res.returncode == 0 and not res.stdout.strip(), res.stdout + res.stderr
    bad = "# HELP vnfm_things Things\n# TYPE vnfm_things counter\nvnfm_things 1\n"  # a counter without _total
    assert _promtool("check", "metrics", stdin=bad).returncode != 0


@NO_PROMTOOL
def test_promtool_checks_and_unit_tests_the_rules(tmp_path: Path) -> None:
    res = _promtool("check", "rules", str(RULES))
    assert res.returncode == 0, res.stdout + res.stderr
    res = _promtool("test", "rules", str(RULE_TESTS))
    assert res.returncode == 0, res.stdout + res.stderr
    # the checks can fail: a broken expression, and a rule that no longer fires as its test expects
    broken = tmp_path / "vnfm-rules.yml"
    broken.write_text(RULES.read_text().replace("> 0\n", "> > 0\n", 1))
    assert _promtool("check", "rules", str(broken)).returncode != 0
    broken.write_text(RULES.read_text().replace('operation_state="FAILED_TEMP"', 'operation_state="FAILED"'))
    shutil.copy(RULE_TESTS, tmp_path / RULE_TESTS.name)
    assert _promtool("test", "rules", str(tmp_path / RULE_TESTS.name)).returncode != 0
