"""What indexing audit records by session costs SQLite, alone (BENCHMARKS.md, "Sessions on
and off"): 200,000 records of ~1 KB appended in transactions of 64 (as the audit writer's
group commit does under load), WAL with synchronous = FULL, into a table with the partial
index `(tenant_id, session_id, seq) WHERE session_id IS NOT NULL` of
migrations/sqlite/2026-11-29-000001_audit_sessions: records with no session, all in one
session, and spread over 4,096 sessions. Prints the process CPU per record of each, twice.

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


def run(sessions: int, n: int = 200_000, batch: int = 64) -> None:
    """Appends `n` records in `sessions` sessions (0: none) and prints the CPU per record."""
    path = f"/tmp/idx-{sessions}.db"
    remove(path)
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("pragma journal_mode=wal")
    c.execute("pragma synchronous=full")
    c.execute(
        "create table r (id text primary key, tenant_id text not null, seq integer not null,"
        " session_id text, details text not null, unique (tenant_id, seq))"
    )
    c.execute("create index r_s on r (tenant_id, session_id, seq) where session_id is not null")
    tenant, details = str(uuid.uuid4()), "x" * 900
    ids = [None if sessions == 0 else f"bench-session-{random.randrange(sessions)}" for _ in range(n)]
    start, wall = time.process_time(), time.time()
    for i in range(0, n, batch):
        rows = [(str(uuid.uuid4()), tenant, j + 1, ids[j], details) for j in range(i, min(n, i + batch))]
        c.execute("begin immediate")
        c.executemany("insert into r values (?, ?, ?, ?, ?)", rows)
        c.execute("commit")
    cpu = time.process_time() - start
    print(f"sessions={sessions}: cpu {cpu:.2f}s wall {time.time() - wall:.2f}s -> {cpu / n * 1e6:.1f} us cpu/record")
    c.close()
    remove(path)


if __name__ == "__main__":
    for s in [0, 1, 4096, 0, 1, 4096]:
        run(s)
