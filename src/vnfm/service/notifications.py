"""How the services send notifications: each is stored in the outbox inside the transaction of the
change it reports (`stage`), and the notifier is woken once that transaction has committed
(`wake`). A crash between the two loses nothing: the row stays and is delivered later.

A notification is stored only while a subscription of its kind exists for the resource's tenant
(checked by the statement that stores it: SOL003's subscriber gets the events that happen while
it is subscribed; adapters/db/outbox.py states the rule for a subscription created concurrently).
Without one nothing is written, and the notifier, told of no new row, does not read the outbox."""

from __future__ import annotations

from typing import Any

from vnfm.service.ports import AbstractUnitOfWork, Notifier


class Notifications:
    def __init__(self, notifier: Notifier | None, owner: str | None) -> None:
        self.notifier = notifier  # None: nobody delivers, so nothing is stored
        self.owner = owner or ""

    def stage(self, uow: AbstractUnitOfWork, notification: dict[str, Any], info: dict[str, Any] | None = None,
              *, tenant: str) -> None:
        """`tenant`: whose resource changed; only that tenant's subscriptions are notified."""
        if self.notifier is not None:
            uow.outbox.add(notification, info, owner=self.owner, tenant=tenant, if_subscribed=True)

    def wake(self) -> None:
        if self.notifier is not None:
            self.notifier.wake()
