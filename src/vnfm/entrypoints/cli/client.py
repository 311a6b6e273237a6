"""A small synchronous client of the vnfm wire API (SOL003 /vnflcm/v1, SOL005 /vnfpkgm/v1, the VIM
registry /vnfm/v1/vims and the simulator view /sim/v1/state).

It knows only the standard HTTP interface, never the server's internals, so it works against any
vnfm server (in this process, on this machine, or remote).
"""

from __future__ import annotations

import time
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import httpx

from vnfm.entrypoints.cli.credentials import TokenError
from vnfm.entrypoints.cli.tlsdiag import TlsFailure, diagnose

LCM = "/vnflcm/v1"
PKGM = "/vnfpkgm/v1"
VIMS = "/vnfm/v1/vims"
SIM = "/sim/v1/state"
USER_AGENT = "vnfm-cli/0.1"


class ApiError(Exception):
    """The server answered with an error status (usually a ProblemDetails body)."""

    def __init__(self, status: int, title: str, detail: str, body: Any = None) -> None:
        super().__init__(f"{status} {title}: {detail}" if detail else f"{status} {title}")
        self.status = status
        self.title = title
        self.detail = detail
        self.body = body

    @classmethod
    def from_response(cls, resp: httpx.Response) -> ApiError:
        try:
            reason = HTTPStatus(resp.status_code).phrase
        except ValueError:
            reason = resp.reason_phrase or "Error"
        body: Any = None
        title, detail = reason, ""
        try:
            body = resp.json()
        except ValueError:
            detail = resp.text.strip()[:500]
        if isinstance(body, dict):
            title = str(body.get("title") or reason)
            raw = body.get("detail")
            if isinstance(raw, list):  # FastAPI validation errors: [{"loc":..., "msg":...}]
                raw = "; ".join(
                    f"{'.'.join(str(p) for p in e.get('loc', []))}: {e.get('msg')}"
                    if isinstance(e, dict)
                    else str(e)
                    for e in raw
                )
            detail = str(raw) if raw is not None else ""
        return cls(resp.status_code, title, detail, body)


class ServerUnreachable(Exception):
    """No usable answer from the endpoint: nothing listens (`refused`), no answer in time, or the
    connection broke."""

    def __init__(self, endpoint: str, reason: str, *, refused: bool = False) -> None:
        super().__init__(f"cannot reach the vnfm server at {endpoint}: {reason}")
        self.endpoint = endpoint
        self.reason = reason
        self.refused = refused


def op_id_from_location(location: str) -> str:
    """The vnfLcmOpOccId at the end of a Location header (absolute or relative)."""
    path = urlsplit(location).path.rstrip("/")
    if "/vnf_lcm_op_occs/" not in path:
        raise ValueError(f"the Location {location!r} does not name a vnf_lcm_op_occs entry")
    return path.rsplit("/", 1)[-1]


class VnfmClient:
    def __init__(
        self,
        endpoint: str,
        *,
        token: str | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 60.0,
        recover_timeout: float = 60.0,
        auth: httpx.Auth | None = None,
        verify: Any = True,
    ) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.recover_timeout = recover_timeout  # how long to wait for a server that died mid-request
        self.recover_poll = 1.0
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if token:
            headers["X-Auth-Token"] = token
        self._http = httpx.Client(
            base_url=self.endpoint, headers=headers, transport=transport, timeout=timeout, auth=auth, verify=verify
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> VnfmClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- plumbing ---
    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
    ) -> httpx.Response:
        try:
            resp = self._http.request(
                method, path, json=json, content=content, headers=headers, params=params
            )
        except TokenError as e:
            raise ApiError(401, "Unauthorized", str(e)) from None
        except httpx.ConnectError as e:
            tls = diagnose(self.endpoint, e)
            if tls is not None:
                raise TlsFailure(self.endpoint, tls) from None
            raise ServerUnreachable(self.endpoint, _reason(e), refused=True) from None
        except httpx.TimeoutException as e:
            raise ServerUnreachable(self.endpoint, f"no answer in time ({type(e).__name__})") from None
        except httpx.TransportError as e:
            raise ServerUnreachable(self.endpoint, f"connection lost ({type(e).__name__}: {e})") from None
        if resp.status_code >= 400:
            raise ApiError.from_response(resp)
        return resp

    def _json(self, method: str, path: str, **kw: Any) -> Any:
        resp = self.request(method, path, **kw)
        if not resp.content:
            return None
        return resp.json()

    def _all(self, path: str, params: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """A whole list: the server pages long ones (Link: <...>; rel="next"), each page is fetched."""
        resp = self.request("GET", path, params=params)
        items: list[dict[str, Any]] = resp.json()
        while "next" in resp.links:
            resp = self.request("GET", resp.links["next"]["url"])
            items += resp.json()
        return items

    def _task(self, path: str, body: dict[str, Any]) -> str:
        """POST a task resource; return the new occurrence id from the Location header."""
        resp = self.request("POST", path, json=body)
        location = resp.headers.get("Location")
        if not location:
            raise ApiError(
                resp.status_code, "Bad response", "the server accepted the task but sent no Location"
            )
        return op_id_from_location(location)

    def _instance_task(self, vnf_id: str, task: str, body: dict[str, Any]) -> str:
        """POST an LCM task of an instance. If the connection breaks before the answer (the server
        may have died right after storing the occurrence), the instance's occurrences are listed
        once the server answers again: a new one of this operation is the accepted request."""
        known = {o["id"] for o in self._ops_of(vnf_id)}
        try:
            return self._task(f"{LCM}/vnf_instances/{vnf_id}/{task}", body)
        except ServerUnreachable as e:
            if e.refused:  # nothing was sent
                raise
            lost = e
        found = self._find_accepted(vnf_id, task.upper(), known)
        if found is None:
            raise ServerUnreachable(self.endpoint, f"{lost.reason}; the server has no new {task} occurrence "
                                                   "of this instance: the request was not accepted, send it again")
        return found

    def _ops_of(self, vnf_id: str) -> list[dict[str, Any]]:
        return self._all(f"{LCM}/vnf_lcm_op_occs", {"filter": f"(eq,vnfInstanceId,{vnf_id})"})

    def _find_accepted(self, vnf_id: str, operation: str, known: set[str]) -> str | None:
        """The occurrence of `operation` on `vnf_id` that is not in `known`, polling the server
        until it answers (up to `recover_timeout` seconds)."""
        deadline = time.monotonic() + self.recover_timeout
        while True:
            try:
                ops = self._ops_of(vnf_id)
                break
            except ServerUnreachable:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(self.recover_poll)
        new = sorted((o for o in ops if o["id"] not in known and o.get("operation") == operation),
                     key=lambda o: str(o.get("startTime", "")))
        return str(new[-1]["id"]) if new else None

    @staticmethod
    def _list_params(filter_: str | None) -> dict[str, str] | None:
        return {"filter": filter_} if filter_ else None

    # --- SOL005 VNF packages ---
    def create_package(self, user_defined_data: dict[str, str] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if user_defined_data:
            body["userDefinedData"] = user_defined_data
        result: dict[str, Any] = self._json("POST", f"{PKGM}/vnf_packages", json=body)
        return result

    def upload_package(self, pkg_id: str, data: bytes) -> None:
        self.request(
            "PUT",
            f"{PKGM}/vnf_packages/{pkg_id}/package_content",
            content=data,
            headers={"Content-Type": "application/zip"},
        )

    def upload_package_from_uri(self, pkg_id: str, uri: str, user: str | None = None,
                                password: str | None = None) -> None:
        body: dict[str, Any] = {"addressInformation": uri}
        if user:
            body["userName"] = user
        if password:
            body["password"] = password
        self.request("POST", f"{PKGM}/vnf_packages/{pkg_id}/package_content/upload_from_uri", json=body)

    def list_packages(self, filter_: str | None = None) -> list[dict[str, Any]]:
        return self._all(f"{PKGM}/vnf_packages", self._list_params(filter_))

    def get_package(self, pkg_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", f"{PKGM}/vnf_packages/{pkg_id}")
        return result

    def set_package_state(self, pkg_id: str, state: str) -> dict[str, Any]:
        resp = self.request(
            "PATCH",
            f"{PKGM}/vnf_packages/{pkg_id}",
            json={"operationalState": state},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        return resp.json() if resp.content else {"operationalState": state}

    def delete_package(self, pkg_id: str) -> None:
        self.request("DELETE", f"{PKGM}/vnf_packages/{pkg_id}")

    def get_vnfd(self, pkg_id: str, *, zip_: bool = False) -> tuple[str, bytes]:
        accept = "application/zip" if zip_ else "text/plain"
        resp = self.request("GET", f"{PKGM}/vnf_packages/{pkg_id}/vnfd", headers={"Accept": accept})
        return resp.headers.get("Content-Type", ""), resp.content

    # --- SOL003 VNF instances and tasks ---
    def create_vnf(
        self, vnfd_id: str, name: str | None = None, description: str | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"vnfdId": vnfd_id}
        if name is not None:
            body["vnfInstanceName"] = name
        if description is not None:
            body["vnfInstanceDescription"] = description
        result: dict[str, Any] = self._json("POST", f"{LCM}/vnf_instances", json=body)
        return result

    def list_vnfs(self, filter_: str | None = None) -> list[dict[str, Any]]:
        """With instantiatedVnfInfo (SOL013 `fields`: excluded by default), for the VNF STATE,
        FLAVOUR and VNFCS columns."""
        params = self._list_params(filter_) or {}
        params["fields"] = "instantiatedVnfInfo"
        return self._all(f"{LCM}/vnf_instances", params)

    def get_vnf(self, vnf_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", f"{LCM}/vnf_instances/{vnf_id}")
        return result

    def backups(self, vnf_id: str) -> dict[str, Any]:
        """The instance's scheduled etcd backups and restore drills (vnfm's extension)."""
        result: dict[str, Any] = self._json("GET", f"/vnfm/v1/vnf_instances/{vnf_id}/backups")
        return result

    def open_alarms(self, vnf_id: str) -> list[dict[str, Any]]:
        """The instance's alarms not cleared (SOL003 /vnffm/v1/alarms)."""
        flt = f"(eq,managedObjectId,{vnf_id});(neq,perceivedSeverity,CLEARED)"
        return self._all("/vnffm/v1/alarms", {"filter": flt})

    def delete_vnf(self, vnf_id: str) -> None:
        self.request("DELETE", f"{LCM}/vnf_instances/{vnf_id}")

    def instantiate(self, vnf_id: str, body: dict[str, Any]) -> str:
        return self._instance_task(vnf_id, "instantiate", body)

    def scale(self, vnf_id: str, body: dict[str, Any]) -> str:
        return self._instance_task(vnf_id, "scale", body)

    def heal(self, vnf_id: str, body: dict[str, Any]) -> str:
        return self._instance_task(vnf_id, "heal", body)

    def terminate(self, vnf_id: str, body: dict[str, Any]) -> str:
        return self._instance_task(vnf_id, "terminate", body)

    # --- operation occurrences ---
    def list_ops(self, filter_: str | None = None) -> list[dict[str, Any]]:
        return self._all(f"{LCM}/vnf_lcm_op_occs", self._list_params(filter_))

    def get_op(self, op_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", f"{LCM}/vnf_lcm_op_occs/{op_id}")
        return result

    def op_action(self, op_id: str, action: str, body: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """POST retry / rollback / fail / cancel; returns the body when the server sends one (fail: 200)."""
        resp = self.request("POST", f"{LCM}/vnf_lcm_op_occs/{op_id}/{action}", json=body)
        if resp.content and resp.headers.get("Content-Type", "").startswith("application/json"):
            answer: dict[str, Any] = resp.json()
            return answer
        return None

    # --- subscriptions ---
    @staticmethod
    def _subscriptions(packages: bool) -> str:
        """SOL005 package-management subscriptions (/vnfpkgm/v1), else SOL003 LCM ones (/vnflcm/v1)."""
        return f"{PKGM if packages else LCM}/subscriptions"

    def create_subscription(self, callback: str, filter_: dict[str, Any] | None = None, *,
                            packages: bool = False) -> dict[str, Any]:
        body: dict[str, Any] = {"callbackUri": callback}
        if filter_:
            body["filter"] = filter_
        result: dict[str, Any] = self._json("POST", self._subscriptions(packages), json=body)
        return result

    def list_subscriptions(self, *, packages: bool = False) -> list[dict[str, Any]]:
        return self._all(self._subscriptions(packages))

    def get_subscription(self, sub_id: str, *, packages: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", f"{self._subscriptions(packages)}/{sub_id}")
        return result

    def delete_subscription(self, sub_id: str, *, packages: bool = False) -> None:
        self.request("DELETE", f"{self._subscriptions(packages)}/{sub_id}")

    # --- VIM registry ---
    def list_vims(self) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._json("GET", VIMS)
        return result

    def get_vim(self, vim_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", f"{VIMS}/{vim_id}")
        return result

    def vim_kubeconfig(self, vim_id: str, *, show_token: bool = False) -> dict[str, Any]:
        params = {"showToken": "true"} if show_token else {}
        result: dict[str, Any] = self._json("GET", f"{VIMS}/{vim_id}/kubeconfig", params=params)
        return result

    def register_vim(self, body: dict[str, Any], *, probe: bool = False) -> dict[str, Any]:
        """With `probe`, the server registers the VIM only once it answers and accepts its credentials."""
        result: dict[str, Any] = self._json("POST", VIMS, json=body, params={"probe": "true"} if probe else None)
        return result

    def delete_vim(self, vim_id: str) -> None:
        self.request("DELETE", f"{VIMS}/{vim_id}")

    # --- what is wrong with the server ---
    def doctor(self) -> dict[str, Any]:
        result: dict[str, Any] = self._json("GET", "/vnfm/v1/doctor")
        return result

    # --- simulator view ---
    def sim_state(self, vnf_id: str | None = None) -> Any:
        return self._json("GET", f"{SIM}/{vnf_id}" if vnf_id else SIM)


def _reason(e: Exception) -> str:
    text = str(e) or type(e).__name__
    if "refused" in text.lower() or "errno 111" in text.lower():
        return "connection refused"
    return text
