"""`vnfm vnf ...` against the fake server: rendering and the LCM request bodies."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.cli.cli_fake import SEED_REQUEST, FakeVnfm, new_vnf, request_file, run


def test_vnf_show_lists_vnfcs_and_masks_secrets(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    res = run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert res.exit_code == 0, res.output
    res = run(fake, "vnf", "show", vnf_id)
    assert res.exit_code == 0
    assert "VNFCs:" in res.stdout
    assert "masterNode_CP1=10.0.0." in res.stdout
    assert "worker_instance=0" in res.stdout
    for out in (res.stdout, run(fake, "vnf", "show", vnf_id, "--json").stdout):
        assert "m4ster-pw" not in out and "w0rker-pw" not in out
        assert "******" in out
    shown = json.loads(run(fake, "--show-secrets", "vnf", "show", vnf_id, "--json").stdout)
    params = shown["instantiatedVnfInfo"]["additionalParams"]["k8s_cluster_installation_param"]
    assert params["master_node"]["password"] == "m4ster-pw"
    # the request reached the server unchanged (masking is for display only)
    assert fake.bodies("POST", "/instantiate") == [SEED_REQUEST]
    table = run(fake, "vnf", "list").stdout
    assert "INSTANTIATED" in table and " 3 " in table


def test_vnf_show_lists_open_alarms(fake: FakeVnfm) -> None:
    vnf_id = new_vnf(fake)
    assert "Open alarms" not in run(fake, "vnf", "show", vnf_id).stdout
    base = {"managedObjectId": vnf_id, "vnfcInstanceIds": ["vnfc-7"], "probableCause": "VIM_SERVER_DOWN",
            "alarmRaisedTime": "2024-01-01T00:00:09Z", "ackState": "UNACKNOWLEDGED"}
    fake.alarms += [{**base, "id": "al-1", "perceivedSeverity": "CRITICAL"},
                    {**base, "id": "al-2", "perceivedSeverity": "CLEARED"}]
    out = run(fake, "vnf", "show", vnf_id).stdout
    assert "Open alarms:\n  - CRITICAL VNFC vnfc-7: VIM_SERVER_DOWN since 2024-01-01T00:00:09Z " \
           "(UNACKNOWLEDGED, alarm al-1)" in out
    assert "al-2" not in out


def test_scale_heal_terminate_bodies(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"k8s_cluster_installation_param": {"worker_node": {"password": "x"}}}))
    res = run(
        fake,
        "vnf",
        "scale",
        vnf_id,
        "--type",
        "SCALE_OUT",
        "--aspect-id",
        "worker_instance",
        "--number-of-steps",
        "2",
        "--additional-params-file",
        str(extra),
        "--wait",
    )
    assert res.exit_code == 0, res.output
    assert fake.bodies("POST", "/scale")[0] == {
        "type": "SCALE_OUT",
        "aspectId": "worker_instance",
        "numberOfSteps": 2,
        "additionalParams": {"k8s_cluster_installation_param": {"worker_node": {"password": "x"}}},
    }
    vnfc = fake.instances[vnf_id]["instantiatedVnfInfo"]["vnfcResourceInfo"][-1]["id"]
    assert run(fake, "vnf", "heal", vnf_id, "--vnfc", vnfc, "--cause", "dead", "--wait").exit_code == 0
    res = run(fake, "vnf", "heal", vnf_id, "--wait")  # the entire VNF: asks first (no input: aborted)
    assert res.exit_code == 1 and "heal the entire VNF" in res.output
    assert run(fake, "vnf", "heal", vnf_id, "--wait", "--yes").exit_code == 0
    assert fake.bodies("POST", "/heal") == [{"vnfcInstanceId": [vnfc], "cause": "dead"}, {}]
    res = run(fake, "vnf", "terminate", vnf_id, "--graceful-timeout", "30", "--wait")
    assert res.exit_code == 0, res.output
    assert fake.bodies("POST", "/terminate") == [
        {"terminationType": "GRACEFUL", "gracefulTerminationTimeout": 30}
    ]
    assert run(fake, "vnf", "delete", vnf_id).exit_code == 0
    assert fake.instances == {}


def test_terminate_defaults_to_graceful_as_tacker(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert run(fake, "vnf", "terminate", vnf_id, "--wait").exit_code == 0
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    assert run(fake, "vnf", "terminate", vnf_id, "--forceful").exit_code == 0
    assert fake.bodies("POST", "/terminate") == [{"terminationType": "GRACEFUL"}, {"terminationType": "FORCEFUL"}]
    res = run(fake, "vnf", "terminate", vnf_id, "--forceful", "--graceful-timeout", "3")
    assert res.exit_code == 2 and "--forceful" in res.output


def test_scale_type_is_case_insensitive(fake: FakeVnfm, tmp_path: Path) -> None:
    vnf_id = new_vnf(fake)
    run(fake, "vnf", "instantiate", vnf_id, request_file(tmp_path, SEED_REQUEST), "--wait")
    res = run(fake, "vnf", "scale", vnf_id, "--type", "scale_out", "--aspect-id", "worker_instance")
    assert res.exit_code == 0, res.output
    assert fake.bodies("POST", "/scale")[0]["type"] == "SCALE_OUT"
