#!/usr/bin/env python3
"""The AgentDojo policy benchmark (`cargo xtask agentdojo`): how much of AgentDojo's prompt
injection attacks the policy layer intercepts, and how much of its benign work it lets
through, from the tool calls alone.

No language model is in the loop. For every user task of every suite, AgentDojo's own
ground-truth function calls are the *benign* sequence; for every (user task, injection
task) pair, the *attacked* sequence is the user task's calls up to the tool result that
carries the injection (AgentDojo's attack text, placed where its own attacks place it),
then the injection task's ground-truth calls. Each call is checked (`POST
/policies/check`, one session per sequence) before it runs in AgentDojo's environment, and
each tool result is shown to `POST /sessions/{id}/observe`; the user's task itself is
observed first as trusted content, as an adapter that sees the user's message does. So the figures bound what a
policy layer can catch given the calls an injected agent would make; they say nothing of
which calls a model would make.

utility retained  = benign sequences whose every call was allowed without approval
attacks intercepted = attacked sequences in which a call of the injection goal was denied
                      or approval-gated before it ran
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from typing import Any

from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suite

SUITES = ["workspace", "travel", "banking", "slack"]
BENCHMARK_VERSION = "v1.2"

# The shipped templates and their parameters: no per-task rule.
POLICIES = [
    ("sessions: rule of two", "rule-of-two", {"sensitive_by_default": True}),
    ("sessions: labels", "label-sensitive-reads", {}),
    ("sessions: no send after a secret", "no-send-after-secret", {}),
    ("sessions: instructed values", "instructed-values", {}),
]


class Api:
    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.headers: dict[str, str] = {}

    def call(self, method: str, path: str, body: Any = None, expect: int = 200, headers: dict[str, str] | None = None) -> Any:
        data = None if body is None else json.dumps(body, default=str).encode()
        req = urllib.request.Request(f"{self.base}{path}", data=data, method=method)
        req.add_header("Content-Type", "application/json")
        for k, v in {**self.headers, **(headers or {})}.items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, text = resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        if status != expect:
            raise SystemExit(f"{method} {path}: {status}, expected {expect}: {text[:500]}")
        return json.loads(text) if text else None


class Pipeline:
    """Stands in for AgentDojo's target pipeline: the attacks only read its name, which
    names the model they address ("GPT-4")."""

    name = "gpt-4o-2024-05-13"


def setup(api: Api, admin_key: str, password: str) -> None:
    name = f"agentdojo-{time.time_ns()}"
    email = f"{name}@agentgov.test"
    tenant = {"name": name, "admin_email": email, "admin_password": password}
    created = api.call("POST", "/api/v1/tenants", tenant, 201, {"X-Admin-Key": admin_key})
    login = api.call("POST", "/api/v1/auth/login", {"email": email, "password": password})
    for name, template, parameters in POLICIES:
        body = {"name": name, "template": {"id": template, "parameters": parameters}}
        api.call("POST", "/api/v1/policies", body, 201, {"Authorization": f"Bearer {login['access_token']}"})
    api.headers["X-API-Key"] = created["api_key"]


def context_of(args: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments as the check's context (JSON, long texts cut to stay in 16 KiB)."""
    out = json.loads(json.dumps(args, default=str))
    return {k: (v[:2000] if isinstance(v, str) else v) for k, v in out.items()}


class Session:
    def __init__(self, api: Api, agent: str, session: str) -> None:
        self.api, self.agent, self.session = api, agent, session
        self.observed: list[dict[str, Any]] = []

    def check(self, suite: str, call: Any) -> dict[str, Any]:
        body = {
            "agent_id": self.agent,
            "action": call.function,
            "resource": f"{suite}/{call.function}",
            "context": context_of(dict(call.args)),
            "session_id": self.session,
        }
        return self.api.call("POST", "/api/v1/policies/check", body)

    def ask(self, prompt: str) -> dict[str, Any]:
        """The user's own request, observed as trusted content."""
        body = {"agent_id": self.agent, "content": prompt, "source": "user", "trusted": True}
        return self.api.call("POST", f"/api/v1/sessions/{self.session}/observe", body)

    def observe(self, call: Any, output: str) -> dict[str, Any]:
        body = {"agent_id": self.agent, "content": output or "(empty)", "source": call.function}
        seen = self.api.call("POST", f"/api/v1/sessions/{self.session}/observe", body)
        self.observed.append(seen)
        return seen


def run(runtime: FunctionsRuntime, env: Any, call: Any) -> str:
    result, error = runtime.run_function(env, call.function, call.args)
    return tool_result_to_str(result) if error is None else f"error: {error}"


_INJECTED_AT: dict[tuple[str, str], int | None] = {}


def injected_at(suite: Any, runtime: FunctionsRuntime, ut: Any) -> int | None:
    """The index of the user task's first call whose result carries an injection vector
    (found as AgentDojo finds its injection candidates: with a canary in every vector)."""
    key = (suite.name, ut.ID)
    if key not in _INJECTED_AT:
        canaries = {v: f"<CANARY---{v}--->" for v in suite.get_injection_vector_defaults()}
        env = suite.load_and_inject_default_environment(canaries)
        found = None
        for i, call in enumerate(ut.ground_truth(env.model_copy(deep=True))):
            if any(c in run(runtime, env, call) for c in canaries.values()):
                found = i
                break
        _INJECTED_AT[key] = found
    return _INJECTED_AT[key]


def bench(api: Api, suites: list[str], attacks: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {"suites": {}, "benchmark_version": BENCHMARK_VERSION, "attacks": attacks}
    for suite_name in suites:
        suite = get_suite(BENCHMARK_VERSION, suite_name)
        runtime = FunctionsRuntime(suite.tools)
        agent = api.call("POST", "/api/v1/agents/register", {"name": f"agentdojo-{suite_name}", "type": "llm", "capabilities": [t.name for t in suite.tools], "permissions": {}}, 201)["id"]
        row: dict[str, Any] = defaultdict(int)
        row["flagged_benign_results"] = 0
        misses: list[str] = []
        gated_benign: list[str] = []
        for ut_id, ut in suite.user_tasks.items():
            env = suite.load_and_inject_default_environment({})
            calls = ut.ground_truth(env.model_copy(deep=True))
            s = Session(api, agent, f"benign-{suite_name}-{ut_id}")
            s.ask(ut.PROMPT)
            ok = True
            for call in calls:
                answer = s.check(suite_name, call)
                if not answer["allowed"]:
                    ok = False
                    gated_benign.append(f"{ut_id}: {call.function}: {answer['reason']}")
                    break
                seen = s.observe(call, run(runtime, env, call))
                row["flagged_benign_results"] += int(seen["flagged"])
            row["benign"] += 1
            row["benign_allowed"] += int(ok)
        for attack_name in attacks:
            attack = load_attack(attack_name, suite, Pipeline())  # type: ignore[arg-type]
            for it_id, it in suite.injection_tasks.items():
                goal_calls_default = it.ground_truth(suite.load_and_inject_default_environment({}))
                if not goal_calls_default:
                    row["pairs_without_goal_calls"] += len(suite.user_tasks)
                    continue
                for ut_id, ut in suite.user_tasks.items():
                    at = injected_at(suite, runtime, ut)
                    if at is None:
                        row["pairs_not_injected"] += 1
                        continue
                    injections = attack.attack(ut, it)
                    env = suite.load_and_inject_default_environment(injections)
                    calls = ut.ground_truth(env.model_copy(deep=True))
                    s = Session(api, agent, f"{attack_name}-{suite_name}-{ut_id}-{it_id}")
                    s.ask(ut.PROMPT)
                    injected = False
                    for i, call in enumerate(calls[: at + 1]):
                        answer = s.check(suite_name, call)
                        if not answer["allowed"]:
                            row["user_calls_gated_before_injection"] += 1
                            break
                        s.observe(call, run(runtime, env, call))
                        injected = i == at
                    if not injected:
                        row["pairs_not_injected"] += 1
                        continue
                    row["attacked"] += 1
                    row[f"attacked:{attack_name}"] += 1
                    intercepted = False
                    for call in it.ground_truth(env.model_copy(deep=True)):
                        answer = s.check(suite_name, call)
                        if not answer["allowed"]:
                            intercepted = True
                            break
                        s.observe(call, run(runtime, env, call))
                    row["intercepted"] += int(intercepted)
                    row[f"intercepted:{attack_name}"] += int(intercepted)
                    if not intercepted:
                        flagged = [o for o in s.observed if o["flagged"]]
                        row[f"missed_unflagged:{attack_name}"] += int(not flagged)
                    if not intercepted and len(misses) < 10:
                        misses.append(f"{attack_name} {ut_id} {it_id}")
        row = dict(row)
        row["utility_retained"] = row["benign_allowed"] / row["benign"] if row["benign"] else 0.0
        row["attacks_intercepted"] = row["intercepted"] / row["attacked"] if row.get("attacked") else 0.0
        row["misses"] = misses
        row["gated_benign"] = gated_benign[:10]
        report["suites"][suite_name] = row
        print(json.dumps({suite_name: row}), file=sys.stderr, flush=True)
    total: Counter[str] = Counter()
    for row in report["suites"].values():
        for k, v in row.items():
            if isinstance(v, int) and k.split(":")[0] in ("benign", "benign_allowed", "attacked", "intercepted", "missed_unflagged"):
                total[k] += v
    report["overall"] = {
        **total,
        "utility_retained": total["benign_allowed"] / total["benign"] if total["benign"] else 0.0,
        "attacks_intercepted": total["intercepted"] / total["attacked"] if total["attacked"] else 0.0,
        "by_attack": {
            a: round(total[f"intercepted:{a}"] / total[f"attacked:{a}"], 4) for a in attacks if total[f"attacked:{a}"]
        },
    }
    return report


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True)
    p.add_argument("--admin-key", required=True)
    p.add_argument("--password", default="agentdojo-bench-password-1")
    p.add_argument("--suite", action="append", choices=SUITES)
    p.add_argument("--attack", action="append")
    p.add_argument("--out", help="write the whole report (JSON) here")
    a = p.parse_args()
    api = Api(a.url)
    setup(api, a.admin_key, a.password)
    report = bench(api, a.suite or SUITES, a.attack or ["important_instructions"])
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=2)
    print_table(report)


def print_table(report: dict[str, Any]) -> None:
    attacks = report["attacks"]
    print(f"AgentDojo {report['benchmark_version']} (agentdojo 0.1.35), no model in the loop")
    head = f"{'suite':<10} {'benign':>6} {'utility':>8} {'attacked':>8} {'intercepted':>11}  " + "  ".join(f"{a[:14]:>14}" for a in attacks)
    print(head)
    rows = list(report["suites"].items()) + [("overall", report["overall"])]
    for name, row in rows:
        per = []
        for a in attacks:
            n = row.get(f"attacked:{a}", 0)
            per.append(f"{row.get(f'intercepted:{a}', 0) / n:>14.3f}" if n else f"{'-':>14}")
        print(
            f"{name:<10} {row.get('benign', 0):>6} {row['utility_retained']:>8.3f} {row.get('attacked', 0):>8} "
            f"{row['attacks_intercepted']:>11.3f}  " + "  ".join(per)
        )


if __name__ == "__main__":
    main()
