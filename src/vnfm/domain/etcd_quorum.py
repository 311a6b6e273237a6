"""etcd quorum rules for changes of a stacked control plane (one etcd member per master).

After Cluster API's kubeadm control plane: a member may leave only if, once it has left, the
*healthy* voting members that remain are a quorum of the members that remain (an unhealthy member
counts as lost, whether it stays or not); a member joins as a learner (no vote, no effect on
quorum) and is promoted only if the healthy voters, the new one included, are a quorum of the new
size. Changes run one member at a time, so each intermediate size is checked.

Pure: callers pass member names and which of them they observed unhealthy, and get the order of
removals or a `UnprocessableEntity` (422) whose text carries the numbers.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from vnfm.domain.errors import UnprocessableEntity


def quorum(voters: int) -> int:
    """Votes needed for a decision among `voters` members."""
    return voters // 2 + 1


def tolerated(voters: int) -> int:
    """Members that may fail while the others keep quorum."""
    return voters - quorum(voters) if voters > 0 else 0


def removal_order(members: Sequence[str], unhealthy: Collection[str], removing: Sequence[str]) -> list[str]:
    """The order to remove `removing` from `members` one at a time (unhealthy first, as Cluster API's
    remediation does), or a 422 naming the step that would lose quorum."""
    unknown = [m for m in removing if m not in members]
    if unknown:
        raise UnprocessableEntity(f"etcd has no member {', '.join(unknown)}")
    if len(set(removing)) >= len(members):
        raise UnprocessableEntity(f"removing {len(set(removing))} of {len(members)} etcd members would leave none")
    order = sorted(dict.fromkeys(removing), key=lambda m: (m not in unhealthy, removing.index(m)))
    left = list(members)
    for m in order:
        left.remove(m)
        healthy = [x for x in left if x not in unhealthy]
        if len(healthy) < quorum(len(left)):
            sick = sorted(x for x in left if x in unhealthy)
            raise UnprocessableEntity(
                f"removing etcd member {m} would lose quorum: {len(left)} members would remain, "
                f"{len(healthy)} of them healthy, quorum is {quorum(len(left))}"
                + (f" (unhealthy: {', '.join(sick)}; heal them first)" if sick else ""))
    return order


def check_add(members: Sequence[str], unhealthy: Collection[str], adding: int) -> None:
    """Adding members one at a time (each a learner, promoted once caught up) needs a quorum now: a
    promoted member is healthy, so each promotion raises the healthy count by one and the quorum by at
    most one, and a cluster with quorum keeps it. A 422 with the numbers otherwise."""
    if adding < 1:
        return
    healthy = len([m for m in members if m not in unhealthy])
    if not members or healthy < quorum(len(members)):
        raise UnprocessableEntity(
            f"etcd has no quorum now: {healthy} of {len(members)} members healthy, quorum is "
            f"{quorum(len(members))}; heal the control plane before adding members")


def check_heal(members: Sequence[str], unhealthy: Collection[str], healed: Sequence[str]) -> None:
    """Healing `healed` replaces them (each leaves etcd and a new member joins): the members left while
    they are out must be a healthy quorum of the current size."""
    left = [m for m in members if m not in healed]
    healthy = [m for m in left if m not in unhealthy]
    if len(healthy) < quorum(len(members)):
        raise UnprocessableEntity(
            f"healing {', '.join(healed)} would lose etcd quorum: {len(healthy)} healthy of "
            f"{len(members)} members would remain, quorum is {quorum(len(members))}")
