"""Domain errors. Each maps to one SOL013 ProblemDetails (status, title, detail).

The status numbers are part of the ETSI data model (ProblemDetails.status), not of HTTP plumbing,
so the core may name them; only the API adapter turns them into responses.
"""

from __future__ import annotations

from typing import Any


class VnfmError(Exception):
    status = 500
    title = "Internal Server Error"

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra

    def problem(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": self.status, "title": self.title, "detail": self.detail}
        body.update(self.extra)
        return body


class BadRequest(VnfmError):
    status = 400
    title = "Bad Request"


class NotFound(VnfmError):
    status = 404
    title = "Not Found"


class NotAcceptable(VnfmError):
    status = 406
    title = "Not Acceptable"


class Conflict(VnfmError):
    """The resource is in a state that does not allow the request (SOL013: 409)."""

    status = 409
    title = "Conflict"


class UnprocessableEntity(VnfmError):
    """The content is syntactically valid but cannot be processed (bad package, invalid ids)."""

    status = 422
    title = "Unprocessable Entity"


class PreconditionFailed(VnfmError):
    """A conditional request's precondition (If-Match) does not hold: nothing was changed."""

    status = 412
    title = "Precondition Failed"


class UnsupportedMediaType(VnfmError):
    status = 415
    title = "Unsupported Media Type"


class PayloadTooLarge(VnfmError):
    status = 413
    title = "Payload Too Large"


class OperationFailed(VnfmError):
    """An LCM operation step failed. Stored as the occurrence's `error`."""

    status = 500
    title = "LCM operation failed"


class Forbidden(VnfmError):
    """The caller is authenticated but its roles do not allow the request (SOL013: 403)."""

    status = 403
    title = "Forbidden"
