"""Instructions per request of `GET /health` and `GET /auth/me` (a session JWT), counted by
valgrind's callgrind on a release server in embedded mode (issue 39's profile of the
authenticated request; `perf` has no hardware counters on this VM). Instrumented only while
each endpoint's N requests run (oha, 8 connections, after a warm-up of as many), one dump per
endpoint in CG:

    cargo build --release -p agentgov-server
    python3 lab/experiments/callgrind_auth_me.py          # N=2000 CG=/tmp/cgme
    callgrind_annotate --inclusive=no /tmp/cgme/cg.<pid>.2  # /auth/me; .1 is /health
    ENDPOINTS=audit N=4000 CG=/tmp/cga python3 lab/experiments/callgrind_auth_me.py
        # `POST /audit/log` with the bench's entry and an API key (ENDPOINTS: any of health, me, audit)

With TURNS=R it runs no valgrind and measures throughput instead: the endpoints at 64
connections, 5 s each, in R rounds whose order alternates, and prints each one's requests/s
per round and each endpoint's median ratio to the first (a fairer ratio than two runs taken
minutes apart, as `cargo xtask bench` takes them). With DATABASE_URL set (and
WEBHOOK_SECRET), the server runs on that Postgres database:

    TURNS=5 python3 lab/experiments/callgrind_auth_me.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/fresh WEBHOOK_SECRET=… TURNS=5 python3 lab/experiments/callgrind_auth_me.py

Counts do not depend on the machine's load. Under valgrind SHA-256 runs in software (the CPU's
SHA instructions are not offered), so it weighs far more here than natively. Standard library,
oha and valgrind only; talks to 127.0.0.1 only.
"""
import json, os, statistics, subprocess, sys, tempfile, time, urllib.request, socket
BIN = os.environ.get("BIN", os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "agentgov"))
def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
P = port(); base = f"http://127.0.0.1:{P}"; admin = "bench-admin-key-0123456789abcdef0123456789"
d = tempfile.mkdtemp()
env = {**{k: v for k, v in os.environ.items() if not k.startswith("AGENTGOV")}, "AGENTGOV_DATA_DIR": d, "AGENTGOV_BIND": f"127.0.0.1:{P}",
       "AGENTGOV_ADMIN_KEY": admin, "AGENTGOV_LOG_LEVEL": "warn", "AGENTGOV_JWT_SECRET": "bench-jwt-secret-0123456789abcdef0123456789"}
CG = os.environ.get("CG", "/tmp/cgme"); os.makedirs(CG, exist_ok=True)
TURNS = int(os.environ.get("TURNS", "0"))
VALGRIND = [] if TURNS else ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={CG}/cg.%p"]
srv = subprocess.Popen(VALGRIND + [BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "server.log"), "w"))
def call(method, path, body=None, headers={}):
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(), method=method)
    req.add_header("Content-Type", "application/json")
    for k, v in headers.items(): req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=60) as r: return json.loads(r.read() or b"null")
for _ in range(3000):
    try: call("GET", "/health"); break
    except Exception: time.sleep(0.1)
t = call("POST", "/api/v1/tenants", {"name": "t", "admin_email": "a@agentgov.test", "admin_password": "bench-password-1234"}, {"X-Admin-Key": admin})
tok = call("POST", "/api/v1/auth/login", {"email": "a@agentgov.test", "password": "bench-password-1234"})["access_token"]
N = int(os.environ.get("N", "2000"))
# The bench's audit entry (lab/src/bench/audit.rs ENTRY).
ENTRY = ('{"event_type":"app.action","agent_id":"0193a4c2-0000-7000-8000-000000000001","action":"read",'
         '"resource":"db/customers/42","decision":"allow","risk_score":0.2,"details":{"input":{"query":'
         '"SELECT name FROM customers WHERE id = 42"},"output":{"rows":1},"reasoning":["user asked for a '
         'customer name","read-only query"]}}')
ENDPOINTS = {
    "health": ("/api/v1/health", [], []),
    "me": ("/api/v1/auth/me", [f"Authorization: Bearer {tok}"], []),
    "audit": ("/api/v1/audit/log", [f"X-API-Key: {t['api_key']}", "Content-Type: application/json"], ["-m", "POST", "-d", ENTRY]),
}
def oha(path, headers, extra):
    args = ["oha", "-n", str(N), "-c", "8", "--no-tui", "--output-format", "json"] + extra
    for h in headers: args += ["-H", h]
    subprocess.run(args + [base + path], capture_output=True)
def rate(path, headers, extra, secs):
    args = ["oha", "-z", f"{secs}s", "-c", "64", "--no-tui", "--output-format", "json"] + extra
    for h in headers: args += ["-H", h]
    return json.loads(subprocess.run(args + [base + path], capture_output=True, text=True).stdout)["summary"]["requestsPerSec"]
names = os.environ.get("ENDPOINTS", "health,me").split(",")
if TURNS:
    for e in names: rate(*ENDPOINTS[e], 2)  # warm
    rates = {e: [] for e in names}
    for r in range(TURNS):
        for e in (names if r % 2 == 0 else names[::-1]): rates[e].append(rate(*ENDPOINTS[e], 5))
    for e in names:
        ratio = statistics.median(a / b for a, b in zip(rates[e], rates[names[0]]))
        print(e, [round(x) for x in rates[e]], f"median ratio to {names[0]} {ratio:.3f}")
    srv.terminate(); srv.wait(); sys.exit(0)
for path, headers, extra in (ENDPOINTS[e] for e in names):
    oha(path, headers, extra)  # warm
    subprocess.run(["callgrind_control", "-i", "on", str(srv.pid)], capture_output=True)
    oha(path, headers, extra)
    subprocess.run(["callgrind_control", "-i", "off", str(srv.pid)], capture_output=True)
    subprocess.run(["callgrind_control", "--dump=" + path.replace("/", "_"), str(srv.pid)], capture_output=True)
srv.terminate(); srv.wait()
print("done", CG)
