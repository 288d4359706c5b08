"""Retries where they are safe, for the generated client and the ergonomic one alike (an
httpx transport under both).

- A request that never reached the server (connection refused, connect timeout) is retried
  whatever its method.
- 429 is retried after `Retry-After` (the server did nothing), up to `max_retry_after`.
- 502, 503 and 504, and read timeouts, are retried only for idempotent methods (GET, HEAD,
  PUT, DELETE, OPTIONS): a POST such as a check writes an audit record and is never sent twice.

Every request also carries the caller's current OpenTelemetry trace (W3C `traceparent`),
when OpenTelemetry is installed and a span is current, so that agentgov's decision spans and
audit records join the agent's trace.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from types import ModuleType

import httpx

_otel_propagate: ModuleType | None
try:
    from opentelemetry import propagate as _otel_propagate
except ImportError:  # OpenTelemetry is optional: without it, no trace context is sent.
    _otel_propagate = None

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRY_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry (exponential backoff with full jitter)."""

    retries: int = 2
    backoff: float = 0.2
    max_backoff: float = 2.0
    max_retry_after: float = 10.0

    def delay(self, attempt: int, response: httpx.Response | None) -> float | None:
        """Seconds to wait before attempt `attempt + 1`, or `None` not to retry."""
        if attempt >= self.retries:
            return None
        if response is not None and response.status_code == 429:
            value = response.headers.get("retry-after")
            try:
                wait = float(value) if value is not None else self.backoff
            except ValueError:
                wait = self.backoff
            return None if wait > self.max_retry_after else max(0.0, wait)
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))


#: The trace context headers sent along (not baggage: it may carry anything).
TRACE_HEADERS = ("traceparent", "tracestate")


def propagate_trace(request: httpx.Request) -> None:
    """Adds the current OpenTelemetry span's `traceparent` (and `tracestate`) unless the
    request names one itself; nothing without OpenTelemetry or a current span."""
    if _otel_propagate is None or "traceparent" in request.headers:
        return
    carrier: dict[str, str] = {}
    _otel_propagate.inject(carrier)
    for name in TRACE_HEADERS:
        if name in carrier:
            request.headers[name] = carrier[name]


def _retriable(request: httpx.Request, response: httpx.Response | None, error: Exception | None) -> bool:
    if isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout)):
        return True
    idempotent = request.method.upper() in IDEMPOTENT
    if error is not None:
        return idempotent and isinstance(error, (httpx.ReadTimeout, httpx.RemoteProtocolError))
    assert response is not None
    if response.status_code == 429:
        return True
    return idempotent and response.status_code in RETRY_STATUSES


class RetryTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, policy: RetryPolicy) -> None:
        self._inner = inner
        self._policy = policy

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        propagate_trace(request)
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = self._inner.handle_request(request)
                error: Exception | None = None
            except httpx.TransportError as e:
                error = e
            retry = _retriable(request, response, error)
            delay = self._policy.delay(attempt, response) if retry else None
            if delay is None:
                if error is not None:
                    raise error
                assert response is not None
                return response
            if response is not None:
                response.close()
            time.sleep(delay)
            attempt += 1

    def close(self) -> None:
        self._inner.close()


class AsyncRetryTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, policy: RetryPolicy) -> None:
        self._inner = inner
        self._policy = policy

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        propagate_trace(request)
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = await self._inner.handle_async_request(request)
                error: Exception | None = None
            except httpx.TransportError as e:
                error = e
            retry = _retriable(request, response, error)
            delay = self._policy.delay(attempt, response) if retry else None
            if delay is None:
                if error is not None:
                    raise error
                assert response is not None
                return response
            if response is not None:
                await response.aclose()
            await asyncio.sleep(delay)
            attempt += 1

    async def aclose(self) -> None:
        await self._inner.aclose()
