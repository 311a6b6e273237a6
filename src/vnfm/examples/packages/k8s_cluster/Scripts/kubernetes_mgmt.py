"""Placeholder for the `mgmt-drivers-kubernetes` artifact of the example package.

vnfm never imports or executes Python shipped in a VNF package. The VNFD's Vnflcm hooks name
the artifact `mgmt-drivers-kubernetes`; vnfm binds that name to its built-in Kubernetes
management driver (see vnfm.adapters.mgmt.bindings). This file exists so the package has the
artifact the VNFD declares, with its hash listed in TOSCA-Metadata/TOSCA.meta.
"""

DRIVER_NAME = "mgmt-drivers-kubernetes"
