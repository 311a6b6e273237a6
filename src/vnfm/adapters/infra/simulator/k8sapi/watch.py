"""Watches (`?watch=true` on a list): the events a client waiting on the simulated API gets.

No event history is kept: a watch lists what it watches every `POLL` seconds (the same list call,
selectors and authentication included) and sends the difference as ADDED / MODIFIED / DELETED
events, one JSON object a line, until `timeoutSeconds` (default and at most `MAX_SECONDS`), the
listener stops, or a list fails (its Status ends the stream as an ERROR event). With
`sendInitialEvents=true` (a streaming list: what client-go's reflectors ask for first) it sends
every object, then the BOOKMARK that ends the initial events. From `resourceVersion` unset or "0"
the watch starts with an ADDED event for every object there is; from the list's own
resourceVersion (what informers and `kubectl wait` send) with nothing; from an older one it
answers 410 Expired at once (changes in between are not kept), and the client lists
again, as with a compacted kube-apiserver."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from vnfm.adapters.infra.simulator.k8sapi.errors import ApiError

POLL = 0.2
MAX_SECONDS = 1800
LIST_ONLY = ("watch", "timeoutSeconds", "allowWatchBookmarks", "resourceVersion", "resourceVersionMatch",
             "sendInitialEvents")

Lister = Callable[[], tuple[int, dict[str, Any]]]  # (status, body) of the list being watched


def _key(obj: dict[str, Any]) -> str:
    md = obj.get("metadata") or {}
    return f"{md.get('namespace') or ''}/{md.get('name')}"


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def strip(o: dict[str, Any]) -> str:
        o = {**o, "metadata": {k: v for k, v in (o.get("metadata") or {}).items() if k != "resourceVersion"}}
        return json.dumps(o, sort_keys=True)

    return strip(a) == strip(b)


def diff(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = [{"type": "ADDED", "object": o} for k, o in after.items() if k not in before]
    out += [{"type": "MODIFIED", "object": o} for k, o in after.items() if k in before and not _same(before[k], o)]
    out += [{"type": "DELETED", "object": o} for k, o in before.items() if k not in after]
    return out


def _items(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {_key(o): o for o in body.get("items") or []}


def _error(status: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "ERROR", "object": body if body.get("kind") == "Status" else
            ApiError(status, "InternalError", "the watched list failed").status()}


def stream(query: dict[str, str], lister: Lister, send: Callable[[dict[str, Any]], None],
           stopping: threading.Event) -> None:
    """Send the events of a watch whose first list succeeded; returns when it ends."""
    try:
        limit = min(max(int(query.get("timeoutSeconds") or MAX_SECONDS), 1), MAX_SECONDS)
    except ValueError:
        limit = MAX_SECONDS
    deadline = time.monotonic() + limit
    status, body = lister()
    if status != 200:
        send(_error(status, body))
        return
    since, now_rv = query.get("resourceVersion") or "0", str((body.get("metadata") or {}).get("resourceVersion"))
    seen = _items(body)
    if query.get("sendInitialEvents") == "true":  # a streaming list: every object, then the bookmark
        for o in seen.values():
            send({"type": "ADDED", "object": o})
        send({"type": "BOOKMARK", "object": {
            "kind": str(body.get("kind", "")).removesuffix("List"), "apiVersion": body.get("apiVersion", "v1"),
            "metadata": {"resourceVersion": now_rv, "annotations": {"k8s.io/initial-events-end": "true"}}}})
    elif since == "0":
        for o in seen.values():
            send({"type": "ADDED", "object": o})
    elif since != now_rv and since.isdigit() and now_rv.isdigit() and int(since) < int(now_rv):
        send({"type": "ERROR", "object": ApiError(410, "Expired", f"too old resource version: {since} "
                                                                  f"({now_rv})").status()})
        return
    while not stopping.wait(POLL) and time.monotonic() < deadline:
        status, body = lister()
        if status != 200:
            send(_error(status, body))
            return
        now = _items(body)
        for event in diff(seen, now):
            send(event)
        seen = now
