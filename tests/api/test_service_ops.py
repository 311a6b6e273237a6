"""Running vnfm as a service: /healthz, /readyz, /metrics (scraped after a lifecycle), the access
log with request ids, one log line per LCM stage start and end."""

from __future__ import annotations

import datetime
import ipaddress
import logging
import re
from pathlib import Path

import httpx
import pytest

from .conftest import MASTER_PW, WORKER_PW, Api, ApiFactory, settings_for


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in the Prometheus text format (0 when absent)."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        m = re.match(r"^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$", line)
        if not m or m[1] != name:
            continue
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m[3] or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(m[4])
    return 0.0


async def test_healthz_and_readyz(api: Api) -> None:
    r = await api.c.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}
    r = await api.c.get("/readyz")
    assert r.status_code == 200, r.text
    assert r.json()["checks"] == {"database": "ok", "engine": "ok"}


async def test_readyz_says_what_is_not_ready(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def down() -> None:
        raise ConnectionError("postgresql://vnfm:pw@db refused")

    monkeypatch.setattr(api.core, "db_ping", down)
    r = await api.c.get("/readyz")
    assert r.status_code == 503
    assert r.json()["checks"]["database"] == "unreachable (ConnectionError)"
    monkeypatch.undo()
    await api.core.engine.stop()
    r = await api.c.get("/readyz")
    assert r.status_code == 503 and r.json()["checks"]["engine"] == "not running"


async def test_probes_need_no_token_metrics_does(api_factory: ApiFactory) -> None:
    api = await api_factory(auth_token="t0ken")
    assert (await api.c.get("/healthz")).status_code == 200
    assert (await api.c.get("/readyz")).status_code == 200
    assert (await api.c.get("/metrics")).status_code == 401
    r = await api.c.get("/metrics", headers={"Authorization": "Bearer t0ken"})
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")


async def test_metrics_after_a_lifecycle(onboarded: tuple[Api, str, str]) -> None:
    api, _pkg, vnfd_id = onboarded
    inst_id = await api.instantiated(vnfd_id)
    await api.run(inst_id, "terminate", {"terminationType": "FORCEFUL"})
    text = (await api.c.get("/metrics")).text
    assert sample(text, "vnfm_operations_total", operation="INSTANTIATE", outcome="COMPLETED") == 1
    assert sample(text, "vnfm_operations_total", operation="TERMINATE", outcome="COMPLETED") == 1
    assert sample(text, "vnfm_operations_started_total", operation="INSTANTIATE") == 1
    assert sample(text, "vnfm_stage_duration_seconds_count", operation="INSTANTIATE", stage="infra_deploy",
                  outcome="ok") == 1
    assert sample(text, "vnfm_operations_in_flight") == 0
    assert sample(text, "vnfm_http_request_duration_seconds_count", method="POST",
                  route="/vnflcm/v1/vnf_instances/{inst_id}/instantiate", status="202") == 1
    assert "vnfm_notification_deliveries_total" in text or "vnfm_notification_deliveries" in text
    assert MASTER_PW not in text


async def test_metrics_labels_stay_bounded(api: Api) -> None:
    await api.c.request("FROBNICATE", "/vnflcm/v1/no/such/path")
    text = (await api.c.get("/metrics")).text
    assert "FROBNICATE" not in text and "no/such" not in text
    assert sample(text, "vnfm_http_request_duration_seconds_count", method="other", route="other") == 1


async def test_notification_deliveries_are_counted(api: Api) -> None:
    m = api.core.metrics
    m.notification_delivered(True)
    m.notification_delivered(False)
    text = (await api.c.get("/metrics")).text
    assert sample(text, "vnfm_notification_deliveries_total", outcome="delivered") == 1
    assert sample(text, "vnfm_notification_deliveries_total", outcome="failed") == 1


async def test_access_log_with_request_ids(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="vnfm.access")
    r = await api.c.get("/vnflcm/v1/vnf_instances", headers={"X-Request-Id": "abc-123"})
    assert r.headers["X-Request-Id"] == "abc-123"
    r2 = await api.c.get("/vnflcm/v1/vnf_instances/nope?password=x", headers={"X-Request-Id": "bad id\t!"})
    rid = r2.headers["X-Request-Id"]
    assert re.fullmatch(r"[0-9a-f]{16}", rid)
    records = [r for r in caplog.records if r.name == "vnfm.access"]
    first, second = records[-2:]
    assert (first.request_id, first.method, first.path, first.status) == (  # type: ignore[attr-defined]
        "abc-123", "GET", "/vnflcm/v1/vnf_instances", 200)
    assert second.request_id == rid and second.status == 404  # type: ignore[attr-defined]
    assert "password" not in second.getMessage()  # the query string is never logged


async def test_one_log_line_per_stage_start_and_end(onboarded: tuple[Api, str, str],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    api, _pkg, vnfd_id = onboarded
    caplog.set_level(logging.INFO, logger="vnfm.lcm")
    caplog.set_level(logging.INFO, logger="vnfm.service")
    inst_id = await api.instantiated(vnfd_id)
    lcm = [r for r in caplog.records if r.name == "vnfm.lcm"]
    starts = [r for r in lcm if r.getMessage().endswith("started") and getattr(r, "stage", None)]
    ends = [r for r in lcm if getattr(r, "outcome", None) == "ok"]
    assert [r.stage for r in starts] == [r.stage for r in ends]  # type: ignore[attr-defined]
    assert "infra_deploy" in [r.stage for r in ends]  # type: ignore[attr-defined]
    for r in ends:
        assert r.instance == inst_id and r.operation == "INSTANTIATE"  # type: ignore[attr-defined]
        assert isinstance(r.seconds, float) and r.op  # type: ignore[attr-defined]
    done = [r for r in caplog.records if "ended COMPLETED" in r.getMessage()]
    assert len(done) == 1 and done[0].instance == inst_id  # type: ignore[attr-defined]
    # the progress lines are the occurrence's (API); the log mirrors them at DEBUG only
    mirrored = [r for r in caplog.records if r.name == "vnfm.service.lcm.job" and r.getMessage().startswith("op ")]
    assert mirrored == []
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert MASTER_PW not in text and WORKER_PW not in text


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp / "cert.pem", tmp / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_tls_server_answers_over_https_only(tmp_path: Path) -> None:
    from vnfm.entrypoints.api.server import start_in_thread

    cert, key = _self_signed(tmp_path)
    handle = start_in_thread(settings_for(tmp_path / "data", port=0, tls_cert=cert, tls_key=key))
    try:
        assert handle.url.startswith("https://")
        r = httpx.get(f"{handle.url}/healthz", verify=str(cert))
        assert r.status_code == 200 and r.json() == {"status": "ok"}
        with pytest.raises(httpx.HTTPError):
            httpx.get(handle.url.replace("https://", "http://") + "/healthz", timeout=5)
    finally:
        handle.stop()


async def test_fault_injection_is_mounted_only_when_enabled(api_factory: ApiFactory) -> None:
    off = await api_factory(fault_injection=False)
    assert (await off.c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}})).status_code == 404
    assert (await off.c.delete("/sim/v1/faults")).status_code == 404
    assert (await off.c.get("/sim/v1/state")).status_code == 200  # the rest of /sim/v1 stays
    on = await api_factory(fault_injection=True)
    assert (await on.c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}})).status_code == 204
    assert (await on.c.delete("/sim/v1/faults")).status_code == 204


def test_fault_injection_is_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from vnfm.config import Settings

    monkeypatch.delenv("VNFM_FAULT_INJECTION", raising=False)
    assert Settings().fault_injection is False
    monkeypatch.setenv("VNFM_FAULT_INJECTION", "1")
    assert Settings().fault_injection is True
