"""The "LCM task with --wait" shape (lcm_task.py): what a request prints without --wait, how
--wait follows the occurrence, and the resolutions of a FAILED_TEMP one (`vnfm op ...`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.cli.cli_fake import SEED_REQUEST, FakeVnfm, new_vnf, request_file, run
from vnfm.entrypoints.cli.wait import EXIT_WAIT_TIMEOUT


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
    assert res.exit_code == EXIT_WAIT_TIMEOUT == 124  # not 1 (the operation failed) nor 2 (usage)
    assert "gave up waiting" in res.stderr and "PROCESSING" in res.stderr


def test_task_commands_print_what_o_and_c_ask_for(fake: FakeVnfm, tmp_path: Path) -> None:
    """`-o value -c vnfLcmOpOccId`: the occurrence id alone, for scripts; -o json: the whole answer."""
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "-o", "value",
              "-c", "vnfLcmOpOccId")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == next(iter(fake.ops))
    # with --wait, the occurrence at its end: its state alone, progress and notes on stderr
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait", "-o", "value",
              "-c", "operationState")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "COMPLETED" and "PROCESSING" in res.stderr
    res = run(fake, "-o", "json", "vnf", "scale", vnf_id, "--type", "SCALE_OUT", "--aspect-id", "worker_instance")
    scale_id = [o["id"] for o in fake.ops.values() if o["operation"] == "SCALE"][0]
    assert json.loads(res.stdout) == {"vnfInstanceId": vnf_id, "vnfLcmOpOccId": scale_id}
    res = run(fake, "vnf", "scale", vnf_id, "--type", "SCALE_OUT", "--aspect-id", "worker_instance", "-c", "nope")
    assert res.exit_code == 2 and "no field nope" in res.stderr
    assert len(fake.bodies("POST", "/scale")) == 1  # refused before the request was sent
    # the resolutions too
    fake.fail["INSTANTIATE"] = {"status": 500, "title": "Internal Server Error", "detail": "boom"}
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait", "-o", "value",
              "-c", "id")  # with --wait: the fields of the occurrence (VnfLcmOpOcc)
    assert res.exit_code == 1
    failed_id = res.stdout.strip()
    assert fake.ops[failed_id]["operationState"] == "FAILED_TEMP"
    res = run(fake, "op", "retry", failed_id, "-o", "value", "-c", "vnfLcmOpOccId")
    assert res.exit_code == 0 and res.stdout.strip() == failed_id


def test_wait_shows_progress_lines_as_they_arrive(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.progress["INSTANTIATE"] = ["deploying 1 x master", "server m1 ACTIVE", "token s3cr3t=abc"]
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    shown = [ln.strip() for ln in lines if ln.startswith("    ")]
    assert [ln.split(" ", 1)[1] for ln in shown[:2]] == [
        "instantiate_start: deploying 1 x master", "instantiate_start: server m1 ACTIVE"]
    assert shown[0].split()[0].count(":") == 2  # HH:MM:SS of the server's line
    # each line once, between PROCESSING and COMPLETED
    assert len(shown) == 3
    order = [ln.split()[0] for ln in lines if ln.startswith("  ") and not ln.startswith("    ")]
    assert order == ["STARTING", "PROCESSING", "COMPLETED"]
    i_proc = next(i for i, ln in enumerate(lines) if ln.startswith("  PROCESSING"))
    i_done = next(i for i, ln in enumerate(lines) if ln.startswith("  COMPLETED"))
    assert all(i_proc < lines.index("    " + ln) < i_done for ln in shown)


def test_wait_progress_goes_to_stderr_under_json(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.progress["INSTANTIATE"] = ["deploying 1 x master"]
    vnf_id = new_vnf(fake)
    res = run(fake, "--json", "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["operationState"] == "COMPLETED"
    assert "deploying 1 x master" in res.stderr


def test_retry_does_not_repeat_the_lines_of_the_failed_attempt(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.fail["INSTANTIATE"] = {"status": 500, "title": "Internal Server Error", "detail": "boom"}
    fake.progress["INSTANTIATE"] = ["first attempt line"]
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 1 and "first attempt line" in res.stdout
    op_id = next(iter(fake.ops))
    fake.progress["INSTANTIATE"] = ["second attempt line"]
    res = run(fake, "op", "retry", op_id, "--wait")
    assert res.exit_code == 0, res.output
    assert "second attempt line" in res.stdout and "first attempt line" not in res.stdout


def test_failure_says_which_resolution_fits(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.fail["INSTANTIATE"] = {"status": 500, "title": "Internal Server Error", "detail": "ssh timeout"}
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    op_id = next(iter(fake.ops))
    steps = res.stderr.split("What next:\n")[1].splitlines()
    assert steps[0].split()[:3] == ["vnfm", "op", "retry"] and steps[0].endswith("<- suggested")
    assert [s.split()[2] for s in steps] == ["retry", "rollback", "fail"]
    assert all(op_id in s for s in steps)

    # a refused request (4xx recorded) on an instantiate: rollback first; heal cannot roll back
    fake.fail["INSTANTIATE"] = {"status": 422, "title": "Unprocessable Entity", "detail": "bad CIDR"}
    vnf2 = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf2, request_file(tmp_path, SEED_REQUEST), "--wait")
    steps = res.stderr.split("What next:\n")[1].splitlines()
    assert [s.split()[2] for s in steps] == ["rollback", "retry", "fail"]
    fake.fail["HEAL"] = {"status": 500, "title": "Internal Server Error", "detail": "x"}
    run(fake, "op", "fail", [o for o in fake.ops.values() if o["vnfInstanceId"] == vnf2][0]["id"])
    fake.fail.pop("INSTANTIATE")
    vnf3 = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf3, request_file(tmp_path, SEED_REQUEST), "--wait")
    res = run(fake, "vnf", "heal", vnf3, "--yes", "--wait")
    steps = res.stderr.split("What next:\n")[1].splitlines()
    assert [s.split()[2] for s in steps] == ["retry", "fail"]


def test_ctrl_c_says_the_operation_goes_on(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.stuck.add("INSTANTIATE")
    vnf_id = new_vnf(fake)
    fake.interrupt_after = 3
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 130
    op_id = next(iter(fake.ops))
    assert "keeps running in the server" in res.stderr
    assert f"vnfm op watch {op_id}" in res.stderr and f"vnfm op cancel {op_id}" in res.stderr


def test_op_watch_and_cancel(fake: FakeVnfm, tmp_path: Path) -> None:
    fake.progress["INSTANTIATE"] = ["a line"]
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST))
    op_id = next(iter(fake.ops))
    res = run(fake, "op", "cancel", op_id)
    assert res.exit_code == 0 and "GRACEFUL" in res.stdout
    assert fake.bodies("POST", "/cancel") == [{"cancelMode": "GRACEFUL"}]
    run(fake, "op", "cancel", op_id, "--mode", "forceful")
    assert fake.bodies("POST", "/cancel")[-1] == {"cancelMode": "FORCEFUL"}
    res = run(fake, "op", "watch", op_id)
    assert res.exit_code == 0, res.output
    assert "a line" in res.stdout and "COMPLETED" in res.stdout


def test_spinner_on_a_terminal_only() -> None:
    import click
    from click.testing import CliRunner

    from vnfm.entrypoints.cli.progress import ProgressView

    @click.command()
    @click.option("--tty", is_flag=True)
    def cmd(tty: bool) -> None:
        view = ProgressView(err=False, tty=tty)
        obs = view.observer()
        obs.change("PROCESSING", 0.1)
        obs.on_poll and obs.on_poll({}, 3.0)
        obs.progress({"vnfmProgress": [{"time": "2024-01-01T10:11:12Z", "stage": "s1", "message": "m"}]}, 3.2)
        obs.on_poll and obs.on_poll({}, 4.0)
        view.clear()

    out = CliRunner().invoke(cmd, ["--tty"]).output
    assert "PROCESSING 3s" in out and "PROCESSING 4s  s1" in out and "    10:11:12 s1: m" in out
    assert out.count("\r") >= 3  # the spinner line is erased before each printed line and at the end
    plain = CliRunner().invoke(cmd, []).output
    assert "\r" not in plain and plain.splitlines() == ["  PROCESSING  0.1s", "    10:11:12 s1: m"]
