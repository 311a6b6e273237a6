"""One transaction on the simulated cloud's store: exactly the records an operation reads or changes.

The state is not one document any more. Each VNF instance has its own document (`Doc`: its
deployment, ports, floating IPs, servers and volumes) and its own extras; the few records
instances share are rows of their own: networks (with their allocation cursors), the address
allocations (address -> network, owner, port: the address index twins resolve hosts with), the
server index (server id / VNFC id / name -> instance), MAC addresses, pending faults, and the
cursors of the subnet pools. An operation on one instance reads and rewrites that instance's
document and the shared rows it touches, so its cost does not grow with the number of instances.

Documents and extras are loaded once per transaction, changed in place, and written back (when
their text changed) by `flush`; shared rows are written at once (the enclosing SQL transaction
makes it all-or-nothing). A look-up that only reads a document (a server by address: every node
step of a twin asks it) takes a shared, parsed `view` instead: the store keeps the parsed documents
of recent views by their stored text (`Views`), so an unchanged document is read, compared and
not parsed again; what a look-up hands out of a view is a copy (`private`).
"""

from __future__ import annotations

import ipaddress
import pickle
import secrets
import sqlite3
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from vnfm.adapters import jsoncodec
from vnfm.adapters.infra.simulator.model import SimCloudError

Doc = dict[str, Any]
SECTIONS = ("ports", "floating_ips", "servers", "volumes")
# Neutron gives the first addresses of a subnet to the gateway and DHCP agents.
FIRST_HOST_OFFSET = 10
_SUBNET_CURSOR = "subnet_cursor:"


def new_doc() -> Doc:
    return {"deployment": None, "ports": {}, "floating_ips": {}, "servers": {}, "volumes": {}}


def dumps(value: Any) -> str:
    return jsoncodec.dumps(value)


def private(value: Any) -> Any:
    """A copy of part of a document the caller owns (one C round trip; a deep copy is ~5x slower)."""
    return pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))  # noqa: S301 (our own bytes)


class Views:
    """Parsed documents of recent views, by instance id: (stored text, parsed value). A value is
    shared by every view of the same text: read it, never change it, hand out `private` copies.
    Used under the store's lock only (one thread at a time). Bounded by the stored text it holds
    (`max_bytes`; a parsed document takes ~5 times its text): 4 MB, ~450 three-node clusters."""

    def __init__(self, max_bytes: int = 4_000_000) -> None:
        self.max_bytes = max_bytes
        self._bytes = 0
        self._docs: OrderedDict[str, tuple[str, Doc]] = OrderedDict()

    def parsed(self, instance_id: str, text: str) -> Doc:
        hit = self._docs.get(instance_id)
        if hit is not None and hit[0] == text:
            self._docs.move_to_end(instance_id)
            return hit[1]
        value: Doc = jsoncodec.loads(text)
        if hit is not None:
            self._bytes -= len(hit[0])
        self._docs[instance_id] = (text, value)
        self._docs.move_to_end(instance_id)
        self._bytes += len(text)
        while self._bytes > self.max_bytes and self._docs:
            self._bytes -= len(self._docs.popitem(last=False)[1][0])
        return value


def _server_index(doc: Doc | None) -> set[tuple[str, str, str, int]]:
    if doc is None:
        return set()
    return {(s["id"], s["vnfc_id"], s["name"], int(bool(s.get("ssh_reachable", True))))
            for s in doc["servers"].values()}


@dataclass
class _Loaded:
    """A record loaded in this transaction: its stored text (None: absent) and its live value."""

    orig: str | None
    value: Any
    index: set[tuple[str, str, str, int]] = field(default_factory=set)


class Tx:
    """The records of one transaction. Not thread-safe: one thread, one transaction."""

    def __init__(self, conn: sqlite3.Connection, writable: bool, views: Views | None = None) -> None:
        self._c = conn
        self.writable = writable
        self._views = views or Views(0)
        self._docs: dict[str, _Loaded] = {}
        self._extras: dict[str, _Loaded] = {}
        self._nets: dict[str, dict[str, Any] | None] = {}
        self._faults: _Loaded | None = None
        self.joined = 0  # operations under way that joined this transaction (store.begin)

    def hand_out(self, value: Any) -> Any:
        """What an operation returns of its records: the record itself when the transaction is the
        operation's own (it ends with the operation: no one else will see or write the record), a
        private copy when the operation joined an enclosing transaction (the record stays live).
        Only for records of `doc`, `extras`, `network(s)`: a `view`'s value is shared, use `private`."""
        return private(value) if self.joined else value

    # ================================================================== instance documents
    def doc(self, instance_id: str) -> Doc | None:
        """The instance's document (changes are written at commit), None when it has none."""
        row = self._docs.get(instance_id)
        if row is None:
            r = self._c.execute("SELECT doc FROM deployments WHERE instance_id = ?", (instance_id,)).fetchone()
            value = jsoncodec.loads(r[0]) if r else None
            # the server index is compared at flush: a read transaction writes nothing back
            row = self._docs[instance_id] = _Loaded(r[0] if r else None, value,
                                                    _server_index(value) if self.writable else set())
        return row.value

    def view(self, instance_id: str) -> Doc | None:
        """The instance's document to read only (shared: never change it, hand out `private`
        copies of its parts); the one this transaction loaded, with its changes, if it did."""
        row = self._docs.get(instance_id)
        if row is not None:
            return row.value
        r = self._c.execute("SELECT doc FROM deployments WHERE instance_id = ?", (instance_id,)).fetchone()
        return self._views.parsed(instance_id, r[0]) if r else None

    def create_doc(self, instance_id: str) -> Doc:
        doc = self.doc(instance_id)
        if doc is None:
            doc = self._docs[instance_id].value = new_doc()
        return doc

    def drop_doc(self, instance_id: str) -> None:
        self.doc(instance_id)
        self._docs[instance_id].value = None

    def instance_ids(self) -> list[str]:
        return [r[0] for r in self._c.execute("SELECT instance_id FROM deployments ORDER BY rowid")]

    # ================================================================== extras
    def extras(self, instance_id: str, *, create: bool = False) -> dict[str, Any] | None:
        row = self._extras.get(instance_id)
        if row is None:
            r = self._c.execute("SELECT doc FROM extras WHERE instance_id = ?", (instance_id,)).fetchone()
            row = self._extras[instance_id] = _Loaded(r[0] if r else None, jsoncodec.loads(r[0]) if r else None)
        if row.value is None and create:
            row.value = {}
        return row.value

    def drop_extras(self, instance_id: str) -> None:
        self.extras(instance_id)
        self._extras[instance_id].value = None

    def all_extras(self) -> dict[str, dict[str, Any]]:
        return {iid: jsoncodec.loads(text) for iid, text in self._c.execute("SELECT instance_id, doc FROM extras")}

    # ================================================================== faults
    def faults(self) -> dict[str, Any]:
        """The pending faults (mutable; written at commit)."""
        if self._faults is None:
            r = self._c.execute("SELECT value FROM meta WHERE key = 'faults'").fetchone()
            self._faults = _Loaded(r[0] if r else None, jsoncodec.loads(r[0]) if r else {})
        return self._faults.value

    def set_faults(self, faults: dict[str, Any]) -> None:
        self.faults()
        assert self._faults is not None
        self._faults.value = faults

    # ================================================================== networks
    def network(self, network_id: str) -> dict[str, Any] | None:
        if network_id not in self._nets:
            r = self._c.execute("SELECT doc FROM networks WHERE id = ?", (network_id,)).fetchone()
            self._nets[network_id] = jsoncodec.loads(r[0]) if r else None
        return self._nets[network_id]

    def networks(self) -> dict[str, dict[str, Any]]:
        rows = self._c.execute("SELECT id, doc FROM networks ORDER BY rowid")
        return {nid: jsoncodec.loads(text) for nid, text in rows}

    def network_ids_of(self, instance_id: str) -> list[str]:
        return [r[0] for r in self._c.execute("SELECT id FROM networks WHERE instance_id = ?", (instance_id,))]

    def add_network(self, record: dict[str, Any]) -> None:
        net = ipaddress.ip_network(record["cidr"], strict=False)
        lo, hi = int(net.network_address), int(net.broadcast_address)
        self._c.execute(
            "INSERT INTO networks (id, instance_id, lo, hi, next_low, next_high, gateway, doc) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (record["id"], record.get("instance_id"), lo, hi, lo, hi, record.get("gateway_ip"), dumps(record)),
        )
        self._nets[record["id"]] = record

    def widen_network(self, network_id: str, cidr: str) -> dict[str, Any]:
        """Give a network a larger CIDR that holds its own (its addresses stay valid)."""
        record = self.network(network_id)
        assert record is not None
        net = ipaddress.ip_network(cidr, strict=False)
        lo, hi = int(net.network_address), int(net.broadcast_address)
        record = {**record, "cidr": str(net)}
        self._c.execute("UPDATE networks SET lo = ?, hi = ?, next_low = MIN(next_low, ?), next_high = ?, doc = ? "
                        "WHERE id = ?", (lo, hi, lo, hi, dumps(record), network_id))
        self._nets[network_id] = record
        return record

    def drop_network(self, network_id: str) -> None:
        r = self._c.execute("SELECT lo, hi FROM networks WHERE id = ?", (network_id,)).fetchone()
        if r is None:
            return
        self._c.execute("DELETE FROM networks WHERE id = ?", (network_id,))
        self._nets[network_id] = None
        lo, hi = r
        for key, value in self._c.execute("SELECT key, value FROM meta WHERE key LIKE ?", (_SUBNET_CURSOR + "%",)):
            # "<pool>" (a cursor over /24s) or "<pool>@<prefix>" (over networks of that size)
            pool_text, _, prefix = key[len(_SUBNET_CURSOR):].partition("@")
            pool = ipaddress.ip_network(pool_text)
            size = 2 ** (32 - int(prefix or 24))
            p_lo, p_hi = int(pool.network_address), int(pool.broadcast_address)
            if lo <= p_hi and hi >= p_lo:
                index = (max(lo, p_lo) - p_lo) // size
                if index < int(value):
                    self._c.execute("UPDATE meta SET value = ? WHERE key = ?", (str(index), key))

    def network_in_use(self, network_id: str) -> bool:
        """Does a port have an address on this network?"""
        r = self._c.execute("SELECT 1 FROM addresses WHERE network_id = ? AND kind = 'port' LIMIT 1", (network_id,))
        return r.fetchone() is not None

    def free_subnet(self, pool: str, exhausted: str, prefix: int = 24) -> str:
        """The lowest /`prefix` of `pool` that overlaps no network (`exhausted`: the error's text)."""
        net = ipaddress.ip_network(pool, strict=False)
        key = _SUBNET_CURSOR + str(net) + ("" if prefix == 24 else f"@{prefix}")
        r = self._c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        start = int(r[0]) if r else 0
        base = int(net.network_address)
        size = 2 ** (32 - prefix)
        count = 2 ** (prefix - net.prefixlen) if net.prefixlen <= prefix else 0
        for index in range(start, count):
            lo = base + index * size
            hit = self._c.execute("SELECT 1 FROM networks WHERE lo <= ? AND hi >= ? LIMIT 1", (lo + size - 1, lo))
            if hit.fetchone() is None:
                self._c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, str(index + 1)))
                return f"{ipaddress.ip_address(lo)}/{prefix}"
        raise SimCloudError(exhausted)

    # ================================================================== addresses
    def address_taken(self, address: str) -> bool:
        if self._c.execute("SELECT 1 FROM addresses WHERE address = ?", (address,)).fetchone():
            return True
        return self._c.execute("SELECT 1 FROM networks WHERE gateway = ? LIMIT 1", (address,)).fetchone() is not None

    def address_owner(self, address: str) -> tuple[str, str, str] | None:
        """(instance id, kind: port | floating | reserved, port id or purpose) of a taken address."""
        r = self._c.execute("SELECT instance_id, kind, ref FROM addresses WHERE address = ?", (address,)).fetchone()
        return (r[0], r[1], r[2]) if r else None

    def take_address(self, address: str, network_id: str, instance_id: str, kind: str, ref: str) -> None:
        try:
            self._c.execute(
                "INSERT INTO addresses (address, network_id, instance_id, kind, ref) VALUES (?, ?, ?, ?, ?)",
                (address, network_id, instance_id, kind, ref),
            )
        except sqlite3.IntegrityError:
            raise SimCloudError(f"address {address} is already taken") from None

    def free_address(self, address: str) -> None:
        """Give an address back: the networks that hold it may hand it out again."""
        self._c.execute("DELETE FROM addresses WHERE address = ?", (address,))
        n = int(ipaddress.ip_address(address))
        self._c.execute(
            "UPDATE networks SET next_low = MIN(next_low, ?), next_high = MAX(next_high, ?) WHERE lo <= ? AND hi >= ?",
            (n, n, n, n),
        )

    def allocate(self, network: dict[str, Any], instance_id: str, kind: str, ref: str, *,
                 exhausted: str, from_top: bool = False) -> str:
        """Take the lowest free address of the network past its first hosts (gateway, DHCP), or
        the highest one (`from_top`). Each network keeps a cursor below (above) which every
        address is taken, so the search does not walk what is already allocated."""
        nid = network["id"]
        lo, hi, next_low, next_high = self._c.execute(
            "SELECT lo, hi, next_low, next_high FROM networks WHERE id = ?", (nid,)).fetchone()
        size = hi - lo + 1
        first, last = (lo, hi) if size <= 2 else (lo + 1, hi - 1)
        offset = FIRST_HOST_OFFSET if size > 4 * FIRST_HOST_OFFSET else 2
        step, n, stop = (-1, min(last, next_high), first) if from_top else (1, max(first + offset - 1, next_low), last)
        while (n >= stop) if from_top else (n <= stop):
            address = str(ipaddress.ip_address(n))
            if not self.address_taken(address):
                column = "next_high" if from_top else "next_low"
                self._c.execute(f"UPDATE networks SET {column} = ? WHERE id = ?", (n + step, nid))  # noqa: S608
                self.take_address(address, nid, instance_id, kind, ref)
                return address
            n += step
        raise SimCloudError(exhausted)

    # ================================================================== MAC addresses
    def new_mac(self, instance_id: str) -> str:
        while True:
            mac = "fa:16:3e:" + ":".join(f"{b:02x}" for b in secrets.token_bytes(3))
            cur = self._c.execute("INSERT OR IGNORE INTO macs (mac, instance_id) VALUES (?, ?)", (mac, instance_id))
            if cur.rowcount == 1:
                return mac

    def take_mac(self, mac: str, instance_id: str) -> None:
        self._c.execute("INSERT OR IGNORE INTO macs (mac, instance_id) VALUES (?, ?)", (mac, instance_id))

    def free_mac(self, mac: str) -> None:
        self._c.execute("DELETE FROM macs WHERE mac = ?", (mac,))

    # ================================================================== servers
    def server_home(self, server_id: str) -> str | None:
        """The instance whose document holds server `server_id`."""
        for iid, row in self._docs.items():
            if row.value is not None and server_id in row.value["servers"]:
                return iid
        r = self._c.execute("SELECT instance_id FROM servers WHERE id = ?", (server_id,)).fetchone()
        return r[0] if r else None

    def find_servers(self, target: str) -> list[tuple[str, str]]:
        """(server id, instance id) of the servers with id, VNFC id or name `target`."""
        rows = self._c.execute("SELECT id, instance_id FROM servers WHERE id = ?", (target,)).fetchall()
        if not rows:
            rows = self._c.execute("SELECT id, instance_id FROM servers WHERE vnfc_id = ? OR name = ?",
                                   (target, target)).fetchall()
        return [(r[0], r[1]) for r in rows]

    def unreachable_instances(self) -> list[str]:
        return [r[0] for r in self._c.execute("SELECT DISTINCT instance_id FROM servers WHERE reachable = 0")]

    # ================================================================== commit
    def flush(self) -> None:
        """Write back the documents, extras and faults this transaction changed."""
        for iid, row in self._docs.items():
            self._flush_doc(iid, row)
        for iid, row in self._extras.items():
            self._flush_row("extras", iid, row)
        if self._faults is not None:
            text = dumps(self._faults.value)
            if text != self._faults.orig:
                self._c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('faults', ?)", (text,))

    def _flush_doc(self, iid: str, row: _Loaded) -> None:
        self._flush_row("deployments", iid, row)
        index = _server_index(row.value)
        if index != row.index:
            self._c.execute("DELETE FROM servers WHERE instance_id = ?", (iid,))
            self._c.executemany(
                "INSERT INTO servers (id, instance_id, vnfc_id, name, reachable) VALUES (?, ?, ?, ?, ?)",
                [(sid, iid, vnfc_id, name, reachable) for sid, vnfc_id, name, reachable in index],
            )

    def _flush_row(self, table: str, iid: str, row: _Loaded) -> None:
        if row.value is None:
            if row.orig is not None:
                self._c.execute(f"DELETE FROM {table} WHERE instance_id = ?", (iid,))  # noqa: S608
            return
        text = dumps(row.value)
        if text != row.orig:
            self._c.execute(f"INSERT INTO {table} (instance_id, doc) VALUES (?, ?) "  # noqa: S608
                            "ON CONFLICT (instance_id) DO UPDATE SET doc = excluded.doc", (iid, text))

    def clear(self) -> None:
        """Forget everything (a whole-state import follows)."""
        for table in ("deployments", "extras", "networks", "addresses", "servers", "macs"):
            self._c.execute(f"DELETE FROM {table}")  # noqa: S608
        self._c.execute("DELETE FROM meta WHERE key != 'schema'")
        self._docs.clear()
        self._extras.clear()
        self._nets.clear()
        self._faults = None
