"""A small stateful fake of the vnfm wire API (httpx.MockTransport) for the CLI tests, and the
helpers that drive the CLI against it or against the real server (fixtures: conftest.py).

Operation occurrences advance one state per GET along a script (STARTING, PROCESSING, then the end
state), so `--wait` has real state changes to follow.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner, Result

from vnfm.config import Settings
from vnfm.entrypoints.api.server import start_in_thread
from vnfm.entrypoints.cli.main import cli

BASE = "http://fake-vnfm"


def problem(status: int, title: str, detail: str) -> httpx.Response:
    return httpx.Response(
        status,
        json={"status": status, "title": title, "detail": detail},
        headers={"Content-Type": "application/problem+json"},
    )


@dataclass
class FakeVnfm:
    packages: dict[str, dict[str, Any]] = field(default_factory=dict)
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)
    ops: dict[str, dict[str, Any]] = field(default_factory=dict)
    subs: dict[str, dict[str, Any]] = field(default_factory=dict)
    pkgm_subs: dict[str, dict[str, Any]] = field(default_factory=dict)
    fetched: list[Any] = field(default_factory=list)  # upload_from_uri bodies
    page_size: int = 0  # > 0: package lists come in pages
    vims: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)
    # operation name (INSTANTIATE, SCALE, ...) -> error ProblemDetails: that op ends FAILED_TEMP
    fail: dict[str, dict[str, Any]] = field(default_factory=dict)
    # operation names whose occurrence never leaves PROCESSING
    stuck: set[str] = field(default_factory=set)
    # operation name -> progress lines its occurrence logs, one more each time it is read
    progress: dict[str, list[str]] = field(default_factory=dict)
    # after this many reads of an occurrence the next one raises KeyboardInterrupt (a Ctrl-C)
    interrupt_after: int | None = None
    # occurrence scripts: states after STARTING
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _tick: Any = field(default_factory=lambda: itertools.count(1))
    _pending: dict[str, list[str]] = field(default_factory=dict)
    multi_file_vnfd: bool = False
    busy: dict[str, str] = field(default_factory=dict)  # instance id -> running occurrence id
    alarms: list[dict[str, Any]] = field(default_factory=list)  # SOL003 Alarm documents (/vnffm/v1)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def now(self) -> str:
        return f"2024-01-01T00:00:{next(self._tick):02d}Z"

    def bodies(self, method: str, suffix: str) -> list[Any]:
        return [
            json.loads(r.content) if r.content else None
            for r in self.requests
            if r.method == method and r.url.path.endswith(suffix)
        ]

    # ------------------------------------------------------------------ dispatch
    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        parts = [p for p in request.url.path.split("/") if p]
        m = request.method
        body: Any = None
        if request.content and request.headers.get("content-type", "").endswith("json"):
            try:
                body = json.loads(request.content)
            except ValueError:
                return problem(400, "Bad Request", "malformed JSON")
        if request.headers.get("X-Auth-Token") == "bad-token":
            return problem(401, "Unauthorized", "the token is not valid")
        try:
            return self._route(m, parts, body, request)
        except KeyError as e:
            return problem(404, "Not Found", f"no such resource {e.args[0]}")

    def _route(self, m: str, parts: list[str], body: Any, request: httpx.Request) -> httpx.Response:
        if parts[:2] == ["vnfpkgm", "v1"]:
            return self._pkgm(m, parts[2:], body, request)
        if parts[:2] == ["vnflcm", "v1"]:
            return self._lcm(m, parts[2:], body)
        if parts[:3] == ["vnfm", "v1", "vims"]:
            return self._vims(m, parts[3:], body)
        if parts[:3] == ["sim", "v1", "state"]:
            return self._sim(parts[3:])
        if parts == ["vnffm", "v1", "alarms"] and m == "GET":
            return self._alarms(request)
        return problem(404, "Not Found", "no such path")

    def _alarms(self, request: httpx.Request) -> httpx.Response:
        """Only the filter the CLI sends is understood; any other is refused (the real server
        would evaluate it: a fake that ignored it would pass a CLI sending the wrong one)."""
        flt = request.url.params.get("filter") or ""
        m = re.fullmatch(r"\(eq,managedObjectId,([^)]+)\);\(neq,perceivedSeverity,CLEARED\)", flt)
        if m is None:
            return problem(400, "Bad Request", f"the fake does not evaluate filter {flt!r}")
        return httpx.Response(200, json=[a for a in self.alarms if a["managedObjectId"] == m.group(1)
                                         and a["perceivedSeverity"] != "CLEARED"])

    # ------------------------------------------------------------------ packages
    def _pkgm(self, m: str, p: list[str], body: Any, request: httpx.Request) -> httpx.Response:
        if p[0] == "subscriptions":
            return self._subs(self.pkgm_subs, m, p, body)
        if p == ["vnf_packages"] and m == "POST":
            pid = self.new_id("pkg")
            self.packages[pid] = {
                "id": pid,
                "onboardingState": "CREATED",
                "operationalState": "DISABLED",
                "usageState": "NOT_IN_USE",
                "userDefinedData": (body or {}).get("userDefinedData", {}),
            }
            return httpx.Response(201, json=self.packages[pid])
        if p == ["vnf_packages"] and m == "GET":
            return self._paged(list(self.packages.values()), request)
        pkg = self.packages[p[1]]
        if p[2:] == ["package_content", "upload_from_uri"] and m == "POST":
            self.fetched.append(body)
            pkg.update(onboardingState="ONBOARDED", operationalState="ENABLED", vnfdId="vnfd-1")
            return httpx.Response(202)
        if len(p) == 3 and p[2] == "package_content" and m == "PUT":
            if not request.content.startswith(b"PK"):
                return problem(400, "Bad Request", "the package content is not a zip file")
            pkg.update(
                onboardingState="ONBOARDED",
                operationalState="ENABLED",
                vnfdId="vnfd-1",
                vnfProductName="Sample K8s",
                vnfSoftwareVersion="1.0",
                vnfProvider="Company",
            )
            return httpx.Response(202)
        if len(p) == 3 and p[2] == "vnfd" and m == "GET":
            if "application/zip" in request.headers.get("accept", ""):
                return httpx.Response(
                    200, content=b"PK\x03\x04fake", headers={"Content-Type": "application/zip"}
                )
            if self.multi_file_vnfd:
                return problem(406, "Not Acceptable", "the VNFD has 3 files; ask for application/zip")
            return httpx.Response(
                200,
                content=b"tosca_definitions_version: tosca_simple_yaml_1_2\n",
                headers={"Content-Type": "text/plain"},
            )
        if len(p) == 2 and m == "GET":
            return httpx.Response(200, json=pkg)
        if len(p) == 2 and m == "PATCH":
            pkg["operationalState"] = body["operationalState"]
            return httpx.Response(200, json={"operationalState": body["operationalState"]})
        if len(p) == 2 and m == "DELETE":
            if pkg["operationalState"] == "ENABLED":
                return problem(409, "Conflict", f"package {pkg['id']} is ENABLED: disable it first")
            del self.packages[pkg["id"]]
            return httpx.Response(204)
        return problem(405, "Method Not Allowed", m)

    def _paged(self, items: list[Any], request: httpx.Request) -> httpx.Response:
        """SOL013 paging as the server does it: `page_size` items, Link rel="next" with a marker."""
        start = int(request.url.params.get("nextpage_opaque_marker", "0"))
        if not self.page_size:
            return httpx.Response(200, json=items[start:])
        page = items[start:start + self.page_size]
        headers = {}
        if start + len(page) < len(items):
            nxt = request.url.copy_set_param("nextpage_opaque_marker", str(start + len(page)))
            headers["Link"] = f'<{nxt}>; rel="next"'
        return httpx.Response(200, json=page, headers=headers)

    # ------------------------------------------------------------------ LCM
    def _lcm(self, m: str, p: list[str], body: Any) -> httpx.Response:
        if p == ["vnf_instances"] and m == "POST":
            iid = self.new_id("vnf")
            self.instances[iid] = {
                "id": iid,
                "vnfdId": body["vnfdId"],
                "vnfInstanceName": body.get("vnfInstanceName"),
                "vnfInstanceDescription": body.get("vnfInstanceDescription"),
                "instantiationState": "NOT_INSTANTIATED",
                "_links": {"self": {"href": f"/vnflcm/v1/vnf_instances/{iid}"}},
            }
            return httpx.Response(201, json=self.instances[iid])
        if p == ["vnf_instances"] and m == "GET":
            return httpx.Response(200, json=list(self.instances.values()))
        if p[0] == "vnf_instances":
            inst = self.instances[p[1]]
            if len(p) == 2 and m == "GET":
                return httpx.Response(200, json=inst)
            if len(p) == 2 and m == "DELETE":
                if inst["instantiationState"] != "NOT_INSTANTIATED":
                    return problem(
                        409, "Conflict", f"VNF instance {inst['id']} is INSTANTIATED: terminate it first"
                    )
                del self.instances[inst["id"]]
                return httpx.Response(204)
            if len(p) == 3 and m == "POST":
                return self._start(inst, p[2].upper(), body or {})
        if p == ["vnf_lcm_op_occs"] and m == "GET":
            return httpx.Response(200, json=list(self.ops.values()))
        if p[0] == "vnf_lcm_op_occs":
            op = self._get_op(p[1])
            if len(p) == 2 and m == "GET":
                self._advance(op)
                return httpx.Response(200, json=op)
            if len(p) == 3 and m == "POST" and p[2] == "cancel":
                op["isCancelPending"], op["cancelMode"] = True, body["cancelMode"]
                return httpx.Response(202)
            if len(p) == 3 and m == "POST":
                return self._resolve(op, p[2])
        if p[0] == "subscriptions":
            return self._subs(self.subs, m, p, body)
        return problem(405, "Method Not Allowed", m)

    def _subs(self, subs: dict[str, Any], m: str, p: list[str], body: Any) -> httpx.Response:
        if p == ["subscriptions"] and m == "POST":
            sid = self.new_id("sub")
            subs[sid] = {"id": sid, "callbackUri": body["callbackUri"], "filter": body.get("filter")}
            return httpx.Response(201, json=subs[sid])
        if p == ["subscriptions"] and m == "GET":
            return httpx.Response(200, json=list(subs.values()))
        sub = subs[p[1]]
        if m == "DELETE":
            del subs[p[1]]
            return httpx.Response(204)
        return httpx.Response(200, json=sub)

    def _start(self, inst: dict[str, Any], task: str, body: dict[str, Any]) -> httpx.Response:
        if inst["id"] in self.busy:
            return problem(409, "Conflict", f"VNF instance {inst['id']} has an operation in progress")
        op_id = self.new_id("op")
        self.ops[op_id] = {
            "id": op_id,
            "operation": task,
            "operationState": "STARTING",
            "stateEnteredTime": self.now(),
            "startTime": self.now(),
            "vnfInstanceId": inst["id"],
            "isAutomaticInvocation": False,
            "operationParams": body,
        }
        self.busy[inst["id"]] = op_id
        self._pending[op_id] = self._script(task)
        return httpx.Response(202, headers={"Location": f"{BASE}/vnflcm/v1/vnf_lcm_op_occs/{op_id}"})

    def _script(self, task: str) -> list[str]:
        if task in self.stuck:
            return ["STARTING", "PROCESSING"]
        if task in self.fail:
            return ["STARTING", "PROCESSING", "FAILED_TEMP"]
        return ["STARTING", "PROCESSING", "COMPLETED"]

    def _get_op(self, op_id: str) -> dict[str, Any]:
        if self.interrupt_after is not None:
            if self.interrupt_after <= 0:
                raise KeyboardInterrupt
            self.interrupt_after -= 1
        return self.ops[op_id]

    def _advance(self, op: dict[str, Any]) -> None:
        lines = self.progress.get(op["operation"])
        if lines and op["operationState"] == "PROCESSING":
            op.setdefault("vnfmProgress", []).append(
                {"time": self.now(), "stage": "instantiate_start", "message": lines.pop(0)})
            return
        script = self._pending.get(op["id"])
        if not script:
            return
        state = script.pop(0)
        op["operationState"] = state
        op["stateEnteredTime"] = self.now()
        inst = self.instances[op["vnfInstanceId"]]
        if state == "FAILED_TEMP":
            op["error"] = self.fail[op["operation"]]
        elif state in ("COMPLETED", "ROLLED_BACK", "FAILED"):
            self.busy.pop(inst["id"], None)
            if state == "COMPLETED":
                self._apply(inst, op["operation"], op["operationParams"])

    def _resolve(self, op: dict[str, Any], action: str) -> httpx.Response:
        if op["operationState"] != "FAILED_TEMP":
            return problem(
                409, "Conflict", f"vnfLcmOpOcc {op['id']} is {op['operationState']}, not FAILED_TEMP"
            )
        if action == "fail":
            op["operationState"] = "FAILED"
            op["stateEnteredTime"] = self.now()
            self.busy.pop(op["vnfInstanceId"], None)
            return httpx.Response(200, json=op)
        if action == "retry":
            self.fail.pop(op["operation"], None)
            self._pending[op["id"]] = ["PROCESSING", "COMPLETED"]
        else:
            self._pending[op["id"]] = ["ROLLING_BACK", "ROLLED_BACK"]
        return httpx.Response(202)

    # ------------------------------------------------------------------ simulated effects
    def _vnfc(self, inst: dict[str, Any], vdu: str, cpd: str) -> dict[str, Any]:
        n = next(self._ids)
        return {
            "id": f"vnfc-{n}",
            "vduId": vdu,
            "computeResource": {"resourceId": f"server-{n}", "vimConnectionId": "sim"},
            "storageResourceIds": [],
            "vnfcCpInfo": [
                {
                    "id": f"cp-{n}",
                    "cpdId": cpd,
                    "cpProtocolInfo": [
                        {
                            "layerProtocol": "IP_OVER_ETHERNET",
                            "ipOverEthernet": {
                                "ipAddresses": [{"type": "IPV4", "addresses": [f"10.0.0.{n}"]}]
                            },
                        }
                    ],
                }
            ],
        }

    def _apply(self, inst: dict[str, Any], task: str, body: dict[str, Any]) -> None:
        info = inst.get("instantiatedVnfInfo")
        if task == "INSTANTIATE":
            inst["instantiationState"] = "INSTANTIATED"
            inst["instantiatedVnfInfo"] = {
                "flavourId": body["flavourId"],
                "vnfState": "STARTED",
                "scaleStatus": [{"aspectId": "worker_instance", "scaleLevel": 0}],
                "vnfcResourceInfo": [self._vnfc(inst, "masterNode", "masterNode_CP1")]
                + [self._vnfc(inst, "workerNode", "workerNode_CP2") for _ in range(2)],
                "additionalParams": body.get("additionalParams", {}),
            }
        elif task == "SCALE" and info is not None:
            steps = int(body.get("numberOfSteps", 1))
            level = info["scaleStatus"][0]
            if body["type"] == "SCALE_OUT":
                level["scaleLevel"] += steps
                for _ in range(steps):
                    info["vnfcResourceInfo"].append(self._vnfc(inst, "workerNode", "workerNode_CP2"))
            else:
                level["scaleLevel"] -= steps
                del info["vnfcResourceInfo"][-steps:]
        elif task == "HEAL" and info is not None:
            wanted = body.get("vnfcInstanceId") or [v["id"] for v in info["vnfcResourceInfo"]]
            for v in info["vnfcResourceInfo"]:
                if v["id"] in wanted:
                    v["computeResource"]["resourceId"] += "-healed"
        elif task == "TERMINATE":
            inst["instantiationState"] = "NOT_INSTANTIATED"
            inst.pop("instantiatedVnfInfo", None)

    # ------------------------------------------------------------------ VIMs and simulator
    def _vims(self, m: str, p: list[str], body: Any) -> httpx.Response:
        if not p and m == "POST":
            vid = self.new_id("vim")
            shown = {k: v for k, v in body.items() if k != "accessInfo"}
            self.vims[vid] = {"id": vid, **shown}
            return httpx.Response(201, json=self.vims[vid])
        if not p:
            return httpx.Response(200, json=list(self.vims.values()))
        vim = self.vims[p[0]]
        if m == "DELETE":
            del self.vims[p[0]]
            return httpx.Response(204)
        return httpx.Response(200, json=vim)

    def _sim(self, p: list[str]) -> httpx.Response:
        servers = []
        for inst in self.instances.values():
            if p and inst["id"] != p[0]:
                continue
            for v in (inst.get("instantiatedVnfInfo") or {}).get("vnfcResourceInfo", []):
                servers.append(
                    {
                        "id": v["computeResource"]["resourceId"],
                        "name": v["vduId"],
                        "status": "ACTIVE",
                        "vnfInstanceId": inst["id"],
                    }
                )
        return httpx.Response(200, json={"servers": servers, "volumes": [], "faults": {"build": 0}})


# --------------------------------------------------------------------------------------------
# how the tests drive the CLI: against the fake above, or against the real server in this process


def run(fake: FakeVnfm, *args: str, token: str | None = None) -> Result:
    """`vnfm --endpoint BASE [--token T] ARGS...` against `fake`."""
    argv = ["--endpoint", BASE]
    if token:
        argv += ["--token", token]
    return CliRunner().invoke(cli, [*argv, *args], obj={"transport": fake.transport()})


def tiny_csar() -> bytes:
    """A CSAR the fake onboards (it reads nothing of it)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("TOSCA-Metadata/TOSCA.meta", "TOSCA-Meta-File-Version: 1.0\n")
    return buf.getvalue()


def start_server(data_dir: Path) -> Any:
    """The real API server, in a thread of this process on a free port (handle.url, handle.stop())."""
    settings = Settings(
        data_dir=data_dir, database_url=f"sqlite:///{data_dir / 'vnfm.db'}", host="127.0.0.1", port=0
    )
    return start_in_thread(settings)


def onboarded(fake: FakeVnfm, tmp_path: Path) -> str:
    """An ONBOARDED package in `fake`, uploaded through the CLI."""
    csar = tmp_path / "pkg.zip"
    csar.write_bytes(tiny_csar())
    pkg_id = json.loads(run(fake, "--json", "package", "create").stdout)["id"]
    res = run(fake, "package", "upload", pkg_id, str(csar))
    assert res.exit_code == 0, res.output
    return pkg_id


def new_vnf(fake: FakeVnfm) -> str:
    """A NOT_INSTANTIATED VNF instance in `fake`, created through the CLI."""
    res = run(fake, "vnf", "create", "vnfd-1", "--name", "k8s", "--json")
    assert res.exit_code == 0, res.output
    return str(json.loads(res.stdout)["id"])


def request_file(tmp_path: Path, body: dict[str, Any]) -> str:
    p = tmp_path / "req.json"
    p.write_text(json.dumps(body))
    return str(p)


# an InstantiateVnfRequest shaped like the seeds', with passwords the output must never show
SEED_REQUEST = {
    "flavourId": "simple",
    "additionalParams": {
        "k8s_cluster_installation_param": {
            "master_node": {"ssh_cp_name": "masterNode_CP1", "username": "ubuntu", "password": "m4ster-pw"},
            "worker_node": {
                "aspect_id": "worker_instance",
                "ssh_cp_name": "workerNode_CP2",
                "username": "ubuntu",
                "password": "w0rker-pw",
            },
        }
    },
}
