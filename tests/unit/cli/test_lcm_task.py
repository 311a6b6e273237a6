"""The "LCM task with --wait" shape (lcm_task.py): what a request prints without --wait, how
--wait follows the occurrence, and the resolutions of a FAILED_TEMP one (`vnfm op ...`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.cli.cli_fake import SEED_REQUEST, FakeVnfm, new_vnf, request_file, run


def test_instantiate_without_wait_prints_the_occurrence(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST))
    assert res.exit_code == 0
    op_id = next(iter(fake.ops))
    assert f"vnfLcmOpOcc {op_id}" in res.stdout and f"vnfm op show {op_id}" in res.stdout
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--json")
    assert res.exit_code == 1 and "Error 409 Conflict" in res.stderr


def test_wait_prints_state_changes_with_elapsed_time(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 0, res.output
    progress = [ln for ln in res.stdout.splitlines() if ln.startswith("  ")]
    assert [ln.split()[0] for ln in progress] == ["STARTING", "PROCESSING", "COMPLETED"]
    assert all(ln.split()[1].endswith("s") for ln in progress)
    float(progress[-1].split()[1][:-1])
    assert "INSTANTIATE COMPLETED" in res.stdout


def test_wait_with_json_keeps_stdout_parseable(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    res = run(fake, "--json", "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 0
    op = json.loads(res.stdout)
    assert op["operationState"] == "COMPLETED"
    assert "PROCESSING" in res.stderr
    assert "m4ster-pw" not in res.stdout


def test_wait_failure_prints_error_and_exits_1(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.fail["SCALE"] = {
        "status": 500,
        "title": "Internal Server Error",
        "detail": "server worker-3 failed to build (proxy http://u:pw9@p:1)",
    }
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    res = run(fake, "vnf", "scale", vnf_id, "--type", "SCALE_OUT", "--aspect-id", "worker_instance", "--wait")
    assert res.exit_code == 1
    assert "Error: SCALE FAILED_TEMP" in res.stderr
    assert "server worker-3 failed to build" in res.stderr
    assert "pw9" not in res.output
    op_id = [o for o in fake.ops.values() if o["operation"] == "SCALE"][0]["id"]
    assert f"vnfm op retry {op_id}" in res.stderr

    # op show renders the error; retry --wait follows the occurrence to COMPLETED
    assert "failed to build" in run(fake, "op", "show", op_id).stdout
    assert "FAILED_TEMP" in run(fake, "op", "list").stdout
    res = run(fake, "op", "retry", op_id, "--wait")
    assert res.exit_code == 0, res.output
    states = [ln.split()[0] for ln in res.stdout.splitlines() if ln.startswith("  ")]
    assert states == ["PROCESSING", "COMPLETED"]


def test_rollback_wait_succeeds_on_rolled_back(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.fail["INSTANTIATE"] = {"status": 500, "title": "Internal Server Error", "detail": "boom"}
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 1
    op_id = next(iter(fake.ops))
    res = run(fake, "op", "rollback", op_id, "--wait")
    assert res.exit_code == 0, res.output
    assert "ROLLED_BACK" in res.stdout


def test_op_fail(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.fail["INSTANTIATE"] = {"status": 500, "title": "Internal Server Error", "detail": "boom"}
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST))
    op_id = next(iter(fake.ops))
    for _ in range(3):  # STARTING, PROCESSING, FAILED_TEMP
        run(fake, "op", "show", op_id)
    assert fake.ops[op_id]["operationState"] == "FAILED_TEMP"
    res = run(fake, "op", "fail", op_id, "--json")
    assert res.exit_code == 0
    assert json.loads(res.stdout)["operationState"] == "FAILED"


def test_wait_timeout(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.stuck.add("INSTANTIATE")
    vnf_id = new_vnf(fake)
    res = run(
        fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait", "--timeout", "0.2"
    )
    assert res.exit_code == 1
    assert "gave up waiting" in res.stderr and "PROCESSING" in res.stderr
