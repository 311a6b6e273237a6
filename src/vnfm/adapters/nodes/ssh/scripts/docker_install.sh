#!/bin/bash
# Docker running on this host (the private-registry VNF). Nothing is done when `docker info`
# answers. A Docker that is installed but stopped is started. Otherwise docker-ce is installed from
# Docker's apt repository (Ubuntu only), with the proxy settings for apt and for the daemon.
# Inputs: APT_REPO PACKAGES (space separated) NO_PROXY_LIST DEADLINE_S;
#         secrets (env): HTTP_PROXY_URL HTTPS_PROXY_URL.
# Output: "@@ changed=true|false", "@@ installed=true|false", "@@ version=...".
set -euo pipefail
: "${APT_REPO:?}" "${PACKAGES:?}" "${DEADLINE_S:?}"
NO_PROXY_LIST=${NO_PROXY_LIST:-}
http_url=${HTTP_PROXY_URL:-}
https_url=${HTTPS_PROXY_URL:-}
unset HTTP_PROXY_URL HTTPS_PROXY_URL
deadline=$((SECONDS + ${DEADLINE_S%.*}))
changed=false
installed=false
# apt and curl may print a proxy URL, credentials included, in their errors: mask
# "scheme://user:password@" as "scheme://***@" (the exit status stays the command's: pipefail)
masked() {
  { "$@" 2>&1 1>&3 3>&- | sed -E 's#([A-Za-z][A-Za-z0-9+.-]*://)[^:/@[:space:]]*:[^@/[:space:]]+@#\1***@#g' >&2; } 3>&1
}
docker_ok() { docker info >/dev/null 2>&1; }
systemd_up() { [ -d /run/systemd/system ] && command -v systemctl >/dev/null; }
have_docker() {  # the CLI and a way to start its daemon
  command -v docker >/dev/null || return 1
  if systemd_up && systemctl cat docker.service >/dev/null 2>&1; then return 0; fi
  [ -x /etc/init.d/docker ] || command -v dockerd >/dev/null
}
report() {
  echo "@@ installed=$installed"
  echo "@@ version=$(docker version --format '{{.Server.Version}}' 2>/dev/null | head -n1 || true)"
  echo "@@ changed=$changed"
}
dropin=/etc/systemd/system/docker.service.d/http-proxy.conf
dropin_text() {
  # checked values (no quote, backslash, blank, control character); systemd's % specifiers escaped
  printf '[Service]\nEnvironment="HTTP_PROXY=%s" "HTTPS_PROXY=%s" "NO_PROXY=%s"' \
    "${http_url//%/%%}" "${https_url//%/%%}" "${NO_PROXY_LIST//%/%%}"
}
dropin_stale() {  # the daemon's pulls must go through the proxy (systemd drop-in)
  [ -n "$http_url$https_url" ] && systemd_up && { [ ! -f "$dropin" ] || [ "$(cat "$dropin")" != "$(dropin_text)" ]; }
}
if docker_ok && ! dropin_stale; then report; exit 0; fi

export DEBIAN_FRONTEND=noninteractive
if ! have_docker; then
  os_id=""; os_name="unknown"; codename=""
  if [ -r /etc/os-release ]; then
    # shellcheck disable=SC1091
    . /etc/os-release
    os_id=${ID:-}; os_name=${PRETTY_NAME:-$os_id}; codename=${VERSION_CODENAME:-${UBUNTU_CODENAME:-}}
  fi
  if [ "$os_id" != ubuntu ] || [ -z "$codename" ]; then
    echo "unsupported OS: $os_name: Docker (docker-ce) is installed from Docker's apt repository on Ubuntu only" >&2
    exit 1
  fi
  if [ -n "$http_url$https_url" ]; then
    (umask 077
     printf 'Acquire::http::Proxy "%s";\nAcquire::https::Proxy "%s";\n' "$http_url" "$https_url" \
       > /etc/apt/apt.conf.d/95vnfm-proxy)
    export http_proxy=$http_url https_proxy=$https_url no_proxy=$NO_PROXY_LIST
  fi
  masked apt-get update -q
  masked apt-get install -y -q ca-certificates curl
  install -d -m 0755 /etc/apt/keyrings
  key=$(mktemp)
  masked curl -fsSL -o "$key" "$APT_REPO/gpg" || { rm -f "$key"; exit 1; }
  install -m 0644 "$key" /etc/apt/keyrings/docker.asc
  rm -f "$key"
  echo "deb [arch=$(dpkg --print-architecture) signed-by=/etc/apt/keyrings/docker.asc] $APT_REPO $codename stable" \
    > /etc/apt/sources.list.d/docker.list
  masked apt-get update -q
  # shellcheck disable=SC2086  # PACKAGES is a validated list of package names
  masked apt-get install -y -q $PACKAGES
  installed=true
  changed=true
fi

if dropin_stale; then  # 0600: it may hold credentials
  (umask 077; mkdir -p "${dropin%/*}"; printf '%s\n' "$(dropin_text)" > "$dropin")
  systemctl daemon-reload
fi
http_url=""; https_url=""

log=/var/log/vnfm-dockerd.log
if systemd_up; then
  systemctl enable docker >/dev/null 2>&1 || true
  systemctl restart docker >/dev/null 2>&1 || true
elif [ -x /etc/init.d/docker ]; then
  /etc/init.d/docker start >>"$log" 2>&1 || true
else
  nohup setsid dockerd >>"$log" 2>&1 </dev/null &
fi
changed=true
until docker_ok; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "Docker did not start within ${DEADLINE_S}s:" >&2
    if systemd_up; then
      journalctl -u docker --no-pager -n 15 2>/dev/null >&2 || systemctl status docker --no-pager 2>&1 | tail -n 15 >&2 || true
    else
      tail -n 15 "$log" >&2 2>/dev/null || true
    fi
    exit 1
  fi
  sleep 0.2
done
report
