"""`vnfm doctor`: what is wrong with a vnfm server, one line each with what to do."""

from __future__ import annotations

from typing import Any

import click

from vnfm.entrypoints.cli.context import CliContext, json_option, pass_cc

MARK = {"problem": "PROBLEM", "warning": "warning", "ok": "ok"}


def render(findings: list[dict[str, Any]], show_ok: bool) -> str:
    lines = []
    for f in findings:
        if f.get("status") == "ok" and not show_ok:
            continue
        fix = f"; do: {f['fix']}" if f.get("fix") else ""
        mark = MARK.get(str(f.get("status")), str(f.get("status")))
        lines.append(f"{mark:<8} {f.get('check')}: {f.get('detail')}{fix}")
    counts = {s: sum(f.get("status") == s for f in findings) for s in MARK}
    lines.append(f"{counts['problem']} problem(s), {counts['warning']} warning(s), {counts['ok']} check(s) ok")
    return "\n".join(lines)


@click.command()
@click.option("--all", "show_ok", is_flag=True, help="Also print the checks that are fine.")
@json_option
@pass_cc
def doctor(cc: CliContext, show_ok: bool) -> None:
    """Check a vnfm server: this client reaches it (TLS, authentication), its configuration, its
    database and engine, every registered VIM (the server's probe: Keystone answers and takes the
    credentials) and SSH to the VNFCs of the instantiated VNFs on real clouds. Prints what is
    wrong, one line each with what to do; exit 1 when something is (a problem; warnings do not).
    Needs an admin (the findings span every tenant).

    \b
    Example:
      vnfm --endpoint https://vnfm.example:9890 --cacert ca.pem doctor
      vnfm doctor --all -o json
    """
    # reaching the server at all (refused, TLS, token) ends here with the client's one-line diagnosis
    report = cc.client.doctor()
    findings = report.get("findings") if isinstance(report, dict) else None
    if not isinstance(findings, list):
        raise click.ClickException("the server's answer has no findings: is it a vnfm server?")
    cc.emit(report, lambda r: render(findings, show_ok))
    if any(f.get("status") == "problem" for f in findings if isinstance(f, dict)):
        click.get_current_context().exit(1)
