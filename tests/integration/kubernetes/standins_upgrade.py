"""STRICT STAND-INS for the upgrade programs kube_packages.sh and kubeadm_upgrade.sh call: apt-get,
apt-mark and dpkg-query over a package database of kubeadm/kubelet/kubectl, and kubeadm's
`version` / `upgrade plan|apply|node` (NOT the real programs: no Kubernetes runs here). They
record their argv like standins.py's and refuse what the real programs refuse:

- apt-get: only `update` and `install`; options known to apt (-y -q --allow-downgrades
  --allow-change-held-packages ...), anything else "E: Command line option ... is not understood";
  install without -y aborts (no terminal to answer); `pkg=VERSION` pins with apt's glob matching
  (`1.31.2-*`) against the versions of the repository the sources list names (pkgs.k8s.io's
  per-minor repositories: only that minor's versions are there, and only after `apt-get update`
  with the keyring the list's signed-by names present); "E: Version '...' for '...' was not found"
  (exit 100); a held package changed without --allow-change-held-packages, a downgrade without
  --allow-downgrades: apt's errors (exit 100). Installing kubeadm puts that version's kubeadm in place.
- apt-mark hold/unhold: only packages apt knows; dpkg-query -W -f='${Version}': the installed
  version (exit 1 for one not installed).
- kubeadm upgrade apply: the flags of kubeadm 1.31 (`-y/--yes`, `-f/--force`,
  `--certificate-renewal=`, `--etcd-upgrade=`, `--dry-run`, `--config`, `--kubeconfig`,
  `--ignore-preflight-errors`, `--patches`, `--allow-*-upgrades`, `--print-config`; booleans as Go's
  ParseBool reads them), one version
  argument `vX.Y.Z`, no prompt answered without --yes/--force; refuses a version newer than kubeadm
  itself, more than one minor above the cluster, or a minor downgrade. Backs the control-plane
  manifests up to /etc/kubernetes/tmp/kubeadm-backup-manifests-<date> (kubeadm keeps them) and
  rewrites them with the new images. `upgrade node`: kubeadm 1.31's flags, no argument; upgrades
  this host's manifests (a control plane) to the cluster's version and the kubelet configuration.

What they cannot check: dependencies between packages (kubelet's on kubernetes-cni/cri-tools),
the repository's real signature (the keyring is a file that must exist), kubeadm's preflight
checks, the cluster's state behind the version (the "kubeadm-config" ConfigMap is the file
/etc/vnfm-standin/cluster-version on each host, which the test writes where apply did not run),
what the new control plane does (no API server runs: the manifests are files).
"""

from __future__ import annotations

import json

from tests.integration.harness import TestHost
from tests.integration.kubernetes.standins import COMMON, GPG, SIMPLE, SYSTEMCTL
from vnfm.adapters.remote.ssh import SshExecutor

PROGRAM = r'''import fnmatch, json, os, re, subprocess, sys, time
S = "/var/lib/vnfm-standin/pkgs.json"   # {"installed": {pkg: version}, "held": [..], "lists": minor|None}
REPO = json.load(open("/etc/vnfm-standin/repo.json"))   # {minor: {pkg: [versions]}}
CLUSTER = "/etc/vnfm-standin/cluster-version"
MANIFESTS = "/etc/kubernetes/manifests"
me, args = sys.argv[1], sys.argv[2:]
with open("/var/log/vnfm-standin/argv.log", "a") as f:
    f.write(" ".join([me, *args]) + "\n")
def die(msg, code=1):
    print(msg, file=sys.stderr); sys.exit(code)
def load():
    return json.load(open(S)) if os.path.exists(S) else {"installed": {}, "held": [], "lists": None}
def save(st):
    json.dump(st, open(S, "w"))
def newer(a, b):
    return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0
def known():
    return {p for m in REPO.values() for p in m}
def apt_get():
    st = load(); flags = set(); words = []
    ok = {"-y", "--yes", "-q", "-qq", "--allow-downgrades", "--allow-change-held-packages", "--no-install-recommends"}
    for a in args:
        if a.startswith("-"):
            if a not in ok:
                die(f"E: Command line option '{a}' is not understood in combination with the other options", 100)
            flags.add({"--yes": "-y"}.get(a, a))
        else:
            words.append(a)
    if words[:1] == ["update"] and len(words) == 1:
        line = open("/etc/apt/sources.list.d/kubernetes.list").read()
        m = re.fullmatch(r"deb \[signed-by=(\S+)\] https://pkgs\.k8s\.io/core:/stable:/v(1\.\d+)/deb/ /\n", line)
        if not m: die(f"E: Malformed entry 1 in list file /etc/apt/sources.list.d/kubernetes.list", 100)
        if not os.path.exists(m[1]): die(f"W: GPG error: NO_PUBKEY (keyring {m[1]} missing)", 100)
        st["lists"] = m[2] if m[2] in REPO else die(f"E: The repository for v{m[2]} does not have a Release file.", 100)
        save(st); return
    if words[:1] != ["install"] or len(words) < 2: die(f"E: Invalid operation {' '.join(words)}", 100)
    repo = REPO.get(st["lists"] or "", {})
    plan = {}
    for w in words[1:]:
        pkg, _, pin = w.partition("=")
        if pkg not in repo: die(f"E: Unable to locate package {pkg}", 100)
        match = [v for v in repo[pkg] if fnmatch.fnmatchcase(v, pin or "*")]
        if not match: die(f"E: Version '{pin}' for '{pkg}' was not found", 100)
        best = match[0]
        for v in match[1:]:
            best = v if newer(v, best) else best
        plan[pkg] = best
    if "-y" not in flags: die("Do you want to continue? [Y/n] Abort.", 1)
    for pkg, v in plan.items():
        have = st["installed"].get(pkg)
        if have == v: continue
        if pkg in st["held"] and "--allow-change-held-packages" not in flags:
            die("E: Held packages were changed and -y was used without --allow-change-held-packages.", 100)
        if have and newer(have, v) and "--allow-downgrades" not in flags:
            die("E: Packages were downgraded and -y was used without --allow-downgrades.", 100)
    for pkg, v in plan.items():
        st["installed"][pkg] = v
        print(f"Setting up {pkg} ({v}) ...")
    save(st)
def apt_mark():
    st = load()
    if not args or args[0] not in ("hold", "unhold") or len(args) < 2: die("E: Invalid operation", 100)
    for p in args[1:]:
        if p not in known(): die(f"E: Unable to locate package {p}", 100)
        st["held"] = sorted(set(st["held"]) | {p}) if args[0] == "hold" else [h for h in st["held"] if h != p]
        print(f"{p} set on hold." if args[0] == "hold" else f"Canceled hold on {p}.")
    save(st)
def dpkg_query():
    if len(args) != 3 or args[:2] != ["-W", "-f=${Version}"]:
        os.execv("/usr/bin/dpkg-query", ["dpkg-query", *args])
    v = load()["installed"].get(args[2])
    if v is None: die(f"dpkg-query: no packages found matching {args[2]}", 1)
    sys.stdout.write(v)
def vt(v):
    return tuple(int(x) for x in v.lstrip("v").split("."))
def kubeadm_version():
    v = load()["installed"].get("kubeadm")
    return "v" + v.split("-")[0] if v else die("kubeadm: command not found", 127)
def write_manifests(version, backup):
    if backup:
        d = "/etc/kubernetes/tmp/kubeadm-backup-manifests-" + time.strftime("%Y-%m-%d-%H-%M-%S")
        os.makedirs(d, exist_ok=True)
        for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
            os.replace(f"{MANIFESTS}/{c}.yaml", f"{d}/{c}.yaml")
    for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
        with open(f"{MANIFESTS}/{c}.yaml", "w") as f:
            f.write(f"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: registry.k8s.io/{c}:{version}\n")
PARSE_BOOL = {**dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
              **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False)}
def upgrade_flags(rest, allowed, takes_value):
    pos, yes = [], False
    it = iter(rest)
    for a in it:
        name, eq, _ = a.partition("=")
        if not a.startswith("-"):
            pos.append(a); continue
        if name not in allowed: die(f"unknown flag: {name}", 1)
        if name in takes_value and not eq:
            next(it, None) or die(f"flag needs an argument: {name}", 1)
        value = a.split("=", 1)[1] if eq else "true"
        if name not in takes_value and value not in PARSE_BOOL:
            die(f'invalid argument "{value}" for "{name}" flag: strconv.ParseBool: parsing "{value}": '
                'invalid syntax', 1)
        yes = yes or (name in ("-y", "--yes", "-f", "--force") and PARSE_BOOL[value])
    return pos, yes
COMMON_FLAGS = {"--certificate-renewal", "--config", "--dry-run", "--etcd-upgrade", "--ignore-preflight-errors",
                "--kubeconfig", "--patches"}
VALUED = {"--config", "--ignore-preflight-errors", "--kubeconfig", "--patches", "--skip-phases"}
def kubeadm():
    if args == ["version", "-o", "short"]:
        print(kubeadm_version()); return
    mine = kubeadm_version()
    if args[:2] == ["upgrade", "plan"]:
        upgrade_flags(args[2:], COMMON_FLAGS | {"--allow-experimental-upgrades", "--allow-release-candidate-upgrades",
                                                "--print-config", "-o", "--output"}, VALUED | {"-o", "--output"})
        print(f"cluster at v{open(CLUSTER).read().strip()}, kubeadm {mine}"); return
    if args[:2] == ["upgrade", "apply"]:
        pos, yes = upgrade_flags(args[2:], COMMON_FLAGS | {"-y", "--yes", "-f", "--force", "--print-config",
                                 "--allow-experimental-upgrades", "--allow-release-candidate-upgrades"}, VALUED)
        if len(pos) != 1 or not re.fullmatch(r"v\d+\.\d+\.\d+", pos[0]):
            die(f"[upgrade/version] FATAL: the version argument is invalid: {pos}", 1)
        if not os.path.exists("/etc/kubernetes/admin.conf"): die("couldn't load /etc/kubernetes/admin.conf", 1)
        want, cluster = vt(pos[0]), vt(open(CLUSTER).read().strip())
        if want > vt(mine):
            die(f"Specified version to upgrade to {pos[0]!r} is higher than the kubeadm version {mine!r}. "
                "Upgrade kubeadm first", 1)
        if want[1] > cluster[1] + 1:
            die("Specified version to upgrade to is at least two minor releases higher than the cluster", 1)
        if want[1] < cluster[1]:
            die("Specified version to upgrade to is a minor release lower than the cluster: not supported", 1)
        if not yes: die("[upgrade] Are you sure you want to proceed? [y/N]: EOF: aborted", 1)
        write_manifests(pos[0], backup=True)
        open(CLUSTER, "w").write(pos[0].lstrip("v"))
        print(f"[upgrade] SUCCESS! A control plane node of your cluster was upgraded to {pos[0]}."); return
    if args[:2] == ["upgrade", "node"]:
        pos, _ = upgrade_flags(args[2:], COMMON_FLAGS | {"--skip-phases"}, VALUED)
        if pos: die(f'unknown command "{pos[0]}" for "kubeadm upgrade node"', 1)
        cluster = "v" + open(CLUSTER).read().strip()
        if vt(cluster) > vt(mine):
            die(f"kubeadm {mine} is older than the cluster's {cluster}: upgrade kubeadm first", 1)
        if os.path.exists(f"{MANIFESTS}/kube-apiserver.yaml"):
            write_manifests(cluster, backup=True)
        os.makedirs("/var/lib/kubelet", exist_ok=True)
        open("/var/lib/kubelet/config.yaml", "w").write(f"# kubelet configuration of {cluster}\n")
        print("[upgrade] The configuration for this node was successfully upgraded!"); return
    die(f"stand-in kubeadm (upgrade): not a command this stand-in knows: kubeadm {' '.join(args)}", 1)
{"apt-get": apt_get, "apt-mark": apt_mark, "dpkg-query": dpkg_query, "kubeadm": kubeadm}[me]()
'''

REPO = {"1.30": {p: ["1.30.4-1.1", "1.30.5-1.1"] for p in ("kubeadm", "kubelet", "kubectl")},
        "1.31": {p: ["1.31.1-1.1", "1.31.2-1.1"] for p in ("kubeadm", "kubelet", "kubectl")}}
PROGRAMS = ("apt-get", "apt-mark", "dpkg-query", "kubeadm")


async def install(ssh: SshExecutor, host: TestHost, installed: str, control_plane: bool) -> None:
    """The stand-ins on PATH, kubeadm/kubelet/kubectl at `installed` (held, as kubeadm_init.sh leaves
    them), the cluster at that version, a control plane's manifests and admin kubeconfig."""
    t = host.target()
    await ssh.put_file(t, "/usr/local/lib/vnfm-standin/common.sh", COMMON, mode=0o644)
    await ssh.put_file(t, "/usr/local/lib/vnfm-standin/upgrade.py", PROGRAM, mode=0o644)
    await ssh.put_file(t, "/etc/vnfm-standin/repo.json", json.dumps(REPO), mode=0o644)
    for name in PROGRAMS:
        await ssh.put_file(t, f"/usr/local/sbin/{name}", f"#!/bin/bash\nexec /usr/bin/python3 "
                           f"/usr/local/lib/vnfm-standin/upgrade.py {name} \"$@\"\n", mode=0o755)
    for name, text in {"gpg": GPG, "systemctl": SYSTEMCTL, "curl": SIMPLE.replace("NAME", "curl")}.items():
        await ssh.put_file(t, f"/usr/local/sbin/{name}", text, mode=0o755)
    state = {"installed": {p: f"{installed}-1.1" for p in ("kubeadm", "kubelet", "kubectl")},
             "held": ["kubeadm", "kubectl", "kubelet"], "lists": installed.rsplit(".", 1)[0]}
    setup = (f"mkdir -p /var/log/vnfm-standin /var/lib/vnfm-standin /etc/apt/keyrings /etc/apt/sources.list.d && "
             f"printf %s {json.dumps(json.dumps(state))} > /var/lib/vnfm-standin/pkgs.json && "
             f"printf %s {installed} > /etc/vnfm-standin/cluster-version")
    await ssh.run(t, setup, check=True)
    if control_plane:
        await ssh.put_file(t, "/etc/kubernetes/admin.conf", "apiVersion: v1\nkind: Config\n", mode=0o600)
        for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
            await ssh.put_file(t, f"/etc/kubernetes/manifests/{c}.yaml", "apiVersion: v1\nkind: Pod\nspec:\n  "
                               f"containers:\n  - image: registry.k8s.io/{c}:v{installed}\n", mode=0o600)
    res = await ssh.run(t, "for p in " + " ".join((*PROGRAMS, "gpg", "systemctl", "curl")) + "; do command -v $p; done",
                        check=True)
    assert all(p.startswith("/usr/local/sbin/") for p in res.stdout.split()), res.stdout
