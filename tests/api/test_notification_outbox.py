"""A notification survives the crash of the process that stored it: the outbox row is delivered by
the next process once it is overdue (VNFM_NOTIFY_RECLAIM_AFTER), and only then."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from vnfm.bootstrap import App, build
from vnfm.domain.model import utcnow

from .conftest import csar_bytes, settings_for
from .test_subscriptions import Receiver, receiver  # noqa: F401 (fixture)


class DeadNotifier:
    """A process that stores notifications and dies before it delivers any."""

    def wake(self) -> None:
        pass


def _outbox_rows(app: App) -> int:
    with app.uow() as u:
        return int(u.outbox.count())


async def test_a_crashed_process_loses_no_notification(tmp_path: Path, receiver: Receiver) -> None:  # noqa: F811
    first = build(settings_for(tmp_path, worker_id="first"), notifier=DeadNotifier())
    sub, _ = await first.subscriptions.create({"callbackUri": receiver.url}, kind="vnfpkgm")
    pkg = first.packages.create()
    first.packages.upload(pkg.id, csar_bytes())
    assert _outbox_rows(first) == 1  # stored with the onboarding; the process "dies" here

    # A second process does not take another live process's rows...
    second = build(settings_for(tmp_path, worker_id="second", notify_reclaim_after=300))
    await second.start()
    try:
        assert second.notifier is not None
        assert await second.notifier.drain_async(10)  # type: ignore[attr-defined]
        assert receiver.received == [] and _outbox_rows(second) == 1
    finally:
        await second.stop()

    # ...but takes them over once they are overdue, and delivers each once.
    third = build(settings_for(tmp_path, worker_id="third", notify_reclaim_after=0))
    await third.start()
    try:
        got = await receiver.wait_for(lambda n: n["notificationType"] == "VnfPackageOnboardingNotification")
        assert await third.notifier.drain_async(10)  # type: ignore[union-attr]
    finally:
        await third.stop()
    assert [(n["vnfPkgId"], n["subscriptionId"]) for n in got] == [(pkg.id, sub.id)]
    assert len(receiver.received) == 1
    assert _outbox_rows(third) == 0


async def test_a_batch_of_notifications_is_routed_with_one_read_of_the_subscriptions(
        tmp_path: Path, receiver: Receiver) -> None:  # noqa: F811
    first = build(settings_for(tmp_path, worker_id="first"), notifier=DeadNotifier())
    await first.subscriptions.create({"callbackUri": receiver.url}, kind="vnfpkgm")
    pkg = first.packages.create()
    first.packages.upload(pkg.id, csar_bytes())  # onboarded, then disabled and enabled: 3 notifications
    first.packages.modify(pkg.id, {"operationalState": "DISABLED"})
    first.packages.modify(pkg.id, {"operationalState": "ENABLED"})
    assert _outbox_rows(first) == 3

    reads: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "FROM subscriptions" in statement:
            reads.append(statement)

    second = build(settings_for(tmp_path, worker_id="second", notify_reclaim_after=0))
    event.listen(Engine, "before_cursor_execute", count)
    try:
        await second.start()
        try:
            await receiver.wait_for(lambda n: len(receiver.received) >= 3)
            assert await second.notifier.drain_async(10)  # type: ignore[union-attr]
        finally:
            await second.stop()
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    assert len(receiver.received) == 3 and _outbox_rows(second) == 0
    assert len(reads) == 1  # the three rows were claimed (and routed) as one batch


async def test_with_no_subscription_a_claimed_batch_is_removed_in_the_claim(tmp_path: Path) -> None:
    first = build(settings_for(tmp_path, worker_id="first"), notifier=DeadNotifier())
    sub, _ = await first.subscriptions.create({"callbackUri": "http://127.0.0.1:9/gone"}, kind="vnfpkgm")
    pkg = first.packages.create()
    first.packages.upload(pkg.id, csar_bytes())
    first.packages.modify(pkg.id, {"operationalState": "DISABLED"})
    assert _outbox_rows(first) == 2  # stored while the subscription existed; it is gone when they are claimed
    first.subscriptions.delete(sub.id, kind="vnfpkgm")

    open_tx: dict[int, list[str]] = {}
    committed: list[list[str]] = []

    def began(conn: Any) -> None:
        open_tx[id(conn)] = []

    def sent(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        open_tx.setdefault(id(conn), []).append(" ".join(statement.split()[:3]).upper())

    def ended(conn: Any) -> None:
        committed.append(open_tx.pop(id(conn), []))

    second = build(settings_for(tmp_path, worker_id="second", notify_reclaim_after=0))
    listeners = [("begin", began), ("before_cursor_execute", sent), ("commit", ended)]
    for name, fn in listeners:
        event.listen(Engine, name, fn)
    try:
        await second.start()
        try:
            assert await second.notifier.drain_async(10)  # type: ignore[union-attr]
        finally:
            await second.stop()
    finally:
        for name, fn in listeners:
            event.remove(Engine, name, fn)
    assert _outbox_rows(second) == 0
    removals = [tx for tx in committed if "DELETE FROM NOTIFICATION_OUTBOX" in tx]
    assert removals and all("UPDATE NOTIFICATION_OUTBOX SET" in tx for tx in removals)
    assert sum(tx.count("DELETE FROM NOTIFICATION_OUTBOX") for tx in removals) == 2


async def test_without_a_subscriber_nothing_is_stored_and_the_outbox_is_not_read(
        tmp_path: Path, receiver: Receiver) -> None:  # noqa: F811
    app = build(settings_for(tmp_path, worker_id="only"))
    await app.start()
    outbox: list[str] = []

    def sent(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        words = statement.split()
        if "notification_outbox" in words[:3]:
            outbox.append(" ".join(words[:2]).upper())

    try:
        assert await app.notifier.drain_async(10)  # type: ignore[union-attr]  (the start's claim)
        event.listen(Engine, "before_cursor_execute", sent)
        pkg = app.packages.create()
        app.packages.upload(pkg.id, csar_bytes())
        app.instances.create({"vnfdId": app.packages.get(pkg.id).vnfd_id})
        assert await app.notifier.drain_async(10)  # type: ignore[union-attr]
        assert _outbox_rows(app) == 0
        assert outbox == ["INSERT INTO"] * 2  # onboarded, instance created: tried once each, nothing read
        source = app.notifier._outbox  # type: ignore[union-attr]
        assert source.quiet()
        with app.uow() as u:  # a row stored (and not woken for): the next wake reads the outbox
            u.outbox.add({"notificationType": "VnfPackageChangeNotification"}, owner="nobody")
            u.commit()
        assert not source.quiet()
        with app.uow() as u:
            [entry] = u.outbox.claim("nobody", utcnow())
            u.outbox.remove(entry.id)
            u.commit()

        # With a package subscriber: its notifications are stored and delivered as before, the
        # instance's (LCM) one has no subscriber of its kind and is not stored.
        outbox.clear()
        sub, _ = await app.subscriptions.create({"callbackUri": receiver.url}, kind="vnfpkgm")
        app.instances.create({"vnfdId": app.packages.get(pkg.id).vnfd_id})
        app.packages.modify(pkg.id, {"operationalState": "DISABLED"})
        got = await receiver.wait_for(lambda n: n["notificationType"] == "VnfPackageChangeNotification")
        assert await app.notifier.drain_async(10)  # type: ignore[union-attr]
    finally:
        event.remove(Engine, "before_cursor_execute", sent)
        await app.stop()
    assert [(n["vnfPkgId"], n["subscriptionId"], n["operationalState"]) for n in got] == [
        (pkg.id, sub.id, "DISABLED")]
    assert len(receiver.received) == 1 and _outbox_rows(app) == 0
    assert outbox.count("UPDATE NOTIFICATION_OUTBOX") >= 1 and outbox.count("DELETE FROM") == 1
