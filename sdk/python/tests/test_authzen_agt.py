"""Microsoft's agent governance toolkit (`agent-governance-toolkit-core` from PyPI) asking
agentgov through its AuthZEN backend (`authzen-policy-backend`, EmpowerID): an action the
toolkit governs is decided by agentgov's policies at `POST /access/v1/evaluation` and audited
there, as a policy check. Its own environment (requirements/agt.txt), a real server.

The toolkit 5.0.0 reads `proof_artefact` from a backend's decision, which the backend's own
decision type (0.1.2) lacks, so the toolkit would deny every call as an evaluation error;
`ToolkitDecision` re-wraps the backend's answer in the toolkit's type, field for field, and
changes nothing else (see docs/integrations.md)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("agent_os")
pytest.importorskip("authzen_backend")

from agent_os.policies import PolicyEvaluator
from agent_os.policies.backends import BackendDecision
from authzen_backend import AuthZENBackend

from .conftest import Tenant


class ToolkitDecision:
    """The AuthZEN backend, answering in the toolkit's own decision type."""

    def __init__(self, inner: AuthZENBackend) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return self._inner.name

    def evaluate(self, context: dict[str, Any]) -> BackendDecision:
        d = self._inner.evaluate(context)
        return BackendDecision(
            allowed=d.allowed,
            action=d.action,
            reason=d.reason,
            backend=d.backend,
            raw_result=d.raw_result,
            evaluation_ms=d.evaluation_ms,
            error=d.error,
        )


def evaluator(tenant: Tenant, token: str | None = None) -> PolicyEvaluator:
    """The toolkit with no rules of its own: agentgov decides everything."""
    ev = PolicyEvaluator()
    backend = AuthZENBackend(
        f"{tenant.url}/access/v1/evaluation", "agentgov-tests", token=token or tenant.api_key, timeout=10.0
    )
    ev.add_backend(ToolkitDecision(backend))
    return ev


def test_the_toolkit_is_decided_and_audited_by_agentgov(tenant: Tenant) -> None:
    ev = evaluator(tenant)
    ask = {"agent_id": tenant.agent_id, "user_id": "alice@example.com"}

    allowed = ev.evaluate({**ask, "tool_name": "read_file", "path": "/srv/report.txt"})
    assert allowed.allowed, allowed.reason

    denied = ev.evaluate({**ask, "tool_name": "delete_files"})
    assert not denied.allowed
    assert "deleting files is not allowed" in (denied.reason or ""), denied.reason

    # Approval is not permission: the toolkit is told no, with agentgov's reason.
    gated = ev.evaluate({**ask, "tool_name": "send_email", "to": "bob@example.com"})
    assert not gated.allowed
    assert "sending e-mail needs a person" in (gated.reason or ""), gated.reason

    records = {r["action"]: r for r in tenant.decisions()}
    assert {"read_file", "delete_files", "send_email"} <= set(records), records.keys()
    for action, decision in (("read_file", "allow"), ("delete_files", "deny"), ("send_email", "require_approval")):
        record = records[action]
        assert record["agent_id"] == tenant.agent_id
        assert record["decision"] == decision, record
        context = record["details"]["context"]  # type: ignore[index]
        # The backend's mapping, kept: the tool as an MCP resource, the user it acts for.
        assert context["resource_type"] == "mcp_tool", context
        assert context["subject_properties"]["bound_to_user_id"] == "alice@example.com", context
    assert records["read_file"]["details"]["context"]["path"] == "/srv/report.txt"  # type: ignore[index]


def test_a_wrong_key_is_a_deny_not_an_allow(tenant: Tenant) -> None:
    ev = evaluator(tenant, token="agk_notarealkey_00000000000000")
    d = ev.evaluate({"agent_id": tenant.agent_id, "tool_name": "read_file"})
    assert not d.allowed
    assert "401" in (d.reason or ""), d.reason
