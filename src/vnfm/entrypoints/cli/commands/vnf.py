"""`vnfm vnf ...`: VNF instances (SOL003 /vnflcm/v1). The LCM requests (instantiate, scale, heal,
terminate) build their request body here; lcm_task reports or follows the occurrence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from vnfm.entrypoints.cli.client import ApiError, VnfmClient
from vnfm.entrypoints.cli.context import CliContext, filter_option, json_option, pass_cc
from vnfm.entrypoints.cli.files import load_json_object, required_json_object
from vnfm.entrypoints.cli.lcm_task import lcm_task
from vnfm.entrypoints.cli.render import (
    VNF_COLUMNS,
    op_warnings,
    render_alarms,
    render_backups,
    render_cluster_nodes,
    render_vnf,
    render_warnings,
)

additional_params_option = click.option(
    "--additional-params-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSON object sent as additionalParams.",
)


request_option = click.option(
    "--request",
    "request_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The request body as a JSON file (e.g. examples/requests/); the options given on the command "
         "line replace its keys.",
)


def _body(request_file: Path | None, given: dict[str, Any], additional_params: Path | None) -> dict[str, Any]:
    """The request body: --request FILE's object, then each option given on the command line (the
    request keys of `given` that are not None), then --additional-params-file."""
    body = load_json_object(request_file, "--request") or {}
    body.update({k: v for k, v in given.items() if v is not None})
    extra = load_json_object(additional_params, "--additional-params-file")
    if extra is not None:
        body["additionalParams"] = extra
    return body


def _require(body: dict[str, Any], **options: str) -> None:
    """A usage error naming the options (or --request keys) the request lacks."""
    missing = [f"{opt} (or {k!r} in --request FILE)" for k, opt in options.items() if body.get(k) in (None, "")]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)}")


@click.group()
def vnf() -> None:
    """VNF instances (SOL003): create, instantiate, scale, heal.

    The SOL003 /vnflcm/v1 API: create, list, show, instantiate, scale, heal, terminate, delete.

    \b
    Example (the whole lifecycle):
      vnfm vnf create VNFD_ID --name k8s
      vnfm vnf instantiate VNF_ID instantiate.json --wait
      vnfm vnf scale VNF_ID --type SCALE_OUT --aspect-id worker_instance --wait
      vnfm vnf heal VNF_ID --vnfc VNFC_ID --wait
      vnfm vnf terminate VNF_ID --wait && vnfm vnf delete VNF_ID
    """


@vnf.command("create")
@click.argument("vnfd_id")
@click.option("--name", default=None, help="vnfInstanceName.")
@click.option("--description", default=None, help="vnfInstanceDescription.")
@json_option
@pass_cc
def vnf_create(cc: CliContext, vnfd_id: str, name: str | None, description: str | None) -> None:
    """Create a VNF instance (NOT_INSTANTIATED) from an onboarded, enabled package's vnfdId.

    \b
    Example:
      vnfm vnf create b1db0ce7-ebca-2fb7-95ed-4840d70a1163 --name k8s-cluster
    """
    cc.emit(cc.client.create_vnf(vnfd_id, name, description), render_vnf)


@vnf.command("list")
@filter_option("(eq,instantiationState,INSTANTIATED)")
@json_option
@pass_cc
def vnf_list(cc: CliContext, filter_: str | None) -> None:
    """List VNF instances.

    \b
    Example:
      vnfm vnf list --filter '(eq,instantiationState,INSTANTIATED)'
    """
    cc.emit(cc.client.list_vnfs(filter_), columns=VNF_COLUMNS)


@vnf.command("show")
@click.argument("vnf_id")
@json_option
@pass_cc
def vnf_show(cc: CliContext, vnf_id: str) -> None:
    """Show a VNF instance, with its VNFCs (servers, addresses) when instantiated, and the
    Kubernetes nodes (role, Ready, the VNFC each runs on) when the server can tell.

    \b
    Example:
      vnfm vnf show VNF_ID
    """
    inst = cc.client.get_vnf(vnf_id)
    table = cc.format == "table" and not cc.columns
    nodes = _cluster(cc, inst) if table else None
    warnings = _latest_warnings(cc, vnf_id) if table else []
    alarms = _open_alarms(cc, vnf_id) if table else []
    backup = _backups(cc, vnf_id) if table else None
    cc.emit(inst, lambda i: render_vnf(i) + (f"\n\n{render_cluster_nodes(nodes, i)}" if nodes else "")
            + (f"\n\n{render_backups(backup)}" if backup and backup.get("scheduled") else "")
            + (f"\n\n{render_alarms(alarms)}" if alarms else "")
            + (f"\n\n{render_warnings(warnings)}" if warnings else ""))


def _backups(cc: CliContext, vnf_id: str) -> dict[str, Any] | None:
    """The instance's etcd backups (vnfm's extension); none when the server cannot tell."""
    try:
        return cc.client.backups(vnf_id)
    except ApiError:
        return None


def _open_alarms(cc: CliContext, vnf_id: str) -> list[dict[str, Any]]:
    """The instance's open alarms (/vnffm/v1); none when the server cannot tell."""
    try:
        return cc.client.open_alarms(vnf_id)
    except ApiError:
        return []


def _latest_warnings(cc: CliContext, vnf_id: str) -> list[str]:
    """The warnings of the instance's latest operation (keys it accepted but does not act on)."""
    try:
        ops = cc.client.list_ops(f"(eq,vnfInstanceId,{vnf_id})")
    except ApiError:
        return []
    latest = max(ops, key=lambda o: str(o.get("startTime") or ""), default=None)
    if latest is None:
        return []
    try:  # warnings are on the occurrence itself, not in the list
        return op_warnings(cc.client.get_op(str(latest.get("id"))))
    except ApiError:
        return []


def _cluster(cc: CliContext, inst: dict[str, Any]) -> dict[str, Any] | None:
    """The cluster view the server has of the instance (today: the simulated cloud's twin); None
    when it has none (not instantiated, not a cluster, another cloud)."""
    if inst.get("instantiationState") != "INSTANTIATED":
        return None
    try:
        state = cc.client.sim_state(str(inst.get("id")))
    except ApiError:
        return None
    k8s = state.get("kubernetes") if isinstance(state, dict) else None
    return k8s if isinstance(k8s, dict) and k8s.get("nodes") else None


@vnf.command("instantiate")
@click.argument("vnf_id")
@click.argument("request", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@lcm_task("Instantiate")
def vnf_instantiate(client: VnfmClient, vnf_id: str, request: Path) -> str:
    """Instantiate a VNF instance with an InstantiateVnfRequest JSON file.

    Without vimConnectionInfo the default VIM (the simulated cloud out of the box) is used.

    \b
    Example (request.json: {"flavourId": "simple", "additionalParams": {...}}):
      vnfm vnf instantiate VNF_ID request.json --wait
    """
    return client.instantiate(vnf_id, required_json_object(request, "REQUEST"))


@vnf.command("scale")
@click.argument("vnf_id")
@click.option(
    "--type",
    "type_",
    type=click.Choice(["SCALE_OUT", "SCALE_IN"], case_sensitive=False),
    default=None,
    help="Add (SCALE_OUT) or remove (SCALE_IN) VNFCs (required unless in --request).",
)
@click.option("--aspect-id", default=None,
              help="Scaling aspect from the VNFD, e.g. worker_instance (required unless in --request).")
@click.option(
    "--number-of-steps",
    type=click.IntRange(min=1),
    default=None,
    help="How many scaling steps (default 1).",
)
@request_option
@additional_params_option
@lcm_task("Scale")
def vnf_scale(
    client: VnfmClient,
    vnf_id: str,
    type_: str | None,
    aspect_id: str | None,
    number_of_steps: int | None,
    request_file: Path | None,
    additional_params_file: Path | None,
) -> str:
    """Scale a VNF instance out or in along a scaling aspect.

    \b
    Example:
      vnfm vnf scale VNF_ID --type SCALE_OUT --aspect-id worker_instance --number-of-steps 1 --wait
      vnfm vnf scale VNF_ID --request examples/requests/scale-out-workers.json --wait
    """
    given = {"type": type_.upper() if type_ else None, "aspectId": aspect_id, "numberOfSteps": number_of_steps}
    body = _body(request_file, given, additional_params_file)
    _require(body, type="--type", aspectId="--aspect-id")
    body.setdefault("numberOfSteps", 1)
    return client.scale(vnf_id, body)


@vnf.command("heal")
@click.argument("vnf_id")
@click.option(
    "--vnfc",
    "vnfcs",
    multiple=True,
    metavar="VNFC_ID",
    help="vnfcResourceInfo id to heal (repeatable); none heals the entire VNF.",
)
@click.option("--cause", default=None, help="Why (free text).")
@click.option("--yes", "-y", is_flag=True, help="Heal the entire VNF (no --vnfc) without asking.")
@request_option
@additional_params_option
@lcm_task("Heal")
def vnf_heal(
    client: VnfmClient,
    vnf_id: str,
    vnfcs: tuple[str, ...],
    cause: str | None,
    yes: bool,
    request_file: Path | None,
    additional_params_file: Path | None,
) -> str:
    """Heal VNFCs (replace their servers, keeping ports and addresses) or the entire VNF.

    \b
    Example (VNFC ids: `vnfm vnf show VNF_ID`):
      vnfm vnf heal VNF_ID --vnfc f8829938-d57e-4b96-b383-cf3783651822 --wait
      vnfm vnf heal VNF_ID --cause "rebuild all" --yes --wait
      vnfm vnf heal VNF_ID --request examples/requests/heal-entire.json --yes --wait
    """
    body = _body(request_file, {"vnfcInstanceId": list(vnfcs) or None, "cause": cause}, additional_params_file)
    if not body.get("vnfcInstanceId") and not yes:
        click.confirm(f"No VNFC named: heal the entire VNF {vnf_id} (every VNFC is rebuilt)?", abort=True)
    return client.heal(vnf_id, body)


@vnf.command("terminate")
@click.argument("vnf_id")
@click.option("--graceful", "mode", flag_value="GRACEFUL", default=None,
              help="Let the VNF shut down gracefully (default, as Tacker's client does).")
@click.option("--forceful", "mode", flag_value="FORCEFUL", help="Terminate at once.")
@click.option(
    "--graceful-timeout",
    type=int,
    default=None,
    metavar="SECONDS",
    help="With --graceful: gracefulTerminationTimeout.",
)
@request_option
@additional_params_option
@lcm_task("Terminate")
def vnf_terminate(
    client: VnfmClient,
    vnf_id: str,
    mode: str | None,
    graceful_timeout: int | None,
    request_file: Path | None,
    additional_params_file: Path | None,
) -> str:
    """Terminate a VNF instance (releases all its resources; it becomes NOT_INSTANTIATED).

    \b
    Example:
      vnfm vnf terminate VNF_ID --wait
      vnfm vnf terminate VNF_ID --graceful-timeout 60 --wait
      vnfm vnf terminate VNF_ID --forceful --wait
      vnfm vnf terminate VNF_ID --request examples/requests/terminate-graceful.json --wait
    """
    body = _body(request_file, {"terminationType": mode, "gracefulTerminationTimeout": graceful_timeout},
                 additional_params_file)
    body.setdefault("terminationType", "GRACEFUL")
    if mode == "FORCEFUL":  # --forceful replaces the file's graceful timeout, which would be refused
        body.pop("gracefulTerminationTimeout", None)
    if graceful_timeout is not None and body["terminationType"] != "GRACEFUL":
        raise click.UsageError("--graceful-timeout does not go with --forceful")
    return client.terminate(vnf_id, body)


@vnf.command("delete")
@click.argument("vnf_id")
@pass_cc
def vnf_delete(cc: CliContext, vnf_id: str) -> None:
    """Delete a NOT_INSTANTIATED VNF instance.

    \b
    Example:
      vnfm vnf delete VNF_ID
    """
    cc.client.delete_vnf(vnf_id)
    cc.info(f"VNF instance {vnf_id} deleted")
