//! Conformance of the `HitlRepo` port: approval requests round-trip every field, list
//! oldest first by keyset pages of one tenant, change only while `pending` (a decision),
//! and are found across tenants by the expiry job (pending past their expiry) and the
//! callback sender (callbacks due); a final request's callback is replaced on its own.
//! Expanded by `store_conformance_tests!` with the rest.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{AgentId, HitlId, TenantId};
use agentgov_domain::model::{
    Actor, ActorType, ApprovalGrant, CallbackStatus, HitlCallback, HitlFilter, HitlRequest, HitlStatus, JsonObject,
    RiskLevel,
};
use agentgov_domain::page::{PageRequest, encode_cursor};
use agentgov_domain::ports::Store;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::fixtures::*;

use HitlStatus::{Approved, Cancelled, Expired, Pending, Rejected};

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

/// A callback of `status` at its `attempts`-th attempt, with every field its status sets.
fn callback(url: &str, status: CallbackStatus, attempts: u32, at: OffsetDateTime) -> HitlCallback {
    HitlCallback {
        url: url.to_owned(),
        status,
        attempts,
        next_attempt_at: (status == CallbackStatus::Scheduled).then_some(at),
        delivered_at: (status == CallbackStatus::Delivered).then_some(at),
        last_error: (attempts > 1).then(|| format!("HTTP 503 «unavailable» after attempt {}", attempts - 1)),
    }
}

/// `request` made final with `status` at `at`, as a decision writes it: decider, time and
/// comment set, and its callback (if any) scheduled at `at`.
fn finalised(request: HitlRequest, status: HitlStatus, at: OffsetDateTime) -> HitlRequest {
    let decided_by = match status {
        Expired => Actor::system("hitl_expiry"),
        _ => Actor::new(ActorType::User, Uuid::now_v7()),
    };
    HitlRequest {
        status,
        decided_by: Some(decided_by),
        decided_at: Some(at),
        comment: (status != Expired).then(|| format!("{} — \"looks fine\" ✓", status.as_str())),
        callback: request.callback.as_ref().map(|c| callback(&c.url, CallbackStatus::Scheduled, 1, at)),
        updated_at: at,
        ..request
    }
}

/// Stores `request` and answers it.
async fn stored(store: &Arc<dyn Store>, request: HitlRequest) -> HitlRequest {
    store.insert_hitl(&request, u64::MAX).await.unwrap();
    request
}

/// Every request passing `filter`, walking pages of `limit` by their cursors.
async fn listed(store: &Arc<dyn Store>, tenant: TenantId, filter: &HitlFilter, limit: u32) -> Vec<HitlRequest> {
    all_pages(limit, |r: &HitlRequest| r.id.0, async |req| store.list_hitl(tenant, filter, &req).await).await
}

fn ids(requests: &[HitlRequest]) -> Vec<HitlId> {
    requests.iter().map(|r| r.id).collect()
}

pub async fn hitl_requests_round_trip_every_field(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-hr-rt").await;
    let b = tenant(&store, "b-hr-rt").await;
    let (x, y) = (agent(), agent());
    let full = new_hitl_request(a, x, precise(3_600, 250_001), 1);
    let bare = HitlRequest {
        context: JsonObject::new(),
        decision_id: None,
        callback: None,
        requested_by: Actor::new(ActorType::User, Uuid::now_v7()),
        risk: RiskLevel::Critical,
        risk_score: 1.0,
        ..new_hitl_request(a, x, precise(3_601, 1), 2)
    };
    // Stored final: every field of a decision set, a callback retried once already.
    let approved = finalised(new_hitl_request(a, y, precise(3_602, 999_999), 3), Approved, precise(10, 123_457));
    let approved = HitlRequest {
        callback: Some(callback("https://hooks.example.test/a", CallbackStatus::Scheduled, 2, precise(11, 654_321))),
        ..approved
    };
    let delivered = HitlRequest {
        callback: Some(callback("https://hooks.example.test/d", CallbackStatus::Delivered, 1, precise(12, 7))),
        ..finalised(new_hitl_request(a, y, precise(3_603, 5), 4), Rejected, precise(12, 3))
    };
    let expired = finalised(new_hitl_request(a, x, precise(3_604, 5), 5), Expired, precise(3_604, 5));
    let of_b = new_hitl_request(b, x, precise(3_605, 42), 6);
    for request in [&full, &bare, &approved, &delivered, &expired, &of_b] {
        store.insert_hitl(request, u64::MAX).await.unwrap();
    }

    for request in [&full, &bare, &approved, &delivered, &expired] {
        assert_eq!(store.get_hitl(a, request.id).await.unwrap().as_ref(), Some(request), "every field as stored");
    }
    assert_eq!(store.get_hitl(b, of_b.id).await.unwrap(), Some(of_b.clone()), "read back with its tenant");
    assert_eq!(store.get_hitl(b, full.id).await.unwrap(), None, "another tenant's request is absent");
    assert_eq!(store.get_hitl(a, of_b.id).await.unwrap(), None);
    assert_eq!(store.get_hitl(a, HitlId(Uuid::now_v7())).await.unwrap(), None);
    assert_eq!(
        listed(&store, a, &HitlFilter::default(), 50).await,
        [full, bare, approved, delivered, expired],
        "listed as stored"
    );
    assert_eq!(listed(&store, b, &HitlFilter::default(), 50).await, [of_b]);
}

pub async fn hitl_insert_conflicts_on_a_taken_id_or_an_unknown_tenant(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-hi-ins").await;
    let b = tenant(&store, "b-hi-ins").await;
    let at = precise(3_600, 1);

    let orphan = new_hitl_request(TenantId(Uuid::now_v7()), agent(), at, 1);
    let r = store.insert_hitl(&orphan, u64::MAX).await;
    assert!(is_conflict(&r), "the tenant must exist: {r:?}");
    assert_eq!(store.get_hitl(orphan.tenant_id, orphan.id).await.unwrap(), None, "nothing stored");

    let kept = stored(&store, new_hitl_request(a, agent(), at, 2)).await;
    let again = HitlRequest { id: kept.id, ..new_hitl_request(a, agent(), at, 3) };
    let r = store.insert_hitl(&again, u64::MAX).await;
    assert!(is_conflict(&r), "id taken in the tenant: {r:?}");
    let elsewhere = HitlRequest { id: kept.id, ..new_hitl_request(b, agent(), at, 4) };
    let r = store.insert_hitl(&elsewhere, u64::MAX).await;
    assert!(is_conflict(&r), "id taken in another tenant: {r:?}");

    assert_eq!(store.get_hitl(a, kept.id).await.unwrap(), Some(kept.clone()), "left as it was");
    assert_eq!(store.get_hitl(b, kept.id).await.unwrap(), None);
    assert_eq!(listed(&store, a, &HitlFilter::default(), 50).await, [kept]);
    assert!(listed(&store, b, &HitlFilter::default(), 50).await.is_empty());
}

pub async fn hitl_lists_page_oldest_first_and_filter_by_status_and_agent(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-hl-list").await;
    let b = tenant(&store, "b-hl-list").await;
    let (x, y) = (agent(), agent());
    let statuses = [Pending, Approved, Pending, Rejected, Pending, Expired, Cancelled];
    let (mut of_a, mut of_b) = (Vec::new(), Vec::new());
    for (i, status) in statuses.into_iter().enumerate() {
        let seed = u8::try_from(i).unwrap();
        let by = if i % 2 == 0 { x } else { y };
        let request = new_hitl_request(a, by, precise(3_600 + i64::from(seed), 17), seed);
        of_a.push(if status == Pending { request } else { finalised(request, status, precise(50, 5)) });
        // b's requests interleave a's by id, by the same agent.
        of_b.push(new_hitl_request(b, x, precise(3_600, 17), 100 + seed));
    }
    // Stored newest first: lists go by id, not by insertion.
    for request in of_a.iter().chain(&of_b).rev() {
        store.insert_hitl(request, u64::MAX).await.unwrap();
    }

    let all = HitlFilter::default();
    for limit in [1, 2, 3, 7, 50] {
        assert_eq!(listed(&store, a, &all, limit).await, of_a, "oldest first in pages of {limit}");
    }
    let first = store.list_hitl(a, &all, &PageRequest::first(2)).await.unwrap();
    assert_eq!(ids(&first.items), ids(&of_a[..2]));
    assert_eq!(first.next_cursor, Some(encode_cursor(of_a[1].id.0)));
    let whole = store.list_hitl(a, &all, &PageRequest::first(7)).await.unwrap();
    assert_eq!(whole.items, of_a);
    assert_eq!(whole.next_cursor, None, "a page that holds the rest exactly has no cursor");
    let after_last = PageRequest { limit: 5, after: Some(of_a[6].id.0) };
    let past = store.list_hitl(a, &all, &after_last).await.unwrap();
    assert!(past.items.is_empty() && past.next_cursor.is_none());
    let mid = PageRequest { limit: 2, after: Some(of_a[3].id.0) };
    assert_eq!(store.list_hitl(a, &all, &mid).await.unwrap().items, of_a[4..6]);

    let matching = |f: &HitlFilter| of_a.iter().filter(|r| f.matches(r)).cloned().collect::<Vec<_>>();
    let pending = HitlFilter { status: Some(Pending), agent_id: None };
    assert_eq!(matching(&pending).len(), 3);
    assert_eq!(listed(&store, a, &pending, 2).await, matching(&pending));
    let page = store.list_hitl(a, &pending, &PageRequest::first(3)).await.unwrap();
    assert_eq!((page.items.len(), page.next_cursor), (3, None), "exactly the filtered rows");
    for status in [Approved, Rejected, Expired, Cancelled] {
        let only = HitlFilter { status: Some(status), agent_id: None };
        assert_eq!(listed(&store, a, &only, 1).await, matching(&only), "{status:?}");
    }
    let by_y = HitlFilter { status: None, agent_id: Some(y) };
    assert_eq!(listed(&store, a, &by_y, 2).await, matching(&by_y));
    assert_eq!(matching(&by_y).len(), 3);
    let pending_by_x = HitlFilter { status: Some(Pending), agent_id: Some(x) };
    assert_eq!(listed(&store, a, &pending_by_x, 1).await, matching(&pending_by_x));
    assert_eq!(matching(&pending_by_x).len(), 3);
    let pending_by_y = HitlFilter { status: Some(Pending), agent_id: Some(y) };
    assert!(listed(&store, a, &pending_by_y, 1).await.is_empty());
    let by_nobody = HitlFilter { status: None, agent_id: Some(agent()) };
    assert!(listed(&store, a, &by_nobody, 10).await.is_empty());

    assert_eq!(listed(&store, b, &all, 3).await, of_b, "each tenant its own");
    assert_eq!(listed(&store, b, &HitlFilter { status: None, agent_id: Some(x) }, 3).await, of_b);
    assert!(listed(&store, b, &HitlFilter { status: Some(Approved), agent_id: None }, 3).await.is_empty());
    assert!(listed(&store, TenantId(Uuid::now_v7()), &all, 3).await.is_empty());
}

pub async fn hitl_decide_replaces_only_a_pending_request(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-hd-dec").await;
    let b = tenant(&store, "b-hd-dec").await;
    let (x, y) = (agent(), agent());
    let now = precise(1_000, 500_000);
    let original = stored(&store, new_hitl_request(a, x, now - SECOND, 1)).await;
    let sibling = stored(&store, new_hitl_request(a, x, now - MICRO, 2)).await;
    assert_eq!(ids(&store.expired_hitl(now, 10).await.unwrap()), [original.id, sibling.id]);

    // Every field but id and tenant differs, the indexed ones included.
    let approved = HitlRequest { id: original.id, ..finalised(new_hitl_request(a, y, now + SECOND, 9), Approved, now) };
    assert!(store.decide_hitl(&approved).await.unwrap());
    assert_eq!(store.get_hitl(a, original.id).await.unwrap(), Some(approved.clone()));
    // The columns follow the record.
    let pending = HitlFilter { status: Some(Pending), agent_id: None };
    assert_eq!(listed(&store, a, &pending, 10).await, std::slice::from_ref(&sibling));
    let approved_by_y = HitlFilter { status: Some(Approved), agent_id: Some(y) };
    assert_eq!(listed(&store, a, &approved_by_y, 10).await, std::slice::from_ref(&approved));
    assert!(
        listed(&store, a, &HitlFilter { status: None, agent_id: Some(x) }, 10)
            .await
            .iter()
            .all(|r| r.id != original.id)
    );
    assert_eq!(
        store.expired_hitl(now, 10).await.unwrap(),
        std::slice::from_ref(&sibling),
        "decided: no longer expires"
    );
    assert_eq!(
        store.due_hitl_callbacks(now, 10, i64::MAX).await.unwrap(),
        std::slice::from_ref(&approved),
        "its callback is due"
    );

    // Decided already: a later decision changes nothing.
    let rejected =
        HitlRequest { id: original.id, ..finalised(new_hitl_request(a, x, now, 10), Rejected, now + SECOND) };
    assert!(!store.decide_hitl(&rejected).await.unwrap());
    let reopened = HitlRequest { id: original.id, ..new_hitl_request(a, x, now, 11) };
    assert!(!store.decide_hitl(&reopened).await.unwrap(), "not even back to pending");
    assert_eq!(store.get_hitl(a, original.id).await.unwrap(), Some(approved.clone()));
    assert_eq!(store.due_hitl_callbacks(now, 10, i64::MAX).await.unwrap(), std::slice::from_ref(&approved));

    let absent = finalised(new_hitl_request(a, x, now, 12), Cancelled, now);
    let r = store.decide_hitl(&absent).await;
    assert!(is_not_found(&r), "{r:?}");
    assert_eq!(store.get_hitl(a, absent.id).await.unwrap(), None, "not inserted");

    // Another tenant's id is absent, and its row is left alone: the tenant is part of the key.
    let foreign = HitlRequest { id: sibling.id, ..finalised(new_hitl_request(b, y, now, 13), Cancelled, now) };
    let r = store.decide_hitl(&foreign).await;
    assert!(is_not_found(&r), "another tenant's request is absent: {r:?}");
    assert_eq!(store.get_hitl(a, sibling.id).await.unwrap(), Some(sibling.clone()), "still pending");
    assert_eq!(store.get_hitl(b, sibling.id).await.unwrap(), None);
    assert!(listed(&store, b, &HitlFilter::default(), 10).await.is_empty());

    // Still pending with a later expiry: a replacement too, and the expiry column follows.
    let extended = HitlRequest { expires_at: now + 60 * SECOND, updated_at: now, ..sibling.clone() };
    assert!(store.decide_hitl(&extended).await.unwrap());
    assert_eq!(store.get_hitl(a, sibling.id).await.unwrap(), Some(extended.clone()));
    assert!(store.expired_hitl(now, 10).await.unwrap().is_empty(), "expires later now");
    assert_eq!(store.expired_hitl(now + 60 * SECOND, 10).await.unwrap(), std::slice::from_ref(&extended));

    let expired = finalised(extended, Expired, now + 60 * SECOND);
    assert!(store.decide_hitl(&expired).await.unwrap());
    assert_eq!(store.get_hitl(a, sibling.id).await.unwrap(), Some(expired));
    assert!(store.expired_hitl(now + 3_600 * SECOND, 10).await.unwrap().is_empty());
}

pub async fn hitl_expired_are_pending_past_their_expiry_soonest_first(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-he-exp").await;
    let b = tenant(&store, "b-he-exp").await;
    let now = precise(1_000, 500_000);
    let x = agent();
    assert!(store.expired_hitl(now, 10).await.unwrap().is_empty());

    // Created in an order unlike their expiry: the scan goes by expiry, across tenants.
    let p1 = stored(&store, new_hitl_request(a, x, now - 30 * SECOND, 1)).await;
    let at_now = stored(&store, new_hitl_request(a, x, now, 2)).await;
    let later = stored(&store, new_hitl_request(a, x, now + MICRO, 3)).await;
    let decided = finalised(new_hitl_request(a, x, now - 60 * SECOND, 4), Approved, now - 61 * SECOND);
    store.insert_hitl(&decided, u64::MAX).await.unwrap();
    let cancelled = finalised(new_hitl_request(b, x, now - 70 * SECOND, 5), Cancelled, now - 71 * SECOND);
    store.insert_hitl(&cancelled, u64::MAX).await.unwrap();
    let q1 = stored(&store, new_hitl_request(b, x, now - 45 * SECOND, 6)).await;
    let q2 = stored(&store, new_hitl_request(b, x, now + 3_600 * SECOND, 7)).await;
    let p0 = stored(&store, new_hitl_request(a, x, now - 90 * SECOND, 8)).await;

    let due = store.expired_hitl(now, 100).await.unwrap();
    assert_eq!(due, [p0.clone(), q1.clone(), p1.clone(), at_now.clone()], "pending, at or before now, soonest first");
    assert_eq!(store.expired_hitl(now, 2).await.unwrap(), [p0.clone(), q1.clone()], "up to the limit");
    assert_eq!(store.expired_hitl(now, 1).await.unwrap(), std::slice::from_ref(&p0));
    assert!(store.expired_hitl(now, 0).await.unwrap().is_empty());
    assert_eq!(store.expired_hitl(now - 60 * SECOND, 100).await.unwrap(), std::slice::from_ref(&p0));
    assert!(store.expired_hitl(now - 91 * SECOND, 100).await.unwrap().is_empty());
    assert_eq!(
        store.expired_hitl(now + MICRO, 100).await.unwrap(),
        [p0.clone(), q1.clone(), p1.clone(), at_now.clone(), later.clone()],
        "a microsecond later"
    );

    // Once decided (here by the expiry job), a request is no longer returned.
    let expired = finalised(q1.clone(), Expired, now);
    assert!(store.decide_hitl(&expired).await.unwrap());
    assert_eq!(store.expired_hitl(now, 100).await.unwrap(), [p0.clone(), p1.clone(), at_now.clone()]);
    let approved = finalised(p0, Approved, now);
    assert!(store.decide_hitl(&approved).await.unwrap());
    assert_eq!(store.expired_hitl(now, 100).await.unwrap(), [p1.clone(), at_now.clone()]);
    let far = now + 7_200 * SECOND;
    assert_eq!(store.expired_hitl(far, 100).await.unwrap(), [p1, at_now, later, q2]);
}

pub async fn hitl_escalations_are_due_pending_steps_taken_once(store: Arc<dyn Store>) {
    use agentgov_domain::model::{EscalationStep, HitlEscalation, Role};
    let a = tenant(&store, "a-he-esc").await;
    let b = tenant(&store, "b-he-esc").await;
    let now = precise(2_000, 250_000);
    let x = agent();
    let steps =
        [EscalationStep { after_secs: 60, role: Role::Analyst }, EscalationStep { after_secs: 600, role: Role::Admin }];
    let chained = |tenant, seed, created: OffsetDateTime| {
        let r = new_hitl_request(tenant, x, now + 3_600 * SECOND, seed);
        HitlRequest { created_at: created, escalation: HitlEscalation::start(&steps, created), ..r }
    };
    assert!(store.due_hitl_escalations(now, 10).await.unwrap().is_empty());
    // Due at now - 30 s, now - 1 µs... , not yet, and none (no chain).
    let p1 = stored(&store, chained(a, 1, now - 90 * SECOND)).await;
    let q1 = stored(&store, chained(b, 2, now - 100 * SECOND)).await;
    let at_now = stored(&store, chained(a, 3, now - 60 * SECOND)).await;
    let later = stored(&store, chained(a, 4, now - 60 * SECOND + MICRO)).await;
    let plain = stored(&store, new_hitl_request(a, x, now + 3_600 * SECOND, 5)).await;
    let decided = finalised(chained(b, 6, now - 500 * SECOND), Rejected, now - 400 * SECOND);
    store.insert_hitl(&decided, u64::MAX).await.unwrap();
    assert_eq!(plain.escalate_at(), None);

    let due = store.due_hitl_escalations(now, 100).await.unwrap();
    assert_eq!(due, [q1.clone(), p1.clone(), at_now.clone()], "pending, due by now, soonest first, across tenants");
    assert_eq!(store.due_hitl_escalations(now, 1).await.unwrap(), std::slice::from_ref(&q1));
    assert!(store.due_hitl_escalations(now, 0).await.unwrap().is_empty());

    // A step: taken once (the second try, or one for a stale due time, changes nothing).
    let step = |r: &HitlRequest| HitlRequest {
        escalation: r.escalation.as_ref().unwrap().advanced(r.created_at, now),
        updated_at: now,
        ..r.clone()
    };
    let p1_due = p1.escalate_at().unwrap();
    let stepped = step(&p1);
    assert!(store.escalate_hitl(&stepped, p1_due).await.unwrap());
    assert!(!store.escalate_hitl(&step(&stepped), p1_due).await.unwrap(), "the due time moved on");
    assert_eq!(store.get_hitl(a, p1.id).await.unwrap(), Some(stepped.clone()));
    assert_eq!(store.due_hitl_escalations(now, 100).await.unwrap(), [q1.clone(), at_now.clone()]);
    let next = p1.created_at + 600 * SECOND;
    assert_eq!(stepped.escalate_at(), Some(next));
    let ids = |due: Vec<HitlRequest>| due.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert!(!ids(store.due_hitl_escalations(next - MICRO, 100).await.unwrap()).contains(&p1.id));
    assert!(ids(store.due_hitl_escalations(next, 100).await.unwrap()).contains(&p1.id), "due again by the next step");
    // Another tenant's id is not found; a decided request is not escalated.
    let foreign = HitlRequest { tenant_id: b, ..step(&at_now) };
    assert!(matches!(
        store.escalate_hitl(&foreign, at_now.escalate_at().unwrap()).await,
        Err(DomainError::NotFound { .. })
    ));
    let rejected = finalised(at_now.clone(), Rejected, now);
    assert!(store.decide_hitl(&rejected).await.unwrap());
    assert!(!store.escalate_hitl(&step(&at_now), at_now.escalate_at().unwrap()).await.unwrap());
    assert_eq!(store.due_hitl_escalations(now, 100).await.unwrap(), [q1]);
    let _ = later;
}

pub async fn hitl_due_callbacks_are_scheduled_ones_due_by_now_soonest_first(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-hc-due").await;
    let b = tenant(&store, "b-hc-due").await;
    let now = precise(2_000, 250_000);
    let x = agent();
    assert!(store.due_hitl_callbacks(now, 10, i64::MAX).await.unwrap().is_empty());

    let with = |tenant: TenantId, seed: u8, status: CallbackStatus, attempts: u32, at: OffsetDateTime| {
        let request = finalised(new_hitl_request(tenant, x, precise(3_600, 1), seed), Approved, precise(1_900, 3));
        let url = format!("https://hooks.example.test/{seed}");
        HitlRequest { callback: Some(callback(&url, status, attempts, at)), ..request }
    };
    use CallbackStatus::{Delivered, Failed, Scheduled, Waiting};
    // Created in an order unlike their due times: the scan goes by due time, across tenants.
    let d1 = stored(&store, with(a, 1, Scheduled, 1, now - 10 * SECOND)).await;
    let d2 = stored(&store, with(b, 2, Scheduled, 3, now)).await;
    let future = stored(&store, with(a, 3, Scheduled, 2, now + MICRO)).await;
    stored(&store, with(a, 4, Delivered, 1, now - 100 * SECOND)).await;
    let mut failed = with(b, 5, Failed, 8, now - 100 * SECOND);
    if let Some(cb) = failed.callback.as_mut() {
        cb.next_attempt_at = Some(now - 100 * SECOND);
    }
    stored(&store, failed).await;
    let mut unscheduled = with(a, 6, Scheduled, 1, now);
    if let Some(cb) = unscheduled.callback.as_mut() {
        cb.next_attempt_at = None;
    }
    stored(&store, unscheduled).await;
    stored(&store, with(a, 7, Waiting, 0, now - 100 * SECOND)).await;
    stored(&store, HitlRequest { callback: None, ..with(b, 8, Scheduled, 1, now) }).await;
    // Pending, its callback waiting for the decision.
    stored(&store, new_hitl_request(a, x, now - SECOND, 9)).await;
    let d0 = stored(&store, with(b, 10, Scheduled, 2, now - 20 * SECOND)).await;

    let due = store.due_hitl_callbacks(now, 100, i64::MAX).await.unwrap();
    assert_eq!(due, [d0.clone(), d1.clone(), d2.clone()], "scheduled at or before now, soonest first");
    assert_eq!(store.due_hitl_callbacks(now, 2, i64::MAX).await.unwrap(), [d0.clone(), d1.clone()], "up to the limit");
    assert!(store.due_hitl_callbacks(now, 0, i64::MAX).await.unwrap().is_empty());
    assert_eq!(store.due_hitl_callbacks(now - 10 * SECOND, 100, i64::MAX).await.unwrap(), [d0.clone(), d1.clone()]);
    assert!(store.due_hitl_callbacks(now - 21 * SECOND, 100, i64::MAX).await.unwrap().is_empty());
    assert_eq!(store.due_hitl_callbacks(now + MICRO, 100, i64::MAX).await.unwrap(), [d0, d1, d2, future]);
}

pub async fn hitl_callback_updates_apply_to_final_requests_only(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-hu-cb").await;
    let b = tenant(&store, "b-hu-cb").await;
    let now = precise(3_000, 750_000);
    let x = agent();
    let url = "https://hooks.example.test/cb";

    let r =
        store.update_hitl_callback(a, HitlId(Uuid::now_v7()), &callback(url, CallbackStatus::Delivered, 1, now)).await;
    assert!(is_not_found(&r), "absent: {r:?}");

    let pending = stored(&store, new_hitl_request(a, x, now + SECOND, 1)).await;
    let r = store.update_hitl_callback(a, pending.id, &callback(url, CallbackStatus::Scheduled, 0, now)).await;
    assert!(is_conflict(&r), "a pending request's callback is the decision's to set: {r:?}");
    assert_eq!(store.get_hitl(a, pending.id).await.unwrap(), Some(pending.clone()), "unchanged");
    assert!(store.due_hitl_callbacks(now, 10, i64::MAX).await.unwrap().is_empty());

    let approved = stored(&store, finalised(new_hitl_request(a, x, now + SECOND, 2), Approved, now)).await;
    assert_eq!(store.due_hitl_callbacks(now, 10, i64::MAX).await.unwrap(), std::slice::from_ref(&approved));

    // Failed once: retried later. Only the callback changes; it is due at its new time.
    let retry = callback(url, CallbackStatus::Scheduled, 2, now + 5 * SECOND);
    store.update_hitl_callback(a, approved.id, &retry).await.unwrap();
    let retrying = HitlRequest { callback: Some(retry), ..approved.clone() };
    assert_eq!(store.get_hitl(a, approved.id).await.unwrap(), Some(retrying.clone()));
    assert!(store.due_hitl_callbacks(now, 10, i64::MAX).await.unwrap().is_empty(), "due later now");
    assert_eq!(
        store.due_hitl_callbacks(now + 5 * SECOND, 10, i64::MAX).await.unwrap(),
        std::slice::from_ref(&retrying)
    );

    // Another tenant's request is absent, and left alone.
    let foreign = callback(url, CallbackStatus::Failed, 9, now);
    let r = store.update_hitl_callback(b, approved.id, &foreign).await;
    assert!(is_not_found(&r), "another tenant's request is absent: {r:?}");
    assert_eq!(store.get_hitl(a, approved.id).await.unwrap(), Some(retrying.clone()));

    // Delivered: no longer due.
    let done = callback(url, CallbackStatus::Delivered, 3, now + 5 * SECOND);
    store.update_hitl_callback(a, approved.id, &done).await.unwrap();
    let delivered = HitlRequest { callback: Some(done), ..approved.clone() };
    assert_eq!(store.get_hitl(a, approved.id).await.unwrap(), Some(delivered.clone()));
    assert!(store.due_hitl_callbacks(now + 3_600 * SECOND, 10, i64::MAX).await.unwrap().is_empty());

    // Given up: no longer due either.
    let rejected = stored(&store, finalised(new_hitl_request(a, x, now + SECOND, 3), Rejected, now)).await;
    let mut gave_up = callback(url, CallbackStatus::Failed, 8, now);
    gave_up.next_attempt_at = Some(now);
    store.update_hitl_callback(a, rejected.id, &gave_up).await.unwrap();
    assert_eq!(
        store.get_hitl(a, rejected.id).await.unwrap().and_then(|r| r.callback),
        Some(gave_up),
        "stored as given"
    );
    assert!(store.due_hitl_callbacks(now + 3_600 * SECOND, 10, i64::MAX).await.unwrap().is_empty());

    // A final request without a callback gets the one given.
    let bare = HitlRequest { callback: None, ..finalised(new_hitl_request(a, x, now, 4), Cancelled, now) };
    let bare = stored(&store, bare).await;
    let first = callback(url, CallbackStatus::Scheduled, 0, now);
    store.update_hitl_callback(a, bare.id, &first).await.unwrap();
    let scheduled = HitlRequest { callback: Some(first), ..bare };
    assert_eq!(store.get_hitl(a, scheduled.id).await.unwrap(), Some(scheduled.clone()));
    assert_eq!(store.due_hitl_callbacks(now, 10, i64::MAX).await.unwrap(), [scheduled]);

    assert_eq!(store.get_hitl(a, pending.id).await.unwrap(), Some(pending), "the pending one untouched throughout");
    assert_eq!(store.get_hitl(a, approved.id).await.unwrap(), Some(delivered));
}

pub async fn hitl_due_callbacks_take_turns_across_tenants(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-hc-turn").await;
    let b = tenant(&store, "b-hc-turn").await;
    let c = tenant(&store, "c-hc-turn").await;
    let now = precise(2_000, 250_000);
    let x = agent();
    let due = |tenant: TenantId, seed: u8, secs_ago: u32| {
        let request = finalised(new_hitl_request(tenant, x, precise(3_600, 1), seed), Approved, precise(1_900, 3));
        let at = now - secs_ago * SECOND;
        HitlRequest {
            callback: Some(callback(&format!("https://hooks.example.test/{seed}"), CallbackStatus::Scheduled, 1, at)),
            ..request
        }
    };
    // Tenant a's backlog is older than anything of b's and c's.
    let mut a_due = Vec::new();
    for seed in 0..5 {
        a_due.push(stored(&store, due(a, seed, 100 - u32::from(seed))).await);
    }
    let b0 = stored(&store, due(b, 10, 20)).await;
    let b1 = stored(&store, due(b, 11, 10)).await;
    let c0 = stored(&store, due(c, 20, 5)).await;

    let got = store.due_hitl_callbacks(now, 100, 2).await.unwrap();
    assert_eq!(
        got,
        [a_due[0].clone(), b0.clone(), c0.clone(), a_due[1].clone(), b1.clone()],
        "each tenant's soonest, then each one's second; at most 2 of a tenant"
    );
    let got = store.due_hitl_callbacks(now, 3, 2).await.unwrap();
    assert_eq!(got, [a_due[0].clone(), b0.clone(), c0.clone()], "a's backlog does not fill the round");
    let got = store.due_hitl_callbacks(now, 100, 1).await.unwrap();
    assert_eq!(got, [a_due[0].clone(), b0, c0]);
    assert!(store.due_hitl_callbacks(now, 100, 0).await.unwrap().is_empty());
}

pub async fn hitl_open_callbacks_are_capped_per_tenant(store: Arc<dyn Store>) {
    use agentgov_domain::ports::store::CALLBACK_LIMIT_REACHED;
    let a = tenant(&store, "a-hc-cap").await;
    let b = tenant(&store, "b-hc-cap").await;
    let x = agent();
    let limited =
        |r: Result<(), DomainError>| matches!(r, Err(DomainError::Conflict(m)) if m == CALLBACK_LIMIT_REACHED);
    let expires = precise(3_600, 1);
    // Pending with a callback (waiting): open.
    let first = new_hitl_request(a, x, expires, 1);
    store.insert_hitl(&first, 2).await.unwrap();
    store.insert_hitl(&new_hitl_request(a, x, expires, 2), 2).await.unwrap();
    assert!(limited(store.insert_hitl(&new_hitl_request(a, x, expires, 3), 2).await));
    let without = HitlRequest { callback: None, ..new_hitl_request(a, x, expires, 4) };
    store.insert_hitl(&without, 2).await.expect("a request without a callback is not counted");
    store.insert_hitl(&new_hitl_request(b, x, expires, 5), 2).await.expect("counted per tenant");

    // Decided: scheduled, still open; delivered: no longer.
    let decided = finalised(first.clone(), Approved, precise(1_900, 3));
    assert!(store.decide_hitl(&decided).await.unwrap());
    assert!(limited(store.insert_hitl(&new_hitl_request(a, x, expires, 6), 2).await));
    let delivered = callback(&first.callback.unwrap().url, CallbackStatus::Delivered, 1, precise(1_950, 0));
    store.update_hitl_callback(a, first.id, &delivered).await.unwrap();
    store.insert_hitl(&new_hitl_request(a, x, expires, 7), 2).await.expect("the delivered callback made room");
    assert!(limited(store.insert_hitl(&new_hitl_request(a, x, expires, 8), 2).await));
}

/// An approved request's grant is spent by one conditional write: once, whoever races for
/// it; not while pending, nor for a request approved without a grant. The served token is
/// never stored, and what else the spending write carries (the callback) is kept.
pub async fn hitl_grants_are_spent_once_and_never_store_the_token(store: Arc<dyn Store>) {
    let a = tenant(&store, "a-hr-grant").await;
    let b = tenant(&store, "b-hr-grant").await;
    let now = precise(5_000, 17);
    let pending = stored(&store, new_hitl_request(a, agent(), now + 60 * SECOND, 1)).await;
    let grant = ApprovalGrant {
        digest: "ab".repeat(32),
        token_id: Uuid::now_v7(),
        expires_at: now + 300 * SECOND,
        used_at: None,
    };
    let approved = HitlRequest { grant: Some(grant.clone()), ..finalised(pending.clone(), Approved, now) };
    let spent = HitlRequest {
        grant: Some(ApprovalGrant { used_at: Some(now + SECOND), ..grant.clone() }),
        approval_token: Some("eyJ.secret.token".into()),
        ..approved.clone()
    };
    // Not approved yet: nothing to spend.
    assert!(!store.spend_hitl_grant(&spent).await.unwrap());
    // Approved (the served token set on the copy written: the store drops it).
    let with_token = HitlRequest { approval_token: Some("eyJ.secret.token".into()), ..approved.clone() };
    assert!(store.decide_hitl(&with_token).await.unwrap());
    assert_eq!(store.get_hitl(a, pending.id).await.unwrap().unwrap(), approved);
    // Another tenant's id is absent.
    let foreign = HitlRequest { tenant_id: b, ..spent.clone() };
    assert!(is_not_found(&store.spend_hitl_grant(&foreign).await));
    let absent = HitlRequest { id: HitlId(Uuid::now_v7()), ..spent.clone() };
    assert!(is_not_found(&store.spend_hitl_grant(&absent).await));
    // Spent once, by one of eight racing spenders.
    let racers = (0..8).map(|_| {
        let (store, spent) = (store.clone(), spent.clone());
        async move { store.spend_hitl_grant(&spent).await.unwrap() }
    });
    let won = futures::future::join_all(racers).await.into_iter().filter(|w| *w).count();
    assert_eq!(won, 1);
    let after = store.get_hitl(a, pending.id).await.unwrap().unwrap();
    assert_eq!(after, HitlRequest { approval_token: None, ..spent.clone() });
    assert!(!after.grant_open());
    // The callback is still the request's to update, and the grant stays spent.
    let delivered = callback("https://hooks.example.test/g", CallbackStatus::Delivered, 1, now + 2 * SECOND);
    store.update_hitl_callback(a, pending.id, &delivered).await.unwrap();
    assert!(!store.spend_hitl_grant(&spent).await.unwrap());
    // Approved without a grant (before tokens existed): nothing to spend.
    let legacy = stored(&store, new_hitl_request(a, agent(), now + 60 * SECOND, 2)).await;
    assert!(store.decide_hitl(&finalised(legacy.clone(), Approved, now)).await.unwrap());
    let claimed = HitlRequest { grant: Some(grant), ..finalised(legacy, Approved, now) };
    assert!(!store.spend_hitl_grant(&claimed).await.unwrap());
}
