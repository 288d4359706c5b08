"""Claude Code / Claude Agent SDK hooks: a command-hook program (`agentgov-claude-hook`, or
`python -m agentgov.claude_hook`) for `PreToolUse`, `PostToolUse` and `UserPromptSubmit`.

In `.claude/settings.json`:

    {"hooks": {
      "PreToolUse":  [{"matcher": "*", "hooks": [{"type": "command", "command": "agentgov-claude-hook"}]}],
      "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "agentgov-claude-hook"}]}],
      "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "agentgov-claude-hook"}]}]}}

with `AGENTGOV_URL`, `AGENTGOV_API_KEY` and `AGENTGOV_AGENT_ID` in the environment (or
`--url`, `--agent`; the key only from the environment, never on a command line).

`PreToolUse` reads Claude's event on stdin and answers `permissionDecision` on stdout: the
tool's name is the action, its input is in the context, Claude's `session_id` is the session
and `tool_use_id` the tool call's id. `allow` when agentgov allows; `deny` with agentgov's
reason (Claude shows it to the model) when it denies, when agentgov cannot be reached
(unless `--fail-open`), or when anything goes wrong. A call that needs approval waits for the
analyst's decision (`--approval wait`, up to `--approval-timeout` seconds: keep it under the
hook's own timeout, 60 s by default) and is allowed only when agentgov takes the request's
single-use approval token for this very call (an analyst's edit of the input reaches Claude as
`updatedInput`), or is handed to Claude's own prompt (`--approval ask`).
`PostToolUse` shows the tool's output to the session (`POST /sessions/{id}/observe`: Prompt
Guard screens it, the session keeps its labels and the values an order in it names) and
blocks an output Prompt Guard flags. `UserPromptSubmit` shows the user's prompt to the
session as trusted content (values it names are the user's); it never blocks the prompt.
`callback(gate)` is the same logic for the Agent SDK's in-process hooks:
`ClaudeAgentOptions(hooks={"PreToolUse": [HookMatcher(hooks=[callback(gate)])]})`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ._gate import Gate, ToolCall, denial, withheld
from .client import Agentgov

__all__ = ["callback", "hook", "main"]


def hook(event: Mapping[str, Any], gate: Gate, *, approval: str = "wait") -> dict[str, Any]:
    """The hook's answer to one Claude hook event."""
    name = str(event.get("hook_event_name", ""))
    tool_input = event.get("tool_input")
    call = ToolCall(
        str(event.get("tool_name", "")),
        tool_input if isinstance(tool_input, Mapping) else {},
        _text(event.get("tool_use_id")),
        _text(event.get("session_id")),
    )
    if name == "UserPromptSubmit":
        prompt = event.get("prompt")
        if call.session and isinstance(prompt, str) and prompt.strip():
            gate.screen_request(prompt, call.session)
        return {}
    if name == "PostToolUse":
        output = event.get("tool_response")
        text = output if isinstance(output, str) else json.dumps(output, default=str)
        if not text.strip():
            return {}
        verdict = gate.screen(text, call)
        if verdict.safe:
            return {}
        reason = withheld(call, verdict)
        return {
            "decision": "block",
            "reason": reason,
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": reason},
        }
    if name != "PreToolUse":
        return {}
    if not call.name:
        return _decision("deny", "agentgov: the hook event names no tool")
    decision = gate.decide(call)
    if decision.allowed:
        return _decision("allow", f"agentgov allowed {call.name}")
    if decision.required_approval and decision.hitl_request_id:
        if approval == "ask":
            return _decision("ask", f"agentgov: {decision.reason} (approval request {decision.hitl_request_id})")
        outcome = gate.wait(decision.hitl_request_id, call)
        if outcome.approved:
            answer = _decision("allow", f"{outcome.message} in agentgov (request {decision.hitl_request_id})")
            if outcome.arguments is not None:
                # Claude runs the tool with the input the analyst approved.
                answer["hookSpecificOutput"]["updatedInput"] = dict(outcome.arguments)
            return answer
        if outcome.status == "pending":
            return _decision(
                "deny", denial(call, f"approval request {decision.hitl_request_id} is still waiting for a person")
            )
        return _decision("deny", denial(call, outcome.message))
    return _decision("deny", denial(call, decision.reason))


def callback(gate: Gate, *, approval: str = "wait") -> Callable[[Any, str | None, Any], Awaitable[dict[str, Any]]]:
    """`hook` as the Claude Agent SDK's hook callback (`input, tool_use_id, context`)."""

    async def run(event: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        event = dict(event)
        if tool_use_id and not event.get("tool_use_id"):
            event["tool_use_id"] = tool_use_id
        return await asyncio.to_thread(hook, event, gate, approval=approval)

    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentgov-claude-hook", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("AGENTGOV_URL", ""))
    parser.add_argument("--agent", default=os.environ.get("AGENTGOV_AGENT_ID", ""))
    parser.add_argument("--approval", choices=["wait", "ask"], default="wait")
    parser.add_argument("--approval-timeout", type=float, default=50.0)
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per request to agentgov")
    parser.add_argument("--fail-open", action="store_true", help="allow when agentgov cannot be reached")
    args = parser.parse_args(argv)
    try:
        event = json.load(sys.stdin)
        if not isinstance(event, dict):
            raise TypeError("the hook event is not a JSON object")
        key = os.environ.get("AGENTGOV_API_KEY", "")
        if not args.url or not key or not args.agent:
            raise ValueError("set AGENTGOV_URL, AGENTGOV_API_KEY and AGENTGOV_AGENT_ID (or --url and --agent)")
        gov = Agentgov(args.url, api_key=key, timeout=args.timeout, fail_open=args.fail_open)
        gate = Gate(gov, args.agent, approval_timeout=args.approval_timeout, framework="claude-code")
        answer = hook(event, gate, approval=args.approval)
    except Exception as e:  # noqa: BLE001 - any failure blocks the call (exit 2: stderr reaches the model)
        print(f"agentgov hook failed, the call is blocked: {e}", file=sys.stderr)
        return 2
    print(json.dumps(answer))
    return 0


def _decision(decision: str, reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def _text(v: Any) -> str | None:
    return str(v) if v is not None and str(v) else None


if __name__ == "__main__":
    sys.exit(main())
