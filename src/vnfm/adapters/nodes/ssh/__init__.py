"""Node access over real SSH: the step executor, its handlers per step family, and the scripts."""

from vnfm.adapters.nodes.ssh.access import SshAccess
from vnfm.adapters.nodes.ssh.executor import SshStepExecutor

__all__ = ["SshAccess", "SshStepExecutor"]
