"""The machinery every demo scenario shares: numbered steps that print their result and duration,
stop at the first failure, and end with a summary table and the final state."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vnfm.entrypoints.cli.client import ApiError, ServerUnreachable, VnfmClient
from vnfm.entrypoints.cli.output import Column, mask_text, render_table
from vnfm.entrypoints.cli.wait import Observer, WaitTimeout, describe_error, wait_for_op

Echo = Callable[[str], None]
Step = tuple[str, Callable[[], str]]


class StepFailed(Exception):
    """A step's check failed; the message says what was expected and what was seen."""


@dataclass
class StepResult:
    name: str
    ok: bool
    seconds: float
    summary: str = ""


@dataclass
class DemoState:
    vnfd_id: str | None = None
    pkg_id: str | None = None
    vnf_id: str | None = None
    results: list[StepResult] = field(default_factory=list)


SUMMARY_COLUMNS: list[Column] = [
    ("STEP", lambda r: r["step"]),
    ("RESULT", lambda r: r["result"]),
    ("SECONDS", lambda r: r["seconds"]),
]


def run_task(client: VnfmClient, op_id: str, echo: Echo, timeout: float) -> None:
    """Follow an occurrence, printing its state changes and progress lines; StepFailed unless it
    completes."""

    def line(event: dict[str, Any], _elapsed: float) -> None:
        stage = event.get("stage") or ""
        echo(f"        {stage + ': ' if stage else ''}{mask_text(str(event.get('message', '')))}")

    observer = Observer(on_change=lambda s, t: echo(f"      {s}  {t:.1f}s"), on_progress=line)
    result = wait_for_op(client, op_id, timeout=timeout, observer=observer)
    if not result.ok:
        detail = mask_text(describe_error(result.op)) or "no error details"
        raise StepFailed(f"vnfLcmOpOcc {op_id} ended {result.state}: {detail}")


def onboard_package(client: VnfmClient, csar: bytes, timeout: float = 60.0) -> dict[str, Any]:
    """Create a package, upload `csar` and wait until it is ONBOARDED."""
    pkg = client.create_package({"origin": "vnfm demo"})
    client.upload_package(pkg["id"], csar)
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        pkg = client.get_package(pkg["id"])
        state = pkg.get("onboardingState")
        if state == "ONBOARDED":
            return pkg
        if state == "CREATED" or pkg.get("onboardingFailureDetails"):
            raise StepFailed(f"onboarding failed: {pkg.get('onboardingFailureDetails') or state}")
        if time.monotonic() > deadline:
            raise StepFailed(f"package still {state} after {timeout:g}s")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


class Runner:
    """Runs a scenario's `steps`; each prints its result and duration. `run` stops at the first
    failure, then prints every step's result (later ones SKIPPED) and the `final_state`."""

    def __init__(self, client: VnfmClient, echo: Echo, *, timeout: float, flavour: str) -> None:
        self.client = client
        self.echo = echo
        self.timeout = timeout
        self.flavour = flavour
        self.state = DemoState()

    def steps(self, csar: bytes) -> list[Step]:
        raise NotImplementedError

    def final_state(self) -> str:
        raise NotImplementedError

    def step(self, name: str, fn: Callable[[], str]) -> bool:
        n = len(self.state.results) + 1
        self.echo(f"==> {n}. {name}")
        start = time.monotonic()
        try:
            summary = fn()
            ok = True
        except (StepFailed, ApiError, WaitTimeout) as e:
            summary, ok = mask_text(str(e)), False
        except ServerUnreachable as e:
            summary, ok = str(e), False
        seconds = time.monotonic() - start
        self.state.results.append(StepResult(name, ok, seconds, summary))
        self.echo(f"    [{'OK' if ok else 'FAILED'}] {name} ({seconds:.2f}s): {summary}")
        return ok

    def run(self, csar: bytes) -> bool:
        steps = self.steps(csar)
        start = time.monotonic()
        ok = all(self.step(name, fn) for name, fn in steps)  # all() stops at the first failure
        total = time.monotonic() - start
        self.echo("")
        self.echo(render_table(self._summary_rows(steps), SUMMARY_COLUMNS))
        self.echo(f"\nFinal state: {self.final_state()}")
        if ok:
            self.echo(f"\nDemo succeeded: {len(steps)} steps in {total:.2f}s")
        else:
            failed = self.state.results[-1]
            self.echo(f"\nDemo FAILED at '{failed.name}': {failed.summary}")
        return ok

    def _summary_rows(self, steps: list[Step]) -> list[dict[str, str]]:
        done = {r.name for r in self.state.results}
        return [
            {"step": r.name, "result": "OK" if r.ok else "FAILED", "seconds": f"{r.seconds:.2f}"}
            for r in self.state.results
        ] + [{"step": name, "result": "SKIPPED", "seconds": ""} for name, _ in steps if name not in done]
