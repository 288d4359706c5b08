//! Conformance of the `AnomalyRepo` port: anomaly reports round-trip every field, list
//! newest first by keyset pages of one tenant filtered on agent, type, severity, status and
//! creation time, are replaced whole by an update (but for id, tenant and `created_at`), and
//! are counted per agent, type, severity, status and hour; and the anomaly detector's
//! versions (numbered per tenant, at most one active, none when off) and training tasks (one
//! pending per tenant, claimed under a lease, completed into a new version). Expanded by
//! `store_conformance_tests!` with the rest.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{AgentId, AnomalyId, AnomalyTaskId, TenantId};
use agentgov_domain::model::{
    Actor, ActorType, AnomalyCount, AnomalyFilter, AnomalyModelInfo, AnomalyModelRecord, AnomalyReport, AnomalySource,
    AnomalyStatus, AnomalyTask, AnomalyType, JobStatus, JsonObject, Lease, Severity,
};
use agentgov_domain::page::{PageRequest, encode_cursor};
use agentgov_domain::ports::Store;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::fixtures::*;

/// Tenant names must differ in their first 8 characters (`seed` derives a key prefix).
async fn tenant(store: &Arc<dyn Store>, name: &str) -> TenantId {
    seed(store.as_ref(), name).await.tenant.id
}

fn agent() -> AgentId {
    AgentId(Uuid::now_v7())
}

fn is_conflict<T: std::fmt::Debug>(r: &Result<T, DomainError>) -> bool {
    matches!(r, Err(DomainError::Conflict(_)))
}

fn is_not_found<T: std::fmt::Debug>(r: &Result<T, DomainError>) -> bool {
    matches!(r, Err(DomainError::NotFound { .. }))
}

const SECOND: Duration = Duration::from_secs(1);
const MICRO: Duration = Duration::from_micros(1);
const HOUR: Duration = Duration::from_secs(3_600);

/// The start of hour `h` (whole hours since the Unix epoch).
fn hour_start(h: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(h * 3_600).unwrap()
}

const H0: i64 = 499_000;

/// Stores `report` and answers it.
async fn stored(store: &Arc<dyn Store>, report: AnomalyReport) -> AnomalyReport {
    store.insert_anomaly(&report).await.unwrap();
    report
}

/// Every report passing `filter`, walking pages of `limit` by their cursors.
async fn listed(store: &Arc<dyn Store>, tenant: TenantId, filter: &AnomalyFilter, limit: u32) -> Vec<AnomalyReport> {
    let mut out: Vec<AnomalyReport> = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let req = PageRequest::parse(Some(i64::from(limit)), cursor.as_deref()).unwrap();
        let page = store.list_anomalies(tenant, filter, &req).await.unwrap();
        assert!(page.items.len() <= limit as usize);
        out.extend(page.items);
        match page.next_cursor {
            Some(next) => {
                assert_eq!(Some(next.clone()), out.last().map(|r| encode_cursor(r.id.0)), "the last item's cursor");
                cursor = Some(next);
            }
            None => return out,
        }
    }
    panic!("the list never ended");
}

fn ids(reports: &[AnomalyReport]) -> Vec<AnomalyId> {
    reports.iter().map(|r| r.id).collect()
}

/// Counts in a fixed order, to compare regardless of the order they come in.
fn sorted(mut counts: Vec<AnomalyCount>) -> Vec<AnomalyCount> {
    counts.sort_by_key(|c| (c.agent_id, c.anomaly_type, c.severity, c.status, c.hour));
    counts
}

/// What `anomaly_counts` must answer for `reports` (already those of one tenant).
fn expected_counts(reports: &[AnomalyReport], filter: &AnomalyFilter) -> Vec<AnomalyCount> {
    let mut counts: HashMap<(AgentId, AnomalyType, Severity, AnomalyStatus, i64), i64> = HashMap::new();
    for r in reports.iter().filter(|r| filter.matches(r)) {
        let hour = r.created_at.unix_timestamp().div_euclid(3_600);
        *counts.entry((r.agent_id, r.anomaly_type, r.severity, r.status, hour)).or_default() += 1;
    }
    sorted(
        counts
            .into_iter()
            .map(|((agent_id, anomaly_type, severity, status, hour), count)| AnomalyCount {
                agent_id,
                anomaly_type,
                severity,
                status,
                hour,
                count,
            })
            .collect(),
    )
}

async fn counts(store: &Arc<dyn Store>, tenant: TenantId, filter: &AnomalyFilter) -> Vec<AnomalyCount> {
    sorted(store.anomaly_counts(tenant, filter).await.unwrap())
}

pub async fn anomaly_reports_round_trip_every_field(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-ar-rt").await;
    let b = tenant(&store, "b-ar-rt").await;
    let (x, y) = (agent(), agent());
    let full = new_anomaly(a, x, precise(3_600, 250_001), 1);
    let bare = AnomalyReport {
        anomaly_type: AnomalyType::Manual,
        severity: Severity::Low,
        score: 0.0,
        description: String::new(),
        evidence: JsonObject::new(),
        source: AnomalySource::Manual,
        model_version: None,
        reported_by: Actor::new(ActorType::User, Uuid::now_v7()),
        status_changed_by: None,
        status_changed_at: None,
        ..new_anomaly(a, y, precise(3_601, 1), 2)
    };
    let resolved = AnomalyReport {
        anomaly_type: AnomalyType::GuardAttack,
        severity: Severity::Critical,
        score: 1.0,
        source: AnomalySource::Guard,
        status: AnomalyStatus::FalsePositive,
        reported_by: Actor::new(ActorType::ApiKey, Uuid::now_v7()),
        ..new_anomaly(a, x, precise(3_602, 999_999), 3)
    };
    let of_b = new_anomaly(b, x, precise(3_603, 42), 4);
    for report in [&full, &bare, &resolved, &of_b] {
        store.insert_anomaly(report).await.unwrap();
    }

    for report in [&full, &bare, &resolved] {
        assert_eq!(store.get_anomaly(a, report.id).await.unwrap().as_ref(), Some(report), "every field as stored");
    }
    // Every value of every enumeration is stored and read back.
    let mut every = Vec::new();
    for (i, anomaly_type) in AnomalyType::ALL.iter().enumerate() {
        let seed = u8::try_from(10 + i).unwrap();
        let severity = Severity::ALL[i % Severity::ALL.len()];
        let status = AnomalyStatus::ALL[i % AnomalyStatus::ALL.len()];
        let source = AnomalySource::ALL[i % AnomalySource::ALL.len()];
        let report = AnomalyReport {
            anomaly_type: *anomaly_type,
            severity,
            status,
            source,
            ..new_anomaly(a, y, precise(3_700, 5), seed)
        };
        every.push(stored(&store, report).await);
    }
    for report in &every {
        assert_eq!(store.get_anomaly(a, report.id).await.unwrap().as_ref(), Some(report));
    }
    assert_eq!(store.get_anomaly(b, of_b.id).await.unwrap(), Some(of_b.clone()), "read back with its tenant");
    assert_eq!(store.get_anomaly(b, full.id).await.unwrap(), None, "another tenant's report is absent");
    assert_eq!(store.get_anomaly(a, of_b.id).await.unwrap(), None);
    assert_eq!(store.get_anomaly(a, AnomalyId(Uuid::now_v7())).await.unwrap(), None);
    let mut all_of_a = vec![full, bare, resolved];
    all_of_a.extend(every);
    all_of_a.reverse();
    assert_eq!(listed(&store, a, &AnomalyFilter::default(), 50).await, all_of_a, "listed as stored, newest first");
    assert_eq!(listed(&store, b, &AnomalyFilter::default(), 50).await, [of_b]);
}

pub async fn anomaly_insert_conflicts_on_a_taken_id_or_an_unknown_tenant(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-ai-ins").await;
    let b = tenant(&store, "b-ai-ins").await;
    let at = precise(3_600, 1);

    let orphan = new_anomaly(TenantId(Uuid::now_v7()), agent(), at, 1);
    let r = store.insert_anomaly(&orphan).await;
    assert!(is_conflict(&r), "the tenant must exist: {r:?}");
    assert_eq!(store.get_anomaly(orphan.tenant_id, orphan.id).await.unwrap(), None, "nothing stored");

    let kept = stored(&store, new_anomaly(a, agent(), at, 2)).await;
    let again = AnomalyReport { id: kept.id, ..new_anomaly(a, agent(), at, 3) };
    let r = store.insert_anomaly(&again).await;
    assert!(is_conflict(&r), "id taken in the tenant: {r:?}");
    let elsewhere = AnomalyReport { id: kept.id, ..new_anomaly(b, agent(), at, 4) };
    let r = store.insert_anomaly(&elsewhere).await;
    assert!(is_conflict(&r), "id taken in another tenant: {r:?}");

    assert_eq!(store.get_anomaly(a, kept.id).await.unwrap(), Some(kept.clone()), "left as it was");
    assert_eq!(store.get_anomaly(b, kept.id).await.unwrap(), None);
    assert_eq!(listed(&store, a, &AnomalyFilter::default(), 50).await, [kept]);
    assert!(listed(&store, b, &AnomalyFilter::default(), 50).await.is_empty());
    assert!(store.anomaly_counts(b, &AnomalyFilter::default()).await.unwrap().is_empty());
}

pub async fn anomaly_lists_page_newest_first_and_filter_by_every_field(store: Arc<dyn Store>) {
    use AnomalyStatus::{Acknowledged, FalsePositive, Open, Resolved};
    use AnomalyType::{DeniedBurst, OffHours, RateSpike};
    let a = tenant(&store, "a-al-list").await;
    let b = tenant(&store, "b-al-list").await;
    let (x, y) = (agent(), agent());
    let t0 = precise(7_200, 500_000);
    let kinds = [
        (x, RateSpike, Severity::High, Open),
        (y, OffHours, Severity::Low, Acknowledged),
        (x, DeniedBurst, Severity::Critical, Resolved),
        (y, RateSpike, Severity::Medium, Open),
        (x, OffHours, Severity::High, FalsePositive),
        (x, RateSpike, Severity::Low, Open),
        (y, DeniedBurst, Severity::High, Resolved),
    ];
    let (mut of_a, mut of_b) = (Vec::new(), Vec::new());
    for (i, (by, anomaly_type, severity, status)) in kinds.into_iter().enumerate() {
        let seed = u8::try_from(i).unwrap();
        // Created a second apart, in an order unlike the ids' for the last two.
        let created_at = t0 + u32::try_from(i).unwrap() * SECOND - if i >= 5 { 10 * SECOND } else { Duration::ZERO };
        let report = new_anomaly(a, by, created_at, seed);
        of_a.push(AnomalyReport { anomaly_type, severity, status, ..report });
        // b's reports interleave a's by id, by the same agent, at the same times.
        of_b.push(new_anomaly(b, x, created_at, 100 + seed));
    }
    // Stored oldest first: lists go by id, not by insertion.
    for report in of_a.iter().chain(&of_b) {
        store.insert_anomaly(report).await.unwrap();
    }
    of_a.reverse();
    of_b.reverse();

    let all = AnomalyFilter::default();
    for limit in [1, 2, 3, 7, 50] {
        assert_eq!(listed(&store, a, &all, limit).await, of_a, "newest first in pages of {limit}");
    }
    let first = store.list_anomalies(a, &all, &PageRequest::first(2)).await.unwrap();
    assert_eq!(ids(&first.items), ids(&of_a[..2]));
    assert_eq!(first.next_cursor, Some(encode_cursor(of_a[1].id.0)));
    let whole = store.list_anomalies(a, &all, &PageRequest::first(7)).await.unwrap();
    assert_eq!(whole.items, of_a);
    assert_eq!(whole.next_cursor, None, "a page that holds the rest exactly has no cursor");
    let after_last = PageRequest { limit: 5, after: Some(of_a[6].id.0) };
    let past = store.list_anomalies(a, &all, &after_last).await.unwrap();
    assert!(past.items.is_empty() && past.next_cursor.is_none());
    let mid = PageRequest { limit: 2, after: Some(of_a[3].id.0) };
    assert_eq!(store.list_anomalies(a, &all, &mid).await.unwrap().items, of_a[4..6]);

    let matching = |f: &AnomalyFilter| of_a.iter().filter(|r| f.matches(r)).cloned().collect::<Vec<_>>();
    let check = async |f: AnomalyFilter, n: usize| {
        let want = matching(&f);
        assert_eq!(want.len(), n, "the test's own expectation for {f:?}");
        assert_eq!(listed(&store, a, &f, 2).await, want, "{f:?}");
        assert_eq!(listed(&store, a, &f, 50).await, want, "{f:?}");
    };
    check(AnomalyFilter { agent_id: Some(x), ..all.clone() }, 4).await;
    check(AnomalyFilter { agent_id: Some(y), ..all.clone() }, 3).await;
    check(AnomalyFilter { agent_id: Some(agent()), ..all.clone() }, 0).await;
    check(AnomalyFilter { anomaly_type: Some(RateSpike), ..all.clone() }, 3).await;
    check(AnomalyFilter { anomaly_type: Some(OffHours), ..all.clone() }, 2).await;
    check(AnomalyFilter { anomaly_type: Some(AnomalyType::Manual), ..all.clone() }, 0).await;
    check(AnomalyFilter { severity: Some(Severity::High), ..all.clone() }, 3).await;
    check(AnomalyFilter { severity: Some(Severity::Critical), ..all.clone() }, 1).await;
    check(AnomalyFilter { status: Some(Open), ..all.clone() }, 3).await;
    check(AnomalyFilter { status: Some(Resolved), ..all.clone() }, 2).await;
    check(AnomalyFilter { status: Some(FalsePositive), ..all.clone() }, 1).await;
    // Time bounds: `from` inclusive, `to` exclusive, to the microsecond.
    check(AnomalyFilter { from: Some(t0), ..all.clone() }, 5).await;
    check(AnomalyFilter { from: Some(t0 + MICRO), ..all.clone() }, 4).await;
    check(AnomalyFilter { to: Some(t0), ..all.clone() }, 2).await;
    check(AnomalyFilter { to: Some(t0 + MICRO), ..all.clone() }, 3).await;
    check(AnomalyFilter { from: Some(t0 + SECOND), to: Some(t0 + 3 * SECOND), ..all.clone() }, 2).await;
    check(AnomalyFilter { from: Some(t0 + SECOND), to: Some(t0 + SECOND), ..all.clone() }, 0).await;
    check(AnomalyFilter { from: Some(t0 + HOUR), ..all.clone() }, 0).await;
    // Several at once.
    check(AnomalyFilter { agent_id: Some(x), anomaly_type: Some(RateSpike), ..all.clone() }, 2).await;
    check(
        AnomalyFilter {
            agent_id: Some(x),
            anomaly_type: Some(RateSpike),
            severity: Some(Severity::High),
            status: Some(Open),
            from: Some(t0),
            to: Some(t0 + SECOND),
        },
        1,
    )
    .await;
    check(AnomalyFilter { agent_id: Some(y), status: Some(FalsePositive), ..all.clone() }, 0).await;

    assert_eq!(listed(&store, b, &all, 3).await, of_b, "each tenant its own");
    assert_eq!(listed(&store, b, &AnomalyFilter { agent_id: Some(x), ..all.clone() }, 3).await, of_b);
    assert!(listed(&store, b, &AnomalyFilter { agent_id: Some(y), ..all.clone() }, 3).await.is_empty());
    assert!(listed(&store, b, &AnomalyFilter { status: Some(Resolved), ..all.clone() }, 3).await.is_empty());
    assert!(listed(&store, TenantId(Uuid::now_v7()), &all, 3).await.is_empty());
}

pub async fn anomaly_update_replaces_the_body_and_columns(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-au-upd").await;
    let b = tenant(&store, "b-au-upd").await;
    let (x, y) = (agent(), agent());
    let created = precise(3_600, 123_456);
    let original = stored(&store, new_anomaly(a, x, created, 1)).await;
    let sibling = stored(&store, new_anomaly(a, x, created + SECOND, 2)).await;

    // Every field but id and tenant differs, the column copies included; `created_at` too,
    // which the update leaves as stored.
    let changed = AnomalyReport {
        id: original.id,
        tenant_id: a,
        agent_id: y,
        anomaly_type: AnomalyType::UnusualResource,
        severity: Severity::Critical,
        score: 0.03125,
        description: "relabelled — \"not a spike\" ✓".to_owned(),
        evidence: json_object(serde_json::json!({"note": "checked by hand", "refs": [1, 2]})),
        source: AnomalySource::Manual,
        status: AnomalyStatus::Resolved,
        model_version: None,
        reported_by: Actor::new(ActorType::User, Uuid::now_v7()),
        status_changed_by: Some(Actor::new(ActorType::User, Uuid::now_v7())),
        status_changed_at: Some(precise(9_000, 77)),
        created_at: created + 10 * HOUR,
        updated_at: precise(9_000, 77),
    };
    store.update_anomaly(&changed).await.unwrap();
    let updated = AnomalyReport { created_at: original.created_at, ..changed.clone() };
    assert_eq!(store.get_anomaly(a, original.id).await.unwrap(), Some(updated.clone()), "created_at kept");
    assert_eq!(store.get_anomaly(a, sibling.id).await.unwrap(), Some(sibling.clone()), "the other one untouched");

    // The columns follow the record.
    let all = AnomalyFilter::default();
    assert_eq!(listed(&store, a, &all, 10).await, [sibling.clone(), updated.clone()]);
    let resolved = AnomalyFilter { status: Some(AnomalyStatus::Resolved), ..all.clone() };
    assert_eq!(listed(&store, a, &resolved, 10).await, std::slice::from_ref(&updated), "the new status");
    let open = AnomalyFilter { status: Some(AnomalyStatus::Open), ..all.clone() };
    assert_eq!(listed(&store, a, &open, 10).await, std::slice::from_ref(&sibling), "no longer open");
    let by_y = AnomalyFilter { agent_id: Some(y), ..all.clone() };
    assert_eq!(listed(&store, a, &by_y, 10).await, std::slice::from_ref(&updated));
    let critical_resources = AnomalyFilter {
        anomaly_type: Some(AnomalyType::UnusualResource),
        severity: Some(Severity::Critical),
        ..all.clone()
    };
    assert_eq!(listed(&store, a, &critical_resources, 10).await, std::slice::from_ref(&updated));
    let spikes = AnomalyFilter { anomaly_type: Some(AnomalyType::RateSpike), ..all.clone() };
    assert_eq!(listed(&store, a, &spikes, 10).await, std::slice::from_ref(&sibling));
    // Still found at the time it was created, not at the one the update carried.
    let at_creation = AnomalyFilter { from: Some(created), to: Some(created + MICRO), ..all.clone() };
    assert_eq!(listed(&store, a, &at_creation, 10).await, std::slice::from_ref(&updated));
    let later = AnomalyFilter { from: Some(created + HOUR), ..all.clone() };
    assert!(listed(&store, a, &later, 10).await.is_empty());
    let hour = created.unix_timestamp().div_euclid(3_600);
    assert_eq!(
        counts(&store, a, &resolved).await,
        [AnomalyCount {
            agent_id: y,
            anomaly_type: AnomalyType::UnusualResource,
            severity: Severity::Critical,
            status: AnomalyStatus::Resolved,
            hour,
            count: 1
        }],
        "counted with its new columns in its creation hour"
    );

    // Updated again: replaced again.
    let acknowledged =
        AnomalyReport { status: AnomalyStatus::Acknowledged, updated_at: precise(9_100, 1), ..updated.clone() };
    store.update_anomaly(&acknowledged).await.unwrap();
    assert_eq!(store.get_anomaly(a, original.id).await.unwrap(), Some(acknowledged.clone()));
    assert!(listed(&store, a, &resolved, 10).await.is_empty());

    let absent = new_anomaly(a, x, created, 3);
    let r = store.update_anomaly(&absent).await;
    assert!(is_not_found(&r), "{r:?}");
    assert_eq!(store.get_anomaly(a, absent.id).await.unwrap(), None, "not inserted");

    // Another tenant's id is absent, and its row is left alone: the tenant is part of the key.
    let foreign =
        AnomalyReport { id: sibling.id, status: AnomalyStatus::FalsePositive, ..new_anomaly(b, y, created, 4) };
    let r = store.update_anomaly(&foreign).await;
    assert!(is_not_found(&r), "another tenant's report is absent: {r:?}");
    assert_eq!(store.get_anomaly(a, sibling.id).await.unwrap(), Some(sibling.clone()), "unchanged");
    assert_eq!(store.get_anomaly(b, sibling.id).await.unwrap(), None);
    assert!(listed(&store, b, &all, 10).await.is_empty());
    assert_eq!(listed(&store, a, &all, 10).await, [sibling, acknowledged]);
}

pub async fn anomaly_counts_group_by_agent_type_severity_status_and_hour(store: Arc<dyn Store>) {
    use AnomalyStatus::{Acknowledged, Open, Resolved};
    use AnomalyType::{OffHours, RateSpike};
    let a = tenant(&store, "a-ac-cnt").await;
    let b = tenant(&store, "b-ac-cnt").await;
    let (x, y) = (agent(), agent());
    let all = AnomalyFilter::default();
    assert!(store.anomaly_counts(a, &all).await.unwrap().is_empty(), "nothing stored yet");

    let h = hour_start(H0);
    // (agent, type, severity, status, created at)
    let plan = [
        (x, RateSpike, Severity::High, Open, h),
        (x, RateSpike, Severity::High, Open, h + 30 * 60 * SECOND),
        (x, RateSpike, Severity::High, Open, h + HOUR - MICRO),
        (x, RateSpike, Severity::High, Open, h + HOUR),
        (x, RateSpike, Severity::High, Open, h - MICRO),
        (x, RateSpike, Severity::Low, Open, h + SECOND),
        (x, RateSpike, Severity::High, Resolved, h + 2 * SECOND),
        (x, OffHours, Severity::High, Open, h + 3 * SECOND),
        (y, RateSpike, Severity::High, Open, h + 4 * SECOND),
        (y, RateSpike, Severity::High, Open, h + 5 * SECOND),
        (y, OffHours, Severity::Medium, Acknowledged, h + 3 * HOUR + 17 * SECOND),
        (y, OffHours, Severity::Medium, Acknowledged, h + 3 * HOUR + 18 * SECOND),
        (y, OffHours, Severity::Medium, Acknowledged, h + 50 * HOUR),
    ];
    let mut of_a = Vec::new();
    for (i, (by, anomaly_type, severity, status, at)) in plan.into_iter().enumerate() {
        let seed = u8::try_from(i).unwrap();
        of_a.push(
            stored(&store, AnomalyReport { anomaly_type, severity, status, ..new_anomaly(a, by, at, seed) }).await,
        );
    }
    // b's reports share a's agents, kinds and hours, and must never be counted with them.
    let mut of_b = Vec::new();
    for (i, at) in [h, h + SECOND, h + HOUR].into_iter().enumerate() {
        let seed = 100 + u8::try_from(i).unwrap();
        of_b.push(stored(&store, new_anomaly(b, x, at, seed)).await);
    }

    let want = |f: &AnomalyFilter| expected_counts(&of_a, f);
    let got = counts(&store, a, &all).await;
    assert_eq!(got, want(&all), "grouped per agent, type, severity, status and hour");
    let spikes_of_x_in_h = |hour: i64, count: i64| AnomalyCount {
        agent_id: x,
        anomaly_type: RateSpike,
        severity: Severity::High,
        status: Open,
        hour,
        count,
    };
    // Spelled out: an hour's first microsecond is in it, its last too, the next one is not.
    assert!(got.contains(&spikes_of_x_in_h(H0, 3)), "{got:?}");
    assert!(got.contains(&spikes_of_x_in_h(H0 + 1, 1)), "{got:?}");
    assert!(got.contains(&spikes_of_x_in_h(H0 - 1, 1)), "{got:?}");
    assert_eq!(got.len(), 9, "{got:?}");
    assert_eq!(got.iter().map(|c| c.count).sum::<i64>(), 13);

    let filters = [
        AnomalyFilter { agent_id: Some(x), ..all.clone() },
        AnomalyFilter { agent_id: Some(y), ..all.clone() },
        AnomalyFilter { anomaly_type: Some(OffHours), ..all.clone() },
        AnomalyFilter { severity: Some(Severity::High), ..all.clone() },
        AnomalyFilter { status: Some(Acknowledged), ..all.clone() },
        AnomalyFilter { from: Some(h), ..all.clone() },
        AnomalyFilter { to: Some(h + HOUR), ..all.clone() },
        AnomalyFilter { from: Some(h + SECOND), to: Some(h + 3 * HOUR + 18 * SECOND), ..all.clone() },
        AnomalyFilter {
            agent_id: Some(x),
            anomaly_type: Some(RateSpike),
            severity: Some(Severity::High),
            status: Some(Open),
            from: Some(h),
            to: Some(h + HOUR + MICRO),
        },
    ];
    for f in &filters {
        assert_eq!(counts(&store, a, f).await, want(f), "{f:?}");
    }
    assert_eq!(
        counts(&store, a, &filters[8]).await,
        [spikes_of_x_in_h(H0, 3), spikes_of_x_in_h(H0 + 1, 1)],
        "every filter at once, `from` inclusive and `to` exclusive"
    );

    // Nothing matching: empty.
    for f in [
        AnomalyFilter { agent_id: Some(agent()), ..all.clone() },
        AnomalyFilter { anomaly_type: Some(AnomalyType::GuardAttack), ..all.clone() },
        AnomalyFilter { status: Some(AnomalyStatus::FalsePositive), ..all.clone() },
        AnomalyFilter { agent_id: Some(y), severity: Some(Severity::Low), ..all.clone() },
        AnomalyFilter { from: Some(h + 51 * HOUR), ..all.clone() },
        AnomalyFilter { from: Some(h + SECOND), to: Some(h + SECOND), ..all.clone() },
    ] {
        assert!(store.anomaly_counts(a, &f).await.unwrap().is_empty(), "{f:?}");
    }

    // Each tenant its own.
    assert_eq!(counts(&store, b, &all).await, expected_counts(&of_b, &all));
    assert_eq!(
        counts(&store, b, &all).await,
        [spikes_of_x_in_h(H0, 2), spikes_of_x_in_h(H0 + 1, 1)],
        "b's counts hold only b's reports"
    );
    assert!(store.anomaly_counts(TenantId(Uuid::now_v7()), &all).await.unwrap().is_empty());
}

// The anomaly detector's versions and training tasks.

const LEASE: Duration = Duration::from_secs(60);

/// Bytes of a version's model text in most behaviours (one holds a much larger one).
const SMALL_MODEL: usize = 2_048;

/// Queues a task of `tenant` and claims it at `at` (the store must hold no other claimable
/// task); answers it as claimed, with its lease token.
async fn claimed_task(store: &Arc<dyn Store>, tenant: TenantId, at: OffsetDateTime) -> (AnomalyTask, Uuid) {
    let task = new_anomaly_task(tenant, 30);
    store.insert_anomaly_task(&task).await.unwrap();
    let token = Uuid::now_v7();
    let got = store.claim_anomaly_task(at, token, at + LEASE).await.unwrap().expect("a task to claim");
    assert_eq!(got.id, task.id);
    (got, token)
}

/// Trains one version of `tenant` through a task's whole life; answers the version.
async fn train(store: &Arc<dyn Store>, tenant: TenantId, seed: u8) -> i32 {
    let at = now();
    let (task, token) = claimed_task(store, tenant, at).await;
    let model = new_anomaly_model(tenant, Some(task.id), seed, SMALL_MODEL);
    store.complete_anomaly_task(task.id, token, at, &model).await.unwrap()
}

/// What the store keeps of `model` as `tenant`'s `version`.
fn kept(model: &AnomalyModelRecord, tenant: TenantId, version: i32, active: bool) -> AnomalyModelRecord {
    AnomalyModelRecord {
        info: AnomalyModelInfo { version, tenant_id: tenant, active, ..model.info.clone() },
        model: model.model.clone(),
    }
}

fn versions(models: &[AnomalyModelInfo]) -> Vec<(i32, bool)> {
    models.iter().map(|m| (m.version, m.active)).collect()
}

async fn listed_versions(store: &Arc<dyn Store>, tenant: TenantId) -> Vec<(i32, bool)> {
    versions(&store.list_anomaly_models(tenant).await.unwrap())
}

async fn active_version(store: &Arc<dyn Store>, tenant: TenantId) -> Option<i32> {
    store.active_anomaly_model(tenant).await.unwrap().map(|m| m.info.version)
}

pub async fn anomaly_versions_number_from_one_per_tenant_and_the_newest_is_active(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-am-num").await;
    let b = tenant(&store, "b-am-num").await;
    assert_eq!(store.active_anomaly_model(a).await.unwrap(), None, "off at first");
    assert!(store.list_anomaly_models(a).await.unwrap().is_empty());

    let at = now();
    let (task, token) = claimed_task(&store, a, at).await;
    let mut first = new_anomaly_model(a, Some(task.id), 1, SMALL_MODEL);
    // The store numbers, activates and assigns versions itself.
    first.info.version = 42;
    first.info.active = false;
    first.info.tenant_id = b;
    assert_eq!(store.complete_anomaly_task(task.id, token, at, &first).await.unwrap(), 1);
    assert_eq!(store.get_anomaly_model(a, 1).await.unwrap(), Some(kept(&first, a, 1, true)));
    assert_eq!(store.active_anomaly_model(a).await.unwrap(), Some(kept(&first, a, 1, true)));
    assert_eq!(store.get_anomaly_model(a, 42).await.unwrap(), None);
    assert_eq!(store.get_anomaly_model(b, 1).await.unwrap(), None, "not b's, whatever the record said");

    assert_eq!(train(&store, a, 2).await, 2);
    assert_eq!(listed_versions(&store, a).await, [(2, true), (1, false)], "the new one is the only active one");
    let at = now();
    let (task, token) = claimed_task(&store, a, at).await;
    let third = new_anomaly_model(a, Some(task.id), 3, SMALL_MODEL);
    assert_eq!(store.complete_anomaly_task(task.id, token, at, &third).await.unwrap(), 3, "answers the version");
    assert_eq!(store.active_anomaly_model(a).await.unwrap(), Some(kept(&third, a, 3, true)));

    let list = store.list_anomaly_models(a).await.unwrap();
    assert_eq!(versions(&list), [(3, true), (2, false), (1, false)], "newest first, only the newest active");
    assert_eq!(list[2], kept(&first, a, 1, false).info, "listed without the model, every field kept");
    assert_eq!(list[0], kept(&third, a, 3, true).info);
    assert_eq!(store.get_anomaly_model(a, 1).await.unwrap(), Some(kept(&first, a, 1, false)));
    assert_eq!(store.get_anomaly_model(a, 0).await.unwrap(), None, "version 0 is never stored");
    assert_eq!(store.get_anomaly_model(a, 4).await.unwrap(), None);

    // b numbers its own versions from 1, and neither tenant sees the other's.
    assert!(store.list_anomaly_models(b).await.unwrap().is_empty(), "no leak from a");
    assert_eq!(store.active_anomaly_model(b).await.unwrap(), None);
    assert_eq!(train(&store, b, 9).await, 1, "each tenant numbers its own versions");
    assert_eq!(train(&store, b, 10).await, 2);
    assert_eq!(listed_versions(&store, b).await, [(2, true), (1, false)]);
    assert_eq!(listed_versions(&store, a).await, [(3, true), (2, false), (1, false)], "a's left alone");
    assert_eq!(active_version(&store, a).await, Some(3));
    let of_b = store.get_anomaly_model(b, 1).await.unwrap().unwrap();
    assert_eq!(of_b.info.tenant_id, b);
    assert_eq!(of_b.model, new_anomaly_model(b, None, 9, SMALL_MODEL).model, "b's own model");
    assert!(store.list_anomaly_models(b).await.unwrap().iter().all(|m| m.tenant_id == b));
    assert!(store.list_anomaly_models(TenantId(Uuid::now_v7())).await.unwrap().is_empty());
}

pub async fn anomaly_activation_switches_versions_and_turns_the_detector_off(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-am-act").await;
    let b = tenant(&store, "b-am-act").await;
    assert!(store.activate_anomaly_model(a, 0).await.unwrap(), "off is always there");
    assert!(!store.activate_anomaly_model(a, 1).await.unwrap(), "no version 1 yet");
    assert_eq!(store.active_anomaly_model(a).await.unwrap(), None);
    train(&store, a, 1).await;
    train(&store, a, 2).await;
    train(&store, b, 3).await;

    assert!(store.activate_anomaly_model(a, 1).await.unwrap());
    assert_eq!(active_version(&store, a).await, Some(1));
    assert_eq!(listed_versions(&store, a).await, [(2, false), (1, true)]);
    assert!(store.activate_anomaly_model(a, 1).await.unwrap(), "activating the active version again");
    assert_eq!(listed_versions(&store, a).await, [(2, false), (1, true)]);

    // A version the tenant does not have: `false`, and nothing changes.
    for missing in [3, -1, i32::MAX] {
        assert!(!store.activate_anomaly_model(a, missing).await.unwrap(), "version {missing}");
    }
    assert_eq!(listed_versions(&store, a).await, [(2, false), (1, true)], "an unknown version changes nothing");
    assert_eq!(active_version(&store, a).await, Some(1));

    // Off: none active, `active_anomaly_model` answers None.
    assert!(store.activate_anomaly_model(a, 0).await.unwrap());
    assert_eq!(store.active_anomaly_model(a).await.unwrap(), None);
    assert_eq!(listed_versions(&store, a).await, [(2, false), (1, false)]);
    assert!(store.activate_anomaly_model(a, 0).await.unwrap(), "off again");
    assert!(!store.activate_anomaly_model(a, 5).await.unwrap());
    assert_eq!(store.active_anomaly_model(a).await.unwrap(), None, "still off");
    assert_eq!(listed_versions(&store, b).await, [(1, true)], "b's detector stays on");

    // Another tenant's versions are not the tenant's to activate.
    let c = tenant(&store, "c-am-act").await;
    assert!(!store.activate_anomaly_model(c, 1).await.unwrap());
    assert!(store.activate_anomaly_model(c, 0).await.unwrap());
    assert_eq!(listed_versions(&store, b).await, [(1, true)], "c's switch off leaves b's version active");
    assert_eq!(listed_versions(&store, a).await, [(2, false), (1, false)]);

    // A new version is active whatever was before, off included.
    assert_eq!(train(&store, a, 4).await, 3);
    assert_eq!(listed_versions(&store, a).await, [(3, true), (2, false), (1, false)]);
    assert!(store.activate_anomaly_model(a, 2).await.unwrap());
    assert_eq!(store.get_anomaly_model(a, 2).await.unwrap().map(|m| m.info.active), Some(true));
    assert_eq!(train(&store, a, 5).await, 4);
    assert_eq!(listed_versions(&store, a).await, [(4, true), (3, false), (2, false), (1, false)]);
}

pub async fn anomaly_models_keep_a_large_model_text_intact(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-am-big").await;
    let at = now();
    let (task, token) = claimed_task(&store, a, at).await;
    let big = new_anomaly_model(a, Some(task.id), 7, 1 << 20);
    assert!(big.model.len() >= 1 << 20, "about 1 MB");
    assert_eq!(store.complete_anomaly_task(task.id, token, at, &big).await.unwrap(), 1);

    let got = store.get_anomaly_model(a, 1).await.unwrap().expect("the version");
    assert_eq!(got.model.len(), big.model.len());
    assert!(got.model == big.model, "the model text comes back byte for byte");
    assert_eq!(got, kept(&big, a, 1, true));
    assert_eq!(store.active_anomaly_model(a).await.unwrap(), Some(kept(&big, a, 1, true)));
    assert_eq!(store.list_anomaly_models(a).await.unwrap(), [kept(&big, a, 1, true).info]);

    // A later, small version leaves the large one as it was.
    assert_eq!(train(&store, a, 8).await, 2);
    assert_eq!(store.get_anomaly_model(a, 1).await.unwrap(), Some(kept(&big, a, 1, false)));
    assert!(store.activate_anomaly_model(a, 1).await.unwrap());
    assert_eq!(store.active_anomaly_model(a).await.unwrap().map(|m| m.model.len()), Some(big.model.len()));
}

pub async fn anomaly_tasks_round_trip_and_are_one_pending_per_tenant(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-at-one").await;
    let b = tenant(&store, "b-at-one").await;
    let mut first = new_anomaly_task(a, 14);
    first.created_at = precise(3, 999_999);
    first.requested_by = Actor::new(ActorType::ApiKey, Uuid::now_v7());
    store.insert_anomaly_task(&first).await.unwrap();

    assert_eq!(store.get_anomaly_task(a, first.id).await.unwrap(), Some(first.clone()), "every field as stored");
    assert_eq!(store.pending_anomaly_task(a).await.unwrap(), Some(first.clone()));
    assert_eq!(store.pending_anomaly_task(b).await.unwrap(), None);
    // Tenant-scoped: another tenant's task is absent.
    assert_eq!(store.get_anomaly_task(b, first.id).await.unwrap(), None);
    assert_eq!(store.get_anomaly_task(a, AnomalyTaskId(Uuid::now_v7())).await.unwrap(), None);

    // One pending per tenant: a second queued task of a is refused and not stored.
    let second = new_anomaly_task(a, 7);
    let r = store.insert_anomaly_task(&second).await;
    assert!(is_conflict(&r), "a has one queued: {r:?}");
    assert_eq!(store.get_anomaly_task(a, second.id).await.unwrap(), None, "nothing stored");
    let of_b = new_anomaly_task(b, 90);
    store.insert_anomaly_task(&of_b).await.unwrap();
    assert_eq!(store.pending_anomaly_task(b).await.unwrap(), Some(of_b.clone()), "b has its own");
    // A taken id, for a tenant with nothing pending.
    let c = tenant(&store, "c-at-one").await;
    let r = store.insert_anomaly_task(&AnomalyTask { tenant_id: c, ..first.clone() }).await;
    assert!(is_conflict(&r), "the id is taken: {r:?}");
    assert_eq!(store.get_anomaly_task(c, first.id).await.unwrap(), None, "not c's");
    assert_eq!(store.pending_anomaly_task(c).await.unwrap(), None);
    assert_eq!(store.get_anomaly_task(a, first.id).await.unwrap(), Some(first.clone()), "left as it was");
    let orphan = new_anomaly_task(TenantId(Uuid::now_v7()), 30);
    let r = store.insert_anomaly_task(&orphan).await;
    assert!(is_conflict(&r), "the tenant must exist: {r:?}");

    // Still one while it runs.
    let at = now();
    let token = Uuid::now_v7();
    let running = store.claim_anomaly_task(at, token, at + LEASE).await.unwrap().unwrap();
    assert_eq!(running.id, first.id, "the older one");
    assert_eq!(store.pending_anomaly_task(a).await.unwrap(), Some(running.clone()));
    assert!(is_conflict(&store.insert_anomaly_task(&new_anomaly_task(a, 7)).await), "a's is running");

    // Ended in every way, a task leaves room for the next.
    let model = new_anomaly_model(a, Some(first.id), 1, SMALL_MODEL);
    store.complete_anomaly_task(first.id, token, at, &model).await.unwrap();
    assert_eq!(store.pending_anomaly_task(a).await.unwrap(), None);
    let third = new_anomaly_task(a, 7);
    store.insert_anomaly_task(&third).await.unwrap();
    assert_eq!(store.pending_anomaly_task(a).await.unwrap(), Some(third.clone()));
    // b's queued task is older: claimed first.
    let got = store.claim_anomaly_task(at, Uuid::now_v7(), at + LEASE).await.unwrap().unwrap();
    assert_eq!(got.id, of_b.id);
    let token = Uuid::now_v7();
    assert_eq!(store.claim_anomaly_task(at, token, at + LEASE).await.unwrap().map(|t| t.id), Some(third.id));
    store.fail_anomaly_task(third.id, token, now(), "no audit history").await.unwrap();
    assert_eq!(store.pending_anomaly_task(a).await.unwrap(), None);
    store.insert_anomaly_task(&new_anomaly_task(a, 7)).await.unwrap();
    assert_eq!(store.get_anomaly_task(b, third.id).await.unwrap(), None, "still a's only");
}

pub async fn anomaly_claims_take_the_oldest_task_and_reclaim_expired_leases(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-at-claim").await;
    let b = tenant(&store, "b-at-claim").await;
    let older = new_anomaly_task(a, 30);
    let newer = new_anomaly_task(b, 7);
    // Inserted newest first: claims go by id, not by insertion.
    store.insert_anomaly_task(&newer).await.unwrap();
    store.insert_anomaly_task(&older).await.unwrap();

    let t0 = precise(10, 250_001);
    let (first, lease) = (Uuid::now_v7(), t0 + LEASE);
    let got = store.claim_anomaly_task(t0, first, lease).await.unwrap().unwrap();
    let expected = AnomalyTask {
        status: JobStatus::Running,
        started_at: Some(t0),
        attempts: 1,
        lease: Some(Lease { token: first, until: lease }),
        ..older.clone()
    };
    assert_eq!(got, expected, "the oldest queued task");
    assert_eq!(store.get_anomaly_task(a, older.id).await.unwrap(), Some(expected));
    assert_eq!(store.pending_anomaly_task(a).await.unwrap().map(|t| t.status), Some(JobStatus::Running));

    let got = store.claim_anomaly_task(t0, Uuid::now_v7(), lease).await.unwrap().unwrap();
    assert_eq!(got.id, newer.id, "then the next one");
    assert_eq!(store.claim_anomaly_task(t0, Uuid::now_v7(), lease).await.unwrap(), None, "both held");
    assert_eq!(
        store.claim_anomaly_task(lease, Uuid::now_v7(), lease + LEASE).await.unwrap(),
        None,
        "a lease that ends at `now` is still live"
    );
    assert_eq!(store.get_anomaly_task(a, older.id).await.unwrap().map(|t| t.attempts), Some(1), "not re-claimed");

    store.progress_anomaly_task(older.id, first, 0.5, lease).await.unwrap();
    let t1 = lease + Duration::from_micros(1);
    let second = Uuid::now_v7();
    let again = store.claim_anomaly_task(t1, second, t1 + LEASE).await.unwrap().unwrap();
    assert_eq!(again.id, older.id, "the oldest expired lease");
    assert_eq!(again.attempts, 2, "attempts incremented");
    assert_eq!(again.started_at, Some(t0), "started when first claimed");
    assert_eq!(again.progress, 0.0, "a new attempt starts over");
    assert_eq!(again.lease, Some(Lease { token: second, until: t1 + LEASE }));
    assert_eq!(store.get_anomaly_task(a, older.id).await.unwrap(), Some(again));
    // The first worker has lost it.
    assert!(is_conflict(&store.progress_anomaly_task(older.id, first, 0.9, t1 + LEASE).await));

    let third = store.claim_anomaly_task(t1, Uuid::now_v7(), t1 + LEASE).await.unwrap().unwrap();
    assert_eq!((third.id, third.attempts), (newer.id, 2), "b's expired too");
    assert_eq!(store.claim_anomaly_task(t1, Uuid::now_v7(), t1 + LEASE).await.unwrap(), None);
}

pub async fn anomaly_task_writes_need_the_lease_and_write_nothing_without_it(store: Arc<dyn Store>) {
    let a = tenant(&store, "an-lease").await;
    let t0 = precise(20, 1);
    let queued = new_anomaly_task(a, 30);
    store.insert_anomaly_task(&queued).await.unwrap();
    let model = new_anomaly_model(a, Some(queued.id), 1, SMALL_MODEL);
    let r = store.progress_anomaly_task(queued.id, Uuid::now_v7(), 0.1, t0).await;
    assert!(is_conflict(&r), "never claimed: {r:?}");
    assert!(is_conflict(&store.complete_anomaly_task(queued.id, Uuid::now_v7(), t0, &model).await), "queued");
    assert!(is_conflict(&store.fail_anomaly_task(queued.id, Uuid::now_v7(), t0, "queued").await));
    assert_eq!(store.get_anomaly_task(a, queued.id).await.unwrap(), Some(queued.clone()), "nothing written");

    let token = Uuid::now_v7();
    store.claim_anomaly_task(t0, token, t0 + LEASE).await.unwrap().unwrap();
    let extended = t0 + LEASE * 2;
    store.progress_anomaly_task(queued.id, token, 0.25, extended).await.unwrap();
    let held = store.get_anomaly_task(a, queued.id).await.unwrap().unwrap();
    assert_eq!((held.progress, held.lease), (0.25, Some(Lease { token, until: extended })));
    assert_eq!(store.claim_anomaly_task(t0 + LEASE * 2, Uuid::now_v7(), extended).await.unwrap(), None, "extended");

    // A wrong token, or a wrong id: `Conflict`, and nothing written.
    let stranger = Uuid::now_v7();
    assert!(is_conflict(&store.progress_anomaly_task(queued.id, stranger, 0.5, extended + LEASE).await));
    let r = store.complete_anomaly_task(queued.id, stranger, t0, &model).await;
    assert!(is_conflict(&r), "{r:?}");
    assert!(is_conflict(&store.fail_anomaly_task(queued.id, stranger, t0, "not mine").await));
    let unknown = AnomalyTaskId(Uuid::now_v7());
    assert!(is_conflict(&store.progress_anomaly_task(unknown, token, 0.5, extended).await));
    assert!(is_conflict(&store.complete_anomaly_task(unknown, token, t0, &model).await));
    assert!(is_conflict(&store.fail_anomaly_task(unknown, token, t0, "whose?").await));
    assert_eq!(store.get_anomaly_task(a, queued.id).await.unwrap(), Some(held.clone()), "nothing written");
    assert!(store.list_anomaly_models(a).await.unwrap().is_empty(), "no version stored");
    assert_eq!(store.active_anomaly_model(a).await.unwrap(), None);

    // Reclaimed after its lease ran out: the first worker's token no longer holds it.
    let t1 = extended + Duration::from_micros(1);
    let fresh = Uuid::now_v7();
    store.claim_anomaly_task(t1, fresh, t1 + LEASE).await.unwrap().unwrap();
    let reclaimed = store.get_anomaly_task(a, queued.id).await.unwrap().unwrap();
    assert!(is_conflict(&store.progress_anomaly_task(queued.id, token, 0.5, t1 + LEASE).await));
    assert!(is_conflict(&store.complete_anomaly_task(queued.id, token, t1, &model).await));
    assert!(is_conflict(&store.fail_anomaly_task(queued.id, token, t1, "stale").await));
    assert_eq!(store.get_anomaly_task(a, queued.id).await.unwrap(), Some(reclaimed), "nothing written");
    assert!(store.list_anomaly_models(a).await.unwrap().is_empty(), "still no version stored");

    // The worker holding the lease completes it.
    assert_eq!(store.complete_anomaly_task(queued.id, fresh, t1, &model).await.unwrap(), 1);
}

pub async fn anomaly_complete_stores_the_version_and_completes_the_task(store: Arc<dyn Store>) {
    let a = tenant(&store, "ao-done").await;
    assert_eq!(train(&store, a, 1).await, 1);
    let t0 = precise(30, 1);
    let (task, token) = claimed_task(&store, a, t0).await;
    store.progress_anomaly_task(task.id, token, 0.75, t0 + LEASE).await.unwrap();
    let model = new_anomaly_model(a, Some(task.id), 5, SMALL_MODEL);
    let done_at = precise(31, 999_999);
    assert_eq!(store.complete_anomaly_task(task.id, token, done_at, &model).await.unwrap(), 2);

    let expected = AnomalyTask {
        status: JobStatus::Completed,
        progress: 1.0,
        model_version: Some(2),
        finished_at: Some(done_at),
        lease: None,
        ..task.clone()
    };
    assert_eq!(store.get_anomaly_task(a, task.id).await.unwrap(), Some(expected.clone()));
    assert_eq!(store.pending_anomaly_task(a).await.unwrap(), None);
    assert_eq!(store.get_anomaly_model(a, 2).await.unwrap(), Some(kept(&model, a, 2, true)));
    assert_eq!(listed_versions(&store, a).await, [(2, true), (1, false)]);

    // Once completed, the task is no longer held: nothing more is written.
    let again = store.complete_anomaly_task(task.id, token, done_at, &model).await;
    assert!(is_conflict(&again), "{again:?}");
    assert!(is_conflict(&store.progress_anomaly_task(task.id, token, 0.5, t0 + LEASE).await));
    assert!(is_conflict(&store.fail_anomaly_task(task.id, token, done_at, "late").await));
    assert_eq!(store.get_anomaly_task(a, task.id).await.unwrap(), Some(expected));
    assert_eq!(listed_versions(&store, a).await, [(2, true), (1, false)]);
    assert_eq!(store.claim_anomaly_task(done_at + LEASE * 10, Uuid::now_v7(), done_at).await.unwrap(), None);
}

pub async fn anomaly_fail_marks_the_task_failed(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-ax-fail").await;
    let b = tenant(&store, "b-ax-fail").await;
    let t0 = now();
    let (task, token) = claimed_task(&store, a, t0).await;
    let at = precise(40, 7);
    let error = "not enough audit history: 3 checks of 200 — \"window\" ✓";
    store.fail_anomaly_task(task.id, token, at, error).await.unwrap();
    let expected = AnomalyTask {
        status: JobStatus::Failed,
        error: Some(error.to_owned()),
        finished_at: Some(at),
        lease: None,
        ..task.clone()
    };
    assert_eq!(store.get_anomaly_task(a, task.id).await.unwrap(), Some(expected.clone()));
    assert_eq!(store.get_anomaly_task(b, task.id).await.unwrap(), None, "tenant-scoped");
    assert_eq!(store.pending_anomaly_task(a).await.unwrap(), None);
    assert!(is_conflict(&store.fail_anomaly_task(task.id, token, at, "again").await));
    assert!(is_conflict(&store.progress_anomaly_task(task.id, token, 0.5, at + LEASE).await));
    let model = new_anomaly_model(a, Some(task.id), 1, SMALL_MODEL);
    assert!(is_conflict(&store.complete_anomaly_task(task.id, token, at, &model).await));
    assert_eq!(store.get_anomaly_task(a, task.id).await.unwrap(), Some(expected), "left failed");
    assert!(store.list_anomaly_models(a).await.unwrap().is_empty());
    assert_eq!(store.claim_anomaly_task(at + LEASE * 10, Uuid::now_v7(), at).await.unwrap(), None, "not claimable");
}
