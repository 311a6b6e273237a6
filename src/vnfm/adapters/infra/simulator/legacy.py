"""The whole state as one dict (the shape of the JSON store this one replaced, still the shape of
`SimCloud.state()`), one instance's part of it in the same shape, and the migration from the old
JSON state file."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vnfm.adapters.infra.simulator.tx import SECTIONS, Tx, new_doc

if TYPE_CHECKING:
    from vnfm.adapters.infra.simulator.store import StateStore

log = logging.getLogger(__name__)

LEGACY_FILE = "simcloud.json"


def empty_state() -> dict[str, Any]:
    return {"networks": {}, "ports": {}, "floating_ips": {}, "servers": {}, "volumes": {},
            "deployments": {}, "extras": {}, "faults": {}}


def export_state(tx: Tx) -> dict[str, Any]:
    """Every record, as one dict (reads the whole store)."""
    state = empty_state()
    state["networks"] = tx.networks()
    for iid in tx.instance_ids():
        _merge(state, iid, tx.doc(iid))
    state["extras"] = tx.all_extras()
    state["faults"] = json.loads(json.dumps(tx.faults()))
    return state


def instance_state(tx: Tx, instance_id: str, *, extras: bool = False) -> dict[str, Any]:
    """One instance's records in the whole state's shape, with the networks they use and the
    pending faults (reads nothing of other instances). In a read transaction: the records are
    then the caller's own."""
    state = empty_state()
    doc = tx.doc(instance_id)
    _merge(state, instance_id, doc)
    nets = {p["network_id"] for p in state["ports"].values()}
    nets |= {f["floating_network_id"] for f in state["floating_ips"].values()}
    dep = (doc or {}).get("deployment") or {}
    nets |= {vl["network_id"] for vl in (dep.get("virtual_links") or {}).values()}
    nets |= {r["network_id"] for r in (dep.get("reservations") or {}).values()}
    nets |= set(tx.network_ids_of(instance_id))
    for nid in sorted(nets):
        net = tx.network(nid)
        if net is not None:
            state["networks"][nid] = net
    if extras:
        state["extras"][instance_id] = tx.extras(instance_id) or {}
    state["faults"] = tx.faults()
    return state


def _merge(state: dict[str, Any], instance_id: str, doc: dict[str, Any] | None) -> None:
    if doc is None:
        return
    for section in SECTIONS:
        state[section].update(doc[section])
    if doc.get("deployment") is not None:
        state["deployments"][instance_id] = doc["deployment"]


def import_state(tx: Tx, state: dict[str, Any]) -> None:
    """Replace everything with `state` (the whole state's shape), rebuilding every index."""
    tx.clear()
    for net in (state.get("networks") or {}).values():
        tx.add_network(net)
    docs: dict[str, dict[str, Any]] = {}
    for section in SECTIONS:
        for rid, rec in (state.get(section) or {}).items():
            iid = rec.get("instance_id") or ""
            docs.setdefault(iid, new_doc())[section][rid] = rec
    for iid, dep in (state.get("deployments") or {}).items():
        docs.setdefault(iid, new_doc())["deployment"] = dep
    for iid, doc in docs.items():
        _take_addresses(tx, iid, doc)
        tx.create_doc(iid).update(doc)
    for iid, value in (state.get("extras") or {}).items():
        extras = tx.extras(iid, create=True)
        assert extras is not None
        extras.update(value)
    tx.set_faults(dict(state.get("faults") or {}))


def _take_addresses(tx: Tx, iid: str, doc: dict[str, Any]) -> None:
    def take(address: str, network_id: str, kind: str, ref: str) -> None:
        if tx.address_taken(address):
            log.warning("simulated cloud state: address %s is given twice; keeping the first", address)
            return
        tx.take_address(address, network_id, iid, kind, ref)

    for port in doc["ports"].values():
        for f in port["fixed_ips"]:
            take(f["ip_address"], port["network_id"], "port", port["id"])
        if port.get("mac_address"):
            tx.take_mac(port["mac_address"], iid)
    for fip in doc["floating_ips"].values():
        take(fip["floating_ip_address"], fip["floating_network_id"], "floating", fip.get("port_id") or "")
    dep = doc.get("deployment") or {}
    for purpose, r in (dep.get("reservations") or {}).items():
        take(r["address"], r["network_id"], "reserved", purpose)


# ------------------------------------------------------------------------------------ old JSON file
def migrate_json_file(store: StateStore, json_path: Path) -> bool:
    """Import the old JSON state file into an empty store, then rename it `<name>.migrated`."""
    json_path = Path(json_path)
    if not json_path.is_file():
        return False
    text = json_path.read_text(encoding="utf-8")
    data = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError(f"simulated cloud state file {json_path} does not hold a JSON object")
    imported = False
    with store.begin() as tx:
        if not tx.instance_ids() and not tx.networks():
            import_state(tx, data)
            imported = True
    with contextlib.suppress(FileNotFoundError):  # another process may have renamed it already
        os.replace(json_path, json_path.with_name(json_path.name + ".migrated"))
    if imported:
        log.info("simulated cloud: state imported from %s (kept as %s.migrated)", json_path, json_path.name)
    return imported


def remove_leftovers(data_dir: Path) -> list[Path]:
    """Delete the temporary files a writer of the old JSON store left when it was killed while
    writing (`.simcloud.json.*.tmp`); nothing else writes temporary files here."""
    removed = []
    for tmp in data_dir.glob(f".{LEGACY_FILE}.*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
            removed.append(tmp)
    if removed:
        log.info("simulated cloud: removed %d leftover temporary file(s) in %s", len(removed), data_dir)
    return removed
