//! The audit log on SQLite: tampering made evident by the hash chain, the append-only
//! triggers, concurrent appends, and the query plans of keyset scans.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{AuditFilter, AuditRecord, AuditScan, ChainFault, ChainVerification, SeqOrder};
use agentgov_domain::ports::AuditRepo as _;
use agentgov_domain::services::audit::verify_chain;
use agentgov_store_conformance::fixtures::{new_entry, now, precise, seed_pair};
use agentgov_store_sqlite::{CheckpointMode, SqliteStore, WalState};
use diesel::sql_types::{Integer, Text};
use diesel::{Connection, QueryableByName, RunQueryDsl, SqliteConnection, sql_query};
use tempfile::TempDir;

struct Fixture {
    store: Arc<SqliteStore>,
    path: PathBuf,
    _dir: TempDir,
}

fn open() -> Fixture {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("agentgov.db");
    let store = Arc::new(SqliteStore::open(&path).unwrap());
    Fixture { store, path, _dir: dir }
}

/// A second connection to the same file, as someone with shell access to it would have.
fn raw(path: &Path) -> SqliteConnection {
    let mut c = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    sql_query("PRAGMA busy_timeout = 5000").execute(&mut c).unwrap();
    c
}

async fn append_n(store: &SqliteStore, tenant: TenantId, n: usize) -> Vec<AuditRecord> {
    let entries = (0..n).map(|i| new_entry(tenant, &format!("agent.action{}", i % 3), now())).collect();
    store.append_audit(entries).await.unwrap()
}

async fn verify(store: &SqliteStore, tenant: TenantId) -> ChainVerification {
    verify_chain(store, tenant, None, None, 1000).await.unwrap()
}

async fn verify_paged(store: &SqliteStore, tenant: TenantId) -> ChainVerification {
    verify_chain(store, tenant, None, None, 3).await.unwrap()
}

fn fault(v: &ChainVerification) -> (bool, Option<i64>, Option<ChainFault>) {
    (v.valid, v.first_invalid_seq, v.fault)
}

#[tokio::test]
async fn a_clean_log_verifies() {
    let f = open();
    let (tenant, _) = seed_pair(&*f.store, "clean").await;
    let records = append_n(&f.store, tenant.id, 20).await;
    assert_eq!(records.iter().map(|r| r.seq).collect::<Vec<_>>(), (1..=20).collect::<Vec<i64>>());
    for v in [verify(&f.store, tenant.id).await, verify_paged(&f.store, tenant.id).await] {
        assert_eq!(fault(&v), (true, None, None), "{v:?}");
        assert_eq!((v.checked, v.head_seq, v.head_hash), (20, 20, records[19].hash));
    }
}

/// Rows go in as statements of fixed sizes (64, 16, 4, 1) and heads are updated or created:
/// a batch of 150 across a tenant with a chain and one without keeps both chains whole.
#[tokio::test]
async fn a_large_batch_across_tenants_keeps_both_chains() {
    let f = open();
    let (old, _) = seed_pair(&*f.store, "old").await;
    let (new, _) = seed_pair(&*f.store, "new").await;
    append_n(&f.store, old.id, 3).await;
    let entries =
        (0..150).map(|i| new_entry(if i % 3 == 0 { new.id } else { old.id }, "agent.action", now())).collect();
    let records = f.store.append_audit(entries).await.unwrap();
    assert_eq!(records.len(), 150);
    let seqs = |t: TenantId| records.iter().filter(|r| r.tenant_id == t).map(|r| r.seq).collect::<Vec<_>>();
    assert_eq!(seqs(old.id), (4..=103).collect::<Vec<i64>>());
    assert_eq!(seqs(new.id), (1..=50).collect::<Vec<i64>>());
    for (tenant, head) in [(old.id, 103), (new.id, 50)] {
        let v = verify(&f.store, tenant).await;
        assert_eq!((fault(&v), v.head_seq), ((true, None, None), head), "{v:?}");
    }
    assert_eq!(append_n(&f.store, new.id, 1).await[0].seq, 51);
}

#[tokio::test]
async fn an_altered_record_is_named() {
    let f = open();
    let (tenant, _) = seed_pair(&*f.store, "altered").await;
    append_n(&f.store, tenant.id, 20).await;

    let mut c = raw(&f.path);
    sql_query("DROP TRIGGER audit_records_no_update").execute(&mut c).unwrap();
    let n = sql_query("UPDATE audit_records SET action = 'tampered' WHERE tenant_id = ? AND seq = 7")
        .bind::<Text, _>(tenant.id.to_string())
        .execute(&mut c)
        .unwrap();
    assert_eq!(n, 1);

    for v in [verify(&f.store, tenant.id).await, verify_paged(&f.store, tenant.id).await] {
        assert_eq!(fault(&v), (false, Some(7), Some(ChainFault::HashMismatch)), "{v:?}");
    }
}

#[tokio::test]
async fn removed_records_are_named() {
    let f = open();
    let (middle, _) = seed_pair(&*f.store, "middle").await;
    let (last, _) = seed_pair(&*f.store, "last").await;
    append_n(&f.store, middle.id, 20).await;
    append_n(&f.store, last.id, 20).await;

    let mut c = raw(&f.path);
    sql_query("DROP TRIGGER audit_records_no_delete").execute(&mut c).unwrap();
    let delete = |c: &mut SqliteConnection, tenant: TenantId, seq: i32| {
        sql_query("DELETE FROM audit_records WHERE tenant_id = ? AND seq = ?")
            .bind::<Text, _>(tenant.to_string())
            .bind::<Integer, _>(seq)
            .execute(c)
            .unwrap()
    };
    assert_eq!(delete(&mut c, middle.id, 5), 1);
    assert_eq!(delete(&mut c, last.id, 20), 1);

    for v in [verify(&f.store, middle.id).await, verify_paged(&f.store, middle.id).await] {
        assert_eq!(fault(&v), (false, Some(5), Some(ChainFault::Missing)), "{v:?}");
    }
    for v in [verify(&f.store, last.id).await, verify_paged(&f.store, last.id).await] {
        assert_eq!(fault(&v), (false, Some(20), Some(ChainFault::Missing)), "{v:?}");
        assert_eq!(v.head_seq, 20);
    }
}

#[tokio::test]
async fn the_triggers_refuse_updates_and_deletes() {
    let f = open();
    let (tenant, _) = seed_pair(&*f.store, "guarded").await;
    let records = append_n(&f.store, tenant.id, 3).await;

    let mut c = raw(&f.path);
    let attempts = [
        "UPDATE audit_records SET action = 'tampered' WHERE seq = 2",
        "UPDATE audit_records SET hash = prev_hash",
        "DELETE FROM audit_records WHERE seq = 3",
        "DELETE FROM audit_records",
    ];
    for sql in attempts {
        let err = sql_query(sql).execute(&mut c).unwrap_err();
        assert!(err.to_string().contains("audit_records is append-only"), "{sql}: {err}");
    }
    let scan = AuditScan { order: SeqOrder::Asc, after_seq: None, limit: 10 };
    assert_eq!(f.store.scan_audit(tenant.id, &AuditFilter::default(), scan).await.unwrap(), records);
    assert!(verify(&f.store, tenant.id).await.valid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_appends_make_gap_free_chains() {
    const TASKS: usize = 64;
    const APPENDS: usize = 50;
    let f = open();
    let (a, _) = seed_pair(&*f.store, "alpha").await;
    let (b, _) = seed_pair(&*f.store, "beta").await;

    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let store = f.store.clone();
        tasks.push(tokio::spawn(async move {
            let mut appended = [0usize; 2];
            for i in 0..APPENDS {
                let entries = if i % 10 == 9 {
                    // A batch interleaving both tenants, as the group-commit path sends.
                    vec![
                        new_entry(a.id, "batch.a", now()),
                        new_entry(b.id, "batch.b", now()),
                        new_entry(a.id, "batch.a", now()),
                        new_entry(b.id, "batch.b", now()),
                        new_entry(a.id, "batch.a", now()),
                    ]
                } else {
                    let tenant = if (task + i) % 2 == 0 { a.id } else { b.id };
                    vec![new_entry(tenant, "single", now())]
                };
                let ids: Vec<_> = entries.iter().map(|e| e.id).collect();
                let out = store.append_audit(entries).await.unwrap();
                assert_eq!(out.iter().map(|r| r.id).collect::<Vec<_>>(), ids);
                for r in &out {
                    appended[usize::from(r.tenant_id == b.id)] += 1;
                }
                // Within a batch, a tenant's entries take consecutive sequence numbers.
                let seqs_a: Vec<i64> = out.iter().filter(|r| r.tenant_id == a.id).map(|r| r.seq).collect();
                assert!(seqs_a.windows(2).all(|w| w[1] == w[0] + 1), "{seqs_a:?}");
            }
            appended
        }));
    }
    let mut totals = [0usize; 2];
    for task in tasks {
        let n = task.await.unwrap();
        totals[0] += n[0];
        totals[1] += n[1];
    }

    for (tenant, total) in [(a.id, totals[0]), (b.id, totals[1])] {
        let total = i64::try_from(total).unwrap();
        let scan = AuditScan { order: SeqOrder::Asc, after_seq: None, limit: 100_000 };
        let records = f.store.scan_audit(tenant, &AuditFilter::default(), scan).await.unwrap();
        assert_eq!(records.iter().map(|r| r.seq).collect::<Vec<_>>(), (1..=total).collect::<Vec<i64>>());
        assert!(records.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
        assert_eq!(f.store.audit_head(tenant).await.unwrap().unwrap().seq, total);
        let v = verify(&f.store, tenant).await;
        assert_eq!(fault(&v), (true, None, None), "{v:?}");
        assert_eq!(v.checked, u64::try_from(total).unwrap());
    }
    let batches = APPENDS / 10;
    assert_eq!(totals[0] + totals[1], TASKS * ((APPENDS - batches) + batches * 5));
}

#[tokio::test]
async fn a_batch_with_an_unknown_tenant_writes_nothing() {
    let f = open();
    let (tenant, _) = seed_pair(&*f.store, "atomic").await;
    append_n(&f.store, tenant.id, 2).await;
    let orphan = TenantId(uuid::Uuid::now_v7());
    let batch = vec![new_entry(tenant.id, "x", now()), new_entry(orphan, "x", now())];
    let err = f.store.append_audit(batch).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(_)), "{err:?}");
    assert_eq!(f.store.audit_head(tenant.id).await.unwrap().unwrap().seq, 2);
    assert_eq!(f.store.count_audit(tenant.id, &AuditFilter::default()).await.unwrap(), 2);
    assert!(f.store.append_audit(Vec::new()).await.unwrap().is_empty());
}

#[derive(QueryableByName)]
struct PlanRow {
    #[diesel(sql_type = Text)]
    detail: String,
}

fn plan(c: &mut SqliteConnection, sql: &str) -> String {
    let rows: Vec<PlanRow> = sql_query(format!("EXPLAIN QUERY PLAN {sql}")).load(c).unwrap();
    rows.into_iter().map(|r| r.detail).collect::<Vec<_>>().join("; ")
}

/// The statements `scan_audit` sends for an export's keyset pages read the `(tenant_id,
/// seq)` index in order, without a sort, whatever else the filter narrows; those of a
/// session's records look each record up by `seq`.
#[tokio::test]
async fn keyset_scans_walk_the_tenant_seq_index() {
    let f = open();
    let (tenant, _) = seed_pair(&*f.store, "plans").await;
    append_n(&f.store, tenant.id, 50).await;
    let mut c = raw(&f.path);
    let cols = "SELECT id, seq FROM audit_records WHERE tenant_id = 't'";
    for (sql, index) in [
        (format!("{cols} AND seq > 10 ORDER BY seq LIMIT 1000"), "sqlite_autoindex_audit_records_2"),
        (format!("{cols} AND seq < 10 ORDER BY seq DESC LIMIT 1000"), "sqlite_autoindex_audit_records_2"),
        (
            format!("{cols} AND seq >= 1 AND seq <= 40 AND seq > 10 ORDER BY seq LIMIT 1000"),
            "sqlite_autoindex_audit_records_2",
        ),
        // An export's first page: `max_seq` is fixed to the head, `from`/`to` narrow.
        (
            format!("{cols} AND ts >= 5 AND ts < 9 AND seq <= 40 ORDER BY seq LIMIT 1000"),
            "sqlite_autoindex_audit_records_2",
        ),
        (
            format!("{cols} AND ts >= 5 AND ts < 9 AND seq <= 40 AND seq > 10 ORDER BY seq LIMIT 1000"),
            "sqlite_autoindex_audit_records_2",
        ),
        (format!("{cols} AND event_type = 'x' AND seq > 10 ORDER BY seq LIMIT 1000"), "audit_records_event_type_idx"),
        (format!("{cols} AND agent_id = 'x' AND seq > 10 ORDER BY seq LIMIT 1000"), "audit_records_agent_idx"),
        // A session's records: their `seq`s from the session index, then each looked up.
        (
            "SELECT seq FROM audit_session_seqs WHERE tenant_id = 't' AND session_id = 's' AND seq < 90 \
             ORDER BY seq DESC LIMIT 500"
                .to_owned(),
            "PRIMARY KEY (tenant_id=? AND session_id=? AND seq<?)",
        ),
        (
            format!("{cols} AND session_id = 's' AND seq IN (3, 7, 11) ORDER BY seq DESC LIMIT 1000"),
            "sqlite_autoindex_audit_records_2 (tenant_id=? AND seq=?)",
        ),
        (
            format!("{cols} AND session_id = 's' AND decision = 'deny' AND seq IN (3, 7, 11) ORDER BY seq LIMIT 2"),
            "sqlite_autoindex_audit_records_2 (tenant_id=? AND seq=?)",
        ),
    ] {
        let p = plan(&mut c, &sql);
        assert!(p.contains(index) && !p.contains("TEMP B-TREE"), "{sql}: {p}");
    }
}

/// Time bounds with nanoseconds compare as `AuditFilter::matches` does, though the store
/// keeps whole microseconds.
#[tokio::test]
async fn time_bounds_with_nanoseconds_match_the_filter() {
    let f = open();
    let (tenant, _) = seed_pair(&*f.store, "nanos").await;
    let at = precise(0, 5);
    let records = f.store.append_audit(vec![new_entry(tenant.id, "x", at)]).await.unwrap();
    let half = Duration::from_nanos(500);
    for (from, to) in [
        (Some(at), None),
        (Some(at + half), None),
        (Some(at - half), None),
        (None, Some(at)),
        (None, Some(at + half)),
        (None, Some(at - half)),
    ] {
        let filter = AuditFilter { from, to, ..AuditFilter::default() };
        let want = u64::from(filter.matches(&records[0]));
        assert_eq!(f.store.count_audit(tenant.id, &filter).await.unwrap(), want, "{filter:?}");
    }
}

/// A checkpoint that the store's checkpoint thread did not keep busy (one runs at a time).
async fn checkpoint(store: &SqliteStore, mode: CheckpointMode) -> WalState {
    for _ in 0..100 {
        let state = store.checkpoint(mode).await.unwrap();
        if state.busy == 0 {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("every checkpoint was busy for 2 s");
}

/// Commits never checkpoint (that would stall the appends waiting on them): the store's
/// checkpoint thread copies the WAL into the database file on its own, and once everything
/// is copied the next write starts the WAL over.
#[tokio::test]
async fn the_wal_is_checkpointed_off_the_commit_path_and_starts_over() {
    let f = open();
    let (tenant, _) = seed_pair(&*f.store, "wal").await;
    for _ in 0..20 {
        append_n(&f.store, tenant.id, 50).await;
    }
    let db_size = || std::fs::metadata(&f.path).unwrap().len();
    // The thread checkpoints once the writer pauses for 200 ms; give it up to 10 s on a
    // loaded machine.
    let before = db_size();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while db_size() <= before && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(db_size() > before, "the checkpoint thread copied nothing into the database file ({before} bytes)");

    let copied = checkpoint(&f.store, CheckpointMode::Passive).await;
    assert_eq!(copied.copied_pages, copied.wal_pages, "{copied:?}");
    append_n(&f.store, tenant.id, 1).await;
    let after = checkpoint(&f.store, CheckpointMode::Restart).await;
    assert!(after.wal_pages < copied.wal_pages, "the WAL did not start over: {copied:?} then {after:?}");
    assert_eq!(verify(&f.store, tenant.id).await.checked, 1001);
}
