//! Conformance of the `AnomalyRepo` port: anomaly reports round-trip every field, list
//! newest first by keyset pages of one tenant filtered on agent, type, severity, status and
//! creation time, are replaced whole by an update (but for id, tenant and `created_at`), and
//! are counted per agent, type, severity, status and hour; and the anomaly detector's
//! versions (numbered per tenant, at most one active, none when off) and training tasks (one
//! pending per tenant, claimed under a lease, completed into a new version). Expanded by
//! `store_conformance_tests!` with the rest.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{AgentId, AnomalyId, TenantId};
use agentgov_domain::model::{
    Actor, ActorType, AnomalyCount, AnomalyFilter, AnomalyReport, AnomalySource, AnomalyStatus, AnomalyType,
    JsonObject, Severity,
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
    all_pages(limit, |r: &AnomalyReport| r.id.0, async |req| store.list_anomalies(tenant, filter, &req).await).await
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
