"""The certificate expiry watch's record of one instance (service/certificates.py) and the
per-instance switch of automatic renewal."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class WatchRow:
    """An instance the certificate watch claimed for a check, with what it did for it already."""

    instance_id: str
    warned_for: float | None = None  # the earliest notAfter a warning was sent for
    renew_for: float | None = None  # the earliest notAfter an automatic renewal was started for


# The per-instance switch of automatic certificate renewal, a vnfConfigurableProperties entry like
# Tacker's isAutohealEnabled (set at instantiate or by PATCH of the instance): true / false
# overrides VNFM_CERT_AUTO_RENEW for this instance; absent (or PATCHed to null): the global setting.
AUTO_RENEW_PROPERTY = "isCertificateAutoRenewalEnabled"


def auto_renewal(vnf_configurable_properties: Mapping[str, object] | None, default: bool) -> bool:
    """Whether the certificate watch renews this instance's certificates by itself."""
    v = (vnf_configurable_properties or {}).get(AUTO_RENEW_PROPERTY)
    return v if isinstance(v, bool) else default
