"""`vnfm sim ...`: the simulated cloud (the default VIM), read-only."""

from __future__ import annotations

import click

from vnfm.entrypoints.cli.context import CliContext, json_option, pass_cc
from vnfm.entrypoints.cli.render import render_sim_state


@click.group()
def sim() -> None:
    """The simulated cloud (the default VIM), read-only.

    \b
    Example:
      vnfm sim state
    """


@sim.command("state")
@click.argument("vnf_id", required=False)
@json_option
@pass_cc
def sim_state(cc: CliContext, vnf_id: str | None) -> None:
    """Show the simulated cloud: servers, ports and addresses, volumes (of one VNF instance, or all).

    For one VNF instance that is a Kubernetes cluster, also the cluster's state as the simulated
    cloud's twin holds it: nodes and their readiness, etcd members and their health, each
    master's HAProxy backends, and the registered Kubernetes VIM (no credentials).

    \b
    Example:
      vnfm sim state
      vnfm sim state VNF_ID
      vnfm sim state VNF_ID --json
    """
    cc.emit(cc.client.sim_state(vnf_id), render_sim_state)
