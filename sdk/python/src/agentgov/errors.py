"""Typed exceptions: every problem+json answer of agentgov becomes an `ApiError` subclass that
keeps the problem's `status`, `type`, `title`, `detail` and field `errors`; a server that
cannot be reached (or answers 5xx after the retries) is `Unavailable`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = [
    "AgentgovError",
    "ApiError",
    "BadRequest",
    "Conflict",
    "FieldError",
    "Forbidden",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "ServerError",
    "Unauthorized",
    "Unavailable",
    "UnsupportedMediaType",
    "ValidationFailed",
]


class AgentgovError(Exception):
    """Anything that went wrong talking to agentgov."""


class Unavailable(AgentgovError):
    """agentgov could not be reached, timed out, or answered 5xx (after the safe retries).
    Decisions fail closed on it unless fail-open was chosen."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class FieldError:
    """One invalid field of a request (422)."""

    field: str
    message: str
    line: int | None = None
    column: int | None = None


class ApiError(AgentgovError):
    """A problem+json answer (RFC 9457)."""

    def __init__(
        self,
        status: int,
        *,
        type: str = "about:blank",
        title: str = "",
        detail: str = "",
        errors: list[FieldError] | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        self.status = status
        self.type = type
        self.title = title
        self.detail = detail
        self.errors: list[FieldError] = errors or []
        self.body: dict[str, Any] = body or {}
        fields = "; ".join(f"{e.field}: {e.message}" for e in self.errors)
        super().__init__(f"{status} {title}: {detail}" + (f" ({fields})" if fields else ""))

    @staticmethod
    def from_response(response: httpx.Response) -> ApiError:
        """The exception for an error answer (its class chosen by status)."""
        body: dict[str, Any] = {}
        try:
            parsed = json.loads(response.content or b"null")
            if isinstance(parsed, dict):
                body = parsed
        except ValueError:
            pass
        errors = [
            FieldError(
                field=str(e.get("field", "")),
                message=str(e.get("message", "")),
                line=e.get("line") if isinstance(e.get("line"), int) else None,
                column=e.get("column") if isinstance(e.get("column"), int) else None,
            )
            for e in body.get("errors") or []
            if isinstance(e, dict)
        ]
        status = response.status_code
        cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
        kwargs: dict[str, Any] = {
            "type": str(body.get("type", "about:blank")),
            "title": str(body.get("title", response.reason_phrase)),
            "detail": str(body.get("detail", response.text[:500] if not body else "")),
            "errors": errors,
            "body": body,
        }
        if cls is RateLimited:
            return RateLimited(status, retry_after=_retry_after(response), **kwargs)
        return cls(status, **kwargs)


class BadRequest(ApiError):
    """400: the body is not JSON, or not the JSON expected."""


class Unauthorized(ApiError):
    """401: missing, unknown, expired or revoked credentials."""


class Forbidden(ApiError):
    """403: the credentials lack the permission."""


class NotFound(ApiError):
    """404: no such resource in the caller's tenant."""


class Conflict(ApiError):
    """409: the state does not allow it (e.g. an approval already decided)."""


class PayloadTooLarge(ApiError):
    """413."""


class UnsupportedMediaType(ApiError):
    """415."""


class ValidationFailed(ApiError):
    """422: `errors` names each invalid field."""


class RateLimited(ApiError):
    """429: `retry_after` is the server's `Retry-After`, in seconds."""

    def __init__(self, status: int, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(status, **kwargs)
        self.retry_after = retry_after


class ServerError(ApiError):
    """5xx."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: ValidationFailed,
    429: RateLimited,
}


def _retry_after(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds (delta-seconds only; agentgov sends no dates)."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
