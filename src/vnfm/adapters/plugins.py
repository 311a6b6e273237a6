"""Driver plug-ins: built-in factories plus those installed as Python entry points.

Management drivers (`vnfm.mgmt_drivers`) and infrastructure drivers (`vnfm.infra_drivers`) plug in
the same way: a name and a factory; a third-party package adds an entry point in the group, and its
driver is built the first time it is needed. A broken plug-in is logged and skipped, never fatal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import entry_points
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

D = TypeVar("D")


class DriverFactories(Mapping[str, D], Generic[D]):
    """name -> driver, built lazily from registered factories (one instance per name)."""

    def __init__(self, what: str, group: str) -> None:
        self.what = what  # "management driver" / "infrastructure driver", for messages
        self.group = group
        self.factories: dict[str, Callable[[], D]] = {}
        self.instances: dict[str, D] = {}

    def register(self, name: str, factory: Callable[[], D]) -> None:
        self.factories[name] = factory
        self.instances.pop(name, None)

    def load_entry_points(self) -> None:
        for ep in entry_points(group=self.group):
            try:
                self.register(ep.name, ep.load())
            except Exception as exc:  # a broken plug-in must not stop the server
                log.error("%s entry point %s failed to load: %s", self.what, ep.name, exc)

    def __getitem__(self, name: str) -> D:
        if name not in self.instances:
            self.instances[name] = self.factories[name]()
        return self.instances[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.factories)

    def __len__(self) -> int:
        return len(self.factories)

    def __contains__(self, name: object) -> bool:
        return name in self.factories
