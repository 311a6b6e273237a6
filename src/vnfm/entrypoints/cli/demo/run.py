"""`run_demo`: check the arguments, start a server in this process on a free port with a fresh
data dir, run the chosen scenario against it, stop, clean up."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from vnfm.entrypoints.cli.client import VnfmClient
from vnfm.entrypoints.cli.demo.basic import Demo
from vnfm.entrypoints.cli.demo.ha import HaDemo
from vnfm.entrypoints.cli.demo.kubespray import KubesprayDemo
from vnfm.entrypoints.cli.demo.runner import Echo
from vnfm.entrypoints.cli.output import mask_text
from vnfm.examples import example_csar

SCENARIOS = ("default", "ha", "kubespray")


def _openrc_env(scenario: str, vim: str, openrc: Path | None, echo: Echo) -> dict[str, str] | None:
    """The openrc variables for vim="openstack" ({} for the simulator); None, with the reason
    echoed, when the arguments do not go together."""
    if scenario not in SCENARIOS:
        echo(f"Error: unknown demo scenario {scenario!r} (known: {', '.join(SCENARIOS)})")
        return None
    if vim == "simulator":
        return {}
    if vim != "openstack":
        echo(f"Error: unknown demo VIM {vim!r} (known: simulator, openstack)")
        return None
    if scenario != "default":
        echo("Error: --vim openstack runs the default scenario only")
        return None
    if openrc is None:
        echo("Error: --vim openstack needs --openrc PATH (an openrc file with OS_AUTH_URL, OS_USERNAME, ...)")
        return None
    # Imported here: the OpenStack adapter (and its SDK) is needed for --vim openstack only.
    from vnfm.entrypoints.cli.demo.openstack import load_openrc

    return load_openrc(openrc, echo)


def _scenario(
    client: VnfmClient,
    echo: Echo,
    *,
    scenario: str,
    openrc_env: dict[str, str],
    flavour: str | None,
    timeout: float,
    network: str,
    image: str | None,
) -> bool:
    """Run the scenario against the server `client` talks to."""
    csar = example_csar()
    if openrc_env:
        from vnfm.entrypoints.cli.demo.openstack import OpenStackDemo

        os_demo = OpenStackDemo(client, echo, openrc=openrc_env, network=network, image=image,
                                timeout=timeout, flavour=flavour or "simple")
        try:
            return os_demo.run(csar)
        finally:
            os_demo.close()
    demo: Demo
    if scenario == "kubespray":
        return KubesprayDemo(client, echo, timeout=timeout, flavour=flavour or "simple").run(example_csar("kubespray"))
    if scenario == "ha":
        demo = HaDemo(client, echo, timeout=timeout, flavour=flavour or "ha")
    else:
        demo = Demo(client, echo, timeout=timeout, flavour=flavour or "simple")
    return demo.run(csar)


def run_demo(
    *,
    data_dir: Path | None = None,
    keep: bool = False,
    flavour: str | None = None,
    timeout: float = 300.0,
    echo: Echo = print,
    scenario: str = "default",
    vim: str = "simulator",
    openrc: Path | None = None,
    network: str = "vnfm-ci-net",
    image: str | None = None,
) -> bool:
    """Start a server in this process on a free port with a fresh data dir, run the Demo (scenario
    "default", flavour simple unless given; or "ha", flavour ha unless given), stop.

    vim="openstack": the default scenario on the OpenStack cloud of the `openrc` file (registered
    as a VIM; CPs on `network`; `image` instead of the VNFD's image when given), with the
    package's hooks bound to the noop management driver."""
    openrc_env = _openrc_env(scenario, vim, openrc, echo)
    if openrc_env is None:
        return False
    # Imported here: the API server (FastAPI, SQLAlchemy, the engine) only for the demo.
    from vnfm.config import Settings
    from vnfm.entrypoints.api.server import start_in_thread

    tmp: Path | None = None
    if data_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="vnfm-demo-"))
        data_dir = tmp
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(
        data_dir=data_dir, database_url=f"sqlite:///{data_dir / 'vnfm.db'}", host="127.0.0.1", port=0
    )
    where = "the simulated cloud"
    if openrc_env:
        # The example package's hooks name the Kubernetes driver, which would SSH into the servers.
        settings.driver_bindings = ",".join(filter(None, [settings.driver_bindings, "mgmt-drivers-kubernetes=noop"]))
        where = f"OpenStack at {openrc_env['OS_AUTH_URL']}, hooks bound to the noop driver"
    echo(f"Starting the vnfm server in this process (data: {data_dir}, VIM: {where})")
    try:
        handle = start_in_thread(settings)
    except Exception as e:  # noqa: BLE001 - reported, then non-zero exit
        echo(f"Error: the server did not start: {mask_text(str(e))}")
        _cleanup(tmp, keep, data_dir, echo)
        return False
    try:
        echo(f"Server listening at {handle.url}\n")
        with VnfmClient(handle.url) as client:
            ok = _scenario(client, echo, scenario=scenario, openrc_env=openrc_env, flavour=flavour,
                           timeout=timeout, network=network, image=image)
    finally:
        handle.stop()
        _cleanup(tmp, keep, data_dir, echo)
    if ok:
        echo(NEXT)
    return ok


NEXT = """
Next:
  vnfm server &                                      a server of your own (data in ./var; Ctrl-C stops it)
  vnfm package create -o value -c id                 then: vnfm package upload PKG_ID ./my-package-dir
  vnfm vnf create VNFD_ID -o value -c id             an instance of the package's VNFD
  vnfm vnf instantiate VNF_ID request.json --wait    request files: examples/requests/ in the source tree
  vnfm vnf scale VNF_ID --request scale-out-workers.json --wait
  vnfm demo --scenario ha                            three masters behind a VIP (also: kubespray)
  vnfm completion bash                               shell completion (see `vnfm completion --help`)
  docs/openstack.md                                  deploying on a real OpenStack cloud, then `vnfm doctor`"""


def _cleanup(tmp: Path | None, keep: bool, data_dir: Path, echo: Echo) -> None:
    if keep or tmp is None:
        echo(f"Data kept in {data_dir} (look at it with: vnfm server --data-dir {data_dir})")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
