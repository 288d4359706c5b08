"""The check with and without a session, in turns, on one release server in embedded mode
(BENCHMARKS.md, "Sessions on and off"): the bench's agent, its five templates and its check,
each side in a tenant of its own; `check` (no session), `one` (every request in one
session), `many` (each request in one of 4,096 sessions, `oha -Z`); oha at 64
connections; server CPU (user and system) and bytes written per request read from /proc, with the
CPU of the database's and Redis's processes and the machine's idle time per request. Faster to run than `cargo xtask
bench`, for trying a change to the session path.

    cargo build --release -p agentgov-server
    python3 lab/experiments/sessions_in_turns.py            # N=50000 ROUNDS=3 SIDES=check,one,many

    # on Postgres: a fresh database, migrated first
    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/sessions WEBHOOK_SECRET=<32+ characters>
    AGENTGOV_JWT_SECRET=<32+ characters> agentgov migrate && python3 lab/experiments/sessions_in_turns.py
    # production mode: the same with REDIS_URL=redis://127.0.0.1:6379 (sessions marked in Redis)

    CALLGRIND=/tmp/cg N=3000 WARM=12000 CONC=8 python3 lab/experiments/sessions_in_turns.py
        # the server under valgrind's callgrind, one dump per side (/tmp/cg/cg.<pid>.<n>):
        # instructions per check, e.g. `callgrind_annotate /tmp/cg/cg.<pid>.2`

BIN (default $CARGO_TARGET_DIR/release/agentgov), N, ROUNDS, SIDES, WARM (warm-up requests
a side), CONC (connections, default 64) set the run; SESSION_POLICY=<template id> (e.g.
rule-of-two) adds a template that reads the session to every side's five. Standard library and oha only (and
valgrind for CALLGRIND); talks to 127.0.0.1 only; writes its bodies to /tmp/agentgov-sessions-*.
"""
import json, os, subprocess, sys, tempfile, time, urllib.request, random, socket
BIN = os.environ.get("BIN", os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "agentgov"))
N = int(os.environ.get("N", "50000")); ROUNDS = int(os.environ.get("ROUNDS", "3"))
SIDES = os.environ.get("SIDES", "check,one,many").split(",")
def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
P = port(); base = f"http://127.0.0.1:{P}"; admin = "bench-admin-key-0123456789abcdef0123456789"
d = tempfile.mkdtemp()
env = {**{k: v for k, v in os.environ.items() if not k.startswith("AGENTGOV")}, "AGENTGOV_DATA_DIR": d, "AGENTGOV_BIND": f"127.0.0.1:{P}",
       "AGENTGOV_ADMIN_KEY": admin, "AGENTGOV_LOG_LEVEL": "warn", "AGENTGOV_JWT_SECRET": "bench-jwt-secret-0123456789abcdef0123456789"}
CG = os.environ.get("CALLGRIND")
cmd = [BIN, "serve"]
if CG:
    # Instructions, not seconds: the same count for the same binary and requests whatever
    # else the machine does. Instrumented only while each side runs, dumped per side.
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={CG}/cg.%p"] + cmd
srv = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "server.log"), "w"))
def call(method, path, body=None, headers={}):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(), method=method)
    req.add_header("Content-Type", "application/json")
    for k, v in headers.items(): req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=30) as r: return json.loads(r.read() or b"null")
for _ in range(1200):
    try: call("GET", "/health"); break
    except Exception: time.sleep(0.1)
POLICIES = [("a", "deny-destructive-production", {}), ("b", "require-consent-personal-data", {"effect": "approval"}),
    ("c", "approval-above-risk", {"threshold": 0.6}), ("d", "capability-scope", {}),
    ("e", "business-hours", {"timezone": "UTC", "start_hour": 0, "end_hour": 24, "days": ["Monday","Tuesday","Wednesday","Thursday","Friday","Saturday","Sunday"]})]
if os.environ.get("SESSION_POLICY"):
    # A sixth policy that reads the session (every side has it, the plain check too): without
    # one, a check of a session reads no session state at all (docs/policies.md "Sessions").
    POLICIES.append(("f", os.environ["SESSION_POLICY"], {}))
def tenant(name):
    email = f"{name}@agentgov.test"
    t = call("POST", "/api/v1/tenants", {"name": name, "admin_email": email, "admin_password": "bench-password-1234"}, {"X-Admin-Key": admin})
    tok = call("POST", "/api/v1/auth/login", {"email": email, "password": "bench-password-1234"})["access_token"]
    key = t["api_key"]
    agent = call("POST", "/api/v1/agents/register", {"name": "support-refunds", "type": "support", "description": "Answers customers' questions about their orders and refunds damaged items through Stripe.", "capabilities": ["read", "refund charge", "lookup order"], "permissions": {"orders": "read", "stripe.refunds": "write"}}, {"X-API-Key": key})["id"]
    for n, tpl, params in POLICIES:
        call("POST", "/api/v1/policies", {"name": n, "template": {"id": tpl, "parameters": params}}, {"Authorization": f"Bearer {tok}"})
    body = {"agent_id": agent, "action": "lookup order", "resource": "orders/42", "context": {"consent": True, "environment": "production", "ticket": "T-1042", "channel": "chat"}}
    return key, body
sides = {}
for side in SIDES:
    key, body = tenant(f"t-{side}")
    f = f"/tmp/agentgov-sessions-{os.getpid()}-{side}.jsonl"
    with open(f, "w") as out:
        if side == "check": out.write(json.dumps(body) + "\n")
        elif side == "one": out.write(json.dumps({**body, "session_id": "bench-session-1"}) + "\n")
        else:
            for i in range(4096): out.write(json.dumps({**body, "session_id": f"bench-session-{i}"}) + "\n")
    sides[side] = (key, f)
def cpu():
    """The server's (user, system) CPU seconds so far."""
    with open(f"/proc/{srv.pid}/stat") as s: parts = s.read().split(")")[1].split()
    return int(parts[11]) / os.sysconf("SC_CLK_TCK"), int(parts[12]) / os.sysconf("SC_CLK_TCK")
def io():
    """The server's bytes handed to write calls and its write calls so far."""
    with open(f"/proc/{srv.pid}/io") as s: v = dict(line.split(": ") for line in s.read().splitlines())
    return int(v["wchar"]), int(v["syscw"])
def others():
    """CPU seconds so far of the database (every `postgres` process) and of `redis-server`,
    and the machine's idle seconds (all cores)."""
    tick = os.sysconf("SC_CLK_TCK"); got = {"postgres": 0.0, "redis-server": 0.0}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as s: comm, rest = s.read().split("(", 1)[1].split(")", 1)
        except OSError: continue
        if comm in got: parts = rest.split(); got[comm] += (int(parts[11]) + int(parts[12])) / tick
    with open("/proc/stat") as s: idle = int(s.readline().split()[4]) / tick
    return got["postgres"], got["redis-server"], idle
def oha(side, n):
    key, f = sides[side]
    c0, w0, o0 = cpu(), io(), others()
    out = subprocess.run(["oha", "-n", str(n), "-c", os.environ.get("CONC", "64"), "--no-tui", "--output-format", "json", "-m", "POST", "-H", f"X-API-Key: {key}", "-H", "Content-Type: application/json", "-Z", f, f"{base}/api/v1/policies/check"], capture_output=True, text=True)
    c1, w1, o1 = cpu(), io(), others()
    r = json.loads(out.stdout)
    us = ((c1[0] - c0[0]) / n * 1e6, (c1[1] - c0[1]) / n * 1e6, (w1[0] - w0[0]) / n, (w1[1] - w0[1]) / n,
          *((b - a) / n * 1e6 for a, b in zip(o0, o1)))
    return r["summary"]["requestsPerSec"], r["latencyPercentiles"]["p99"] * 1000, us, r.get("statusCodeDistribution")
for side in SIDES: oha(side, int(os.environ.get("WARM", "5000")))  # warm up
if os.environ.get("DATABASE_URL"):
    # The tables' statistics as a running deployment's autovacuum keeps them: planned on the
    # empty tables' of the fresh database, a session's `seq` scan may filter the tenant's
    # (tenant_id, seq) index rather than take the session index (milliseconds a scan).
    subprocess.run(["psql", os.environ["DATABASE_URL"], "-qc", "ANALYZE"], check=True)
if CG:
    for side in SIDES:
        subprocess.run(["callgrind_control", "-i", "on", str(srv.pid)], capture_output=True)
        rps, p99, us, codes = oha(side, N)
        subprocess.run(["callgrind_control", "-i", "off", str(srv.pid)], capture_output=True)
        subprocess.run(["callgrind_control", "--dump=" + side, str(srv.pid)], capture_output=True)
        print(side, codes, flush=True)
    srv.terminate(); srv.wait()
    for _, f in sides.values(): os.remove(f)
    sys.exit(0)
res = {s: [] for s in SIDES}
for rnd in range(ROUNDS):
    # Each round starts one side later: no side always follows the same one (the store's
    # background work, a checkpoint or an autovacuum, lands on whichever side runs then).
    for side in SIDES[rnd % len(SIDES):] + SIDES[:rnd % len(SIDES)]:
        rps, p99, us, codes = oha(side, N)
        res[side].append((rps, p99, us))
        print(f"round {rnd} {side:6} {rps:8.0f}/s p99 {p99:6.1f} ms  server CPU {us[0] + us[1]:6.1f} µs/req "
              f"(user {us[0]:5.1f}, system {us[1]:5.1f}), written {us[2]:6.0f} B in {us[3]:4.1f} calls; "
              f"postgres {us[4]:5.1f} µs, redis {us[5]:4.1f} µs, idle {us[6]:5.1f} µs {codes}", flush=True)
import statistics
for side in SIDES:
    m = statistics.median(r[0] for r in res[side])
    u, k, b, w, pg, rd, idle = (statistics.median(r[2][i] for r in res[side]) for i in range(7))
    print(f"median {side:6} {m:8.0f}/s  cpu {u + k:6.1f} µs (user {u:5.1f}, system {k:5.1f}), {b:6.0f} B in {w:4.1f} writes, "
          f"postgres {pg:5.1f} µs, redis {rd:4.1f} µs, idle {idle:5.1f} µs  ratio {m / statistics.median(r[0] for r in res['check']):.3f}" if "check" in res else f"median {side} {m}")
if os.environ.get("HOLD"):
    print("holding for profiling, pid", srv.pid, flush=True); time.sleep(float(os.environ["HOLD"]))
srv.terminate(); srv.wait()
for _, f in sides.values(): os.remove(f)
import shutil; shutil.rmtree(d, ignore_errors=True)
