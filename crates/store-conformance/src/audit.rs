//! Conformance of the `AuditRepo` and `ExportRepo` ports: the chain, filters, keyset scans,
//! and export jobs with leases. Expanded by `store_conformance_tests!` with the rest.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{AuditId, ExportJobId, TenantId};
use agentgov_domain::model::{
    Actor, ActorType, AuditFilter, AuditHash, AuditRecord, AuditScan, ExportFormat, ExportOutcome, ExportProgress,
    JobStatus, SeqOrder,
};
use agentgov_domain::ports::Store;
use agentgov_domain::services::audit::verify_chain;
use uuid::Uuid;

use crate::fixtures::*;

async fn tenant(store: &Arc<dyn Store>, name: &str) -> TenantId {
    seed(store.as_ref(), name).await.tenant.id
}

fn scan(order: SeqOrder, after_seq: Option<i64>, limit: u32) -> AuditScan {
    AuditScan { order, after_seq, limit }
}

async fn all(store: &Arc<dyn Store>, tenant: TenantId, filter: &AuditFilter) -> Vec<AuditRecord> {
    store.scan_audit(tenant, filter, scan(SeqOrder::Asc, None, 10_000)).await.unwrap()
}

fn seqs(records: &[AuditRecord]) -> Vec<i64> {
    records.iter().map(|r| r.seq).collect()
}

pub async fn audit_append_chains_each_tenant_in_order(store: Arc<dyn Store>) {
    let (a, b) = (tenant(&store, "chain-a").await, tenant(&store, "chain-b").await);
    assert_eq!(store.audit_head(a).await.unwrap(), None);
    let t = precise(0, 1);
    let batch = vec![new_entry(a, "e.1", t), new_entry(b, "e.1", t), new_entry(a, "e.2", t), new_entry(a, "e.3", t)];
    let ids: Vec<AuditId> = batch.iter().map(|e| e.id).collect();
    let out = store.append_audit(batch).await.unwrap();
    assert_eq!(out.iter().map(|r| r.id).collect::<Vec<_>>(), ids, "records come back in input order");
    assert_eq!(seqs(&out), [1, 1, 2, 3]);
    assert_eq!(out[0].prev_hash, AuditHash::GENESIS);
    assert_eq!(out[2].prev_hash, out[0].hash);
    assert_eq!(out[3].prev_hash, out[2].hash);
    assert!(out.iter().all(|r| r.computed_hash() == r.hash));

    let more = store.append_audit(vec![new_entry(a, "e.4", t)]).await.unwrap();
    assert_eq!((more[0].seq, more[0].prev_hash), (4, out[3].hash));
    let head = store.audit_head(a).await.unwrap().unwrap();
    assert_eq!((head.seq, head.hash, head.timestamp), (4, more[0].hash, more[0].timestamp));
    for t in [a, b] {
        let v = verify_chain(store.as_ref(), t, None, None, 2).await.unwrap();
        assert!(v.valid, "{v:?}");
    }
}

pub async fn audit_records_round_trip_every_field(store: Arc<dyn Store>) {
    let a = tenant(&store, "fields").await;
    let mut sparse = new_entry(a, "sparse", precise(1, 999_999));
    sparse.agent_id = None;
    sparse.action = None;
    sparse.resource = None;
    sparse.decision = None;
    sparse.risk_score = None;
    sparse.actor = Actor::system("cli");
    let out = store.append_audit(vec![new_entry(a, "full", precise(1, 123_456)), sparse]).await.unwrap();
    for record in &out {
        assert_eq!(store.get_audit(a, record.id).await.unwrap().as_ref(), Some(record));
    }
    // The details text is kept verbatim, not re-serialised.
    let stored = store.get_audit(a, out[0].id).await.unwrap().unwrap();
    assert_eq!(stored.details.as_str(), new_entry(a, "x", precise(0, 0)).details.as_str());
    assert_eq!(stored.timestamp, precise(1, 123_456));
    assert_eq!(store.get_audit(a, AuditId(Uuid::now_v7())).await.unwrap(), None);
}

pub async fn audit_records_are_invisible_to_other_tenants(store: Arc<dyn Store>) {
    let (a, b) = (tenant(&store, "iso-a").await, tenant(&store, "iso-b").await);
    let out = store.append_audit(vec![new_entry(a, "secret", now())]).await.unwrap();
    assert_eq!(store.get_audit(b, out[0].id).await.unwrap(), None);
    assert!(all(&store, b, &AuditFilter::default()).await.is_empty());
    assert_eq!(store.count_audit(b, &AuditFilter::default()).await.unwrap(), 0);
    assert_eq!(store.audit_head(b).await.unwrap(), None);
}

pub async fn audit_append_is_all_or_nothing(store: Arc<dyn Store>) {
    let a = tenant(&store, "atomic").await;
    let missing = TenantId(Uuid::now_v7());
    let err = store.append_audit(vec![new_entry(a, "ok", now()), new_entry(missing, "bad", now())]).await;
    assert!(matches!(err, Err(DomainError::Conflict(_))), "{err:?}");
    assert_eq!(store.audit_head(a).await.unwrap(), None);
    assert!(all(&store, a, &AuditFilter::default()).await.is_empty());

    let first = store.append_audit(vec![new_entry(a, "ok", now())]).await.unwrap();
    let mut dup = new_entry(a, "dup", now());
    dup.id = first[0].id;
    assert!(matches!(store.append_audit(vec![dup]).await, Err(DomainError::Conflict(_))));
    assert_eq!(store.audit_head(a).await.unwrap().unwrap().seq, 1);
}

pub async fn audit_timestamps_never_decrease_along_the_chain(store: Arc<dyn Store>) {
    let a = tenant(&store, "clock").await;
    let late = store.append_audit(vec![new_entry(a, "late", precise(100, 5))]).await.unwrap();
    let early = store.append_audit(vec![new_entry(a, "early", precise(50, 0))]).await.unwrap();
    assert_eq!(early[0].timestamp, late[0].timestamp);
    assert_eq!(store.get_audit(a, early[0].id).await.unwrap().unwrap().timestamp, late[0].timestamp);
}

pub async fn audit_scans_filter_by_every_field(store: Arc<dyn Store>) {
    let a = tenant(&store, "filters").await;
    let agent = Uuid::now_v7();
    let mut entries = Vec::new();
    for i in 0..12i64 {
        let mut e = new_entry(a, if i % 3 == 0 { "policy.check" } else { "agent.action" }, precise(i * 10, 0));
        if i % 2 == 0 {
            e.agent_id = Some(agent);
        }
        e.action = Some(if i < 6 { "read" } else { "write" }.into());
        e.decision = Some(if i % 4 == 0 { "deny" } else { "allow" }.into());
        e.actor = if i == 5 { Actor::new(ActorType::User, "u-5") } else { Actor::new(ActorType::ApiKey, "k") };
        entries.push(e);
    }
    let out = store.append_audit(entries).await.unwrap();
    let cases: Vec<(AuditFilter, Vec<i64>)> = vec![
        (AuditFilter::default(), (1..=12).collect()),
        (AuditFilter { agent_id: Some(agent), ..Default::default() }, vec![1, 3, 5, 7, 9, 11]),
        (AuditFilter { event_type: Some("policy.check".into()), ..Default::default() }, vec![1, 4, 7, 10]),
        (AuditFilter { action: Some("write".into()), ..Default::default() }, vec![7, 8, 9, 10, 11, 12]),
        (AuditFilter { decision: Some("deny".into()), ..Default::default() }, vec![1, 5, 9]),
        (AuditFilter { actor_type: Some(ActorType::User), ..Default::default() }, vec![6]),
        (AuditFilter { actor_id: Some("u-5".into()), ..Default::default() }, vec![6]),
        // `from` inclusive, `to` exclusive.
        (AuditFilter { from: Some(precise(30, 0)), to: Some(precise(60, 0)), ..Default::default() }, vec![4, 5, 6]),
        (AuditFilter { min_seq: Some(11), ..Default::default() }, vec![11, 12]),
        (AuditFilter { max_seq: Some(2), ..Default::default() }, vec![1, 2]),
        (
            AuditFilter {
                agent_id: Some(agent),
                event_type: Some("agent.action".into()),
                decision: Some("allow".into()),
                ..Default::default()
            },
            vec![3, 11],
        ),
        (AuditFilter { event_type: Some("none".into()), ..Default::default() }, vec![]),
    ];
    for (filter, want) in cases {
        assert_eq!(seqs(&all(&store, a, &filter).await), want, "{filter:?}");
        assert_eq!(store.count_audit(a, &filter).await.unwrap(), want.len() as u64, "{filter:?}");
        let memory: Vec<i64> = out.iter().filter(|r| filter.matches(r)).map(|r| r.seq).collect();
        assert_eq!(memory, want, "the case itself agrees with AuditFilter::matches");
    }
}

pub async fn audit_scans_are_keyset_pages_in_both_directions(store: Arc<dyn Store>) {
    let a = tenant(&store, "pages").await;
    let entries = (0..7).map(|i| new_entry(a, "e", precise(i, 0))).collect();
    store.append_audit(entries).await.unwrap();
    let none = AuditFilter::default();
    let page = |order, after, limit| {
        let store = store.clone();
        let none = none.clone();
        async move { seqs(&store.scan_audit(a, &none, scan(order, after, limit)).await.unwrap()) }
    };
    assert_eq!(page(SeqOrder::Asc, None, 3).await, [1, 2, 3]);
    assert_eq!(page(SeqOrder::Asc, Some(3), 3).await, [4, 5, 6]);
    assert_eq!(page(SeqOrder::Asc, Some(6), 3).await, [7]);
    assert_eq!(page(SeqOrder::Desc, None, 3).await, [7, 6, 5]);
    assert_eq!(page(SeqOrder::Desc, Some(5), 3).await, [4, 3, 2]);
    assert_eq!(page(SeqOrder::Desc, Some(1), 3).await, Vec::<i64>::new());
}

pub async fn audit_concurrent_appends_leave_no_gaps(store: Arc<dyn Store>) {
    let (a, b) = (tenant(&store, "race-a").await, tenant(&store, "race-b").await);
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for j in 0..5 {
                let batch = if (i + j) % 2 == 0 {
                    vec![new_entry(a, "x", now())]
                } else {
                    vec![new_entry(b, "x", now()), new_entry(a, "x", now()), new_entry(b, "x", now())]
                };
                store.append_audit(batch).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    for (t, n) in [(a, 16 * 5), (b, 16 * 5)] {
        let records = all(&store, t, &AuditFilter::default()).await;
        assert_eq!(seqs(&records), (1..=n).collect::<Vec<i64>>());
        assert!(verify_chain(store.as_ref(), t, None, None, 7).await.unwrap().valid);
    }
}

fn outcome(status: JobStatus, chunks: i32) -> ExportOutcome {
    ExportOutcome {
        status,
        error: (status == JobStatus::Failed).then(|| "boom".to_owned()),
        progress: ExportProgress { rows: 10, bytes: 99, progress: 1.0 },
        chunks,
        finished_at: now(),
        expires_at: now() + Duration::from_secs(3600),
    }
}

pub async fn export_jobs_round_trip_and_are_tenant_scoped(store: Arc<dyn Store>) {
    let (a, b) = (tenant(&store, "jobs-a").await, tenant(&store, "jobs-b").await);
    let job = new_export_job(a, ExportFormat::Csv);
    store.insert_export_job(&job, u64::MAX).await.unwrap();
    assert_eq!(store.get_export_job(a, job.id).await.unwrap(), Some(job.clone()));
    assert_eq!(store.get_export_job(b, job.id).await.unwrap(), None);
    assert_eq!(store.get_export_job(a, ExportJobId(Uuid::now_v7())).await.unwrap(), None);
    assert!(matches!(store.insert_export_job(&job, u64::MAX).await, Err(DomainError::Conflict(_))));
    let orphan = new_export_job(TenantId(Uuid::now_v7()), ExportFormat::Json);
    assert!(matches!(store.insert_export_job(&orphan, u64::MAX).await, Err(DomainError::Conflict(_))));
}

pub async fn export_claims_take_the_oldest_job_once(store: Arc<dyn Store>) {
    let a = tenant(&store, "claims").await;
    let first = new_export_job(a, ExportFormat::Jsonl);
    let second = new_export_job(a, ExportFormat::Json);
    store.insert_export_job(&first, u64::MAX).await.unwrap();
    store.insert_export_job(&second, u64::MAX).await.unwrap();
    let t = now();
    let lease = t + Duration::from_secs(60);
    let (x, y) = (Uuid::now_v7(), Uuid::now_v7());
    let got = store.claim_export_job(t, x, lease).await.unwrap().unwrap();
    assert_eq!(got.id, first.id);
    assert_eq!((got.status, got.attempts, got.started_at), (JobStatus::Running, 1, Some(t)));
    assert_eq!(got.lease.map(|l| (l.token, l.until)), Some((x, lease)));
    assert_eq!(store.get_export_job(a, first.id).await.unwrap(), Some(got));
    let got = store.claim_export_job(t, y, lease).await.unwrap().unwrap();
    assert_eq!(got.id, second.id);
    assert_eq!(store.claim_export_job(t, Uuid::now_v7(), lease).await.unwrap(), None);
}

pub async fn export_chunks_need_the_lease_and_expired_leases_are_reclaimed(store: Arc<dyn Store>) {
    let a = tenant(&store, "lease").await;
    let job = new_export_job(a, ExportFormat::Csv);
    store.insert_export_job(&job, u64::MAX).await.unwrap();
    let t = now();
    let (mine, theirs) = (Uuid::now_v7(), Uuid::now_v7());
    store.claim_export_job(t, mine, t + Duration::from_secs(10)).await.unwrap().unwrap();
    let progress = ExportProgress { rows: 5, bytes: 3, progress: 0.5 };
    let later = t + Duration::from_secs(20);
    store.put_export_chunk(job.id, mine, 0, b"abc".to_vec(), progress, later).await.unwrap();
    let stored = store.get_export_job(a, job.id).await.unwrap().unwrap();
    assert_eq!((stored.rows, stored.bytes, stored.progress), (5, 3, 0.5));
    assert_eq!(stored.lease.map(|l| l.until), Some(later), "a chunk extends the lease");
    let wrong = store.put_export_chunk(job.id, theirs, 1, b"x".to_vec(), progress, later).await;
    assert!(matches!(wrong, Err(DomainError::Conflict(_))), "{wrong:?}");
    assert!(matches!(
        store.finish_export_job(job.id, theirs, &outcome(JobStatus::Completed, 1)).await,
        Err(DomainError::Conflict(_))
    ));

    // Not reclaimable while the lease holds; reclaimed (from scratch) once it has passed.
    assert_eq!(store.claim_export_job(t + Duration::from_secs(15), theirs, later).await.unwrap(), None);
    let after = later + Duration::from_secs(1);
    let again = store.claim_export_job(after, theirs, after + Duration::from_secs(60)).await.unwrap().unwrap();
    assert_eq!((again.attempts, again.rows, again.bytes, again.started_at), (2, 0, 0, Some(t)));
    assert_eq!(store.export_chunk(a, job.id, 0).await.unwrap(), None, "the old attempt's chunks are dropped");
    assert!(matches!(
        store.put_export_chunk(job.id, mine, 0, b"a".to_vec(), progress, later).await,
        Err(DomainError::Conflict(_))
    ));

    store.put_export_chunk(job.id, theirs, 0, b"first,".to_vec(), progress, after).await.unwrap();
    store.put_export_chunk(job.id, theirs, 1, b"second".to_vec(), progress, after).await.unwrap();
    store.finish_export_job(job.id, theirs, &outcome(JobStatus::Completed, 2)).await.unwrap();
    let done = store.get_export_job(a, job.id).await.unwrap().unwrap();
    assert_eq!((done.status, done.chunks, done.rows, done.lease), (JobStatus::Completed, 2, 10, None));
    assert!(done.finished_at.is_some() && done.expires_at.is_some());
    assert_eq!(store.export_chunk(a, job.id, 1).await.unwrap(), Some(b"second".to_vec()));
    let b = tenant(&store, "lease-b").await;
    assert_eq!(store.export_chunk(b, job.id, 0).await.unwrap(), None);
    assert!(matches!(
        store.finish_export_job(job.id, theirs, &outcome(JobStatus::Failed, 0)).await,
        Err(DomainError::Conflict(_))
    ));
    assert_eq!(store.claim_export_job(after + Duration::from_secs(3600), mine, after).await.unwrap(), None);
}

pub async fn export_purge_deletes_expired_jobs_and_files(store: Arc<dyn Store>) {
    let a = tenant(&store, "purge").await;
    let (old, fresh, waiting) = (
        new_export_job(a, ExportFormat::Csv),
        new_export_job(a, ExportFormat::Csv),
        new_export_job(a, ExportFormat::Json),
    );
    for job in [&old, &fresh] {
        store.insert_export_job(job, u64::MAX).await.unwrap();
        let token = Uuid::now_v7();
        store.claim_export_job(now(), token, now() + Duration::from_secs(60)).await.unwrap().unwrap();
        let p = ExportProgress { rows: 1, bytes: 1, progress: 1.0 };
        store.put_export_chunk(job.id, token, 0, b"x".to_vec(), p, now() + Duration::from_secs(60)).await.unwrap();
        let mut o = outcome(JobStatus::Completed, 1);
        if job.id == old.id {
            o.expires_at = now() - Duration::from_secs(1);
        }
        store.finish_export_job(job.id, token, &o).await.unwrap();
    }
    store.insert_export_job(&waiting, u64::MAX).await.unwrap();
    assert_eq!(store.purge_expired_exports(now()).await.unwrap(), 1);
    assert_eq!(store.get_export_job(a, old.id).await.unwrap(), None);
    assert_eq!(store.export_chunk(a, old.id, 0).await.unwrap(), None);
    assert!(store.get_export_job(a, fresh.id).await.unwrap().is_some());
    assert!(store.get_export_job(a, waiting.id).await.unwrap().is_some());
    assert_eq!(store.purge_expired_exports(now()).await.unwrap(), 0);
}

pub async fn export_active_jobs_are_capped_per_tenant(store: Arc<dyn Store>) {
    use agentgov_domain::ports::store::EXPORT_LIMIT_REACHED;
    let (a, b) = (tenant(&store, "capped-a").await, tenant(&store, "capped-b").await);
    let limited = |r: Result<(), DomainError>| matches!(r, Err(DomainError::Conflict(m)) if m == EXPORT_LIMIT_REACHED);
    let first = new_export_job(a, ExportFormat::Jsonl);
    store.insert_export_job(&first, 2).await.unwrap();
    store.insert_export_job(&new_export_job(a, ExportFormat::Csv), 2).await.unwrap();
    assert!(limited(store.insert_export_job(&new_export_job(a, ExportFormat::Json), 2).await));
    store.insert_export_job(&new_export_job(b, ExportFormat::Json), 2).await.expect("counted per tenant");
    // A running job still counts; a finished one does not.
    let t = now();
    let token = Uuid::now_v7();
    let running = store.claim_export_job(t, token, t + Duration::from_secs(60)).await.unwrap().unwrap();
    assert_eq!(running.id, first.id);
    assert!(limited(store.insert_export_job(&new_export_job(a, ExportFormat::Json), 2).await));
    store.finish_export_job(first.id, token, &outcome(JobStatus::Completed, 0)).await.unwrap();
    store.insert_export_job(&new_export_job(a, ExportFormat::Json), 2).await.expect("the finished job made room");
}
