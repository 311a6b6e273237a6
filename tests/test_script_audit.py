"""Every node script runs in at least one test against a real program or the simulated Kubernetes
API (issue 23): SCRIPT_TESTS names, for each script under adapters/nodes/ssh/scripts, the
tests that run it against a real program (over real SSH on test hosts, or for etcd snapshots on the
machine's etcd). A new script without an entry fails `test_every_script_has_a_real_run`; a renamed
or removed test fails `test_the_named_tests_exist`. KNOWN_GAPS lists the scripts that have none
yet, with the reason: the lead decides on them; nothing else may be missing.

The table was checked by running tests/integration with VNFM_SCRIPT_AUDIT=FILE
(tests/integration/conftest.py records every script each test ran over SSH, and whether it
succeeded); the engine-over-hosts flows are `test_engine_*`. Against what each script runs:

Against what each runs (script(s): real program(s) or API; the tests):
- apply_pv, delete_pvs: kubectl -> simulated API; kubectl scripts, engine storage heal
- authorized_key: sshd (and sudo); ssh_become, Kubespray playbooks and driver, engine Kubespray
- containerd_registries: containerd loading the file, pulling through it; keepalived_containerd
- delete_node, drain_node, uncordon_node, label_node, wait_node_ready, vim_token: kubectl ->
  simulated API; kubectl scripts, engine kubeadm flows (drain/delete also Kubespray's)
- docker_image, docker_install, registry_run: podman as docker; private_registry, engine registry
- etcd_*: etcd 3.4 (TLS); etcd, kubeadm master heal, engine kubeadm flows; etcd_health, etcd_member_list,
  etcd_snapshot_save/fetch/restore and etcd_restore_drill also with no etcd program on PATH, etcd run chrooted
  in an image-like root (lib/etcd_tools.sh finds them through /proc/<pid>): stock master;
  etcd_snapshot_save and etcd_restore_drill also against an etcd with client-certificate auth and
  Kubespray's /etc/ssl/etcd/ssl layout (openssl-made): Kubespray backup
- etcd_member_promote, etcd_member_add --learner: etcd 3.4; etcd, its learner test
- cp_endpoint_move, and kubelet_server again (issue 27 item 4, 1 -> 3 masters): the real kubectl -> simulated
  API (kubeadm-config, kube-proxy, cluster-info, the kube-proxy DaemonSet), the real openssl, the
  stand-ins for kubeadm's `init phase certs apiserver` / `upload-config`, crictl and systemctl;
  cp_endpoint scripts
- haproxy_apply, lb_frontends: HAProxy 2.6; haproxy, lb_frontends, cnf_nodeport_lb, engine flows
- hosts_entries, prepare_node: /etc/hosts, sysctl/module files; kubeadm scripts, engine flows
- join_info, kubeadm_init, kubeadm_join: the strict stand-in kubeadm (real etcd, real kubectl);
  kubeadm scripts, master heal, engine kubeadm flows
- keepalived: keepalived 2.2 holding and moving the VIP; keepalived_containerd
- kubeconfig, kubespray_inventory, kubespray_playbook: ansible-core + the stand-in Kubespray tree;
  Kubespray playbooks and driver, engine Kubespray
- nfs_client: the apt stand-in (this kernel has no NFS client); engine storage heal
- nfs_export: nfs-ganesha read through libnfs clients; nfs, several exports, engine storage heal
- prepare_volume: blkid, mkfs.ext4, mount on a loop device; engine storage heal (stand-ins in
  the registry/volume scripts test)
- registry_client, registry_serve: docker-registry, skopeo; registry
- cert_expiry: the real openssl on openssl-made kubeadm and Kubespray trees; certificates (issue 27)
- cert_renew: recording stand-ins for kubeadm (re-signing with the real openssl), crictl, kubectl's
  /readyz, and an openssl s_server as the restarted API server (the served certificate is checked
  with the real openssl s_client); certificates
- etcd_snapshot_save, etcd_snapshot_fetch (issue 26): the machine's etcd 3.4 on loopback, run
  with bash (not over SSH); tests/unit/nodesteps/test_etcd_snapshot_scripts.py; over SSH also as in the next line
- etcd_snapshot_put, etcd_snapshot_restore: etcd 3.4 / etcdctl on test hosts (saved on one, put
  back and restored on another, an etcd serving the restored data; a corrupt snapshot refused);
  upgrade node scripts
- node_at_version: kubectl -> simulated API (per-node kubelet versions, NotReady); upgrade node scripts
- kube_packages, kubeadm_upgrade: the strict stand-ins of standins_upgrade.py (apt-get/apt-mark/
  dpkg-query with apt's pin, hold and downgrade rules; kubeadm's upgrade apply/node flags and
  version rules, its manifest backups); upgrade node scripts
- pki_fetch, pki_put (issue 27 item 3): the real openssl's CAs and service-account keys (read from
  one tree, put into another, verified with openssl; another CA refused); etcd_restore_member: the
  machine's etcd 3.4 (restored as one member, served by an etcd started on it; a corrupt snapshot
  refused); kubelet_server: a real kubeconfig file with a recording systemctl (no kubelet here);
  all run with bash, tests/unit/nodesteps/test_restore_scripts.py, and over SSH on two test hosts
  (the PKI by SFTP, etcd restored and served there), tests/integration/test_single_master_restore.py;
  in the driver's order with the strict stand-in kubeadm (kubeadm_init.sh's EXISTING_ETCD: its
  DirAvailable--var-lib-etcd preflight, a real etcd started on the restored data),
  tests/integration/kubernetes/test_kubeadm_standin_restore.py; the whole heal through the engine,
  tests/integration/test_engine_hosts_restore.py
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "src/vnfm/adapters/nodes/ssh/scripts"
IT = "tests/integration/"
K = IT + "kubernetes/"
KUBECTL = K + "test_kubectl_node_scripts.py::test_kubectl_node_scripts_real_kubectl_against_the_simulated_api"
KUBEADM = K + "test_kubeadm_standin_node_scripts.py::test_kubeadm_standin_node_scripts_calls_order_idempotence_secrets"
MASTER_HEAL = K + "test_kubeadm_standin_master_heal.py::test_kubeadm_standin_master_heal_real_etcd_haproxy_hosts"
ENGINE = IT + "test_engine_real_hosts.py::test_engine_ha_instantiate_worker_heal_half_failed_join_retry_scale_in"
ENGINE_STORAGE = (IT + "test_engine_hosts_storage.py::"
                  "test_engine_storage_server_heal_real_volume_ganesha_pvs_re_registered")
ENGINE_REGISTRY = IT + "test_engine_hosts_registry.py::test_engine_private_registry_vnf_instantiate_push_heal_rebuilt"
ENGINE_KUBESPRAY = (IT + "test_engine_hosts_kubespray.py::"
                    "test_engine_kubespray_instantiate_scale_out_failed_half_way_retry_scale_in")
KS_PLAYBOOKS = IT + "test_kubespray_standin_playbooks.py::test_kubespray_standin_cluster_scale_remove_and_terminate"
KS_DRIVER = IT + "test_kubespray_standin_driver.py::test_kubespray_standin_driver_lifecycle_over_ssh"
PRIVATE_REGISTRY = IT + "test_private_registry.py::test_private_registry_podman_instantiate_push_heal_pull_tls"
REGISTRY = IT + "test_registry.py::test_registry_push_pull_and_node_config"
ETCD = IT + "test_etcd.py::test_etcd_replace_member"
ETCD_LEARNER = IT + "test_etcd.py::test_etcd_learner_add_promote_remove"
CP_ENDPOINT = K + "test_cp_endpoint_scripts.py::test_cp_endpoint_move_and_kubelet_server_scripts"
HAPROXY = IT + "test_haproxy.py::test_haproxy_backends_reload_without_failures"
LB = IT + "test_lb_frontends.py::test_lb_frontends_owners_share_the_lb_hitless"
NODEPORT = IT + "test_cnf_nodeport_lb.py::test_cnf_nodeport_driver_hooks_over_ssh_with_real_haproxy"
KEEPALIVED = IT + "test_keepalived_containerd.py::test_keepalived_vip_fails_over_when_haproxy_dies"
CONTAINERD = IT + "test_keepalived_containerd.py::test_containerd_loads_vnfms_registry_config_and_pulls_through_it"
NFS = IT + "test_nfs.py::test_nfs_export_and_pv"
NFS_SEVERAL = K + "test_standin_registry_volume_node_scripts.py::test_several_nfs_exports_served_together_by_ganesha"
BECOME = IT + "test_ssh_become.py::test_authorized_key_step_through_sudo_keeps_the_login_users_file"
SNAPSHOTS = "tests/unit/nodesteps/test_etcd_snapshot_scripts.py::test_save_fetch_and_bound"
UPGRADE = K + "test_upgrade_node_scripts.py::"
SNAPSHOT_RESTORE = UPGRADE + "test_etcd_snapshot_put_back_and_restore_real_etcd"
AT_VERSION = UPGRADE + "test_node_at_version_real_kubectl_against_the_simulated_api"
KUBEADM_UPGRADE = UPGRADE + "test_kube_packages_and_kubeadm_upgrade_strict_standins"
DRILL = "tests/unit/nodesteps/test_etcd_snapshot_scripts.py::test_restore_drill"
BACKUP = IT + "test_etcd_backup.py::test_backup_and_restore_drill_on_real_etcd"
STOCK_MASTER = IT + "test_etcd_backup.py::test_stock_master_etcd_only_in_its_pod"
KUBESPRAY_BACKUP = IT + "test_etcd_backup.py::test_kubespray_layout_backup_with_its_admin_certificate"
CERTS = IT + "test_certificates.py::test_kubeadm_layout_read_with_openssl_and_renewed"
CERTS_KUBESPRAY = IT + "test_certificates.py::test_kubespray_layout"
KUBESPRAY_ETCD_TLS = IT + "test_certificates.py::test_kubespray_etcd_checked_with_its_own_client_certificate"
RESTORE = "tests/unit/nodesteps/test_restore_scripts.py::"
RESTORE_SSH = IT + "test_single_master_restore.py::test_restore_steps_over_ssh_real_etcd_openssl_pki"
RESTORE_KUBEADM = K + "test_kubeadm_standin_restore.py::test_kubeadm_standin_restore_on_a_new_host_real_etcd"
ENGINE_RESTORE = IT + "test_engine_hosts_restore.py::test_engine_single_master_restored_from_backup_workers_kept"

# script -> the tests that run it against a real program or the simulated Kubernetes API
SCRIPT_TESTS: dict[str, tuple[str, ...]] = {
    "apply_pv": (KUBECTL, ENGINE_STORAGE),
    "cert_expiry": (CERTS, CERTS_KUBESPRAY),
    "cert_renew": (CERTS, CERTS_KUBESPRAY),
    "authorized_key": (BECOME, KS_PLAYBOOKS, KS_DRIVER, ENGINE_KUBESPRAY),
    "containerd_registries": (CONTAINERD,),
    "cp_endpoint_move": (CP_ENDPOINT,),
    "delete_node": (KUBECTL, KUBEADM, MASTER_HEAL, ENGINE, KS_DRIVER),
    "delete_pvs": (KUBECTL, ENGINE_STORAGE),
    "docker_image": (PRIVATE_REGISTRY, ENGINE_REGISTRY),
    "docker_install": (PRIVATE_REGISTRY, ENGINE_REGISTRY),
    "drain_node": (KUBECTL, KUBEADM, ENGINE, KS_DRIVER),
    "etcd_health": (ETCD, MASTER_HEAL, ENGINE, STOCK_MASTER, KUBESPRAY_ETCD_TLS),
    "etcd_member_add": (ETCD, ETCD_LEARNER),
    "etcd_restore_drill": (DRILL, BACKUP, STOCK_MASTER, KUBESPRAY_BACKUP),
    "etcd_snapshot_fetch": (SNAPSHOTS, BACKUP, SNAPSHOT_RESTORE, STOCK_MASTER),
    "etcd_snapshot_put": (SNAPSHOT_RESTORE, RESTORE_SSH),
    "etcd_snapshot_restore": (SNAPSHOT_RESTORE, STOCK_MASTER),
    "etcd_snapshot_save": (SNAPSHOTS, SNAPSHOT_RESTORE, STOCK_MASTER, KUBESPRAY_BACKUP),
    "etcd_member_list": (ETCD, KUBEADM, MASTER_HEAL, ENGINE, STOCK_MASTER, KUBESPRAY_ETCD_TLS),
    "etcd_member_remove": (ETCD, MASTER_HEAL, ENGINE),
    "etcd_member_promote": (ETCD_LEARNER,),
    "etcd_start": (ETCD,),
    "etcd_stop": (ETCD,),
    "haproxy_apply": (HAPROXY, KEEPALIVED, MASTER_HEAL, ENGINE),
    "hosts_entries": (REGISTRY, CONTAINERD, MASTER_HEAL, ENGINE, ENGINE_STORAGE),
    "join_info": (KUBEADM, MASTER_HEAL, ENGINE, ENGINE_STORAGE),
    "keepalived": (KEEPALIVED,),  # the engine flows run it against the recording stand-in
    "kubeadm_init": (KUBEADM, MASTER_HEAL, ENGINE, ENGINE_STORAGE, RESTORE_KUBEADM, ENGINE_RESTORE),
    "kubeadm_join": (KUBEADM, MASTER_HEAL, ENGINE, ENGINE_STORAGE),
    "kubeadm_upgrade": (KUBEADM_UPGRADE,),  # the strict stand-in kubeadm (upgrade plan/apply/node)
    "kube_packages": (KUBEADM_UPGRADE,),  # the strict apt-get/apt-mark/dpkg-query stand-ins
    "kubeconfig": (KS_PLAYBOOKS, KS_DRIVER, ENGINE_KUBESPRAY),
    "kubespray_inventory": (KS_PLAYBOOKS, KS_DRIVER, ENGINE_KUBESPRAY),
    "kubespray_playbook": (KS_PLAYBOOKS, KS_DRIVER, ENGINE_KUBESPRAY),
    "label_node": (KUBECTL, KUBEADM, ENGINE, ENGINE_STORAGE),
    "lb_frontends": (LB, NODEPORT, KS_DRIVER, ENGINE_KUBESPRAY),
    "node_at_version": (AT_VERSION,),
    "pki_fetch": (RESTORE + "test_pki_fetch_and_put_with_openssl_cas", RESTORE_SSH, ENGINE_RESTORE),
    "pki_put": (RESTORE + "test_pki_fetch_and_put_with_openssl_cas", RESTORE_SSH, ENGINE_RESTORE),
    "etcd_restore_member": (RESTORE + "test_etcd_restore_member_real_etcd", RESTORE_SSH, RESTORE_KUBEADM,
                            ENGINE_RESTORE),
    # a real kubeconfig file, a recording systemctl (no kubelet here)
    "kubelet_server": (RESTORE + "test_kubelet_server_rewritten_and_restarted", RESTORE_SSH, ENGINE_RESTORE,
                       CP_ENDPOINT),
    "nfs_client": (KUBECTL, ENGINE_STORAGE),  # the apt stand-in: this kernel has no NFS client
    "nfs_export": (NFS, NFS_SEVERAL, ENGINE_STORAGE),
    "prepare_node": (KUBEADM, MASTER_HEAL, ENGINE, ENGINE_STORAGE),
    "prepare_volume": (ENGINE_STORAGE,),  # real blkid/mkfs/mount; stand-ins in the volume scripts test
    "registry_client": (REGISTRY, CONTAINERD),
    "registry_run": (PRIVATE_REGISTRY, ENGINE_REGISTRY),
    "registry_serve": (REGISTRY, CONTAINERD),
    "uncordon_node": (KUBECTL,),
    "vim_token": (KUBECTL, MASTER_HEAL, ENGINE, ENGINE_STORAGE, KS_DRIVER),
    "wait_node_ready": (KUBECTL, KUBEADM, MASTER_HEAL, ENGINE, ENGINE_STORAGE),
}

# scripts with no run against a real program yet, and why (none now: issue 26's upgrade scripts
# run in tests/integration/kubernetes/test_upgrade_node_scripts.py)
KNOWN_GAPS: dict[str, str] = {}
# where a script may be run against a real program: integration tests, and these unit modules
REAL_RUN_MODULES = ("tests/unit/nodesteps/test_etcd_snapshot_scripts.py",
                    "tests/unit/nodesteps/test_restore_scripts.py")


def test_every_script_has_a_real_run() -> None:
    scripts = {p.stem for p in SCRIPTS.glob("*.sh")}
    assert not set(SCRIPT_TESTS) & set(KNOWN_GAPS), "a script with a real run is no longer a gap"
    missing = sorted(scripts - set(SCRIPT_TESTS) - set(KNOWN_GAPS))
    assert not missing, (f"node script(s) {missing} have no test against a real program or the simulated API: "
                         "write one and name it in tests/test_script_audit.py SCRIPT_TESTS")
    assert sorted((set(SCRIPT_TESTS) | set(KNOWN_GAPS)) - scripts) == [], "names of scripts that are gone"
    assert all(SCRIPT_TESTS.values())


def test_the_named_tests_exist() -> None:
    for script, tests in SCRIPT_TESTS.items():
        for test_id in tests:
            path, _, name = test_id.partition("::")
            assert path.startswith(IT) or path in REAL_RUN_MODULES, f"{script}: {test_id} runs no real program"
            text = (ROOT / path).read_text()
            assert re.search(rf"^(async )?def {re.escape(name)}\(", text, re.M), f"{script}: no test {test_id}"
