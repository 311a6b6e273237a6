"""The role each route needs: ONE table, keyed by (method, route template). A route missing here
answers 403 to everyone (tests/api/test_auth_rules.py fails first). PUBLIC routes need no
authentication; they are exact paths (templates without a parameter), never prefixes or suffixes.

reader: reads; operator: creates, changes, deletes and runs LCM tasks; admin: the simulated
cloud, fault injection and the metrics (they span every tenant)."""

from __future__ import annotations

from typing import Final

PUBLIC: Final = "public"
READER: Final = "reader"
OPERATOR: Final = "operator"
ADMIN: Final = "admin"

_LCM = "/vnflcm/v1"
_PKG = "/vnfpkgm/v1"
_FM = "/vnffm/v1"
_INST = f"{_LCM}/vnf_instances/{{inst_id}}"
_OCC = f"{_LCM}/vnf_lcm_op_occs/{{op_id}}"
_P = f"{_PKG}/vnf_packages/{{pkg_id}}"
_LCM2 = "/vnflcm/v2"  # SOL003 v3.3.1
_INST2 = f"{_LCM2}/vnf_instances/{{inst_id}}"
_OCC2 = f"{_LCM2}/vnf_lcm_op_occs/{{op_id}}"

ROUTE_RULES: dict[tuple[str, str], str] = {
    # discovery, probes, the token endpoint: before any authentication
    ("GET", "/vnflcm/api_versions"): PUBLIC,
    ("GET", f"{_LCM}/api_versions"): PUBLIC,
    ("GET", f"{_LCM2}/api_versions"): PUBLIC,
    ("GET", "/vnfpkgm/api_versions"): PUBLIC,
    ("GET", f"{_PKG}/api_versions"): PUBLIC,
    ("GET", "/healthz"): PUBLIC,
    ("GET", "/readyz"): PUBLIC,
    ("POST", "/oauth2/token"): PUBLIC,
    ("GET", "/oauth2/jwks"): PUBLIC,
    ("GET", "/metrics"): ADMIN,
    ("GET", "/vnfm/v1/doctor"): ADMIN,
    # the API's own description
    ("GET", "/openapi.json"): READER,
    ("GET", "/docs"): READER,
    ("GET", "/docs/oauth2-redirect"): READER,
    ("GET", "/redoc"): READER,
    ("GET", "/docs/assets/{name}"): READER,
    # SOL003 VNF LCM
    ("GET", f"{_LCM}/vnf_instances"): READER,
    ("POST", f"{_LCM}/vnf_instances"): OPERATOR,
    ("GET", _INST): READER,
    ("PATCH", _INST): OPERATOR,
    ("DELETE", _INST): OPERATOR,
    ("POST", f"{_INST}/instantiate"): OPERATOR,
    ("POST", f"{_INST}/scale"): OPERATOR,
    ("POST", f"{_INST}/heal"): OPERATOR,
    ("POST", f"{_INST}/terminate"): OPERATOR,
    # the LCM tasks vnfm does not implement (they answer what SOL003 says); an operator's anyway
    ("POST", f"{_INST}/scale_to_level"): OPERATOR,
    ("POST", f"{_INST}/change_flavour"): OPERATOR,
    ("POST", f"{_INST}/operate"): OPERATOR,
    ("POST", f"{_INST}/change_ext_conn"): OPERATOR,
    ("POST", f"{_INST}/change_vnfpkg"): OPERATOR,
    # SOL003 v3.3.1 VNF LCM (/vnflcm/v2): the same roles as v1
    ("GET", f"{_LCM2}/vnf_instances"): READER,
    ("POST", f"{_LCM2}/vnf_instances"): OPERATOR,
    ("GET", _INST2): READER,
    ("PATCH", _INST2): OPERATOR,
    ("DELETE", _INST2): OPERATOR,
    ("POST", f"{_INST2}/instantiate"): OPERATOR,
    ("POST", f"{_INST2}/scale"): OPERATOR,
    ("POST", f"{_INST2}/heal"): OPERATOR,
    ("POST", f"{_INST2}/terminate"): OPERATOR,
    ("POST", f"{_INST2}/change_vnfpkg"): OPERATOR,
    ("POST", f"{_INST2}/scale_to_level"): OPERATOR,  # not implemented (404), as on v1
    ("POST", f"{_INST2}/change_flavour"): OPERATOR,
    ("POST", f"{_INST2}/operate"): OPERATOR,
    ("POST", f"{_INST2}/change_ext_conn"): OPERATOR,
    ("POST", f"{_INST2}/create_snapshot"): OPERATOR,
    ("POST", f"{_INST2}/revert_to_snapshot"): OPERATOR,
    ("GET", f"{_LCM2}/vnf_lcm_op_occs"): READER,
    ("GET", _OCC2): READER,
    ("POST", f"{_OCC2}/retry"): OPERATOR,
    ("POST", f"{_OCC2}/rollback"): OPERATOR,
    ("POST", f"{_OCC2}/cancel"): OPERATOR,
    ("POST", f"{_OCC2}/fail"): OPERATOR,
    ("GET", f"{_LCM2}/subscriptions"): READER,
    ("POST", f"{_LCM2}/subscriptions"): OPERATOR,
    ("GET", f"{_LCM2}/subscriptions/{{sub_id}}"): READER,
    ("DELETE", f"{_LCM2}/subscriptions/{{sub_id}}"): OPERATOR,
    ("GET", f"{_LCM}/vnf_lcm_op_occs"): READER,
    ("GET", _OCC): READER,
    ("POST", f"{_OCC}/retry"): OPERATOR,
    ("POST", f"{_OCC}/rollback"): OPERATOR,
    ("POST", f"{_OCC}/cancel"): OPERATOR,
    ("POST", f"{_OCC}/fail"): OPERATOR,
    ("GET", f"{_LCM}/subscriptions"): READER,
    ("POST", f"{_LCM}/subscriptions"): OPERATOR,
    ("GET", f"{_LCM}/subscriptions/{{sub_id}}"): READER,
    ("DELETE", f"{_LCM}/subscriptions/{{sub_id}}"): OPERATOR,
    # SOL003 VNF fault management (alarms are the instance's tenant's)
    ("GET", "/vnffm/api_versions"): PUBLIC,
    ("GET", f"{_FM}/api_versions"): PUBLIC,
    ("GET", f"{_FM}/alarms"): READER,
    ("GET", f"{_FM}/alarms/{{alarm_id}}"): READER,
    ("PATCH", f"{_FM}/alarms/{{alarm_id}}"): OPERATOR,
    ("GET", f"{_FM}/subscriptions"): READER,
    ("POST", f"{_FM}/subscriptions"): OPERATOR,
    ("GET", f"{_FM}/subscriptions/{{sub_id}}"): READER,
    ("DELETE", f"{_FM}/subscriptions/{{sub_id}}"): OPERATOR,
    # SOL005 VNF packages
    ("GET", f"{_PKG}/vnf_packages"): READER,
    ("POST", f"{_PKG}/vnf_packages"): OPERATOR,
    ("GET", _P): READER,
    ("PATCH", _P): OPERATOR,
    ("DELETE", _P): OPERATOR,
    ("PUT", f"{_P}/package_content"): OPERATOR,
    ("POST", f"{_P}/package_content/upload_from_uri"): OPERATOR,
    ("GET", f"{_P}/package_content"): READER,
    ("GET", f"{_P}/vnfd"): READER,
    ("GET", f"{_P}/artifacts/{{artifact_path:path}}"): READER,
    ("GET", f"{_PKG}/subscriptions"): READER,
    ("POST", f"{_PKG}/subscriptions"): OPERATOR,
    ("GET", f"{_PKG}/subscriptions/{{sub_id}}"): READER,
    ("DELETE", f"{_PKG}/subscriptions/{{sub_id}}"): OPERATOR,
    # vnfm's VIM registry (credentials stay inside; a kubeconfig's token only to operators)
    ("GET", "/vnfm/v1/vims"): READER,
    ("POST", "/vnfm/v1/vims"): OPERATOR,
    ("GET", "/vnfm/v1/vims/{vim_id}"): READER,
    ("GET", "/vnfm/v1/vims/{vim_id}/kubeconfig"): OPERATOR,
    ("DELETE", "/vnfm/v1/vims/{vim_id}"): OPERATOR,
    ("GET", "/vnfm/v1/vnf_instances/{inst_id}/backups"): READER,  # scheduled etcd backups, drills
    # Tacker's VIM API (python-tackerclient)
    ("GET", "/v1.0/vims"): READER,
    ("GET", "/v1.0/vims.json"): READER,
    ("POST", "/v1.0/vims"): OPERATOR,
    ("POST", "/v1.0/vims.json"): OPERATOR,
    ("GET", "/v1.0/vims/{ref}"): READER,
    ("PUT", "/v1.0/vims/{ref}"): OPERATOR,
    ("DELETE", "/v1.0/vims/{ref}"): OPERATOR,
    # the web console (entrypoints/api/console): its login, assets, pages and the operator's buttons
    ("GET", "/console/login"): PUBLIC,
    ("POST", "/console/login"): PUBLIC,
    ("POST", "/console/logout"): PUBLIC,
    ("GET", "/console/static/console.css"): PUBLIC,
    ("GET", "/console/static/console.js"): PUBLIC,
    ("GET", "/console"): READER,
    ("GET", "/console/"): READER,
    ("GET", "/console/instances/{inst_id}"): READER,
    ("GET", "/console/ops/{op_id}"): READER,
    ("GET", "/console/ops/{op_id}/progress"): READER,
    ("POST", "/console/ops/{op_id}/retry"): OPERATOR,
    ("POST", "/console/ops/{op_id}/rollback"): OPERATOR,
    ("POST", "/console/ops/{op_id}/fail"): OPERATOR,
    ("GET", "/console/packages"): READER,
    ("GET", "/console/vims"): READER,
    # the simulated cloud and its fault injection: every tenant's VMs
    ("GET", "/sim/v1/state"): ADMIN,
    ("GET", "/sim/v1/state/{inst_id}"): ADMIN,
    ("POST", "/sim/v1/faults"): ADMIN,
    ("DELETE", "/sim/v1/faults"): ADMIN,
}


def rule_for(method: str, template: str) -> str | None:
    """The role (or PUBLIC) `method` on `template` needs; HEAD as GET; None when the table has no rule."""
    found = ROUTE_RULES.get((method, template))
    if found is None and method == "HEAD":
        found = ROUTE_RULES.get(("GET", template))
    return found
