"""Placeholder for "lcm-operation-user-data": "./UserData/k8s_cluster_user_data.py".

Requests written for the reference system name this file and the class
KubernetesClusterUserData. vnfm accepts such requests but never imports or executes Python
from a VNF package.
"""
