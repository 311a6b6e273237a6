"""service.views_v2: the v2.6.1 -> v3.3.1 mapping of notifications and VIM connections."""

from __future__ import annotations

from vnfm.domain.model import Subscription
from vnfm.service import views_v2

OCC = {
    "notificationType": "VnfLcmOperationOccurrenceNotification", "notificationStatus": "RESULT",
    "operationState": "COMPLETED", "vnfInstanceId": "i1", "operation": "MODIFY_INFO",
    "isAutomaticInvocation": False, "vnfLcmOpOccId": "o1",
    "affectedVnfcs": [{"id": "c1"}], "changedInfo": {"vnfPkgId": "p1", "vnfInstanceName": "n",
                                                      "vimConnectionInfo": [{"id": "v", "vimType": "openstack"}]},
    "_links": {"vnfInstance": {"href": "/vnflcm/v1/vnf_instances/i1"},
               "vnfLcmOpOcc": {"href": "/vnflcm/v1/vnf_lcm_op_occs/o1"}},
}


def test_full_and_short_notifications() -> None:
    full = views_v2.notification(OCC, Subscription(callback_uri="http://h", kind="vnflcm2", verbosity="FULL"))
    assert full["verbosity"] == "FULL" and full["affectedVnfcs"] == [{"id": "c1"}]
    assert full["changedInfo"] == {"vnfInstanceName": "n", "vimConnectionInfo": {"v": {"vimType": "openstack"}}}
    assert full["_links"] == {"vnfInstance": {"href": "/vnflcm/v2/vnf_instances/i1"},
                              "vnfLcmOpOcc": {"href": "/vnflcm/v2/vnf_lcm_op_occs/o1"}}
    short = views_v2.notification(OCC, Subscription(callback_uri="http://h", kind="vnflcm2", verbosity="SHORT"))
    assert short["verbosity"] == "SHORT" and "affectedVnfcs" not in short and "changedInfo" not in short
    assert OCC["_links"]["vnfInstance"]["href"].startswith("/vnflcm/v1/")  # the stored body is not changed


def test_identifier_notifications_only_move_their_links() -> None:
    body = {"notificationType": "VnfIdentifierCreationNotification", "vnfInstanceId": "i1",
            "_links": {"vnfInstance": {"href": "/vnflcm/v1/vnf_instances/i1"}}}
    out = views_v2.notification(body, Subscription(callback_uri="http://h", kind="vnflcm2"))
    assert out == {**body, "_links": {"vnfInstance": {"href": "/vnflcm/v2/vnf_instances/i1"}}}


def test_vim_connections_both_ways() -> None:
    listed = [{"id": "a", "vimType": "openstack", "vimId": "x"}, {"id": "b", "vimType": "kubernetes"}]
    mapped = views_v2.vim_map(listed)
    assert mapped == {"a": {"vimType": "openstack", "vimId": "x"}, "b": {"vimType": "kubernetes"}}
    assert views_v2.vim_list(mapped) == listed
