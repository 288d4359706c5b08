//! Conformance of the `AuditRepo` and `ExportRepo` ports: the chain, filters, keyset scans,
//! and export jobs with leases. Expanded by `store_conformance_tests!` with the rest.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{AuditId, TenantId};
use agentgov_domain::model::{Actor, ActorType, AuditFilter, AuditHash, AuditRecord, AuditScan, SeqOrder};
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
    let mut full = new_entry(a, "full", precise(1, 123_456));
    full.session_id = Some("conversation-1".into());
    let out = store.append_audit(vec![full, sparse]).await.unwrap();
    assert_eq!(out[0].session_id.as_deref(), Some("conversation-1"));
    assert!(out.iter().all(|r| r.computed_hash() == r.hash));
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
        if i % 5 == 1 {
            e.session_id = Some(format!("run-{}", i % 2));
        }
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
        (AuditFilter { session_id: Some("run-1".into()), ..Default::default() }, vec![2, 12]),
        (AuditFilter { session_id: Some("run-0".into()), ..Default::default() }, vec![7]),
        (AuditFilter { session_id: Some("run-1".into()), min_seq: Some(3), ..Default::default() }, vec![12]),
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
        let only = store.scan_audit_seqs(a, &filter, scan(SeqOrder::Asc, None, 10_000)).await.unwrap();
        assert_eq!(only, want, "seqs only: {filter:?}");
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
        async move {
            let records = seqs(&store.scan_audit(a, &none, scan(order, after, limit)).await.unwrap());
            let only = store.scan_audit_seqs(a, &none, scan(order, after, limit)).await.unwrap();
            assert_eq!(only, records, "scan_audit_seqs gives the seqs of scan_audit");
            records
        }
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
