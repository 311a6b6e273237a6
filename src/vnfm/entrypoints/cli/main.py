"""`vnfm`: the command-line tool (click). Every command except `server` and `demo` is a plain HTTP
client of a running vnfm server (see `--endpoint`)."""

from __future__ import annotations

import io
import json
import os
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
import httpx

from vnfm.entrypoints.cli.client import ApiError, ServerUnreachable, VnfmClient
from vnfm.entrypoints.cli.output import (
    Column,
    first_of,
    generic_columns,
    key,
    mask_secrets,
    mask_text,
    render_fields,
    render_table,
    to_json,
)
from vnfm.entrypoints.cli.wait import (
    DEFAULT_TIMEOUT,
    FAILURE,
    SUCCESS,
    WaitTimeout,
    describe_error,
    wait_for_op,
)

DEFAULT_ENDPOINT = "http://127.0.0.1:9890"
F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class CliContext:
    endpoint: str
    token: str | None = None
    json_out: bool = False
    show_secrets: bool = False
    transport: httpx.BaseTransport | None = None
    _client: VnfmClient | None = None

    @property
    def client(self) -> VnfmClient:
        if self._client is None:
            self._client = VnfmClient(self.endpoint, token=self.token, transport=self.transport)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def safe(self, value: Any) -> Any:
        return value if self.show_secrets else mask_secrets(value)

    def emit(self, value: Any, human: Callable[[Any], str]) -> None:
        """Print `value` as JSON (--json) or through `human`, secrets masked unless --show-secrets."""
        value = self.safe(value)
        click.echo(to_json(value) if self.json_out else human(value))

    def info(self, text: str) -> None:
        """Progress and notes: stdout for people, stderr under --json so stdout stays parseable."""
        click.echo(text, err=self.json_out)


pass_cc = click.make_pass_decorator(CliContext)


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.ensure_object(CliContext).json_out = True


def json_option(f: F) -> F:
    """`--json` also after the subcommand (`vnfm vnf list --json`)."""
    return click.option(
        "--json",
        "json_flag",
        is_flag=True,
        expose_value=False,
        callback=_set_json,
        help="Print the raw JSON representation instead of a table.",
    )(f)


def wait_options(f: F) -> F:
    f = click.option(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        show_default=True,
        metavar="SECONDS",
        help="With --wait: give up waiting after this long (the operation goes on in the server).",
    )(f)
    return click.option(
        "--wait",
        is_flag=True,
        help="Follow the operation occurrence, printing its state changes, until it ends.",
    )(f)


class VnfmGroup(click.Group):
    """Turns API and connection errors into one readable line on stderr and exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ApiError as e:
            detail = mask_text(e.detail)
            click.echo(
                f"Error {e.status} {e.title}: {detail}" if detail else f"Error {e.status} {e.title}", err=True
            )
            ctx.exit(1)
        except ServerUnreachable as e:
            if not e.refused:
                click.echo(
                    f"Error: no usable answer from the vnfm server at {e.endpoint}: {e.reason}", err=True
                )
                ctx.exit(1)
            click.echo(
                f"Error: the vnfm server is not running at {e.endpoint} ({e.reason}).\n"
                f"Start it with `vnfm server` (or `vnfm server --port N`), or point to another one with "
                f"--endpoint URL / VNFM_ENDPOINT.",
                err=True,
            )
            ctx.exit(1)
        except WaitTimeout as e:
            click.echo(f"Error: {e}", err=True)
            ctx.exit(1)
        finally:
            obj = ctx.find_object(CliContext)
            if obj is not None and ctx.parent is None:
                obj.close()


# --------------------------------------------------------------------------------------------
# helpers


def load_json_file(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise click.BadParameter(f"cannot read {path}: {e.strerror}", param_hint=what) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        hint = (
            " (JSON has no comments: remove the '# ...' notes copied from the examples)"
            if "#" in text
            else ""
        )
        raise click.BadParameter(
            f"{path} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}{hint}", param_hint=what
        ) from None


def load_json_object(path: Path | None, what: str) -> dict[str, Any] | None:
    if path is None:
        return None
    value = load_json_file(path, what)
    if not isinstance(value, dict):
        raise click.BadParameter(f"{path} must hold a JSON object", param_hint=what)
    return value


def csar_bytes(path: Path) -> bytes:
    """The CSAR to upload: the file itself, or a zip built from a package directory."""
    if not path.is_dir():
        return path.read_bytes()
    try:
        from vnfm.packaging.csar import build_csar
    except ImportError:
        return _zip_dir(path)
    return _as_bytes(build_csar(path))


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, io.BytesIO):
        return value.getvalue()
    if isinstance(value, str | Path):
        return Path(value).read_bytes()
    raise TypeError(f"cannot turn {type(value).__name__} into CSAR bytes")


def _zip_dir(root: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(root.rglob("*")):
            if p.is_file() and not p.is_symlink():
                zf.write(p, p.relative_to(root).as_posix())
    return buf.getvalue()


def follow_op(
    cc: CliContext,
    op_id: str,
    timeout: float,
    *,
    success: frozenset[str] = SUCCESS,
    failure: frozenset[str] = FAILURE,
    stale_entered_time: str | None = None,
) -> None:
    """--wait: print state changes with elapsed time; exit 1 unless the occurrence succeeds."""
    cc.info(f"Waiting for vnfLcmOpOcc {op_id} (up to {timeout:g}s):")
    result = wait_for_op(
        cc.client,
        op_id,
        timeout=timeout,
        success=success,
        failure=failure,
        stale_entered_time=stale_entered_time,
        on_change=lambda state, elapsed: cc.info(f"  {state}  {elapsed:.1f}s"),
    )
    if cc.json_out:
        click.echo(to_json(cc.safe(result.op)))
    operation = result.op.get("operation", "operation")
    if result.ok:
        cc.info(f"{operation} {result.state} in {result.elapsed:.1f}s")
        return
    detail = mask_text(describe_error(result.op)) or "no error details"
    click.echo(f"Error: {operation} {result.state} after {result.elapsed:.1f}s: {detail}", err=True)
    if result.state == "FAILED_TEMP":
        click.echo(
            f"Resolve it with: vnfm op retry {op_id} --wait | vnfm op rollback {op_id} --wait"
            f" | vnfm op fail {op_id}",
            err=True,
        )
    click.get_current_context().exit(1)


def task_started(cc: CliContext, what: str, vnf_id: str, op_id: str, wait: bool, timeout: float) -> None:
    if wait:
        cc.info(f"{what} request for VNF instance {vnf_id} accepted: vnfLcmOpOcc {op_id}")
        follow_op(cc, op_id, timeout)
        return
    if cc.json_out:
        click.echo(to_json({"vnfInstanceId": vnf_id, "vnfLcmOpOccId": op_id}))
    else:
        click.echo(f"{what} request for VNF instance {vnf_id} accepted: vnfLcmOpOcc {op_id}")
        click.echo(f"Follow it with `vnfm op show {op_id}`, or add --wait next time.")


# --------------------------------------------------------------------------------------------
# root


@click.group(
    cls=VnfmGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110}
)
@click.option(
    "--endpoint",
    envvar="VNFM_ENDPOINT",
    default=DEFAULT_ENDPOINT,
    show_default=True,
    show_envvar=True,
    help="Base URL of the vnfm server.",
)
@click.option(
    "--token",
    envvar="VNFM_TOKEN",
    show_envvar=True,
    default=None,
    help="Token sent as X-Auth-Token (never printed).",
)
@click.option("--json", "json_out", is_flag=True, help="Print raw JSON instead of tables.")
@click.option("--show-secrets", is_flag=True, help="Do not mask passwords/tokens in what is printed.")
@click.version_option(package_name="vnfm", prog_name="vnfm")
@click.pass_context
def cli(ctx: click.Context, endpoint: str, token: str | None, json_out: bool, show_secrets: bool) -> None:
    """vnfm: an ETSI NFV VNF manager (SOL003 VNF LCM, SOL005 VNF packages, v2.6.1).

    \b
    Try it all in one go (server, package, create, instantiate, scale, heal, terminate):
      vnfm demo
    Or run a server and drive it:
      vnfm server &
      vnfm package list
      vnfm vnf instantiate VNF_ID request.json --wait
    """
    given = ctx.obj if isinstance(ctx.obj, CliContext) else None
    transport = given.transport if given is not None else None
    if isinstance(ctx.obj, dict):  # tests: CliRunner.invoke(cli, ..., obj={"transport": ...})
        transport = ctx.obj.get("transport")
    cc = CliContext(endpoint=endpoint, token=token or None, transport=transport)
    cc.json_out = json_out or (given.json_out if given is not None else False)
    cc.show_secrets = show_secrets
    ctx.obj = cc


# --------------------------------------------------------------------------------------------
# server and demo


@cli.command()
@click.option("--host", default=None, help="Address to listen on (default 127.0.0.1, env VNFM_HOST).")
@click.option("--port", type=int, default=None, help="Port to listen on (default 9890, env VNFM_PORT).")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where the database, packages and simulator state live (default ./var, env VNFM_DATA_DIR).",
)
@click.option(
    "--database-url",
    default=None,
    help="SQLAlchemy URL (default sqlite in the data dir; a postgresql+psycopg:// URL works).",
)
def server(host: str | None, port: int | None, data_dir: Path | None, database_url: str | None) -> None:
    """Run the vnfm API server in the foreground (Ctrl-C stops it).

    \b
    Example:
      vnfm server --port 9890 --data-dir ./var
    """
    from vnfm.config import Settings

    kwargs: dict[str, Any] = {}
    if host is not None:
        kwargs["host"] = host
    if port is not None:
        kwargs["port"] = port
    if data_dir is not None:
        kwargs["data_dir"] = data_dir
    if database_url is not None:
        kwargs["database_url"] = database_url
    settings = Settings(**kwargs)
    try:
        from vnfm.entrypoints.api.server import serve
    except ImportError as e:
        raise click.ClickException(f"the API server is not available in this installation ({e})") from None
    serve(settings)


@cli.command()
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
    type=click.Choice(["default", "ha"]),
    default="default",
    show_default=True,
    help="default: the basic lifecycle; ha: a 3-master HA cluster, heal of a worker, a master and "
    "the entire cluster, with the cluster's state checked after every step.",
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

    With --vim openstack --openrc PATH: the default lifecycle on a real OpenStack through Heat
    (the cloud is registered as a VIM, the hooks run the noop management driver, every step is
    checked against Nova and Neutron). See ci/openstack/README.md for a local OpenStack.

    \b
    Example:
      vnfm demo
      vnfm demo --scenario ha
      vnfm demo --data-dir /tmp/vnfm-demo --keep
      vnfm demo --vim openstack --openrc /var/tmp/vnfm-openstack/openrc --image vnfm-ci-image
    """
    from vnfm.entrypoints.cli.demo import run_demo

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


# --------------------------------------------------------------------------------------------
# packages

PACKAGE_COLUMNS: list[Column] = [
    ("ID", key("id")),
    ("PRODUCT", key("vnfProductName")),
    ("VERSION", key("vnfSoftwareVersion")),
    ("VNFD ID", key("vnfdId")),
    ("ONBOARDING", key("onboardingState")),
    ("OPERATIONAL", key("operationalState")),
    ("USAGE", key("usageState")),
]


@cli.group()
def package() -> None:
    """VNF packages (SOL005): onboard, enable, delete.

    The SOL005 /vnfpkgm/v1 API: create, upload, list, show, enable, disable, delete, vnfd.

    \b
    Example (onboard a CSAR, then use its vnfdId for `vnfm vnf create`):
      vnfm package create
      vnfm package upload PKG_ID ./my_package.zip
      vnfm package show PKG_ID
    """


@package.command("create")
@click.option(
    "--user-data", "user_data", multiple=True, metavar="KEY=VALUE", help="userDefinedData entry (repeatable)."
)
@json_option
@pass_cc
def package_create(cc: CliContext, user_data: tuple[str, ...]) -> None:
    """Create an empty VNF package resource (then `upload` its content).

    \b
    Example:
      vnfm package create --user-data owner=alice
    """
    data: dict[str, str] = {}
    for item in user_data:
        if "=" not in item:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--user-data")
        k, v = item.split("=", 1)
        data[k] = v
    pkg = cc.client.create_package(data or None)
    cc.emit(pkg, render_fields)


@package.command("upload")
@click.argument("pkg_id")
@click.argument("path", type=click.Path(exists=True, path_type=Path), required=False)
@click.option("--url", default=None, metavar="URL",
              help="Instead of PATH: the server fetches the CSAR from this http(s) URL (upload_from_uri).")
@click.option("--user-name", default=None, metavar="USER",
              help="With --url: BASIC authentication user; the password is read from "
                   "VNFM_PACKAGE_PASSWORD or asked for (never on the command line).")
@click.option("--wait/--no-wait", default=True, show_default=True, help="Wait until onboarding ends.")
@click.option(
    "--timeout",
    type=float,
    default=300.0,
    show_default=True,
    metavar="SECONDS",
    help="With --wait: give up after this long.",
)
@json_option
@pass_cc
def package_upload(cc: CliContext, pkg_id: str, path: Path | None, url: str | None, user_name: str | None,
                   wait: bool, timeout: float) -> None:
    """Upload a CSAR zip (or a package directory, zipped for you) as the package's content, or
    have the server fetch it from a URL.

    \b
    Examples:
      vnfm package upload PKG_ID ./sample_kubernetes.zip
      vnfm package upload PKG_ID ./my_package_dir/
      VNFM_PACKAGE_PASSWORD=... vnfm package upload PKG_ID --url https://repo/k8s.zip --user-name nfvo
    """
    if (path is None) == (url is None):
        raise click.UsageError("give either PATH or --url")
    if url is not None:
        password = None
        if user_name:
            password = os.environ.get("VNFM_PACKAGE_PASSWORD") or click.prompt(
                f"Password for {user_name}", hide_input=True, err=True)
        cc.client.upload_package_from_uri(pkg_id, url, user_name, password)
        cc.info(f"Package {pkg_id}: content fetched by the server")
    else:
        assert path is not None
        data = csar_bytes(path)
        cc.client.upload_package(pkg_id, data)
        cc.info(f"Uploaded {len(data)} bytes to package {pkg_id}")
    if not wait:
        return
    start = time.monotonic()
    delay, last = 0.05, None
    while True:
        pkg = cc.client.get_package(pkg_id)
        state = pkg.get("onboardingState")
        if state != last:
            cc.info(f"  {state}  {time.monotonic() - start:.1f}s")
            last = state
        if state == "ONBOARDED":
            cc.emit(pkg, render_fields)
            return
        if state == "CREATED" or pkg.get("onboardingFailureDetails"):
            details = pkg.get("onboardingFailureDetails") or {}
            msg = details.get("detail") if isinstance(details, dict) else None
            raise click.ClickException(
                f"onboarding of package {pkg_id} failed: {msg or 'see the server log'}"
            )
        if time.monotonic() - start > timeout:
            raise click.ClickException(f"package {pkg_id} is still {state} after {timeout:g}s")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


@package.command("list")
@click.option(
    "--filter",
    "filter_",
    default=None,
    metavar="EXPR",
    help="SOL013 attribute filter, e.g. '(eq,operationalState,ENABLED)'.",
)
@json_option
@pass_cc
def package_list(cc: CliContext, filter_: str | None) -> None:
    """List VNF packages.

    \b
    Example:
      vnfm package list --filter '(eq,onboardingState,ONBOARDED)'
    """
    cc.emit(cc.client.list_packages(filter_), lambda rows: render_table(rows, PACKAGE_COLUMNS))


@package.command("show")
@click.argument("pkg_id")
@json_option
@pass_cc
def package_show(cc: CliContext, pkg_id: str) -> None:
    """Show one VNF package.

    \b
    Example:
      vnfm package show PKG_ID
    """
    cc.emit(cc.client.get_package(pkg_id), render_fields)


def _set_state(cc: CliContext, pkg_id: str, state: str) -> None:
    result = cc.client.set_package_state(pkg_id, state)
    if cc.json_out:
        click.echo(to_json(cc.safe(result)))
    else:
        click.echo(f"Package {pkg_id} is {state}")


@package.command("enable")
@click.argument("pkg_id")
@json_option
@pass_cc
def package_enable(cc: CliContext, pkg_id: str) -> None:
    """Enable a package (operationalState ENABLED): VNF instances can be created from it.

    \b
    Example:
      vnfm package enable PKG_ID
    """
    _set_state(cc, pkg_id, "ENABLED")


@package.command("disable")
@click.argument("pkg_id")
@json_option
@pass_cc
def package_disable(cc: CliContext, pkg_id: str) -> None:
    """Disable a package (operationalState DISABLED): needed before `delete`.

    \b
    Example:
      vnfm package disable PKG_ID
    """
    _set_state(cc, pkg_id, "DISABLED")


@package.command("delete")
@click.argument("pkg_id")
@pass_cc
def package_delete(cc: CliContext, pkg_id: str) -> None:
    """Delete a package (it must be DISABLED and NOT_IN_USE, or not yet onboarded).

    \b
    Example:
      vnfm package disable PKG_ID && vnfm package delete PKG_ID
    """
    cc.client.delete_package(pkg_id)
    cc.info(f"Package {pkg_id} deleted")


@package.command("vnfd")
@click.argument("pkg_id")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (needed when the VNFD has several files: a zip).",
)
@click.option("--zip", "zip_", is_flag=True, help="Ask for the zip of all VNFD files.")
@pass_cc
def package_vnfd(cc: CliContext, pkg_id: str, output: Path | None, zip_: bool) -> None:
    """Fetch the VNFD of an onboarded package (YAML text, or a zip with --zip).

    \b
    Example:
      vnfm package vnfd PKG_ID
      vnfm package vnfd PKG_ID --zip -o vnfd.zip
    """
    want_zip = zip_ or (output is not None and output.suffix.lower() == ".zip")
    try:
        content_type, data = cc.client.get_vnfd(pkg_id, zip_=want_zip)
    except ApiError as e:
        # text/plain works only for a one-file VNFD (406 per SOL005; some servers say 409)
        if want_zip or e.status not in (406, 409):
            raise
        if output is None:
            raise click.ClickException(
                f"the VNFD of package {pkg_id} has several files: "
                f"fetch them as a zip with `vnfm package vnfd {pkg_id} --zip -o vnfd.zip`"
            ) from None
        content_type, data = cc.client.get_vnfd(pkg_id, zip_=True)
    if output is not None:
        output.write_bytes(data)
        cc.info(f"Wrote {len(data)} bytes ({content_type or 'unknown type'}) to {output}")
        return
    if "zip" in content_type or data[:2] == b"PK":
        raise click.ClickException("the VNFD is a zip (several files): give -o FILE.zip")
    click.echo(data.decode("utf-8", errors="replace"), nl=False)


# --------------------------------------------------------------------------------------------
# VNF instances


def _vnfcs(inst: dict[str, Any]) -> list[dict[str, Any]]:
    info = inst.get("instantiatedVnfInfo") or {}
    return list(info.get("vnfcResourceInfo") or [])


def vnfc_addresses(vnfc: dict[str, Any]) -> str:
    out: list[str] = []
    for cp in vnfc.get("vnfcCpInfo") or []:
        addrs: list[str] = []
        for proto in cp.get("cpProtocolInfo") or []:
            for ip in (proto.get("ipOverEthernet") or {}).get("ipAddresses") or []:
                addrs.extend(str(a) for a in ip.get("addresses") or [])
        if addrs:
            out.append(f"{cp.get('cpdId')}={'/'.join(addrs)}")
    return " ".join(out)


VNF_COLUMNS: list[Column] = [
    ("ID", key("id")),
    ("NAME", key("vnfInstanceName")),
    ("INSTANTIATION", key("instantiationState")),
    ("VNF STATE", key("instantiatedVnfInfo", "vnfState")),
    ("FLAVOUR", key("instantiatedVnfInfo", "flavourId")),
    ("VNFCS", lambda r: len(_vnfcs(r)) if r.get("instantiatedVnfInfo") else None),
    ("VNFD ID", key("vnfdId")),
]

VNFC_COLUMNS: list[Column] = [
    ("VNFC ID", key("id")),
    ("VDU", key("vduId")),
    ("SERVER", key("computeResource", "resourceId")),
    ("ADDRESSES", vnfc_addresses),
    ("VOLUMES", lambda r: len(r.get("storageResourceIds") or []) or None),
]


def render_vnf(inst: dict[str, Any]) -> str:
    skip = {"instantiatedVnfInfo", "_links", "vimConnectionInfo"}
    parts = [render_fields(inst, [(k, v) for k, v in inst.items() if k not in skip])]
    vims = inst.get("vimConnectionInfo") or []
    if vims:
        parts.append(
            "\nVIM connections:\n"
            + render_table(vims, [("ID", key("id")), ("VIM ID", key("vimId")), ("TYPE", key("vimType"))])
        )
    info = inst.get("instantiatedVnfInfo")
    if info:
        scale = ", ".join(f"{s.get('aspectId')}={s.get('scaleLevel')}" for s in info.get("scaleStatus") or [])
        fields = [
            ("flavourId", info.get("flavourId")),
            ("vnfState", info.get("vnfState")),
            ("scaleStatus", scale),
        ]
        if info.get("additionalParams"):
            fields.append(("additionalParams", info["additionalParams"]))
        parts.append("\nInstantiated VNF info:\n" + render_fields(info, fields))
        parts.append("\nVNFCs:\n" + render_table(_vnfcs(inst), VNFC_COLUMNS))
        storages = info.get("virtualStorageResourceInfo") or []
        if storages:
            parts.append(
                "\nVolumes:\n"
                + render_table(
                    storages,
                    [
                        ("ID", key("id")),
                        ("DESCRIPTOR", key("virtualStorageDescId")),
                        ("VOLUME", key("storageResource", "resourceId")),
                    ],
                )
            )
    return "\n".join(parts)


@cli.group()
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
@click.option(
    "--filter",
    "filter_",
    default=None,
    metavar="EXPR",
    help="SOL013 attribute filter, e.g. '(eq,instantiationState,INSTANTIATED)'.",
)
@json_option
@pass_cc
def vnf_list(cc: CliContext, filter_: str | None) -> None:
    """List VNF instances.

    \b
    Example:
      vnfm vnf list --filter '(eq,instantiationState,INSTANTIATED)'
    """
    cc.emit(cc.client.list_vnfs(filter_), lambda rows: render_table(rows, VNF_COLUMNS))


@vnf.command("show")
@click.argument("vnf_id")
@json_option
@pass_cc
def vnf_show(cc: CliContext, vnf_id: str) -> None:
    """Show a VNF instance, with its VNFCs (servers, addresses) when instantiated.

    \b
    Example:
      vnfm vnf show VNF_ID
    """
    cc.emit(cc.client.get_vnf(vnf_id), render_vnf)


@vnf.command("instantiate")
@click.argument("vnf_id")
@click.argument("request", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@wait_options
@json_option
@pass_cc
def vnf_instantiate(cc: CliContext, vnf_id: str, request: Path, wait: bool, timeout: float) -> None:
    """Instantiate a VNF instance with an InstantiateVnfRequest JSON file.

    Without vimConnectionInfo the default VIM (the simulated cloud out of the box) is used.

    \b
    Example (request.json: {"flavourId": "simple", "additionalParams": {...}}):
      vnfm vnf instantiate VNF_ID request.json --wait
    """
    body = load_json_object(request, "REQUEST")
    assert body is not None
    op_id = cc.client.instantiate(vnf_id, body)
    task_started(cc, "Instantiate", vnf_id, op_id, wait, timeout)


@vnf.command("scale")
@click.argument("vnf_id")
@click.option(
    "--type",
    "type_",
    type=click.Choice(["SCALE_OUT", "SCALE_IN"]),
    required=True,
    help="Add (SCALE_OUT) or remove (SCALE_IN) VNFCs.",
)
@click.option("--aspect-id", required=True, help="Scaling aspect from the VNFD, e.g. worker_instance.")
@click.option(
    "--number-of-steps",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="How many scaling steps.",
)
@click.option(
    "--additional-params-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSON object sent as additionalParams.",
)
@wait_options
@json_option
@pass_cc
def vnf_scale(
    cc: CliContext,
    vnf_id: str,
    type_: str,
    aspect_id: str,
    number_of_steps: int,
    additional_params_file: Path | None,
    wait: bool,
    timeout: float,
) -> None:
    """Scale a VNF instance out or in along a scaling aspect.

    \b
    Example:
      vnfm vnf scale VNF_ID --type SCALE_OUT --aspect-id worker_instance --number-of-steps 1 --wait
    """
    body: dict[str, Any] = {"type": type_, "aspectId": aspect_id, "numberOfSteps": number_of_steps}
    extra = load_json_object(additional_params_file, "--additional-params-file")
    if extra is not None:
        body["additionalParams"] = extra
    op_id = cc.client.scale(vnf_id, body)
    task_started(cc, "Scale", vnf_id, op_id, wait, timeout)


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
@click.option(
    "--additional-params-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSON object sent as additionalParams.",
)
@wait_options
@json_option
@pass_cc
def vnf_heal(
    cc: CliContext,
    vnf_id: str,
    vnfcs: tuple[str, ...],
    cause: str | None,
    additional_params_file: Path | None,
    wait: bool,
    timeout: float,
) -> None:
    """Heal VNFCs (replace their servers, keeping ports and addresses) or the entire VNF.

    \b
    Example (VNFC ids: `vnfm vnf show VNF_ID`):
      vnfm vnf heal VNF_ID --vnfc f8829938-d57e-4b96-b383-cf3783651822 --wait
      vnfm vnf heal VNF_ID --cause "rebuild all" --wait
    """
    body: dict[str, Any] = {}
    if vnfcs:
        body["vnfcInstanceId"] = list(vnfcs)
    if cause is not None:
        body["cause"] = cause
    extra = load_json_object(additional_params_file, "--additional-params-file")
    if extra is not None:
        body["additionalParams"] = extra
    op_id = cc.client.heal(vnf_id, body)
    task_started(cc, "Heal", vnf_id, op_id, wait, timeout)


@vnf.command("terminate")
@click.argument("vnf_id")
@click.option("--graceful", "mode", flag_value="GRACEFUL", help="Let the VNF shut down gracefully.")
@click.option("--forceful", "mode", flag_value="FORCEFUL", default=True, help="Terminate at once (default).")
@click.option(
    "--graceful-timeout",
    type=int,
    default=None,
    metavar="SECONDS",
    help="With --graceful: gracefulTerminationTimeout.",
)
@click.option(
    "--additional-params-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSON object sent as additionalParams.",
)
@wait_options
@json_option
@pass_cc
def vnf_terminate(
    cc: CliContext,
    vnf_id: str,
    mode: str,
    graceful_timeout: int | None,
    additional_params_file: Path | None,
    wait: bool,
    timeout: float,
) -> None:
    """Terminate a VNF instance (releases all its resources; it becomes NOT_INSTANTIATED).

    \b
    Example:
      vnfm vnf terminate VNF_ID --wait
      vnfm vnf terminate VNF_ID --graceful --graceful-timeout 60 --wait
    """
    body: dict[str, Any] = {"terminationType": mode}
    if graceful_timeout is not None:
        if mode != "GRACEFUL":
            raise click.UsageError("--graceful-timeout goes with --graceful")
        body["gracefulTerminationTimeout"] = graceful_timeout
    extra = load_json_object(additional_params_file, "--additional-params-file")
    if extra is not None:
        body["additionalParams"] = extra
    op_id = cc.client.terminate(vnf_id, body)
    task_started(cc, "Terminate", vnf_id, op_id, wait, timeout)


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


# --------------------------------------------------------------------------------------------
# operation occurrences

OP_COLUMNS: list[Column] = [
    ("ID", key("id")),
    ("OPERATION", key("operation")),
    ("STATE", key("operationState")),
    ("VNF INSTANCE", key("vnfInstanceId")),
    ("STARTED", key("startTime")),
    ("STATE ENTERED", key("stateEnteredTime")),
]


def render_op(op: dict[str, Any]) -> str:
    text = render_fields(op)
    err = describe_error(op)
    return f"{text}\n\nError: {err}" if err else text


@cli.group()
def op() -> None:
    """Operation occurrences: show, follow, retry, roll back.

    Each instantiate/scale/heal/terminate creates one; a failed one stays FAILED_TEMP until resolved.

    \b
    Example:
      vnfm op list
      vnfm op retry OP_ID --wait      # or: rollback / fail
    """


@op.command("list")
@click.option(
    "--filter",
    "filter_",
    default=None,
    metavar="EXPR",
    help="SOL013 attribute filter, e.g. '(eq,operationState,FAILED_TEMP)'.",
)
@json_option
@pass_cc
def op_list(cc: CliContext, filter_: str | None) -> None:
    """List operation occurrences.

    \b
    Example:
      vnfm op list --filter '(eq,operationState,FAILED_TEMP)'
    """
    cc.emit(cc.client.list_ops(filter_), lambda rows: render_table(rows, OP_COLUMNS))


@op.command("show")
@click.argument("op_id")
@wait_options
@json_option
@pass_cc
def op_show(cc: CliContext, op_id: str, wait: bool, timeout: float) -> None:
    """Show an operation occurrence (with --wait: follow it until it ends).

    \b
    Example:
      vnfm op show OP_ID --wait
    """
    if wait:
        follow_op(cc, op_id, timeout)
        return
    cc.emit(cc.client.get_op(op_id), render_op)


def _resolve(cc: CliContext, op_id: str, action: str, wait: bool, timeout: float) -> None:
    before = cc.client.get_op(op_id) if wait else None
    result = cc.client.op_action(op_id, action)
    if not wait:
        if cc.json_out:
            click.echo(to_json(cc.safe(result or {"vnfLcmOpOccId": op_id, "action": action})))
        else:
            click.echo(f"{action.capitalize()} of vnfLcmOpOcc {op_id} accepted")
        return
    stale = before.get("stateEnteredTime") if before else None
    if action == "rollback":
        follow_op(
            cc,
            op_id,
            timeout,
            success=frozenset({"ROLLED_BACK"}),
            failure=frozenset({"FAILED_TEMP", "FAILED"}),
            stale_entered_time=stale,
        )
    elif action == "fail":
        follow_op(
            cc, op_id, timeout, success=frozenset({"FAILED"}), failure=frozenset(), stale_entered_time=stale
        )
    else:
        follow_op(cc, op_id, timeout, stale_entered_time=stale)


@op.command("retry")
@click.argument("op_id")
@wait_options
@json_option
@pass_cc
def op_retry(cc: CliContext, op_id: str, wait: bool, timeout: float) -> None:
    """Retry a FAILED_TEMP operation from where it stopped.

    \b
    Example:
      vnfm op retry OP_ID --wait
    """
    _resolve(cc, op_id, "retry", wait, timeout)


@op.command("rollback")
@click.argument("op_id")
@wait_options
@json_option
@pass_cc
def op_rollback(cc: CliContext, op_id: str, wait: bool, timeout: float) -> None:
    """Roll back a FAILED_TEMP instantiate or scale-out (ends ROLLED_BACK).

    \b
    Example:
      vnfm op rollback OP_ID --wait
    """
    _resolve(cc, op_id, "rollback", wait, timeout)


@op.command("fail")
@click.argument("op_id")
@wait_options
@json_option
@pass_cc
def op_fail(cc: CliContext, op_id: str, wait: bool, timeout: float) -> None:
    """Mark a FAILED_TEMP operation as FAILED (gives up on it; the instance is unlocked).

    \b
    Example:
      vnfm op fail OP_ID
    """
    _resolve(cc, op_id, "fail", wait, timeout)


# --------------------------------------------------------------------------------------------
# subscriptions

SUB_COLUMNS: list[Column] = [
    ("ID", key("id")),
    ("CALLBACK", key("callbackUri")),
    ("FILTER", key("filter")),
]


@cli.group()
def subscription() -> None:
    """Notification subscriptions: LCM (SOL003), or packages (SOL005) with --packages.

    The server POSTs VnfLcmOperationOccurrenceNotification etc. to each callback URI; with
    --packages, VnfPackageOnboardingNotification and VnfPackageChangeNotification.

    \b
    Examples:
      vnfm subscription create http://127.0.0.1:8000/notify --filter-file filter.json
      vnfm subscription create http://127.0.0.1:8000/pkg --packages
      vnfm subscription list --packages
    """


packages_option = click.option(
    "--packages", is_flag=True, default=False,
    help="SOL005 package-management subscriptions (/vnfpkgm/v1) instead of LCM ones.",
)


@subscription.command("create")
@click.argument("callback")
@click.option(
    "--filter-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help='JSON filter: LccnSubscriptionRequest.filter, or with --packages a PkgmNotificationsFilter, '
         'e.g. {"notificationTypes": [...]}.',
)
@packages_option
@json_option
@pass_cc
def subscription_create(cc: CliContext, callback: str, filter_file: Path | None, packages: bool) -> None:
    """Subscribe a callback URI to notifications (the server checks it answers GET 204).

    \b
    Examples:
      vnfm subscription create http://127.0.0.1:8000/notify
      vnfm subscription create http://127.0.0.1:8000/pkg --packages
    """
    flt = load_json_object(filter_file, "--filter-file")
    cc.emit(cc.client.create_subscription(callback, flt, packages=packages), render_fields)


@subscription.command("list")
@packages_option
@json_option
@pass_cc
def subscription_list(cc: CliContext, packages: bool) -> None:
    """List subscriptions.

    \b
    Examples:
      vnfm subscription list --json
      vnfm subscription list --packages
    """
    cc.emit(cc.client.list_subscriptions(packages=packages), lambda rows: render_table(rows, SUB_COLUMNS))


@subscription.command("show")
@click.argument("sub_id")
@packages_option
@json_option
@pass_cc
def subscription_show(cc: CliContext, sub_id: str, packages: bool) -> None:
    """Show one subscription.

    \b
    Example:
      vnfm subscription show SUB_ID
    """
    cc.emit(cc.client.get_subscription(sub_id, packages=packages), render_fields)


@subscription.command("delete")
@click.argument("sub_id")
@packages_option
@pass_cc
def subscription_delete(cc: CliContext, sub_id: str, packages: bool) -> None:
    """Delete a subscription.

    \b
    Example:
      vnfm subscription delete SUB_ID
    """
    cc.client.delete_subscription(sub_id, packages=packages)
    cc.info(f"Subscription {sub_id} deleted")


# --------------------------------------------------------------------------------------------
# VIMs

VIM_COLUMNS: list[Column] = [
    ("ID", first_of("id", "vimId")),
    ("NAME", first_of("name", "vimName")),
    ("TYPE", key("vimType")),
    ("DEFAULT", first_of("isDefault", "default")),
    (
        "ENDPOINT",
        lambda r: (r.get("interfaceInfo") or {}).get("endpoint") or r.get("authUrl") or r.get("endpoint"),
    ),
]


@cli.group()
def vim() -> None:
    """VIMs to deploy on (the simulator is the default).

    Register an OpenStack VIM to deploy on a real cloud; requests name it in vimConnectionInfo.

    \b
    Example:
      vnfm vim register openstack-vim.json
      vnfm vim list
    """


@vim.command("list")
@json_option
@pass_cc
def vim_list(cc: CliContext) -> None:
    """List registered VIMs (secrets are never returned by the server).

    \b
    Example:
      vnfm vim list
    """
    cc.emit(cc.client.list_vims(), lambda rows: render_table(rows, VIM_COLUMNS))


@vim.command("show")
@click.argument("vim_id")
@json_option
@pass_cc
def vim_show(cc: CliContext, vim_id: str) -> None:
    """Show one VIM.

    \b
    Example:
      vnfm vim show VIM_ID
    """
    cc.emit(cc.client.get_vim(vim_id), render_fields)


@vim.command("register")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
@pass_cc
def vim_register(cc: CliContext, file: Path) -> None:
    """Register a VIM from a JSON file (vimType, interfaceInfo, accessInfo, ...).

    \b
    Example (vim.json: {"vimType": "openstack", "interfaceInfo": {"endpoint": "..."}, "accessInfo": {...}}):
      vnfm vim register vim.json
    """
    body = load_json_object(file, "FILE")
    assert body is not None
    cc.emit(cc.client.register_vim(body), render_fields)


@vim.command("delete")
@click.argument("vim_id")
@pass_cc
def vim_delete(cc: CliContext, vim_id: str) -> None:
    """Delete a registered VIM.

    \b
    Example:
      vnfm vim delete VIM_ID
    """
    cc.client.delete_vim(vim_id)
    cc.info(f"VIM {vim_id} deleted")


# --------------------------------------------------------------------------------------------
# simulator view


def render_sim(value: Any, title: str = "", depth: int = 0) -> str:
    """Any JSON as sections: scalars as fields, lists of objects as tables, objects recursed."""
    if isinstance(value, list):
        rows = [r for r in value if isinstance(r, dict)]
        if rows and len(rows) == len(value):
            body = render_table(rows, generic_columns(rows))
        else:
            body = ", ".join(str(v) for v in value) if value else "(none)"
        return f"{title}:\n{body}" if title else body
    if not isinstance(value, dict):
        return f"{title}: {value}" if title else str(value)
    scalars = [(k, v) for k, v in value.items() if not isinstance(v, dict | list)]
    parts: list[str] = []
    if title:
        parts.append(f"{title}:")
    if scalars:
        parts.append(render_fields(value, scalars))
    for k, v in value.items():
        if isinstance(v, dict | list):
            sub = f"{title}.{k}" if title else k
            if depth >= 3:
                parts.append(f"{sub}: {json.dumps(v, separators=(',', ':'))}")
            else:
                parts.append(render_sim(v, sub, depth + 1))
    return "\n\n".join(p for p in parts if p)


NODE_COLUMNS: list[Column] = [
    ("NODE", key("name")),
    ("ROLE", key("role")),
    ("READY", lambda r: "Ready" if r.get("ready") else "NotReady"),
    ("CORDONED", key("cordoned")),
    ("ADDRESSES", key("addresses")),
]
ETCD_COLUMNS: list[Column] = [
    ("MEMBER", key("name")),
    ("PEER URL", key("peer_url")),
    ("HEALTHY", key("healthy")),
]
HAPROXY_COLUMNS: list[Column] = [
    ("MASTER", key("master")),
    ("ADDRESS", key("address")),
    ("PORT", key("frontend_port")),
    ("#", key("backend_count")),
    ("BACKENDS", lambda r: [f"{b.get('name')}={b.get('address')}:{b.get('port')}" for b in r.get("backends") or []]),
]


def render_cluster(k8s: dict[str, Any]) -> str:
    """The Kubernetes twin's cluster: nodes, etcd members, HAProxy backends per master, VIM."""
    nodes = [n for n in k8s.get("nodes") or [] if isinstance(n, dict)]
    etcd = k8s.get("etcd") or {}
    members = [m for m in etcd.get("members") or [] if isinstance(m, dict)]
    lbs = [h for h in k8s.get("haproxy") or [] if isinstance(h, dict)]
    vim = k8s.get("vim")
    ready = sum(1 for n in nodes if n.get("ready"))
    parts = [
        f"Kubernetes cluster (endpoint {k8s.get('endpoint') or '-'}):",
        f"Nodes ({ready}/{len(nodes)} Ready):\n" + render_table(nodes, NODE_COLUMNS),
        f"etcd members ({len(members)}, {'healthy' if etcd.get('healthy') else 'NOT healthy'}):\n"
        + render_table(members, ETCD_COLUMNS),
        "HAProxy backends per master:\n" + render_table(lbs, HAPROXY_COLUMNS, empty="(no HAProxy: single master)"),
    ]
    if isinstance(vim, dict):
        parts.append("Registered VIM:\n" + render_fields(vim))
    else:
        parts.append("Registered VIM: (none)")
    return "\n\n".join(parts)


def render_sim_state(value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("kubernetes"), dict):
        rest = {k: v for k, v in value.items() if k != "kubernetes"}
        return render_sim(rest) + "\n\n" + render_cluster(value["kubernetes"])
    return render_sim(value)


@cli.group()
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


def main() -> None:
    cli(prog_name="vnfm")


if __name__ == "__main__":  # pragma: no cover
    main()
