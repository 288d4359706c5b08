"""agentgov's OpenTelemetry export against OpenTelemetry's own Python implementation, in its
own environment (requirements/otel.txt): a receiver built on the `opentelemetry-proto`
types (gRPC on `grpcio`, and HTTP/protobuf), and an agent traced by OpenTelemetry's Python
SDK, which exports its own spans to the same receiver with the SDK's OTLP exporters.

Through agentgov's Python client, inside the agent's span, the agent is denied a tool call,
needs approval for another, and has a prompt injection blocked. The receiver must then hold
one `run_guardrail` span per verdict with the GenAI guardrail attributes, each a child of the
agent's span in the agent's trace; the audit records keep the trace id; and no text the agent
sent (the prompt, a secret in a check's context) is in anything agentgov exported."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

grpc = pytest.importorskip("grpc")

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agentgov import Agentgov
from agentgov.testing import LocalServer

from .conftest import INJECTION, POLICY, _binary

#: A secret in a check's context: judged, hashed, never exported.
SECRET = "s3cr3t-" + "7f1c9a0b4d2e"


class Receiver:
    """Every ExportTraceServiceRequest received, with its bytes as they came."""

    def __init__(self) -> None:
        self.requests: list[trace_service_pb2.ExportTraceServiceRequest] = []
        self.raw: list[bytes] = []
        self._lock = threading.Lock()

    def keep(self, body: bytes) -> trace_service_pb2.ExportTraceServiceResponse:
        request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
        with self._lock:
            self.requests.append(request)
            self.raw.append(body)
        return trace_service_pb2.ExportTraceServiceResponse()

    def spans(self, service: str) -> list[tuple[Any, dict[str, Any]]]:
        """The spans of `service`, each with its attributes as a dict."""
        out = []
        with self._lock:
            for request in self.requests:
                for rs in request.resource_spans:
                    names = [a.value.string_value for a in rs.resource.attributes if a.key == "service.name"]
                    if names != [service]:
                        continue
                    for ss in rs.scope_spans:
                        for span in ss.spans:
                            out.append((span, {a.key: _value(a.value) for a in span.attributes}))
        return out


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class _Servicer(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, receiver: Receiver) -> None:
        self.receiver = receiver

    def Export(self, request: Any, context: Any) -> Any:
        return self.receiver.keep(request.SerializeToString())


def _grpc_receiver(receiver: Receiver) -> tuple[str, Any]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_Servicer(receiver), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return f"http://127.0.0.1:{port}", lambda: server.stop(0)


def _http_receiver(receiver: Receiver) -> tuple[str, Any]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                self.send_response(404)
                self.end_headers()
                return
            answer = receiver.keep(body).SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server.shutdown


@pytest.fixture(params=["grpc", "http/protobuf"])
def setup(request: pytest.FixtureRequest) -> Iterator[tuple[str, Receiver, LocalServer, dict[str, str]]]:
    protocol = request.param
    receiver = Receiver()
    endpoint, stop = (_grpc_receiver if protocol == "grpc" else _http_receiver)(receiver)
    server = LocalServer(
        _binary(),
        env={
            "AGENTGOV_OTLP_ENDPOINT": endpoint,
            "AGENTGOV_OTLP_PROTOCOL": protocol,
            # Export every 100 ms rather than every 5 s.
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        },
    )
    server.start()
    try:
        tenant = server.create_tenant(f"otel-{protocol.replace('/', '-')}", agent="traced-agent", policy=POLICY)
        yield protocol, receiver, server, {**tenant, "endpoint": endpoint}
    finally:
        server.remove()
        stop()


def _wait_for(receiver: Receiver, service: str, count: int) -> list[tuple[Any, dict[str, Any]]]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        spans = receiver.spans(service)
        if len(spans) >= count:
            return spans
        time.sleep(0.1)
    raise AssertionError(f"{service}: {len(receiver.spans(service))} spans of {count} arrived")


def test_each_verdict_is_a_guardrail_span_in_the_agents_trace(
    setup: tuple[str, Receiver, LocalServer, dict[str, str]],
) -> None:
    protocol, receiver, server, tenant = setup
    endpoint = tenant["endpoint"]
    exporter = (
        GrpcSpanExporter(endpoint=endpoint, insecure=True)
        if protocol == "grpc"
        else HttpSpanExporter(endpoint=f"{endpoint}/v1/traces")
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "traced-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    gov = Agentgov(server.url, api_key=tenant["api_key"])
    agent = tenant["agent_id"]

    with tracer.start_as_current_span("invoke_agent traced-agent") as root:
        with tracer.start_as_current_span("execute_tool delete_files") as deleting:
            denied = gov.check(
                agent,
                "delete_files",
                "fs/home",
                {"path": "/home", "token": SECRET},
                session="run-1",
                tool_call_id="call_9",
            )
        with tracer.start_as_current_span("execute_tool send_email") as mailing:
            held = gov.check(
                agent, "send_email", "mail/outbox", {"arguments": {"to": "a@example.com"}}, session="run-1"
            )
        with tracer.start_as_current_span("screen prompt") as screening:
            blocked = gov.guard.validate(INJECTION, agent=agent)
    provider.shutdown()
    assert not denied.allowed and not denied.required_approval
    assert held.required_approval
    assert not blocked.safe

    spans = _wait_for(receiver, "agentgov", 3)
    assert len(receiver.spans("traced-agent")) == 4, "the agent's own spans reached the same receiver"
    by_name: dict[str, list[tuple[Any, dict[str, Any]]]] = {}
    for span, attrs in spans:
        by_name.setdefault(span.name, []).append((span, attrs))
    assert sorted((n, len(s)) for n, s in by_name.items()) == [
        ("run_guardrail agentgov.policy", 2),
        ("run_guardrail agentgov.prompt_guard", 1),
    ]
    trace_id = root.get_span_context().trace_id.to_bytes(16, "big")

    def parented(span: Any, parent: Any) -> None:
        assert span.trace_id == trace_id, "in the agent's trace"
        assert span.parent_span_id == parent.get_span_context().span_id.to_bytes(8, "big")
        assert span.kind == span.SPAN_KIND_INTERNAL
        assert span.end_time_unix_nano >= span.start_time_unix_nano > 0

    (deny, deny_attrs), (escalate, escalate_attrs) = sorted(
        by_name["run_guardrail agentgov.policy"], key=lambda s: s[1]["gen_ai.guardrail.verdict.type"]
    )
    parented(deny, deleting)
    assert deny_attrs["gen_ai.operation.name"] == "run_guardrail"
    assert deny_attrs["gen_ai.guardrail.component.name"] == "agentgov.policy"
    assert deny_attrs["gen_ai.guardrail.target.type"] == "input"
    assert deny_attrs["gen_ai.guardrail.target.subtype"] == "tool_call"
    assert deny_attrs["gen_ai.guardrail.target.id"] == "call_9"
    assert deny_attrs["gen_ai.guardrail.verdict.type"] == "deny"
    assert deny_attrs["gen_ai.guardrail.action.type"] == "block"
    assert deny_attrs["gen_ai.guardrail.verdict.reason"] == "denied by a policy"
    assert deny_attrs["gen_ai.guardrail.security.risk.category"] == "excessive_agency"
    assert deny_attrs["gen_ai.guardrail.security.risk.score"] == pytest.approx(denied.risk_score)
    assert deny_attrs["gen_ai.guardrail.security.policy.id"] == str(denied.matched_policies[0].id)
    assert deny_attrs["gen_ai.guardrail.security.content.input.hash"].startswith("hmac-sha256:")
    assert len(deny_attrs["gen_ai.guardrail.security.content.input.hash"]) == len("hmac-sha256:") + 64
    assert deny_attrs["gen_ai.conversation.id"] == "run-1"
    assert deny_attrs["gen_ai.agent.id"] == agent
    assert deny_attrs["agentgov.audit.record_id"] == str(denied.decision_id)

    parented(escalate, mailing)
    assert escalate_attrs["gen_ai.guardrail.verdict.type"] == "escalate"
    assert escalate_attrs["gen_ai.guardrail.action.type"] == "escalate"
    assert escalate_attrs["gen_ai.guardrail.target.subtype"] == "action"
    assert escalate_attrs["gen_ai.guardrail.verdict.reason"] == "approval required by a policy"
    assert escalate_attrs["agentgov.audit.record_id"] == str(held.decision_id)

    ((guard, guard_attrs),) = by_name["run_guardrail agentgov.prompt_guard"]
    parented(guard, screening)
    assert guard_attrs["gen_ai.guardrail.target.subtype"] == "llm"
    assert guard_attrs["gen_ai.guardrail.verdict.type"] == "deny"
    assert guard_attrs["gen_ai.guardrail.action.type"] == "block"
    assert guard_attrs["gen_ai.guardrail.security.risk.category"] == "prompt_injection"
    assert guard_attrs["gen_ai.guardrail.verdict.reason"] == "prompt injection detected"
    assert guard_attrs["gen_ai.guardrail.security.policy.id"] == "prompt-guard/v0"

    # The audit records keep the agent's trace id.
    hex_trace = trace_id.hex()
    for decision_id in (denied.decision_id, held.decision_id, blocked.validation_id):
        r = httpx.get(f"{server.url}/api/v1/audit/{decision_id}", headers={"X-API-Key": tenant["api_key"]})
        r.raise_for_status()
        assert r.json()["details"]["trace_id"] == hex_trace

    # Nothing the agent sent left agentgov (nor the agent, whose spans carry only names): not
    # the prompt, not the secret in a context, not an argument.
    exported = b"".join(receiver.raw)
    for text in (INJECTION, SECRET, "a@example.com", "/home"):
        assert text.encode() not in exported, f"{text!r} was exported"


def test_a_collector_that_is_down_costs_no_decision() -> None:
    """With the receiver gone, checks are answered and audited as ever."""
    server = LocalServer(
        _binary(), env={"AGENTGOV_OTLP_ENDPOINT": "http://127.0.0.1:9", "AGENTGOV_OTLP_TIMEOUT_SECS": "1"}
    )
    server.start()
    try:
        tenant = server.create_tenant("otel-down", agent="a", policy=POLICY)
        gov = Agentgov(server.url, api_key=tenant["api_key"])
        for _ in range(20):
            decision = gov.check(tenant["agent_id"], "delete_files", "fs/tmp")
            assert not decision.allowed and decision.decision_id is not None
    finally:
        server.remove()
