"""Failures of the simulated Kubernetes API, answered as `Status` objects."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, *, kind: str = "", name: str = "",
                 group: str = "", causes: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details: dict[str, Any] = {k: v for k, v in (("name", name), ("group", group), ("kind", kind)) if v}
        if causes:
            self.details["causes"] = causes

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            body["details"] = self.details
        return body


def not_found(plural: str, name: str, group: str = "") -> ApiError:
    what = f"{plural}.{group}" if group else plural
    return ApiError(404, "NotFound", f'{what} "{name}" not found', kind=plural, name=name, group=group)


def already_exists(plural: str, name: str, group: str = "") -> ApiError:
    what = f"{plural}.{group}" if group else plural
    return ApiError(409, "AlreadyExists", f'{what} "{name}" already exists', kind=plural, name=name, group=group)


def invalid(kind: str, name: str, message: str) -> ApiError:
    return ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {message}', kind=kind, name=name)
