"""`vnfm demo`: the whole VNF lifecycle against a server started in this process.

runner.py is the step machinery every scenario shares; basic.py, ha.py and openstack.py are the
scenarios (the steps are plain methods over a VnfmClient, so tests drive them against a fake
server); run.py starts the server and runs the chosen scenario.
"""

from vnfm.entrypoints.cli.demo.basic import Demo, instantiate_request, pick_worker_vnfc
from vnfm.entrypoints.cli.demo.ha import HaDemo
from vnfm.entrypoints.cli.demo.run import run_demo
from vnfm.entrypoints.cli.demo.runner import StepFailed, onboard_package

__all__ = ["Demo", "HaDemo", "StepFailed", "instantiate_request", "onboard_package", "pick_worker_vnfc", "run_demo"]
