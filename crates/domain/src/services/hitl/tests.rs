//! Approval requests against in-memory fakes: every transition, the 409 and expiry cases,
//! the lease, long-poll wake-ups and signed callbacks with retries.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::events::{HITL_REJECTED, HITL_REQUESTED};
use crate::model::SecretPurpose;
use crate::model::{ActorType, AuditFilter, AuditScan, SeqOrder};
use crate::ports::TenantRepo;
use crate::ports::{AuditRepo, Cache, CallbackError, CallbackFailure, Clock};
use crate::secrets;
use crate::services::HitlApproval;
use crate::services::Settings;
use crate::services::check::CheckRequest;
use crate::services::policies::PolicyRequest;
use crate::services::tests::{Harness, harness, replica};

fn ask(agent: &Agent) -> NewHitlRequest {
    NewHitlRequest {
        agent_id: agent.id.to_string(),
        action: "delete".into(),
        resource: "prod/db/customers".into(),
        context: json!({"environment": "production"}).as_object().cloned().unwrap(),
        reason: "bulk delete in production".into(),
        timeout_seconds: Some(60),
        callback_url: None,
    }
}

const WAIT: Duration = Duration::from_secs(30);

fn comment(text: &str) -> HitlDecision {
    HitlDecision { comment: Some(text.into()) }
}

fn fields(err: DomainError) -> Vec<String> {
    match err {
        DomainError::Validation(errors) => errors.into_iter().map(|e| e.field).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

async fn audit_types(h: &Harness, tenant: TenantId) -> Vec<String> {
    let scan = AuditScan { after_seq: None, limit: 500, order: SeqOrder::Asc };
    let records = h.store.scan_audit(tenant, &AuditFilter::default(), scan).await.unwrap();
    records.into_iter().map(|r| r.event_type).filter(|t| t.starts_with("hitl.")).collect()
}

fn published(h: &Harness) -> Vec<String> {
    h.bus.published.lock().unwrap().iter().map(|e| e.event_type.clone()).filter(|t| t.starts_with("hitl.")).collect()
}

#[tokio::test]
async fn a_request_is_opened_pending_audited_and_published() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    assert_eq!(r.status, HitlStatus::Pending);
    assert_eq!((r.agent_id, r.agent_name.as_str()), (bot.id, "bot"));
    assert_eq!(r.expires_at - r.created_at, time::Duration::seconds(60));
    assert!(r.risk_score > 0.0 && r.risk_score <= 1.0, "{r:?}");
    assert_eq!(r.requested_by.kind, ActorType::User);
    assert_eq!(h.svc.hitl.get(&a, r.id).await.unwrap(), r);
    assert_eq!(audit_types(&h, a.tenant_id()).await, ["hitl.requested"]);
    assert_eq!(published(&h), ["hitl.requested"]);
    let event = h.bus.published.lock().unwrap().iter().find(|e| e.event_type == HITL_REQUESTED).cloned().unwrap();
    assert_eq!(event.data["id"], json!(r.id));
    assert_eq!(event.tenant_id, a.tenant_id());
}

#[tokio::test]
async fn without_timeout_the_tenant_window_applies() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.hitl.request(&a, NewHitlRequest { timeout_seconds: None, ..ask(&bot) }).await.unwrap();
    assert_eq!(r.expires_at - r.created_at, time::Duration::hours(1), "the server's default");

    let change = crate::services::SettingsChange { hitl_timeout_secs: Some(Some(90)), ..Default::default() };
    let update = crate::services::UpdateTenant { name: None, settings: Some(change) };
    h.svc.tenants.update_own(&a, update).await.unwrap();
    let r = h.svc.hitl.request(&a, NewHitlRequest { timeout_seconds: None, ..ask(&bot) }).await.unwrap();
    assert_eq!(r.expires_at - r.created_at, time::Duration::seconds(90), "the tenant's own");
}

#[tokio::test]
async fn invalid_requests_name_every_bad_field() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let bad = NewHitlRequest {
        agent_id: "nope".into(),
        action: "".into(),
        resource: "r".repeat(1001),
        reason: "  ".into(),
        timeout_seconds: Some(0),
        callback_url: Some("ftp://example.test/x".into()),
        ..ask(&bot)
    };
    assert_eq!(
        fields(h.svc.hitl.request(&a, bad).await.unwrap_err()),
        ["agent_id", "action", "resource", "reason", "timeout_seconds", "callback_url"]
    );
    for url in [
        "not a url",
        "https://user:pw@example.test/",
        "https://",
        "http://example.test/#frag",
        "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1]/",
        "http://0.0.0.0:8080/",
    ] {
        let req = NewHitlRequest { callback_url: Some(url.into()), ..ask(&bot) };
        assert_eq!(fields(h.svc.hitl.request(&a, req).await.unwrap_err()), ["callback_url"], "{url}");
    }
    let long = NewHitlRequest { timeout_seconds: Some(i64::from(MAX_HITL_TIMEOUT_SECS) + 1), ..ask(&bot) };
    assert_eq!(fields(h.svc.hitl.request(&a, long).await.unwrap_err()), ["timeout_seconds"]);
    let unknown = NewHitlRequest { agent_id: uuid::Uuid::now_v7().to_string(), ..ask(&bot) };
    assert!(matches!(h.svc.hitl.request(&a, unknown).await, Err(DomainError::NotFound { .. })));
}

/// Issue 32.3: by default no callback may name a host inside the service's network.
#[tokio::test]
async fn callback_urls_inside_the_network_are_refused_by_default() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    for url in [
        "http://localhost:8080/hook",
        "http://api.localhost/",
        "http://127.0.0.1:8080/hook",
        "http://127.1/",
        "http://2130706433/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fd00:ec2::254]/latest/meta-data",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://10.0.0.5/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://metadata/",
    ] {
        let req = NewHitlRequest { callback_url: Some(url.into()), ..ask(&bot) };
        assert_eq!(fields(h.svc.hitl.request(&a, req).await.unwrap_err()), ["callback_url"], "{url}");
    }
    let public = NewHitlRequest { callback_url: Some("https://hooks.example.com/x".into()), ..ask(&bot) };
    h.svc.hitl.request(&a, public).await.unwrap();
}

#[tokio::test]
async fn the_operator_may_allow_private_receivers() {
    let receivers = crate::net::ReceiverPolicy::parse("127.0.0.0/8, 10.0.0.0/8").unwrap();
    let settings = Settings { hitl: HitlSettings { receivers, ..HitlSettings::default() }, ..Settings::default() };
    let h = crate::services::tests::harness_with_settings(settings);
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    for url in ["http://127.0.0.1:8080/hook", "http://10.1.2.3/", "http://receiver.internal/"] {
        let req = NewHitlRequest { callback_url: Some(url.into()), ..ask(&bot) };
        h.svc.hitl.request(&a, req).await.unwrap();
    }
    for url in ["http://169.254.169.254/", "http://[::1]/", "http://192.168.1.1/"] {
        let req = NewHitlRequest { callback_url: Some(url.into()), ..ask(&bot) };
        assert_eq!(fields(h.svc.hitl.request(&a, req).await.unwrap_err()), ["callback_url"], "{url}");
    }
}

#[tokio::test]
async fn approve_then_every_further_decision_conflicts() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    let analyst = h.user(&a, "ann@acme.test", Role::Analyst).await;

    let approved = h.svc.hitl.approve(&analyst, r.id, comment("  looks fine ")).await.unwrap();
    assert_eq!(approved.status, HitlStatus::Approved);
    assert_eq!(approved.comment.as_deref(), Some("looks fine"));
    assert_eq!(approved.decided_by, Some(Actor::new(ActorType::User, analyst.user.id)));
    assert_eq!(approved.decided_at, Some(h.clock.now()));
    // The admin may check, so the status serves the approval token too.
    let served = h.svc.hitl.get(&a, r.id).await.unwrap();
    assert!(served.approval_token.is_some());
    assert_eq!(HitlRequest { approval_token: None, ..served }, approved);

    for second in [
        h.svc.hitl.approve(&analyst, r.id, HitlDecision::default()).await,
        h.svc.hitl.reject(&analyst, r.id, HitlDecision::default()).await,
        h.svc.hitl.cancel(&a, r.id, HitlDecision::default()).await,
    ] {
        let Err(DomainError::Conflict(msg)) = second else { panic!("{second:?}") };
        assert!(msg.ends_with("is already approved"), "{msg}");
    }
    assert_eq!(audit_types(&h, a.tenant_id()).await, ["hitl.requested", "hitl.approved"]);
    assert_eq!(published(&h), ["hitl.requested", "hitl.approved"]);
}

#[tokio::test]
async fn reject_and_cancel_are_final_too() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let rejected = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    let rejected = h.svc.hitl.reject(&a, rejected.id, comment("no")).await.unwrap();
    assert_eq!(rejected.status, HitlStatus::Rejected);
    let cancelled = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    let cancelled = h.svc.hitl.cancel(&a, cancelled.id, HitlDecision::default()).await.unwrap();
    assert_eq!((cancelled.status, cancelled.comment.as_deref()), (HitlStatus::Cancelled, None));
    assert!(matches!(
        h.svc.hitl.approve(&a, cancelled.id, HitlDecision::default()).await,
        Err(DomainError::Conflict(_))
    ));
    assert_eq!(
        audit_types(&h, a.tenant_id()).await,
        ["hitl.requested", "hitl.rejected", "hitl.requested", "hitl.cancelled"]
    );
    let long = HitlDecision { comment: Some("x".repeat(2001)) };
    let open = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    assert_eq!(fields(h.svc.hitl.approve(&a, open.id, long).await.unwrap_err()), ["comment"]);
}

#[tokio::test]
async fn deciding_needs_an_analyst_and_requesting_needs_the_permission() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    let viewer = h.user(&a, "vic@acme.test", Role::Viewer).await;
    assert!(matches!(h.svc.hitl.approve(&viewer, r.id, HitlDecision::default()).await, Err(DomainError::Forbidden(_))));
    assert!(matches!(h.svc.hitl.reject(&viewer, r.id, HitlDecision::default()).await, Err(DomainError::Forbidden(_))));
    assert!(matches!(h.svc.hitl.pending(&viewer, None, None).await, Err(DomainError::Forbidden(_))));
    assert!(matches!(h.svc.hitl.request(&viewer, ask(&bot)).await, Err(DomainError::Forbidden(_))));
    assert_eq!(h.svc.hitl.get(&viewer, r.id).await.unwrap().id, r.id, "viewers may read");
}

#[tokio::test]
async fn another_tenant_sees_nothing() {
    let h = harness();
    let a = h.admin("acme").await;
    let b = h.admin("globex").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    for outcome in [
        h.svc.hitl.get(&b, r.id).await,
        h.svc.hitl.approve(&b, r.id, HitlDecision::default()).await,
        h.svc.hitl.reject(&b, r.id, HitlDecision::default()).await,
        h.svc.hitl.cancel(&b, r.id, HitlDecision::default()).await,
    ] {
        assert!(matches!(outcome, Err(DomainError::NotFound { .. })), "{outcome:?}");
    }
    assert!(matches!(h.svc.hitl.watch(&b, r.id, WAIT).await, Err(DomainError::NotFound { .. })));
    assert!(h.svc.hitl.pending(&b, None, None).await.unwrap().items.is_empty());
    let other_agent = NewHitlRequest { agent_id: bot.id.to_string(), ..ask(&bot) };
    assert!(matches!(h.svc.hitl.request(&b, other_agent).await, Err(DomainError::NotFound { .. })));
    assert_eq!(h.svc.hitl.get(&a, r.id).await.unwrap().status, HitlStatus::Pending);
}

#[tokio::test]
async fn the_pending_queue_is_oldest_first_and_pages() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(h.svc.hitl.request(&a, ask(&bot)).await.unwrap().id);
    }
    h.svc.hitl.approve(&a, ids[1], HitlDecision::default()).await.unwrap();
    let first = h.svc.hitl.pending(&a, Some(2), None).await.unwrap();
    assert_eq!(first.items.iter().map(|r| r.id).collect::<Vec<_>>(), [ids[0], ids[2]]);
    let rest = h.svc.hitl.pending(&a, Some(2), first.next_cursor.as_deref()).await.unwrap();
    assert_eq!(rest.items.iter().map(|r| r.id).collect::<Vec<_>>(), [ids[3], ids[4]]);
    assert!(rest.next_cursor.is_none());
    assert!(h.svc.hitl.pending(&a, Some(0), None).await.is_err());
}

#[tokio::test]
async fn a_late_decision_conflicts_and_the_worker_expires_the_request_once() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    let later = h.svc.hitl.request(&a, NewHitlRequest { timeout_seconds: Some(600), ..ask(&bot) }).await.unwrap();
    h.clock.advance(Duration::from_secs(60));

    let Err(DomainError::Conflict(msg)) = h.svc.hitl.approve(&a, r.id, HitlDecision::default()).await else {
        panic!("a late approval must conflict")
    };
    assert!(msg.contains("expired at"), "{msg}");

    let other = replica(&h);
    let mut mine = HitlWorker::default();
    let mut theirs = HitlWorker::default();
    let round = h.svc.hitl.step(&mut mine).await.unwrap();
    assert_eq!(round, HitlRound { leader: true, expired: 1, escalated: 0, callbacks_sent: 0 });
    assert_eq!(other.svc.hitl.step(&mut theirs).await.unwrap(), HitlRound::default(), "the lease is held");
    assert_eq!(h.svc.hitl.step(&mut mine).await.unwrap().expired, 0, "expired once");

    let expired = h.svc.hitl.get(&a, r.id).await.unwrap();
    assert_eq!(expired.status, HitlStatus::Expired);
    assert_eq!(expired.decided_by, Some(Actor::system("hitl_expiry")));
    assert_eq!(h.svc.hitl.get(&a, later.id).await.unwrap().status, HitlStatus::Pending);
    let Err(DomainError::Conflict(msg)) = h.svc.hitl.approve(&a, r.id, HitlDecision::default()).await else { panic!() };
    assert!(msg.ends_with("is already expired"), "{msg}");
    assert_eq!(audit_types(&h, a.tenant_id()).await, ["hitl.requested", "hitl.requested", "hitl.expired"]);

    // The holder gives the lease up on stop; the other replica takes over at once.
    h.svc.hitl.release(&mut mine).await;
    assert!(other.svc.hitl.step(&mut theirs).await.unwrap().leader);
}

#[tokio::test]
async fn a_waiting_request_escalates_along_the_tenants_chain_once_per_step() {
    use crate::model::{EscalationStep, HitlEscalation};
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let steps = vec![
        EscalationStep { after_secs: 60, role: Role::Analyst },
        EscalationStep { after_secs: 300, role: Role::Admin },
    ];
    // A bad chain names the field and keeps the settings as they were.
    for bad in [
        vec![
            EscalationStep { after_secs: 300, role: Role::Admin },
            EscalationStep { after_secs: 60, role: Role::Analyst },
        ],
        vec![EscalationStep { after_secs: 0, role: Role::Admin }],
        vec![EscalationStep { after_secs: 60, role: Role::Viewer }],
        vec![EscalationStep { after_secs: 60, role: Role::Admin }; 6],
    ] {
        let change = crate::services::SettingsChange { hitl_escalation: Some(Some(bad)), ..Default::default() };
        let update = crate::services::UpdateTenant { name: None, settings: Some(change) };
        assert_eq!(fields(h.svc.tenants.update_own(&a, update).await.unwrap_err()), ["settings.hitl_escalation"]);
    }
    let before = h.svc.hitl.request(&a, NewHitlRequest { timeout_seconds: Some(3600), ..ask(&bot) }).await.unwrap();
    assert_eq!(before.escalation, None, "made before the tenant had a chain");
    let change = crate::services::SettingsChange { hitl_escalation: Some(Some(steps.clone())), ..Default::default() };
    let update = crate::services::UpdateTenant { name: None, settings: Some(change) };
    h.svc.tenants.update_own(&a, update).await.unwrap();
    let r = h.svc.hitl.request(&a, NewHitlRequest { timeout_seconds: Some(3600), ..ask(&bot) }).await.unwrap();
    let decided = h.svc.hitl.request(&a, NewHitlRequest { timeout_seconds: Some(3600), ..ask(&bot) }).await.unwrap();
    h.svc.hitl.reject(&a, decided.id, HitlDecision::default()).await.unwrap();
    assert_eq!(r.escalation, HitlEscalation::start(&steps, r.created_at));

    let other = replica(&h);
    let (mut mine, mut theirs) = (HitlWorker::default(), HitlWorker::default());
    assert_eq!(h.svc.hitl.step(&mut mine).await.unwrap().escalated, 0, "not due yet");
    h.clock.advance(Duration::from_secs(61));
    assert_eq!(h.svc.hitl.step(&mut mine).await.unwrap().escalated, 1, "the pending one only");
    assert_eq!(other.svc.hitl.step(&mut theirs).await.unwrap(), HitlRound::default(), "the lease is held");
    assert_eq!(h.svc.hitl.step(&mut mine).await.unwrap().escalated, 0, "a step is taken once");
    let first = h.svc.hitl.get(&a, r.id).await.unwrap();
    let e = first.escalation.clone().unwrap();
    assert_eq!((first.status, e.level, e.role), (HitlStatus::Pending, 1, Some(Role::Analyst)));
    assert_eq!(e.next_at, Some(r.created_at + time::Duration::seconds(300)));

    // Overdue by the last step too: taken on the next round, then the chain is done.
    h.clock.advance(Duration::from_secs(600));
    assert_eq!(h.svc.hitl.step(&mut mine).await.unwrap().escalated, 1);
    h.clock.advance(Duration::from_secs(600));
    assert_eq!(h.svc.hitl.step(&mut mine).await.unwrap().escalated, 0);
    let second = h.svc.hitl.get(&a, r.id).await.unwrap().escalation.unwrap();
    assert_eq!((second.level, second.role, second.next_at), (2, Some(Role::Admin), None));

    // Audited by the system and published, naming the role; still approvable.
    let scan = AuditScan { after_seq: None, limit: 500, order: SeqOrder::Asc };
    let records = h.store.scan_audit(a.tenant_id(), &AuditFilter::default(), scan).await.unwrap();
    let steps_taken: Vec<_> = records.iter().filter(|r| r.event_type == "hitl.escalated").collect();
    assert_eq!(steps_taken.len(), 2);
    assert_eq!(steps_taken[0].actor, Actor::system("hitl_escalation"));
    let details = steps_taken[1].details.to_value();
    assert_eq!((&details["escalation_level"], &details["escalated_to"]), (&json!(2), &json!("admin")));
    assert_eq!(published(&h).iter().filter(|t| *t == "hitl.escalated").count(), 2);
    let approved = h.svc.hitl.approve(&a, r.id, HitlDecision::default()).await.unwrap();
    assert_eq!(approved.escalate_at(), None);
}

#[tokio::test]
async fn a_watch_wakes_on_a_decision_here_or_on_another_replica() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();

    let (seen, watch) = h.svc.hitl.watch(&a, r.id, WAIT).await.unwrap();
    assert_eq!(seen.status, HitlStatus::Pending);
    let waiting = tokio::spawn(async move { watch.unwrap().changed().await });
    h.svc.hitl.approve(&a, r.id, HitlDecision::default()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(1), waiting).await.unwrap().unwrap();
    let (decided, watch) = h.svc.hitl.watch(&a, r.id, WAIT).await.unwrap();
    assert!(watch.is_none() && decided.status == HitlStatus::Approved, "no wait once decided");

    // Decided on another replica: this one hears of it through the bus.
    let other = replica(&h);
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    let (_, watch) = h.svc.hitl.watch(&a, r.id, WAIT).await.unwrap();
    let waiting = tokio::spawn(async move { watch.unwrap().changed().await });
    other.svc.hitl.reject(&a, r.id, HitlDecision::default()).await.unwrap();
    let event = other.bus.published.lock().unwrap().iter().find(|e| e.event_type == HITL_REJECTED).cloned().unwrap();
    h.svc.on_bus_event(&event);
    tokio::time::timeout(Duration::from_secs(1), waiting).await.unwrap().unwrap();
}

#[tokio::test]
async fn too_many_waiters_answer_429() {
    let settings =
        Settings { hitl: HitlSettings { max_watchers: 2, ..HitlSettings::default() }, ..Settings::default() };
    let h = crate::services::tests::harness_with_settings(settings);
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    let _w1 = h.svc.hitl.watch(&a, r.id, WAIT).await.unwrap();
    let _w2 = h.svc.hitl.watch(&a, r.id, WAIT).await.unwrap();
    assert!(matches!(h.svc.hitl.watch(&a, r.id, WAIT).await, Err(DomainError::RateLimited { .. })));
    drop(_w1);
    assert!(h.svc.hitl.watch(&a, r.id, WAIT).await.is_ok(), "a finished long-poll frees its place");
}

#[tokio::test]
async fn waits_that_ended_do_not_count_against_the_cap() {
    let settings =
        Settings { hitl: HitlSettings { max_watchers: 3, ..HitlSettings::default() }, ..Settings::default() };
    let h = crate::services::tests::harness_with_settings(settings);
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    // Long-polls of ids that do not exist (or another tenant's) end at once...
    for _ in 0..10 {
        let ghost = HitlId(uuid::Uuid::now_v7());
        assert!(matches!(h.svc.hitl.watch(&a, ghost, WAIT).await, Err(DomainError::NotFound { .. })));
    }
    // ...and leave nothing that keeps real ones out.
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    let held: Vec<_> = futures::future::join_all((0..3).map(|_| h.svc.hitl.watch(&a, r.id, WAIT))).await;
    assert!(held.iter().all(Result::is_ok));
    assert!(matches!(h.svc.hitl.watch(&a, r.id, WAIT).await, Err(DomainError::RateLimited { .. })));
}

#[tokio::test]
async fn callbacks_are_signed_retried_with_backoff_and_delivered_once() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let url = "https://hooks.example.test/hitl?t=1";
    let r = h.svc.hitl.request(&a, NewHitlRequest { callback_url: Some(url.into()), ..ask(&bot) }).await.unwrap();
    assert_eq!(r.callback.as_ref().unwrap().status, CallbackStatus::Waiting);
    let mut worker = HitlWorker::default();
    assert_eq!(h.svc.hitl.step(&mut worker).await.unwrap().callbacks_sent, 0, "nothing to send while pending");

    h.callbacks.script([
        Err(CallbackError::new(CallbackFailure::Failed, "could not connect: refused (10.0.0.7:22)")),
        Ok(503),
    ]);
    let approved = h.svc.hitl.approve(&a, r.id, comment("ok")).await.unwrap();
    assert_eq!(approved.callback.as_ref().unwrap().status, CallbackStatus::Scheduled);

    assert_eq!(h.svc.hitl.step(&mut worker).await.unwrap().callbacks_sent, 1);
    let cb = h.svc.hitl.get(&a, r.id).await.unwrap().callback.unwrap();
    assert_eq!((cb.status, cb.attempts), (CallbackStatus::Scheduled, 1));
    assert_eq!(cb.next_attempt_at, Some(h.clock.now() + time::Duration::seconds(2)));
    assert_eq!(cb.last_error.as_deref(), Some("delivery failed"), "coarse: no cause, no address");
    assert_eq!(h.svc.hitl.step(&mut worker).await.unwrap().callbacks_sent, 0, "not due yet");

    h.clock.advance(Duration::from_secs(2));
    h.svc.hitl.step(&mut worker).await.unwrap();
    let cb = h.svc.hitl.get(&a, r.id).await.unwrap().callback.unwrap();
    assert_eq!((cb.attempts, cb.last_error.as_deref()), (2, Some("receiver answered an error status")), "no status");
    assert_eq!(cb.next_attempt_at, Some(h.clock.now() + time::Duration::seconds(4)), "doubled");

    h.clock.advance(Duration::from_secs(4));
    h.svc.hitl.step(&mut worker).await.unwrap();
    let cb = h.svc.hitl.get(&a, r.id).await.unwrap().callback.unwrap();
    assert_eq!((cb.status, cb.attempts, cb.delivered_at), (CallbackStatus::Delivered, 3, Some(h.clock.now())));
    h.clock.advance(Duration::from_secs(600));
    h.svc.hitl.step(&mut worker).await.unwrap();

    let sent = h.callbacks.sent();
    assert_eq!(sent.len(), 3, "delivered once, after two failures");
    assert!(sent.windows(2).all(|w| w[0].body == w[1].body), "every attempt sends the same bytes");
    let last = sent.last().unwrap();
    assert_eq!(last.url, url);
    assert_eq!(last.header("x-webhook-id"), Some(r.id.to_string().as_str()));
    assert_eq!(last.header("x-webhook-event"), Some("hitl.approved"));
    let secret = h.store.get_tenant_secret(a.tenant_id(), SecretPurpose::Callback).await.unwrap().unwrap();
    assert_eq!(last.header("x-webhook-signature"), Some(secrets::sign_plain(&secret.secret, &last.body).as_str()));
    let body: serde_json::Value = serde_json::from_slice(&last.body).unwrap();
    assert_eq!((body["id"].clone(), body["type"].clone()), (json!(r.id), json!("hitl.approved")));
    assert_eq!(body["data"]["status"], "approved");
    assert_eq!(body["data"]["comment"], "ok");
    assert!(body["data"].get("callback").is_none_or(serde_json::Value::is_null));
}

#[tokio::test]
async fn a_callback_is_given_up_after_its_last_attempt_and_that_is_audited() {
    let settings =
        Settings { hitl: HitlSettings { callback_max_attempts: 2, ..HitlSettings::default() }, ..Settings::default() };
    let h = crate::services::tests::harness_with_settings(settings);
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let req = NewHitlRequest {
        callback_url: Some("http://hooks.example.com:9/x".into()),
        timeout_seconds: Some(5),
        ..ask(&bot)
    };
    let r = h.svc.hitl.request(&a, req).await.unwrap();
    h.callbacks.script([Ok(500), Ok(500)]);
    h.clock.advance(Duration::from_secs(5));
    let mut worker = HitlWorker::default();
    let round = h.svc.hitl.step(&mut worker).await.unwrap();
    assert_eq!((round.expired, round.callbacks_sent), (1, 1), "expiry schedules the callback at once");
    h.clock.advance(Duration::from_secs(2));
    h.svc.hitl.step(&mut worker).await.unwrap();
    let cb = h.svc.hitl.get(&a, r.id).await.unwrap().callback.unwrap();
    assert_eq!((cb.status, cb.attempts, cb.next_attempt_at), (CallbackStatus::Failed, 2, None));
    h.clock.advance(Duration::from_secs(3600));
    assert_eq!(h.svc.hitl.step(&mut worker).await.unwrap().callbacks_sent, 0);
    assert_eq!(h.callbacks.sent().len(), 2);
    assert_eq!(h.callbacks.sent()[0].header("x-webhook-event"), Some("hitl.expired"));
    // The audit append of the failure is not awaited by the worker; give it a moment.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(audit_types(&h, a.tenant_id()).await, ["hitl.requested", "hitl.expired", "hitl.callback_failed"]);
}

#[tokio::test]
async fn a_check_that_needs_approval_opens_a_request() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let approve = PolicyRequest {
        name: "approve prod".into(),
        description: None,
        rego: Some("when environment production\napprove prod needs a human".into()),
        template: None,
        enabled: None,
        version: None,
        mode: None,
    };
    h.svc.policies.create(&a, approve).await.unwrap();
    let check = |env: &str, dry_run: bool| CheckRequest {
        agent_id: bot.id.to_string(),
        action: "read".into(),
        resource: "docs/handbook".into(),
        context: json!({ "environment": env }).as_object().cloned().unwrap(),
        dry_run,
        ..CheckRequest::default()
    };
    let allowed = h.svc.policies.check(&a, check("staging", false)).await.unwrap();
    assert!(allowed.allowed && allowed.hitl_request_id.is_none(), "{allowed:?}");
    let dry = h.svc.policies.check(&a, check("production", true)).await.unwrap();
    assert!(dry.required_approval && dry.hitl_request_id.is_none(), "a dry run opens nothing");

    let checked = h.svc.policies.check(&a, check("production", false)).await.unwrap();
    assert!(checked.required_approval);
    let r = h.svc.hitl.get(&a, checked.hitl_request_id.unwrap()).await.unwrap();
    assert_eq!(r.status, HitlStatus::Pending);
    assert_eq!(r.decision_id, checked.decision_id);
    assert_eq!((r.action.as_str(), r.resource.as_str()), ("read", "docs/handbook"));
    assert_eq!(r.reason, checked.reason);
    assert_eq!(r.risk_score, checked.risk_score);
    assert_eq!(r.context["environment"], "production");
    assert_eq!(r.expires_at - r.created_at, time::Duration::hours(1));
    assert_eq!(h.svc.hitl.pending(&a, None, None).await.unwrap().items.len(), 1);
}

#[tokio::test]
async fn an_api_key_can_request_and_cancel_but_the_key_is_named_as_requester() {
    let h = harness();
    let t = h.tenant("acme").await;
    let a = h.login("admin@acme.test").await.1;
    let bot = h.agent(&a, "bot").await;
    let by_key = h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap();
    let r = h.svc.hitl.request(&by_key, ask(&bot)).await.unwrap();
    assert_eq!(r.requested_by.kind, ActorType::ApiKey);
    let cancelled = h.svc.hitl.cancel(&by_key, r.id, HitlDecision::default()).await.unwrap();
    assert_eq!(cancelled.decided_by.unwrap().kind, ActorType::ApiKey);
}

/// Issue 32.3: a receiver the sender refuses (its name resolved inside the network) is given
/// up at once, the tenant told only that policy refused it.
#[tokio::test]
async fn a_receiver_refused_by_policy_is_given_up_at_once() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let req = NewHitlRequest { callback_url: Some("https://rebind.example.com/x".into()), ..ask(&bot) };
    let r = h.svc.hitl.request(&a, req).await.unwrap();
    h.callbacks.script([Err(CallbackError::new(CallbackFailure::Refused, "rebind.example.com resolved to 127.0.0.1"))]);
    h.svc.hitl.cancel(&a, r.id, HitlDecision::default()).await.unwrap();
    let mut worker = HitlWorker::default();
    h.svc.hitl.step(&mut worker).await.unwrap();
    let cb = h.svc.hitl.get(&a, r.id).await.unwrap().callback.unwrap();
    assert_eq!((cb.status, cb.attempts, cb.next_attempt_at), (CallbackStatus::Failed, 1, None));
    assert_eq!(cb.last_error.as_deref(), Some("receiver refused by policy"));
    h.clock.advance(Duration::from_secs(3600));
    h.svc.hitl.step(&mut worker).await.unwrap();
    assert_eq!(h.callbacks.sent().len(), 1, "never tried again");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(audit_types(&h, a.tenant_id()).await, ["hitl.requested", "hitl.cancelled", "hitl.callback_failed"]);
}

/// Issue 32.3: a tenant's callbacks are rate-limited; those past the rate wait for the next
/// window without losing an attempt, and another tenant's are not held up.
#[tokio::test]
async fn callbacks_are_rate_limited_per_tenant() {
    let settings =
        Settings { hitl: HitlSettings { callbacks_per_minute: 2, ..HitlSettings::default() }, ..Settings::default() };
    let h = crate::services::tests::harness_with_settings(settings);
    let a = h.admin("acme").await;
    let b = h.admin("globex").await;
    let bot = h.agent(&a, "bot").await;
    let other = h.agent(&b, "other").await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let req = NewHitlRequest { callback_url: Some("https://hooks.example.com/a".into()), ..ask(&bot) };
        let r = h.svc.hitl.request(&a, req).await.unwrap();
        h.svc.hitl.cancel(&a, r.id, HitlDecision::default()).await.unwrap();
        ids.push(r.id);
    }
    let req = NewHitlRequest { callback_url: Some("https://hooks.example.com/b".into()), ..ask(&other) };
    let rb = h.svc.hitl.request(&b, req).await.unwrap();
    h.svc.hitl.cancel(&b, rb.id, HitlDecision::default()).await.unwrap();

    let mut worker = HitlWorker::default();
    h.svc.hitl.step(&mut worker).await.unwrap();
    let urls: Vec<String> = h.callbacks.sent().into_iter().map(|c| c.url).collect();
    assert_eq!(urls.iter().filter(|u| u.ends_with("/a")).count(), 2, "acme's rate is 2 a minute");
    assert_eq!(urls.iter().filter(|u| u.ends_with("/b")).count(), 1, "globex is not held up");
    let mut postponed = Vec::new();
    for id in &ids {
        let cb = h.svc.hitl.get(&a, *id).await.unwrap().callback.unwrap();
        if cb.status == CallbackStatus::Scheduled {
            postponed.push(cb);
        }
    }
    assert_eq!(postponed.len(), 1, "{postponed:?}");
    assert_eq!(postponed[0].attempts, 0, "a postponement is not an attempt");
    assert!(postponed[0].next_attempt_at.unwrap() > h.clock.now());

    assert_eq!(h.svc.hitl.step(&mut worker).await.unwrap().callbacks_sent, 0, "not before the window ends");
    h.clock.advance(Duration::from_secs(61));
    // The window ends (the cache counts wall-clock time, which the test clock does not move).
    h.cache.delete(&format!("hitl-callbacks:{}", a.tenant_id())).await.unwrap();
    h.svc.hitl.step(&mut worker).await.unwrap();
    assert_eq!(h.callbacks.sent().len(), 4, "sent in the next window");
    for id in &ids {
        assert_eq!(h.svc.hitl.get(&a, *id).await.unwrap().callback.unwrap().status, CallbackStatus::Delivered);
    }
}

/// Issue 32, point 4: a tenant's callbacks are signed with its own secret, never with the
/// server's `WEBHOOK_SECRET` another tenant knows, and carry a timestamped signature.
#[tokio::test]
async fn callbacks_are_signed_with_the_tenants_own_secret_and_a_timestamp() {
    let h = harness();
    let (created_a, created_b) = (h.tenant("acme").await, h.tenant("bravo").await);
    let a = h.login("admin@acme.test").await.1;
    let b = h.login("admin@bravo.test").await.1;
    assert!(created_a.callback_secret.starts_with("whsec_") && created_a.callback_secret.len() == 49);
    assert_ne!(created_a.callback_secret, created_b.callback_secret);
    let mut worker = HitlWorker::default();
    for caller in [&a, &b] {
        let bot = h.agent(caller, "bot").await;
        let req = NewHitlRequest { callback_url: Some("https://hooks.example.test/x".into()), ..ask(&bot) };
        let r = h.svc.hitl.request(caller, req).await.unwrap();
        h.svc.hitl.approve(caller, r.id, comment("ok")).await.unwrap();
    }
    h.callbacks.script([Ok(200), Ok(200)]);
    h.svc.hitl.step(&mut worker).await.unwrap();
    let sent = h.callbacks.sent();
    assert_eq!(sent.len(), 2);
    let global = crate::secrets::WebhookVerifier::new(b"webhook-secret-for-unit-tests-0123456789");
    for cb in &sent {
        let body: serde_json::Value = serde_json::from_slice(&cb.body).unwrap();
        let own = if body["tenant_id"] == json!(a.tenant_id()) { &created_a } else { &created_b };
        let other = if std::ptr::eq(own, &created_a) { &created_b } else { &created_a };
        let plain = secrets::SignatureHeader::parse(cb.header("x-webhook-signature")).unwrap();
        assert!(plain.matches(&own.callback_secret, &cb.body));
        assert!(!plain.matches(&other.callback_secret, &cb.body), "another tenant's secret does not sign it");
        assert!(!global.matches(&plain, &cb.body), "the server's WEBHOOK_SECRET does not sign it");
        let stamped = secrets::SignatureHeader::parse(cb.header("x-webhook-timestamp-signature")).unwrap();
        assert_eq!(stamped.timestamp(), Some(h.clock.now().unix_timestamp()));
        assert!(stamped.matches(&own.callback_secret, &cb.body));
        assert!(stamped.is_fresh(h.clock.now()));
    }
}

#[tokio::test]
async fn a_rotated_callback_secret_signs_beside_the_old_one_for_the_grace_only() {
    let h = harness();
    let created = h.tenant("acme").await;
    let a = h.login("admin@acme.test").await.1;
    let issued = h.svc.tenants.rotate_callback_secret(&a).await.unwrap();
    assert_ne!(issued.secret, created.callback_secret);
    assert_eq!(issued.info.previous_valid_until, Some(h.clock.now() + crate::services::SECRET_ROTATION_GRACE));
    let bot = h.agent(&a, "bot").await;
    let mut worker = HitlWorker::default();
    let mut send = async |h: &Harness| {
        let req = NewHitlRequest { callback_url: Some("https://hooks.example.test/x".into()), ..ask(&bot) };
        let r = h.svc.hitl.request(&a, req).await.unwrap();
        h.svc.hitl.approve(&a, r.id, comment("ok")).await.unwrap();
        h.callbacks.script([Ok(200)]);
        h.svc.hitl.step(&mut worker).await.unwrap();
        h.callbacks.sent().last().unwrap().clone()
    };
    let during = send(&h).await;
    let stamped = during.header("x-webhook-timestamp-signature").unwrap().to_owned();
    assert_eq!(stamped.matches("v1=").count(), 2, "{stamped}");
    let parsed = secrets::SignatureHeader::parse(Some(&stamped)).unwrap();
    assert!(parsed.matches(&issued.secret, &during.body) && parsed.matches(&created.callback_secret, &during.body));
    let plain = secrets::SignatureHeader::parse(during.header("x-webhook-signature")).unwrap();
    assert!(plain.matches(&issued.secret, &during.body), "sha256= is the new key's");

    h.clock.advance(Duration::from_secs(24 * 3600 + 1));
    let after = send(&h).await;
    let parsed = secrets::SignatureHeader::parse(after.header("x-webhook-timestamp-signature")).unwrap();
    assert!(parsed.matches(&issued.secret, &after.body));
    assert!(!parsed.matches(&created.callback_secret, &after.body), "the old key is gone after the grace");
}

#[tokio::test]
async fn a_tenant_without_a_callback_secret_gets_one_at_its_first_callback() {
    let h = harness();
    let a = h.admin("acme").await;
    h.store.delete_tenant_secret(a.tenant_id(), SecretPurpose::Callback).await.unwrap();
    let bot = h.agent(&a, "bot").await;
    let req = NewHitlRequest { callback_url: Some("https://hooks.example.test/x".into()), ..ask(&bot) };
    let r = h.svc.hitl.request(&a, req).await.unwrap();
    h.svc.hitl.reject(&a, r.id, comment("no")).await.unwrap();
    h.callbacks.script([Ok(200)]);
    h.svc.hitl.step(&mut HitlWorker::default()).await.unwrap();
    let made = h.store.get_tenant_secret(a.tenant_id(), SecretPurpose::Callback).await.unwrap().unwrap();
    let sent = h.callbacks.sent();
    let plain = secrets::SignatureHeader::parse(sent[0].header("x-webhook-signature")).unwrap();
    assert!(plain.matches(&made.secret, &sent[0].body));
    // Its admin sees that it exists (not its value) and rotates to learn one.
    let info = h.svc.tenants.secrets(&a).await.unwrap();
    assert_eq!(info.callback.map(|c| c.created_at), Some(made.created_at));
    assert_eq!(info.webhook, None);
}

/// Requests of `user`'s `agent`, each with a callback to `url` and cancelled, so their
/// callbacks are due now.
async fn cancelled_with_callbacks(h: &Harness, user: &Caller, agent: &Agent, url: &str, n: usize) -> Vec<HitlId> {
    let mut ids = Vec::new();
    for _ in 0..n {
        let req = NewHitlRequest { callback_url: Some(url.into()), ..ask(agent) };
        let r = h.svc.hitl.request(user, req).await.unwrap();
        h.svc.hitl.cancel(user, r.id, HitlDecision::default()).await.unwrap();
        ids.push(r.id);
    }
    ids
}

/// Lets a round that is under way do everything it can without its receivers' answers.
async fn settle<F: std::future::Future + Unpin>(round: &mut F) {
    for _ in 0..200 {
        assert!(futures::poll!(&mut *round).is_pending(), "the round cannot end while a receiver hangs");
        tokio::task::yield_now().await;
    }
}

/// Issue 32.9: one tenant's 16 callbacks to a receiver that never answers held every slot
/// of the round (8 at a time, 10 s each), so another tenant's callback waited behind them.
/// Now due callbacks are taken in turns across tenants and a tenant has at most
/// `callback_concurrency_per_tenant` attempts in flight: the other tenant's is delivered
/// while the hung ones still hang.
#[tokio::test]
async fn a_receiver_that_hangs_holds_up_only_its_own_tenant() {
    let h = harness();
    let a = h.admin("acme").await;
    let b = h.admin("globex").await;
    let bot = h.agent(&a, "bot").await;
    let other = h.agent(&b, "other").await;
    let hung = cancelled_with_callbacks(&h, &a, &bot, "https://hang.example.com/cb", 16).await;
    h.clock.advance(Duration::from_secs(1));
    let [waiting] = cancelled_with_callbacks(&h, &b, &other, "https://hooks.example.com/b", 1).await[..] else {
        panic!()
    };
    h.callbacks.hang("https://hang.example.com/");

    let mut worker = HitlWorker::default();
    let round = h.svc.hitl.step(&mut worker);
    futures::pin_mut!(round);
    settle(&mut round).await;
    let delivered = h.svc.hitl.get(&b, waiting).await.unwrap().callback.unwrap();
    assert_eq!(delivered.status, CallbackStatus::Delivered, "globex is not behind acme's hung receiver");
    assert_eq!(h.callbacks.hanging(), HitlSettings::default().callback_concurrency_per_tenant);

    // The receiver gives up; acme's callbacks go on in turn.
    h.callbacks.release();
    let done = round.await.unwrap();
    assert_eq!(done.callbacks_sent, 17);
    let retried = h.svc.hitl.get(&a, hung[0]).await.unwrap().callback.unwrap();
    assert_eq!((retried.status, retried.last_error.as_deref()), (CallbackStatus::Scheduled, Some("timed out")));
}

/// Issue 32.9: a callback round could outlast the 15 s `hitl` lease, and another replica
/// took it over and sent the same callbacks again. Now a round renews the lease on the
/// worker's ticks while it sends, and stops when it finds the lease lost.
#[tokio::test]
async fn a_long_round_renews_its_lease_and_stops_once_it_is_lost() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    cancelled_with_callbacks(&h, &a, &bot, "https://hang.example.com/cb", 3).await;
    h.callbacks.hang("https://hang.example.com/");
    let (tick, ticks) = futures::channel::mpsc::unbounded();
    let mut worker = HitlWorker::with_ticks(ticks);
    let round = h.svc.hitl.step(&mut worker);
    futures::pin_mut!(round);
    settle(&mut round).await;

    // Past a third of the lease, a tick renews it: another replica cannot take it after
    // the first 15 s.
    h.clock.advance(Duration::from_secs(6));
    tick.unbounded_send(()).unwrap();
    settle(&mut round).await;
    h.clock.advance(Duration::from_secs(10));
    let other = replica(&h);
    let mut theirs = HitlWorker::default();
    assert!(!other.svc.hitl.step(&mut theirs).await.unwrap().leader, "the renewed lease holds");

    // Stalled past the renewed lease (no tick), the lease goes to the other replica; at the
    // next tick this round learns it and stops, its hung attempts abandoned.
    h.clock.advance(Duration::from_secs(30));
    assert!(other.svc.hitl.step(&mut theirs).await.unwrap().leader);
    tick.unbounded_send(()).unwrap();
    let stopped = round.await.unwrap();
    assert!(!stopped.leader, "{stopped:?}");
    assert_eq!(stopped.callbacks_sent, 0);
}

/// Issue 32.9: a tenant has at most `max_open_callbacks_per_tenant` requests whose callback
/// is still to be sent (pending with a `callback_url`, or scheduled); a further one with a
/// callback answers 429 naming the setting, until one is delivered or given up.
#[tokio::test]
async fn open_callbacks_are_capped_per_tenant() {
    let hitl = HitlSettings { max_open_callbacks_per_tenant: 2, ..HitlSettings::default() };
    let h = crate::services::tests::harness_with_settings(Settings { hitl, ..Settings::default() });
    let a = h.admin("acme").await;
    let b = h.admin("globex").await;
    let bot = h.agent(&a, "bot").await;
    let other = h.agent(&b, "other").await;
    let with_callback =
        |agent: &Agent| NewHitlRequest { callback_url: Some("https://hooks.example.com/a".into()), ..ask(agent) };
    let first = h.svc.hitl.request(&a, with_callback(&bot)).await.unwrap();
    h.svc.hitl.request(&a, with_callback(&bot)).await.unwrap();
    let err = h.svc.hitl.request(&a, with_callback(&bot)).await.unwrap_err();
    let DomainError::QuotaExceeded { message, .. } = err else { panic!("expected 429, got {err:?}") };
    assert!(message.contains("AGENTGOV_HITL_MAX_PENDING_CALLBACKS_PER_TENANT"), "{message}");
    h.svc.hitl.request(&a, ask(&bot)).await.expect("a request without a callback is not counted");
    h.svc.hitl.request(&b, with_callback(&other)).await.expect("another tenant is not counted");

    // Decided, the callback is scheduled: still open until delivered.
    h.svc.hitl.approve(&a, first.id, HitlDecision::default()).await.unwrap();
    assert!(matches!(h.svc.hitl.request(&a, with_callback(&bot)).await, Err(DomainError::QuotaExceeded { .. })));
    h.svc.hitl.step(&mut HitlWorker::default()).await.unwrap();
    h.svc.hitl.request(&a, with_callback(&bot)).await.expect("the delivered callback made room");
}

/// Issue 32.9: the long-poll cap was per process only. Now each tenant holds at most
/// `max_long_polls_per_tenant` over every replica (places in the shared cache).
#[tokio::test]
async fn long_polls_are_capped_per_tenant_over_every_replica() {
    let hitl = HitlSettings { max_long_polls_per_tenant: 2, ..HitlSettings::default() };
    let settings = Settings { hitl, ..Settings::default() };
    let h = crate::services::tests::harness_with_settings(settings.clone());
    let other = crate::services::tests::rebuild(&h, settings);
    let a = h.admin("acme").await;
    let b = h.admin("globex").await;
    let bot = h.agent(&a, "bot").await;
    let theirs = h.agent(&b, "theirs").await;
    let r = h.svc.hitl.request(&a, ask(&bot)).await.unwrap();
    let rb = h.svc.hitl.request(&b, ask(&theirs)).await.unwrap();

    let (_, first) = h.svc.hitl.watch(&a, r.id, WAIT).await.unwrap();
    let (_, second) = other.svc.hitl.watch(&a, r.id, WAIT).await.unwrap();
    let err = h.svc.hitl.watch(&a, r.id, WAIT).await.map(|_| ()).unwrap_err();
    let DomainError::QuotaExceeded { message, .. } = err else { panic!("expected 429, got {err:?}") };
    assert!(message.contains("AGENTGOV_HITL_MAX_LONG_POLLS_PER_TENANT"), "{message}");
    assert!(other.svc.hitl.watch(&a, r.id, WAIT).await.is_err(), "the cap holds on every replica");
    assert!(other.svc.hitl.watch(&b, rb.id, WAIT).await.is_ok(), "another tenant has its own share");

    h.svc.hitl.end_watch(first.unwrap()).await;
    let (_, third) = other.svc.hitl.watch(&a, r.id, WAIT).await.unwrap();
    assert!(third.is_some() && second.is_some());
}

// Issue 38, part 2: approvals bound to the exact action.

fn policy(name: &str, rego: &str) -> PolicyRequest {
    PolicyRequest {
        name: name.into(),
        description: None,
        rego: Some(rego.into()),
        template: None,
        enabled: None,
        version: None,
        mode: None,
    }
}

fn transfer(bot: &Agent, context: serde_json::Value, token: Option<&str>) -> CheckRequest {
    CheckRequest {
        agent_id: bot.id.to_string(),
        action: "transfer".into(),
        resource: "payments/acct-1".into(),
        context: context.as_object().cloned().unwrap(),
        approval_token: token.map(str::to_owned),
        ..CheckRequest::default()
    }
}

fn denied_because(r: &crate::services::check::CheckResponse, why: &str) -> bool {
    !r.allowed && !r.required_approval && r.hitl_request_id.is_none() && r.reason.contains(why)
}

/// A check needing approval opens a request bound to its digest; the approval's token then
/// allows exactly that action, once: another action (other arguments) is denied, a dry run
/// only looks, the second use is denied.
#[tokio::test]
async fn an_approval_token_allows_the_approved_action_once() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let analyst = h.user(&a, "ann@acme.test", Role::Analyst).await;
    h.svc
        .policies
        .create(&a, policy("approve prod", "when environment production\napprove a human decides"))
        .await
        .unwrap();
    let asked = json!({"environment": "production", "arguments": {"to": "alice", "amount": 100}});
    let checked = h.svc.policies.check(&a, transfer(&bot, asked.clone(), None)).await.unwrap();
    let id = checked.hitl_request_id.unwrap();
    let pending = h.svc.hitl.get(&a, id).await.unwrap();
    let digest = pending.action_digest.clone().unwrap();
    assert_eq!(digest.len(), 64);
    assert!(pending.approval_token.is_none() && pending.grant.is_none());

    let approved = h.svc.policies.approve(&analyst, id, HitlApproval::default()).await.unwrap();
    let grant = approved.grant.clone().unwrap();
    assert_eq!((grant.digest.as_str(), grant.used_at), (digest.as_str(), None));
    assert_eq!(grant.expires_at - h.clock.now(), time::Duration::seconds(300));
    let token = h.svc.hitl.get(&a, id).await.unwrap().approval_token.unwrap();

    let other = json!({"environment": "production", "arguments": {"to": "mallory", "amount": 100}});
    let refused = h.svc.policies.check(&a, transfer(&bot, other, Some(&token))).await.unwrap();
    assert!(denied_because(&refused, "granted for a different action"), "{refused:?}");
    assert!(refused.decision_id.is_some(), "a refused token is a recorded denial");

    let dry = CheckRequest { dry_run: true, ..transfer(&bot, asked.clone(), Some(&token)) };
    let dry = h.svc.policies.check(&a, dry).await.unwrap();
    assert!(dry.allowed && dry.approved_by_request == Some(id), "{dry:?}");

    let run = h.svc.policies.check(&a, transfer(&bot, asked.clone(), Some(&token))).await.unwrap();
    assert!(run.allowed && !run.required_approval && run.hitl_request_id.is_none(), "{run:?}");
    assert_eq!(run.approved_by_request, Some(id));
    let record = h.store.get_audit(a.tenant_id(), run.decision_id.unwrap()).await.unwrap().unwrap();
    assert_eq!(record.details.to_value()["approved_by_request"], json!(id));
    assert_eq!(record.decision.as_deref(), Some("allow"));

    let again = h.svc.policies.check(&a, transfer(&bot, asked, Some(&token))).await.unwrap();
    assert!(denied_because(&again, "used already"), "{again:?}");
    let spent = h.svc.hitl.get(&a, id).await.unwrap();
    assert!(spent.approval_token.is_none(), "a spent grant serves no token");
    assert_eq!(spent.grant.unwrap().used_at, Some(h.clock.now()));
}

/// Past its expiry a token is refused; so is one altered, one of another tenant, and one
/// whose action the tenant's policies changed under since the approval.
#[tokio::test]
async fn expired_altered_foreign_and_outdated_tokens_are_refused() {
    let h = harness();
    let a = h.admin("acme").await;
    let b = h.admin("bravo").await;
    let bot = h.agent(&a, "bot").await;
    let b_bot = h.agent(&b, "bot").await;
    let analyst = h.user(&a, "ann@acme.test", Role::Analyst).await;
    let gate =
        h.svc.policies.create(&a, policy("approve prod", "when environment production\napprove a human decides"));
    let gate = gate.await.unwrap();
    let asked = json!({"environment": "production", "arguments": {"to": "alice"}});
    let approve = async |h: &Harness| {
        let checked = h.svc.policies.check(&a, transfer(&bot, asked.clone(), None)).await.unwrap();
        let id = checked.hitl_request_id.unwrap();
        h.svc.policies.approve(&analyst, id, HitlApproval::default()).await.unwrap();
        h.svc.hitl.get(&a, id).await.unwrap().approval_token.unwrap()
    };

    let token = approve(&h).await;
    h.clock.advance(Duration::from_secs(301));
    let late = h.svc.policies.check(&a, transfer(&bot, asked.clone(), Some(&token))).await.unwrap();
    assert!(denied_because(&late, "expired"), "{late:?}");

    let token = approve(&h).await;
    let mut altered = token.clone();
    let at = altered.rfind('.').unwrap() + 3;
    let swapped = if &altered[at..=at] == "A" { "B" } else { "A" };
    altered.replace_range(at..=at, swapped);
    let forged = h.svc.policies.check(&a, transfer(&bot, asked.clone(), Some(&altered))).await.unwrap();
    assert!(denied_because(&forged, "not valid"), "{forged:?}");
    let foreign = h.svc.policies.check(&b, transfer(&b_bot, asked.clone(), Some(&token))).await.unwrap();
    assert!(denied_because(&foreign, "not valid"), "{foreign:?}");

    // A new version of an enforced policy: what was approved was judged under the old one.
    let changed = PolicyRequest {
        description: Some("reworded".into()),
        ..policy("approve prod", "when environment production\napprove a person decides")
    };
    h.svc.policies.update(&a, gate.id, changed).await.unwrap();
    let outdated = h.svc.policies.check(&a, transfer(&bot, asked, Some(&token))).await.unwrap();
    assert!(denied_because(&outdated, "different action"), "{outdated:?}");
}

/// A policy's denial wins over an approval token, which stays unspent: once the denying
/// policy is off again, the same token still runs the action.
#[tokio::test]
async fn a_denial_wins_over_a_token_and_leaves_it_unspent() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let analyst = h.user(&a, "ann@acme.test", Role::Analyst).await;
    h.svc
        .policies
        .create(&a, policy("approve prod", "when environment production\napprove a human decides"))
        .await
        .unwrap();
    let asked = json!({"environment": "production", "arguments": {"to": "alice"}});
    let id = h.svc.policies.check(&a, transfer(&bot, asked.clone(), None)).await.unwrap().hitl_request_id.unwrap();
    h.svc.policies.approve(&analyst, id, HitlApproval::default()).await.unwrap();
    let token = h.svc.hitl.get(&a, id).await.unwrap().approval_token.unwrap();
    let freeze = h.svc.policies.create(&a, policy("freeze", "deny payments are frozen")).await.unwrap();
    let frozen = h.svc.policies.check(&a, transfer(&bot, asked.clone(), Some(&token))).await.unwrap();
    assert!(denied_because(&frozen, "payments are frozen"), "{frozen:?}");
    assert!(h.svc.hitl.get(&a, id).await.unwrap().grant_open());
    h.svc.policies.delete(&a, freeze.id).await.unwrap();
    let run = h.svc.policies.check(&a, transfer(&bot, asked, Some(&token))).await.unwrap();
    assert!(run.allowed && run.approved_by_request == Some(id), "{run:?}");
}

/// An approver may edit the arguments: the edit is checked again (a denial wins, the
/// request stays pending), and the token is bound to the edited action, not the asked one.
#[tokio::test]
async fn an_edited_approval_is_checked_again_and_binds_the_edit() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let analyst = h.user(&a, "ann@acme.test", Role::Analyst).await;
    h.svc
        .policies
        .create(&a, policy("approve prod", "when environment production\napprove a human decides"))
        .await
        .unwrap();
    h.svc
        .policies
        .create(&a, policy("no offshore", "when destination offshore\ndeny offshore transfers are forbidden"))
        .await
        .unwrap();
    let asked = json!({"environment": "production", "destination": "domestic", "amount": "900"});
    let id = h.svc.policies.check(&a, transfer(&bot, asked.clone(), None)).await.unwrap().hitl_request_id.unwrap();

    let edit = |context: serde_json::Value| HitlApproval {
        comment: Some("lowered".into()),
        context: Some(context.as_object().cloned().unwrap()),
    };
    let offshore = json!({"environment": "production", "destination": "offshore", "amount": "900"});
    let Err(DomainError::Conflict(m)) = h.svc.policies.approve(&analyst, id, edit(offshore)).await else {
        panic!("an edit the policies deny must not be approved")
    };
    assert!(m.contains("offshore transfers are forbidden") && m.contains("stays pending"), "{m}");
    assert_eq!(h.svc.hitl.get(&a, id).await.unwrap().status, HitlStatus::Pending);
    let huge = json!({"blob": "x".repeat(17 * 1024)});
    assert_eq!(fields(h.svc.policies.approve(&analyst, id, edit(huge)).await.unwrap_err()), ["context"]);
    let viewer = h.user(&a, "vic@acme.test", Role::Viewer).await;
    let lowered = json!({"environment": "production", "destination": "domestic", "amount": "100"});
    assert!(matches!(h.svc.policies.approve(&viewer, id, edit(lowered.clone())).await, Err(DomainError::Forbidden(_))));

    let approved = h.svc.policies.approve(&analyst, id, edit(lowered.clone())).await.unwrap();
    assert_eq!(approved.approved_context.as_ref().map(|c| c["amount"].clone()), Some(json!("100")));
    assert_ne!(approved.grant.as_ref().unwrap().digest, approved.action_digest.clone().unwrap());
    let token = h.svc.hitl.get(&a, id).await.unwrap().approval_token.unwrap();
    let as_asked = h.svc.policies.check(&a, transfer(&bot, asked, Some(&token))).await.unwrap();
    assert!(denied_because(&as_asked, "different action"), "{as_asked:?}");
    let as_edited = h.svc.policies.check(&a, transfer(&bot, lowered, Some(&token))).await.unwrap();
    assert!(as_edited.allowed && as_edited.approved_by_request == Some(id), "{as_edited:?}");
    let types = audit_types(&h, a.tenant_id()).await;
    assert_eq!(types, ["hitl.requested", "hitl.approved"]);
}

/// An edited approval is checked in the session of the check that asked, as it is now: a
/// label the session gained after the request (a secret read) makes a policy deny the edit.
#[tokio::test]
async fn an_edited_approval_is_checked_in_the_asking_checks_session() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let analyst = h.user(&a, "ann@acme.test", Role::Analyst).await;
    for (name, rego) in [
        ("approve prod", "when environment production\napprove a human decides"),
        ("classify", "when kind secret\nlabel secret_read"),
        ("after a secret", "session secret_read\ndeny no transfer after a secret"),
    ] {
        h.svc.policies.create(&a, policy(name, rego)).await.unwrap();
    }
    let in_session = |mut req: CheckRequest, session: &str| {
        req.session_id = Some(session.into());
        req
    };
    let asked = json!({"environment": "production", "amount": "900"});
    let ask = async |session: &str| {
        let req = in_session(transfer(&bot, asked.clone(), None), session);
        h.svc.policies.check(&a, req).await.unwrap().hitl_request_id.unwrap()
    };
    let (id, elsewhere) = (ask("run-1").await, ask("run-2").await);
    let read = CheckRequest {
        action: "read".into(),
        resource: "vault/token".into(),
        context: json!({"kind": "secret"}).as_object().cloned().unwrap(),
        ..transfer(&bot, json!({}), None)
    };
    assert_eq!(h.svc.policies.check(&a, in_session(read, "run-1")).await.unwrap().labels, ["secret_read"]);

    let edit = HitlApproval {
        comment: None,
        context: Some(json!({"environment": "production", "amount": "100"}).as_object().cloned().unwrap()),
    };
    let Err(DomainError::Conflict(m)) = h.svc.policies.approve(&analyst, id, edit.clone()).await else {
        panic!("the session read a secret since: the edit must be denied")
    };
    assert!(m.contains("no transfer after a secret"), "{m}");
    assert_eq!(h.svc.hitl.get(&a, id).await.unwrap().status, HitlStatus::Pending);
    let approved = h.svc.policies.approve(&analyst, elsewhere, edit).await.unwrap();
    assert_eq!(approved.status, HitlStatus::Approved, "another session read no secret");
    assert_eq!(approved.session_id.as_deref(), Some("run-2"));
    let session = h.svc.sessions.get(&a, "run-2").await.unwrap();
    assert_eq!((session.approvals, session.checks), (1, 1), "the approval is the session's: {session:?}");
}

/// A malformed token is bad input (422), not a decision.
#[tokio::test]
async fn a_malformed_token_is_refused_as_input() {
    let h = harness();
    let a = h.admin("acme").await;
    let bot = h.agent(&a, "bot").await;
    let pattern = regex::Regex::new(crate::services::check::APPROVAL_TOKEN_PATTERN).unwrap();
    for bad in ["", "not-a-token", "a.b", "a.b.c.d", "a.b!.c", &format!("{}.b.c", "a".repeat(4096))] {
        let err = h.svc.policies.check(&a, transfer(&bot, json!({}), Some(bad))).await.unwrap_err();
        assert_eq!(fields(err), ["approval_token"], "{bad:?}");
        assert!(bad.len() > 4096 || !pattern.is_match(bad), "the documented pattern refuses {bad:?} too");
    }
    assert!(pattern.is_match("eyJh.eyJz-_.c2ln"));
}
