"""The NodePort management driver (`mgmt-drivers-cnf-nodeport`): a CNF's NodePort Services served
by the cluster's external load balancer."""

from vnfm.adapters.mgmt.cnf_nodeport.driver import CnfNodePortDriver

__all__ = ["CnfNodePortDriver"]
