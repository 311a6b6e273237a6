"""Node-step shell scripts: shellcheck, and the pure-shell ones run locally on temp files."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from vnfm.adapters.nodes.ssh.base import parse_output, script_text
from vnfm.adapters.nodes.ssh.render import render_hosts_block
from vnfm.adapters.remote.ssh import script_payload
from vnfm.nodesteps import SetHostsEntries

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = sorted((ROOT / "src/vnfm/adapters/nodes/ssh/scripts").glob("*.sh"))
LIBS = sorted((ROOT / "src/vnfm/adapters/nodes/ssh/scripts/lib").glob("*.sh"))  # `# @include`d by scripts
OTHER_SCRIPTS = [ROOT / "tests/integration/hostinit.sh", ROOT / ".ci/integration-deps.sh"]


def _used_script_names() -> set[str]:
    """The scripts the SSH handlers of every step family run (`ex.script(target, step, "<name>", ...)`)."""
    names: set[str] = set()
    for mod in (ROOT / "src/vnfm/adapters/nodes/ssh").glob("*.py"):
        names |= set(re.findall(r"\.script\(\s*\w+,\s*\w+,\s*\"([a-z_]+)\"", mod.read_text()))
    return names


def test_every_script_is_used_and_packaged() -> None:
    used = _used_script_names()
    assert len(used) > 20
    assert sorted(p.stem for p in SCRIPTS) == sorted(used)
    for name in used:
        text = script_text(name)
        assert text.startswith("#!/bin/bash\n")
        assert "set -euo pipefail" in text
        assert "# @include" not in text, f"{name}: an include left unresolved"
        for line in text.splitlines():  # waits are polls inside readiness loops, never a bare sleep
            assert not line.startswith("sleep"), f"{name}: top-level sleep: {line}"


@pytest.mark.parametrize("path", SCRIPTS + LIBS + [p for p in OTHER_SCRIPTS if p.exists()], ids=lambda p: p.name)
def test_shellcheck(path: Path) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck, or .ci/integration-deps.sh)")
    r = subprocess.run(["shellcheck", "-x", "-s", "bash", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def run_local(name: str, inputs: dict[str, str]) -> dict[str, str]:
    r = subprocess.run(["bash", "-s"], input=script_payload(script_text(name), None, inputs),
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    return parse_output(r.stdout)


def test_hosts_entries_script_is_idempotent(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n# BEGIN other\n10.0.0.9 keep.me\n# END other\n")
    step = SetHostsEntries((("10.0.0.5", ("reg.example", "reg")), ("10.0.0.6", ("api",))), block="vnfm")
    inputs = {"BLOCK": "vnfm", "BLOCK_TEXT": render_hosts_block(step.block, step.entries).rstrip("\n"),
              "HOSTS_FILE": str(hosts)}
    inode = hosts.stat().st_ino
    assert run_local("hosts_entries", inputs)["changed"] == "true"
    text = hosts.read_text()
    assert "10.0.0.5 reg.example reg\n10.0.0.6 api\n" in text
    assert "10.0.0.9 keep.me" in text and text.startswith("127.0.0.1 localhost\n")
    assert hosts.stat().st_ino == inode  # rewritten in place
    assert run_local("hosts_entries", inputs)["changed"] == "false"
    inputs["BLOCK_TEXT"] = render_hosts_block("vnfm", [("10.0.0.7", ["api"])]).rstrip("\n")
    assert run_local("hosts_entries", inputs)["changed"] == "true"
    text = hosts.read_text()
    assert "10.0.0.5" not in text and text.count("# BEGIN vnfm") == 1 and "10.0.0.7 api" in text
    inputs["BLOCK_TEXT"] = ""
    assert run_local("hosts_entries", inputs)["changed"] == "true"
    assert hosts.read_text() == "127.0.0.1 localhost\n# BEGIN other\n10.0.0.9 keep.me\n# END other\n"


def test_script_payload_keeps_values_and_stdin_apart() -> None:
    script = 'printf "%s|%s|%s\\n" "$A" "$(printenv A || true)" "$S"; cat; echo "$1"'
    payload = script_payload(script, {"S": "p@ss 'w\"d"}, {"A": "x $(touch /tmp/pwned) `y`"})
    r = subprocess.run(["bash", "-s", "--", "arg one"], input=payload, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "x $(touch /tmp/pwned) `y`||p@ss 'w\"d\narg one\n"
    with pytest.raises(ValueError):
        script_payload("true", {"BAD-NAME": "x"})
