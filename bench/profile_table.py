"""Server CPU by subsystem, from a py-spy recording (`bench/fleet_load.py --py-spy FILE`).

py-spy's raw format is one collapsed stack a line (`frame;frame;...;innermost COUNT`, outermost
first). Every sample goes to the first subsystem below whose pattern one of its frames matches
(cross-cutting costs first: logging, JSON, deep copies, then the component that runs them), so the
shares add up to 100 %. With `--top N` the N frames with the most own samples of each subsystem.

    .venv/bin/python bench/profile_table.py /tmp/profile.txt [--top 5]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path

# (subsystem, pattern searched in every frame "function (file:line)"), first match wins.
SUBSYSTEMS: list[tuple[str, str]] = [
    ("logging (records, handlers, access lines)", r"\(logging/|logsetup\.py|uvicorn/logging\.py"),
    ("job snapshot copy per write", r"JobStore\._write_job .*\n.*\(copy\.py"),
    ("simulated Kubernetes API (cluster registration)", r"simulator/k8sapi/"),
    ("simulated node twin (kubeadm install/join)", r"simulator/twin/"),
    ("simulated cloud (store, transactions, JSON)", r"adapters/infra/simulator/"),
    ("Kubernetes client and infra driver", r"adapters/infra/kubernetes/|adapters/kube/|\(kubernetes/"),
    ("fencing checks", r"lcm/fence\.py|db/liveness\.py"),
    ("heartbeat", r"lcm/heartbeat\.py"),
    ("occurrence write (save_changes / save_owned)", r"db/op_occs\.py|db/bodypatch\.py"),
    ("instance save and reads (repository, mappers)", r"db/repository\.py|db/mappers\.py"),
    ("notifications", r"notifications\.py|adapters/notify/"),
    ("database (SQLAlchemy, unit of work)", r"\(sqlalchemy/|db/uow\.py|db/engine\.py"),
    ("management driver and node steps", r"adapters/mgmt/|vnfm/nodesteps/|adapters/nodes/"),
    ("engine (runner, stages, job store)", r"service/lcm/"),
    ("HTTP and request handling (uvicorn, FastAPI, pydantic)",
     r"\((uvicorn|h11|starlette|fastapi|pydantic|anyio)/|entrypoints/api/"),
    ("service layer (instances, views)", r"vnfm/service/"),
    ("event loop, threads, other", r""),
]


def classify(frames: list[str]) -> str:
    text = "\n".join(frames)
    for name, pattern in SUBSYSTEMS:
        if re.search(pattern, text):
            return name
    return SUBSYSTEMS[-1][0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recording", type=Path)
    ap.add_argument("--top", type=int, default=0, help="the frames with the most own samples per subsystem")
    args = ap.parse_args()
    shares: Counter[str] = Counter()
    own: dict[str, Counter[str]] = defaultdict(Counter)
    for line in args.recording.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        frames = stack.split(";")
        name = classify(frames)
        shares[name] += int(n)
        own[name][frames[-1]] += int(n)
    total = sum(shares.values()) or 1
    print(f"{total} samples")
    print("| subsystem | share |\n|---|---|")
    for name, n in shares.most_common():
        print(f"| {name} | {100 * n / total:.1f} % |")
        for frame, m in own[name].most_common(args.top):
            print(f"|   {frame} | {100 * m / total:.1f} % |")


if __name__ == "__main__":
    main()
