"""agentgov: govern AI agents from Python.

`Agentgov` / `AsyncAgentgov` are the clients; `agentgov.api` is the client generated from the
service's OpenAPI document (every operation); `agentgov.errors` the typed exceptions; the
framework adapters are `agentgov.langchain`, `agentgov.openai_agents`, `agentgov.mcp`,
`agentgov.crewai` and `agentgov.claude_hook`.
"""

from ._transport import RetryPolicy
from .client import Agentgov, AsyncAgentgov, Decision, GuardResult
from .errors import AgentgovError, ApiError, FieldError, Unavailable

__all__ = [
    "Agentgov",
    "AgentgovError",
    "ApiError",
    "AsyncAgentgov",
    "Decision",
    "FieldError",
    "GuardResult",
    "RetryPolicy",
    "Unavailable",
]
