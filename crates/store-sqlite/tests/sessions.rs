//! The session index on SQLite (`session_index.rs`): written in each append's transaction,
//! or kept in memory and written in bulk, a session's records are found alike, before,
//! during and after a flush, after the store reopens, and after a flush a crash cut short.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::path::Path;
use std::time::Duration;

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{AuditEntry, AuditFilter, AuditRecord, AuditScan, SeqOrder};
use agentgov_domain::ports::AuditRepo as _;
use agentgov_store_conformance::fixtures::{new_entry, now, seed_pair};
use agentgov_store_sqlite::{Indexing, SqliteStore};
use diesel::sql_types::BigInt;
use diesel::{Connection, QueryableByName, RunQueryDsl, SqliteConnection, sql_query};
use tempfile::TempDir;

const SESSIONS: [&str; 4] = ["s0", "s1", "s2", "a session id with spaces / and ünïcode"];

/// The `i`-th entry: in one of [`SESSIONS`] or none, allowed or denied.
fn entry(tenant: TenantId, i: usize) -> AuditEntry {
    let mut e = new_entry(tenant, "policy.decision", now());
    e.session_id = (i % 5 != 4).then(|| SESSIONS[(i * 7 / 3) % SESSIONS.len()].to_owned());
    e.decision = Some(if i.is_multiple_of(3) { "deny" } else { "allow" }.to_owned());
    e
}

/// Appends `n` entries in batches of 1 to 9.
async fn append(store: &SqliteStore, tenant: TenantId, from: usize, n: usize) {
    let mut i = from;
    while i < from + n {
        let k = (1 + i % 9).min(from + n - i);
        store.append_audit((i..i + k).map(|j| entry(tenant, j)).collect()).await.unwrap();
        i += k;
    }
}

/// What a scan must answer: every record of the tenant, filtered and paged in memory.
async fn expected(store: &SqliteStore, tenant: TenantId, filter: &AuditFilter, scan: AuditScan) -> Vec<i64> {
    let all = AuditScan { order: SeqOrder::Asc, after_seq: None, limit: u32::MAX };
    let records: Vec<AuditRecord> = store.scan_audit(tenant, &AuditFilter::default(), all).await.unwrap();
    let mut seqs: Vec<i64> = records.iter().filter(|r| filter.matches(r)).map(|r| r.seq).collect();
    if scan.order == SeqOrder::Desc {
        seqs.reverse();
    }
    let after = |s: &i64| match (scan.order, scan.after_seq) {
        (_, None) => true,
        (SeqOrder::Asc, Some(a)) => *s > a,
        (SeqOrder::Desc, Some(a)) => *s < a,
    };
    seqs.into_iter().filter(after).take(scan.limit as usize).collect()
}

/// Every kind of session scan the store answers, against [`expected`].
async fn scans_agree(store: &SqliteStore, tenant: TenantId, what: &str) {
    let session = |s: &str| AuditFilter { session_id: Some(s.to_owned()), ..AuditFilter::default() };
    let mut filters: Vec<AuditFilter> = SESSIONS.iter().map(|s| session(s)).collect();
    filters.push(AuditFilter { decision: Some("deny".into()), ..session("s1") });
    filters.push(AuditFilter { min_seq: Some(20), max_seq: Some(900), ..session("s2") });
    filters.push(AuditFilter { min_seq: Some(700), decision: Some("allow".into()), ..session("s0") });
    filters.push(session("no such session"));
    for filter in &filters {
        for order in [SeqOrder::Asc, SeqOrder::Desc] {
            for after_seq in [None, Some(50), Some(800)] {
                for limit in [7, 10_000] {
                    let scan = AuditScan { order, after_seq, limit };
                    let want = expected(store, tenant, filter, scan).await;
                    let records = store.scan_audit(tenant, filter, scan).await.unwrap();
                    let got: Vec<i64> = records.iter().map(|r| r.seq).collect();
                    assert_eq!(got, want, "{what}: scan_audit {filter:?} {scan:?}");
                    let seqs = store.scan_audit_seqs(tenant, filter, scan).await.unwrap();
                    assert_eq!(seqs, want, "{what}: scan_audit_seqs {filter:?} {scan:?}");
                }
            }
        }
        let all = AuditScan { order: SeqOrder::Asc, after_seq: None, limit: u32::MAX };
        let count = expected(store, tenant, filter, all).await.len() as u64;
        assert_eq!(store.count_audit(tenant, filter).await.unwrap(), count, "{what}: count_audit {filter:?}");
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

fn count(path: &Path, sql: &str) -> i64 {
    let mut c = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    sql_query("PRAGMA busy_timeout = 5000").execute(&mut c).unwrap();
    sql_query(sql).get_result::<Count>(&mut c).unwrap().n
}

fn indexed(path: &Path) -> i64 {
    count(path, "SELECT count(*) AS n FROM audit_session_seqs")
}

/// Waits until the table holds `n` entries (a deferred flush runs as a task of its own).
async fn wait_indexed(path: &Path, n: i64) {
    for _ in 0..500 {
        if indexed(path) == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(indexed(path), n, "entries in audit_session_seqs");
}

const IN_SESSIONS: &str = "SELECT count(*) AS n FROM audit_records WHERE session_id IS NOT NULL";
/// Tenants whose mark is not at their head.
const BEHIND: &str = "SELECT count(*) AS n FROM audit_heads h LEFT JOIN audit_session_indexed i \
                      ON i.tenant_id = h.tenant_id WHERE i.seq IS NULL OR i.seq <> h.seq";

#[tokio::test]
async fn a_sessions_records_are_found_alike_however_the_index_is_written() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("agentgov.db");
    let deferred = Indexing::Deferred { flush_at: 64 };

    let store = SqliteStore::open_with(&path, deferred).unwrap();
    let (tenant, _) = seed_pair(&store, "sessions").await;
    let (other, _) = seed_pair(&store, "other").await;
    // Under the flush threshold: every entry is in memory only.
    append(&store, tenant.id, 0, 40).await;
    assert_eq!(indexed(&path), 0);
    scans_agree(&store, tenant.id, "deferred, nothing flushed").await;
    // Past it, flushes run while appends and reads go on; more than a page of candidates
    // (500) per session, in two tenants.
    append(&store, other.id, 0, 30).await;
    append(&store, tenant.id, 40, 1_400).await;
    scans_agree(&store, tenant.id, "deferred, flushing").await;
    scans_agree(&store, other.id, "deferred, other tenant").await;
    // Reopened: the entries no flush wrote come back from the records past the marks.
    assert!(indexed(&path) > 0, "nothing flushed");
    drop(store);
    let store = SqliteStore::open_with(&path, deferred).unwrap();
    scans_agree(&store, tenant.id, "deferred, reopened").await;
    append(&store, tenant.id, 1_440, 100).await;
    scans_agree(&store, tenant.id, "deferred, reopened and appended").await;
    drop(store);

    // A flush a crash cut short: the marks behind, some entries past them written (read
    // back again on opening), others not.
    let mut c = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    sql_query("UPDATE audit_session_indexed SET seq = MIN(seq, 100)").execute(&mut c).unwrap();
    sql_query("DELETE FROM audit_session_seqs WHERE seq > 100 AND seq < 300 AND session_id = 's1'")
        .execute(&mut c)
        .unwrap();
    drop(c);
    let store = SqliteStore::open_with(&path, deferred).unwrap();
    scans_agree(&store, tenant.id, "deferred, after a cut-short flush").await;
    drop(store);

    // Immediate: opening writes what is missing, and each append its own entries.
    let store = SqliteStore::open(&path).unwrap();
    let sessions = count(&path, IN_SESSIONS);
    assert_eq!(indexed(&path), sessions, "opened immediate, every entry is written");
    scans_agree(&store, tenant.id, "immediate").await;
    append(&store, tenant.id, 1_540, 50).await;
    assert_eq!(indexed(&path), count(&path, IN_SESSIONS), "each append writes its entries");
    scans_agree(&store, tenant.id, "immediate, appended").await;
    scans_agree(&store, other.id, "immediate, other tenant").await;
    assert_eq!(count(&path, BEHIND), 0, "every mark at its tenant's head");
}

#[tokio::test]
async fn a_deferred_flush_writes_every_entry_once_and_moves_the_marks() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("agentgov.db");
    let store = SqliteStore::open_with(&path, Indexing::Deferred { flush_at: 100 }).unwrap();
    let (tenant, _) = seed_pair(&store, "flush").await;
    // Enough for slices of 2,048 entries to take several transactions.
    for from in (0..6_000).step_by(100) {
        store.append_audit((from..from + 100).map(|i| entry(tenant.id, i)).collect()).await.unwrap();
    }
    // The last flush began at or after the last append that crossed the threshold.
    wait_indexed(&path, count(&path, IN_SESSIONS)).await;
    assert_eq!(count(&path, BEHIND), 0, "every mark at its tenant's head");
    scans_agree(&store, tenant.id, "all flushed").await;
}
