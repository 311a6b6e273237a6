"""A `systemctl` for test hosts, which have no systemd: it starts, stops and checks the REAL daemons
of the units below (keepalived, containerd) as plain processes with pid files, so the driver's node
scripts (`systemctl reload-or-restart keepalived`, `systemctl restart containerd`,
`systemctl is-active --quiet ...`) drive the real programs. Any other unit is refused with
systemctl's "unit not found" status (5), never silently accepted.

What it cannot check: unit files, drop-ins (e.g. containerd's http-proxy.conf) and `enable` (boot
order): there is no boot here. `enable` only checks that the unit is one it knows.
"""

from __future__ import annotations

from tests.integration.harness import TestHost
from vnfm.adapters.remote.ssh import SshExecutor

SYSTEMCTL = r"""#!/bin/bash
# systemctl for a test host (NOT systemd): real keepalived / containerd as plain processes
set -euo pipefail
P=/run/vnfm-svc
L=/var/log/vnfm-svc
mkdir -p "$P" "$L"
quiet=0; now=0; args=()
for a in "$@"; do
  case $a in
    --quiet|-q) quiet=1 ;;
    --now) now=1 ;;
    -*) ;;
    *) args+=("$a") ;;
  esac
done
cmd=${args[0]:-}
unit=${args[1]:-}
unit=${unit%.service}
case $unit in
  keepalived|containerd) ;;
  *) echo "Unit $unit.service not found." >&2; exit 5 ;;
esac
alive() { [ -f "$P/$unit.pid" ] && kill -0 "$(cat "$P/$unit.pid")" 2>/dev/null; }
ready() {
  case $unit in
    containerd) ctr --timeout 1s version >/dev/null 2>&1 ;;
    *) true ;;
  esac
}
stop() {
  if alive; then
    pid=$(cat "$P/$unit.pid")
    kill "$pid"
    end=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null; do
      [ $SECONDS -lt $end ] || { echo "$unit did not stop within 10s" >&2; exit 1; }
      sleep 0.1
    done
  fi
  rm -f "$P/$unit.pid"
}
start() {
  alive && return 0
  case $unit in
    keepalived)
      [ -f /etc/keepalived/keepalived.conf ] || { echo "no /etc/keepalived/keepalived.conf" >&2; exit 1; }
      setsid keepalived --dont-fork --log-console --log-detail -f /etc/keepalived/keepalived.conf \
        -p "$P/keepalived-main.pid" -r "$P/keepalived-vrrp.pid" -c "$P/keepalived-checkers.pid" \
        >>"$L/keepalived.log" 2>&1 </dev/null &
      ;;
    containerd)
      setsid containerd --config /etc/containerd/config.toml >>"$L/containerd.log" 2>&1 </dev/null &
      ;;
  esac
  echo $! > "$P/$unit.pid"
  end=$((SECONDS + 20))
  until ready; do
    alive || { echo "$unit exited at start:" >&2; tail -n 20 "$L/$unit.log" >&2; exit 1; }
    [ $SECONDS -lt $end ] || { echo "$unit not ready within 20s" >&2; exit 1; }
    sleep 0.1
  done
}
case $cmd in
  start) start ;;
  stop) stop ;;
  restart|reload-or-restart|try-restart) stop; start ;;
  enable) [ "$now" = 1 ] && start ;;
  disable) [ "$now" = 1 ] && stop ;;
  is-active)
    if alive && ready; then [ "$quiet" = 1 ] || echo active; exit 0; fi
    [ "$quiet" = 1 ] || echo inactive; exit 3 ;;
  *) echo "systemctl stand-in: $cmd is not supported" >&2; exit 1 ;;
esac
exit 0
"""


async def install(ssh: SshExecutor, host: TestHost) -> None:
    """Put the systemctl above first on the host's PATH."""
    await ssh.put_file(host.target(), "/usr/local/sbin/systemctl", SYSTEMCTL, mode=0o755)
    res = await ssh.run(host.target(), "command -v systemctl", check=True)
    assert res.stdout.strip() == "/usr/local/sbin/systemctl", res.stdout


async def log(ssh: SshExecutor, host: TestHost, unit: str) -> str:
    res = await ssh.run(host.target(), f"tail -n 40 /var/log/vnfm-svc/{unit}.log 2>/dev/null || true", check=True)
    return res.stdout
