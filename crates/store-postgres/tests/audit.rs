//! Postgres-specific behaviour of the audit log and export jobs: tampering done behind the
//! store's back is caught by verification, the append-only trigger, appends from several
//! replicas at once, and concurrent claims of export jobs. The ports' behaviour in general
//! is pinned by the conformance suite (`conformance.rs`).
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

mod common;

use std::collections::HashSet;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{AuditId, TenantId};
use agentgov_domain::model::{
    Actor, ActorType, AuditEntry, AuditFilter, AuditRecord, AuditScan, ChainFault, ExportFormat, JobKind, JobView,
    JsonText, SeqOrder,
};
use agentgov_domain::ports::{AuditRepo, JobQueue};
use agentgov_domain::services::audit::verify_chain;
use agentgov_store_conformance::fixtures::{new_export_job, now, seed_pair};
use agentgov_store_postgres::PgStore;
use diesel::sql_query;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use uuid::Uuid;

use common::SchemaGuard;

/// A migrated store in a fresh schema and that schema's URL, or `None` (skip).
async fn store_and_url(max_connections: usize) -> Option<(PgStore, String, SchemaGuard)> {
    let (url, guard) = common::fresh_schema().await?;
    let store = PgStore::connect(&url, max_connections).await.unwrap();
    store.run_migrations().await.unwrap();
    Some((store, url, guard))
}

async fn raw(url: &str) -> AsyncPgConnection {
    AsyncPgConnection::establish(url).await.unwrap()
}

/// A raw connection on which triggers do not fire (the test user is a superuser), to
/// tamper with the log the way an attacker with database access could.
async fn tamperer(url: &str) -> AsyncPgConnection {
    let mut conn = raw(url).await;
    conn.batch_execute("SET session_replication_role = replica").await.unwrap();
    conn
}

fn entry(tenant: TenantId, n: usize) -> AuditEntry {
    AuditEntry {
        id: AuditId(Uuid::now_v7()),
        tenant_id: tenant,
        timestamp: now(),
        actor: Actor::new(ActorType::Agent, format!("agent-{}", n % 3)),
        event_type: if n.is_multiple_of(2) { "agent.action" } else { "policy.check" }.to_owned(),
        agent_id: Some(Uuid::from_u128(n as u128 % 4)),
        action: Some("read".to_owned()),
        resource: Some(format!("db/table-{n}")),
        decision: Some(if n.is_multiple_of(5) { "deny" } else { "allow" }.to_owned()),
        risk_score: Some(n as f64 / 100.0),
        details: JsonText::from_value(&serde_json::json!({"n": n, "input": {"q": "sélect *"}, "tags": ["a", "b"]})),
        session_id: None,
    }
}

async fn append_n(store: &PgStore, tenant: TenantId, n: usize) -> Vec<AuditRecord> {
    store.append_audit((0..n).map(|i| entry(tenant, i)).collect()).await.unwrap()
}

async fn exec(conn: &mut AsyncPgConnection, sql: String) -> diesel::QueryResult<usize> {
    sql_query(sql).execute(conn).await
}

#[tokio::test]
async fn a_clean_log_verifies() {
    let Some((store, _url, _guard)) = store_and_url(2).await else { return };
    let (t, _) = seed_pair(&store, "clean").await;
    let records = append_n(&store, t.id, 20).await;
    assert_eq!(records.iter().map(|r| r.seq).collect::<Vec<_>>(), (1..=20).collect::<Vec<i64>>());
    let v = verify_chain(&store, t.id, None, None, 1000).await.unwrap();
    assert!(v.valid, "{v:?}");
    assert_eq!((v.checked, v.head_seq, v.head_hash), (20, 20, records[19].hash));
    // Small pages and partial ranges walk the same chain.
    assert!(verify_chain(&store, t.id, Some(5), Some(17), 3).await.unwrap().valid);
}

#[tokio::test]
async fn an_altered_record_is_named() {
    let Some((store, url, _guard)) = store_and_url(2).await else { return };
    let (t, _) = seed_pair(&store, "altered").await;
    append_n(&store, t.id, 20).await;
    let mut conn = tamperer(&url).await;
    let changed = exec(
        &mut conn,
        format!("UPDATE audit_records SET action = 'tampered' WHERE tenant_id = '{}' AND seq = 7", t.id),
    )
    .await
    .unwrap();
    assert_eq!(changed, 1);

    let v = verify_chain(&store, t.id, None, None, 1000).await.unwrap();
    assert!(!v.valid);
    assert_eq!((v.first_invalid_seq, v.fault), (Some(7), Some(ChainFault::HashMismatch)), "{v:?}");
    // The details text is hashed verbatim: an equivalent re-serialisation is a change too.
    let (u, _) = seed_pair(&store, "reformatted").await;
    append_n(&store, u.id, 3).await;
    exec(
        &mut conn,
        format!("UPDATE audit_records SET details = details::jsonb::text WHERE tenant_id = '{}' AND seq = 2", u.id),
    )
    .await
    .unwrap();
    let v = verify_chain(&store, u.id, None, None, 1000).await.unwrap();
    assert_eq!((v.first_invalid_seq, v.fault), (Some(2), Some(ChainFault::HashMismatch)), "{v:?}");
}

#[tokio::test]
async fn removed_records_are_named() {
    let Some((store, url, _guard)) = store_and_url(2).await else { return };
    let (middle, _) = seed_pair(&store, "middle").await;
    let (last, _) = seed_pair(&store, "last").await;
    append_n(&store, middle.id, 10).await;
    append_n(&store, last.id, 10).await;
    let mut conn = tamperer(&url).await;

    exec(&mut conn, format!("DELETE FROM audit_records WHERE tenant_id = '{}' AND seq = 5", middle.id)).await.unwrap();
    let v = verify_chain(&store, middle.id, None, None, 1000).await.unwrap();
    assert_eq!((v.valid, v.first_invalid_seq, v.fault), (false, Some(5), Some(ChainFault::Missing)), "{v:?}");

    exec(&mut conn, format!("DELETE FROM audit_records WHERE tenant_id = '{}' AND seq = 10", last.id)).await.unwrap();
    let v = verify_chain(&store, last.id, None, None, 1000).await.unwrap();
    assert_eq!((v.valid, v.first_invalid_seq, v.fault), (false, Some(10), Some(ChainFault::Missing)), "{v:?}");
    assert_eq!(v.head_seq, 10, "the head still names the removed record");
}

#[tokio::test]
async fn the_trigger_keeps_the_log_append_only() {
    let Some((store, url, _guard)) = store_and_url(2).await else { return };
    let (t, _) = seed_pair(&store, "guarded").await;
    append_n(&store, t.id, 3).await;
    let mut conn = raw(&url).await;
    for sql in [
        format!("UPDATE audit_records SET action = 'x' WHERE tenant_id = '{}'", t.id),
        format!("DELETE FROM audit_records WHERE tenant_id = '{}' AND seq = 2", t.id),
        "TRUNCATE audit_records".to_owned(),
    ] {
        let err = exec(&mut conn, sql.clone()).await.unwrap_err();
        assert!(err.to_string().contains("append-only"), "{sql}: {err}");
    }
    assert_eq!(store.count_audit(t.id, &AuditFilter::default()).await.unwrap(), 3);
    assert!(verify_chain(&store, t.id, None, None, 1000).await.unwrap().valid);

    // The trigger named in the schema is the one to disable: with it off, changes go through.
    conn.batch_execute("ALTER TABLE audit_records DISABLE TRIGGER audit_records_append_only").await.unwrap();
    exec(&mut conn, format!("DELETE FROM audit_records WHERE tenant_id = '{}' AND seq = 2", t.id)).await.unwrap();
    conn.batch_execute("ALTER TABLE audit_records ENABLE TRIGGER audit_records_append_only").await.unwrap();
    let v = verify_chain(&store, t.id, None, None, 1000).await.unwrap();
    assert_eq!((v.first_invalid_seq, v.fault), (Some(2), Some(ChainFault::Missing)));
}

#[tokio::test]
async fn appends_for_a_missing_tenant_conflict() {
    let Some((store, _url, _guard)) = store_and_url(2).await else { return };
    let err = store.append_audit(vec![entry(TenantId(Uuid::now_v7()), 1)]).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(ref m) if m == "tenant does not exist"), "{err:?}");
    assert_eq!(store.append_audit(Vec::new()).await.unwrap(), Vec::new());
}

/// A replica appends onto the head it left in one statement; when another replica moved
/// the head since, that statement writes nothing and the locking path seals the batch onto
/// the real head.
#[tokio::test]
async fn an_append_after_another_replica_moved_the_head_chains_onto_it() {
    let Some((first, url, _guard)) = store_and_url(2).await else { return };
    let second = PgStore::connect(&url, 2).await.unwrap();
    let (t, _) = seed_pair(&first, "moved").await;
    let mut seqs = Vec::new();
    for (store, n) in [(&first, 2), (&first, 1), (&second, 3), (&first, 2), (&second, 1), (&second, 1), (&first, 1)] {
        seqs.extend(append_n(store, t.id, n).await.iter().map(|r| r.seq));
    }
    assert_eq!(seqs, (1..=11).collect::<Vec<_>>());
    let v = verify_chain(&second, t.id, None, None, 100).await.unwrap();
    assert!(v.valid && v.checked == 11, "{v:?}");
    let head = first.audit_head(t.id).await.unwrap().unwrap();
    assert_eq!(head.seq, 11);
}

/// Two replicas (two pools on one schema), 32 tasks each, appending single entries and
/// batches spanning two tenants: each tenant's chain comes out gap-free and valid.
/// The first appends for new tenants, from several replicas at once and in batches that
/// mix tenants: creating a tenant's head row while holding another's lock once let two
/// appends deadlock (Postgres aborted one; the writer's callers got errors).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn first_appends_of_new_tenants_do_not_deadlock() {
    let Some((first, url, _guard)) = store_and_url(4).await else { return };
    let replicas = [first.clone(), PgStore::connect(&url, 4).await.unwrap(), PgStore::connect(&url, 4).await.unwrap()];
    for round in 0..12 {
        let (a, _) = seed_pair(&first, &format!("new-a-{round}")).await;
        let (b, _) = seed_pair(&first, &format!("new-b-{round}")).await;
        let (a, b) = (a.id, b.id);
        let mut tasks = tokio::task::JoinSet::new();
        for (r, store) in replicas.iter().enumerate() {
            for task in 0..6 {
                let store = store.clone();
                tasks.spawn(async move {
                    let batch = match (r + task) % 3 {
                        0 => vec![entry(a, task)],
                        1 => vec![entry(b, task)],
                        _ => vec![entry(b, task), entry(a, task)],
                    };
                    store.append_audit(batch).await
                });
            }
        }
        let mut appended = 0;
        while let Some(done) = tasks.join_next().await {
            appended += done.unwrap().expect("append").len() as i64;
        }
        let heads = [first.audit_head(a).await.unwrap().unwrap().seq, first.audit_head(b).await.unwrap().unwrap().seq];
        assert_eq!(heads.iter().sum::<i64>(), appended, "round {round}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_appending_at_once_keep_each_chain_whole() {
    let Some((first, url, _guard)) = store_and_url(8).await else { return };
    let second = PgStore::connect(&url, 8).await.unwrap();
    let (a, _) = seed_pair(&first, "rep-a").await;
    let (b, _) = seed_pair(&first, "rep-b").await;
    let (a, b) = (a.id, b.id);
    const ROUNDS: usize = 4;

    let mut tasks = tokio::task::JoinSet::new();
    for store in [first.clone(), second.clone()] {
        for task in 0..32 {
            let store = store.clone();
            tasks.spawn(async move {
                for round in 0..ROUNDS {
                    let batch = match (task + round) % 3 {
                        0 => vec![entry(a, round)],
                        1 => vec![entry(b, round)],
                        // Tenants in both orders inside one batch: the head locks are still
                        // taken in one order, so no deadlock.
                        _ if task % 2 == 0 => vec![entry(a, 1), entry(b, 2), entry(a, 3)],
                        _ => vec![entry(b, 1), entry(a, 2), entry(b, 3)],
                    };
                    let n = batch.len();
                    let out = store.append_audit(batch).await.unwrap();
                    assert_eq!(out.len(), n);
                }
            });
        }
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }

    let mut total = 0;
    for t in [a, b] {
        let records = first
            .scan_audit(t, &AuditFilter::default(), AuditScan { order: SeqOrder::Asc, after_seq: None, limit: 100_000 })
            .await
            .unwrap();
        let n = records.len() as i64;
        assert_eq!(records.iter().map(|r| r.seq).collect::<Vec<_>>(), (1..=n).collect::<Vec<_>>(), "no gaps");
        assert!(records.windows(2).all(|w| w[0].timestamp <= w[1].timestamp), "timestamps never decrease");
        let head = second.audit_head(t).await.unwrap().unwrap();
        assert_eq!((head.seq, head.hash), (n, records[records.len() - 1].hash));
        let v = verify_chain(&second, t, None, None, 1000).await.unwrap();
        assert!(v.valid, "{v:?}");
        total += n;
    }
    // Per (task, round): a third single entries for a, a third for b, a third batches of 3.
    let expected: usize =
        (0..32).flat_map(|task| (0..ROUNDS).map(move |r| if (task + r) % 3 == 2 { 3 } else { 1 })).sum::<usize>() * 2;
    assert_eq!(total as usize, expected);
}

/// Workers on two replicas race for the queue: every job is claimed exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_claims_never_share_a_job() {
    let Some((first, url, _guard)) = store_and_url(4).await else { return };
    let second = PgStore::connect(&url, 4).await.unwrap();
    let (t, _) = seed_pair(&first, "claims").await;
    let mut jobs = HashSet::new();
    for i in 0..40 {
        let job = new_export_job(t.id, if i % 2 == 0 { ExportFormat::Csv } else { ExportFormat::Jsonl }).to_job();
        first.enqueue_job(&job, u64::MAX).await.unwrap();
        jobs.insert(job.id);
    }

    let mut workers = tokio::task::JoinSet::new();
    for store in [first.clone(), second.clone()] {
        for _ in 0..4 {
            let store = store.clone();
            workers.spawn(async move {
                let mut claimed = Vec::new();
                let token = Uuid::now_v7();
                let kinds = [JobKind::Export];
                while let Some(job) =
                    store.claim_job(&kinds, now(), token, now() + Duration::from_secs(600)).await.unwrap()
                {
                    assert_eq!(job.lease.map(|l| l.token), Some(token));
                    claimed.push(job.id);
                }
                claimed
            });
        }
    }
    let mut claimed: Vec<Uuid> = Vec::new();
    while let Some(done) = workers.join_next().await {
        claimed.extend(done.unwrap());
    }
    let unique: HashSet<Uuid> = claimed.iter().copied().collect();
    assert_eq!(claimed.len(), unique.len(), "a job was claimed twice");
    assert_eq!(unique, jobs, "every job was claimed");
    for id in &jobs {
        assert_eq!(first.get_job(*id).await.unwrap().unwrap().attempts, 1);
    }
}
