"""What finding audit records by session costs SQLite, alone (BENCHMARKS.md, "Sessions on
and off"): 200,000 records of ~1.5 KB appended in transactions of 64 (as the audit writer's
group commit does under load), WAL with synchronous = FULL, records with no session, all
in one session, and spread over 4,096 sessions, three ways:

- `none`: no way to find a session's records;
- `index`: the partial index `(tenant_id, session_id, seq) WHERE session_id IS NOT NULL`
  of migrations/sqlite/2026-11-29-000001_audit_sessions, written by each commit;
- `bulk`: the table `audit_session_seqs` of migrations/sqlite/2026-12-01-000001_audit_session_seqs,
  written as crates/store-sqlite/src/session_index.rs does for the embedded server: the
  entries kept after each commit and written every 65,536 records, sorted, in transactions
  of 2,048.

Prints the process CPU (user and system) per record of each, twice, and the longest
transaction of a bulk write.

    python3 lab/experiments/sqlite_session_index.py

Standard library only; writes and removes /tmp/idx-*.db.
"""
import os
import random
import sqlite3
import time
import uuid


def remove(path: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass


def run(way: str, sessions: int, n: int = 200_000, batch: int = 64, flush_at: int = 65_536, slice_: int = 2_048) -> None:
    """Appends `n` records in `sessions` sessions (0: none) and prints the CPU per record."""
    path = f"/tmp/idx-{way}-{sessions}.db"
    remove(path)
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("pragma journal_mode=wal")
    c.execute("pragma synchronous=full")
    c.execute(
        "create table r (id text primary key, tenant_id text not null, seq integer not null,"
        " session_id text, details text not null, unique (tenant_id, seq))"
    )
    if way == "index":
        c.execute("create index r_s on r (tenant_id, session_id, seq) where session_id is not null")
    c.execute(
        "create table s (tenant_id text not null, session_id text not null, seq integer not null,"
        " primary key (tenant_id, session_id, seq)) without rowid"
    )
    tenant, details = str(uuid.uuid4()), "x" * 1500
    ids = [None if sessions == 0 else f"bench-session-{random.randrange(sessions)}" for _ in range(n)]
    tail, appended, longest = [], 0, 0.0
    start, wall = os.times(), time.time()
    for i in range(0, n, batch):
        rows = [(str(uuid.uuid4()), tenant, j + 1, ids[j], details) for j in range(i, min(n, i + batch))]
        c.execute("begin immediate")
        c.executemany("insert into r values (?, ?, ?, ?, ?)", rows)
        c.execute("commit")
        if way != "bulk":
            continue
        tail += [(tenant, r[3], r[2]) for r in rows if r[3] is not None]
        appended += len(rows)
        if appended >= flush_at:
            tail.sort()
            for k in range(0, len(tail), slice_):
                t = time.time()
                c.execute("begin immediate")
                c.executemany("insert or ignore into s values (?, ?, ?)", tail[k : k + slice_])
                c.execute("commit")
                longest = max(longest, time.time() - t)
            tail, appended = [], 0
    end = os.times()
    user, system = (end.user - start.user) / n * 1e6, (end.system - start.system) / n * 1e6
    print(
        f"{way:5} sessions={sessions:4}: user {user:5.1f} + system {system:5.1f} = {user + system:5.1f} us cpu/record,"
        f" wall {time.time() - wall:5.1f}s" + (f", longest bulk transaction {longest * 1000:.1f} ms" if way == "bulk" else ""),
        flush=True,
    )
    c.close()
    remove(path)


if __name__ == "__main__":
    for _ in range(2):
        for way, s in [("none", 0), ("index", 1), ("index", 4096), ("bulk", 1), ("bulk", 4096)]:
            run(way, s)
