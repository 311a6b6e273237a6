"""`vnfm demo`: the whole lifecycle in this process (the scenarios are in cli/demo/)."""

from __future__ import annotations

from pathlib import Path

import click

from vnfm.entrypoints.cli.demo import run_demo


@click.command()
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Use this data directory instead of a fresh temporary one.",
)
@click.option("--keep", is_flag=True, help="Keep the data directory afterwards (its path is printed).")
@click.option(
    "--flavour",
    default=None,
    help="Deployment flavour to instantiate.  [default: simple; ha for --scenario ha]",
)
@click.option(
    "--scenario",
    type=click.Choice(["default", "ha", "kubespray"]),
    default="default",
    show_default=True,
    help="default: the basic lifecycle; ha: a 3-master HA cluster, heal of a worker, a master and "
    "the entire cluster, with the cluster's state checked after every step; kubespray: seed 002's "
    "Kubespray cluster (Ansible server, external LB), inventory, playbook runs and LB checked after every step.",
)
@click.option(
    "--timeout",
    type=float,
    default=300.0,
    show_default=True,
    metavar="SECONDS",
    help="Deadline for each lifecycle step.",
)
@click.option(
    "--vim",
    type=click.Choice(["simulator", "openstack"]),
    default="simulator",
    show_default=True,
    help="simulator: the embedded simulated cloud; openstack: a real OpenStack (Heat) given by --openrc.",
)
@click.option(
    "--openrc",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="With --vim openstack: an openrc file (OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, ...); it is read, "
    "never executed.",
)
@click.option(
    "--network",
    default="vnfm-ci-net",
    show_default=True,
    help="With --vim openstack: the existing network (name or id) the VNF's CPs are attached to.",
)
@click.option(
    "--image",
    default=None,
    help="With --vim openstack: a Glance image for both VDUs instead of the VNFD's image.",
)
@click.pass_context
def demo(
    ctx: click.Context,
    data_dir: Path | None,
    keep: bool,
    flavour: str | None,
    scenario: str,
    timeout: float,
    vim: str,
    openrc: Path | None,
    network: str,
    image: str | None,
) -> None:
    """Run the whole VNF lifecycle on the simulated cloud.

    Everything runs in this process, nothing else is needed.

    Starts a server on a free port, onboards the example Kubernetes-cluster package, then creates,
    instantiates, scales out and in, heals one VNFC, heals the entire VNF, terminates and deletes
    it, printing each step's result, duration and the VNFCs per VDU. Exits 1 if a step fails.

    With --scenario ha: a 3-master HA cluster with 2 workers (flavour ha), scale out by 2 and in
    by 1, heal a worker, heal a master, heal the entire cluster, terminate; after each step the
    cluster's nodes, etcd members and every master's HAProxy backends are printed and checked
    (etcd keeps 3 healthy members, every HAProxy lists 3 backends, heal entire keeps the VIM id
    with new credentials, terminate removes the VIM).

    With --scenario kubespray: seed 002's Kubespray cluster (an Ansible server outside the VNF, an
    external load balancer): instantiate, scale out and in with and without whole-dict overrides,
    heal a worker, a master heal refused (422), heal entire, terminate; after each step the
    inventory on the Ansible server, the playbook runs (with --limit) and the LB's frontends are
    printed and checked.

    With --vim openstack --openrc PATH: the default lifecycle on a real OpenStack through Heat
    (the cloud is registered as a VIM, the hooks run the noop management driver, every step is
    checked against Nova and Neutron). See ci/openstack/README.md for a local OpenStack.

    \b
    Example:
      vnfm demo
      vnfm demo --scenario ha
      vnfm demo --scenario kubespray
      vnfm demo --data-dir /tmp/vnfm-demo --keep
      vnfm demo --vim openstack --openrc /var/tmp/vnfm-openstack/openrc --image vnfm-ci-image
    """
    if vim == "openstack" and openrc is None:
        raise click.UsageError("--vim openstack needs --openrc PATH")
    ok = run_demo(
        data_dir=data_dir,
        keep=keep,
        flavour=flavour,
        timeout=timeout,
        echo=click.echo,
        scenario=scenario,
        vim=vim,
        openrc=openrc,
        network=network,
        image=image,
    )
    if not ok:
        ctx.exit(1)
