"""The certificate expiry watch's record of one instance (service/certificates.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WatchRow:
    """An instance the certificate watch claimed for a check, with what it did for it already."""

    instance_id: str
    warned_for: float | None = None  # the earliest notAfter a warning was sent for
    renew_for: float | None = None  # the earliest notAfter an automatic renewal was started for
