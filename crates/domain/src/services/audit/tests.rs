//! The audit service against in-memory fakes.

use std::time::Duration;

use futures::TryStreamExt;
use serde_json::{Value, json};

use super::*;
use crate::model::{AuditOrigin, Role, SERVICE_EVENT_TYPES, SERVICE_NAMESPACES};
use crate::ports::{AuditRepo, Clock, JobQueue};
use crate::services::tests::{Harness, harness, harness_with};
use time::OffsetDateTime;

fn entry(event_type: &str) -> NewAuditEntry {
    NewAuditEntry {
        event_type: event_type.into(),
        agent_id: Some(Uuid::from_u128(9)),
        action: Some("read".into()),
        resource: Some("db/customers".into()),
        decision: Some("allow".into()),
        risk_score: Some(0.5),
        details: Some(json!({"input": {"q": "x"}, "reasoning": ["a", "b"]})),
    }
}

async fn admin(h: &Harness, tenant: &str) -> Caller {
    h.tenant(tenant).await;
    h.login(&format!("admin@{tenant}.test")).await.1
}

fn fields(err: DomainError) -> Vec<String> {
    match err {
        DomainError::Validation(errors) => errors.into_iter().map(|e| e.field).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

async fn body(file: ExportFile) -> Vec<u8> {
    file.body.try_concat().await.unwrap()
}

#[tokio::test]
async fn written_entries_are_chained_and_carry_the_caller_as_actor() {
    let h = harness();
    let caller = admin(&h, "acme").await;
    let a = h.svc.audit.write(&caller, entry("app.action")).await.unwrap();
    let b = h.svc.audit.write(&caller, entry("app.check")).await.unwrap();
    assert_eq!(b.seq, a.seq + 1);
    assert_eq!(b.prev_hash, a.hash);
    assert_eq!(a.actor, Actor::new(ActorType::User, caller.user.id));
    assert_eq!(h.svc.audit.get(&caller, a.id).await.unwrap(), a);
    let v = h.svc.audit.verify(&caller, None, None).await.unwrap();
    assert!(v.valid);
    assert_eq!(v.head_seq, b.seq);
}

#[tokio::test]
async fn invalid_entries_name_every_bad_field() {
    let h = harness();
    let caller = admin(&h, "acme").await;
    let bad = NewAuditEntry {
        event_type: "Agent Action".into(),
        agent_id: None,
        action: Some(String::new()),
        resource: Some("x".repeat(1001)),
        decision: Some("a\u{0}b".into()),
        risk_score: Some(1.5),
        details: Some(json!([1, 2])),
    };
    let err = h.svc.audit.write(&caller, bad).await.unwrap_err();
    assert_eq!(fields(err), ["event_type", "action", "resource", "decision", "risk_score", "details"]);
    for reserved in ["user.role_changed", "auth.login", "api_key.created", "tenant.created", "audit.x"] {
        let err = h.svc.audit.write(&caller, entry(reserved)).await.unwrap_err();
        assert_eq!(fields(err), ["event_type"], "{reserved}");
    }
}

#[tokio::test]
async fn no_client_can_write_an_event_type_of_the_service() {
    let h = harness();
    let caller = admin(&h, "acme").await;
    // Every type the service records, each namespace with a made-up type, and a bare one.
    let made_up = SERVICE_NAMESPACES.iter().map(|ns| format!("{ns}.made_up"));
    let bare = SERVICE_NAMESPACES.iter().map(|ns| (*ns).to_owned());
    for forged in SERVICE_EVENT_TYPES.iter().map(|t| (*t).to_owned()).chain(made_up).chain(bare) {
        match h.svc.audit.write(&caller, entry(&forged)).await {
            Err(DomainError::Validation(errors)) => {
                assert_eq!(errors.len(), 1, "{forged}");
                assert_eq!(errors[0].field, "event_type", "{forged}");
                assert!(errors[0].message.contains("reserved"), "{forged}: {}", errors[0].message);
            }
            other => panic!("{forged} was accepted: {other:?}"),
        }
    }
    assert_eq!(records(&h, &caller).await.iter().filter(|r| r["origin"] == "client").count(), 0);
    // A namespace of the client's own, also one that merely starts like a service's.
    for own in ["app.action", "agents.action", "policy_engine.check", "x"] {
        let r = h.svc.audit.write(&caller, entry(own)).await.unwrap();
        assert_eq!(r.origin, AuditOrigin::Client, "{own}");
        assert_eq!(serde_json::to_value(&r).unwrap()["origin"], "client");
    }
}

#[test]
fn the_origin_follows_the_event_type_and_every_service_type_is_reserved() {
    for t in SERVICE_EVENT_TYPES {
        assert_eq!(AuditOrigin::of(t), AuditOrigin::Service, "{t}");
    }
    assert_eq!(AuditOrigin::of("anomaly.detected"), AuditOrigin::Service);
    assert_eq!(AuditOrigin::of("app.tool_call"), AuditOrigin::Client);
    assert_eq!(AuditOrigin::of("hitlx.approved"), AuditOrigin::Client);
}

#[tokio::test]
async fn the_service_records_its_own_events_with_the_service_origin() {
    let h = harness();
    let caller = admin(&h, "acme").await;
    h.svc.audit.write(&caller, entry("app.action")).await.unwrap();
    let listed = h.svc.audit.list(&caller, &AuditFilterParams::default(), None, None).await.unwrap().items;
    let origins: Vec<_> = listed.iter().map(|r| (r.event_type.as_str(), r.origin)).collect();
    assert_eq!(origins[0], ("app.action", AuditOrigin::Client));
    assert!(origins[1..].iter().all(|(_, o)| *o == AuditOrigin::Service), "{origins:?}");
    assert!(origins.iter().any(|(t, _)| *t == "tenant.created"), "{origins:?}");
}

#[tokio::test]
async fn permissions_are_checked() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    let viewer = h.user(&admin, "viewer@acme.test", Role::Viewer).await;
    assert!(matches!(h.svc.audit.write(&viewer, entry("app.action")).await, Err(DomainError::Forbidden(_))));
    assert!(h.svc.audit.list(&viewer, &AuditFilterParams::default(), None, None).await.is_ok());
}

#[tokio::test]
async fn lists_are_newest_first_filtered_paginated_and_per_tenant() {
    let h = harness();
    let acme = admin(&h, "acme").await;
    let other = admin(&h, "other").await;
    for i in 0..7 {
        let mut e = entry(if i % 2 == 0 { "app.action" } else { "app.check" });
        e.decision = Some(if i < 3 { "deny" } else { "allow" }.into());
        h.svc.audit.write(&acme, e).await.unwrap();
        h.clock.advance(Duration::from_secs(10));
    }
    h.svc.audit.write(&other, entry("app.action")).await.unwrap();

    let filter = AuditFilterParams { event_type: Some("app.action".into()), ..Default::default() };
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = h.svc.audit.list(&acme, &filter, Some(2), cursor.as_deref()).await.unwrap();
        seen.extend(page.items.iter().map(|r| (r.seq, r.event_type.clone())));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(seen.len(), 4);
    assert!(seen.windows(2).all(|w| w[0].0 > w[1].0), "newest first: {seen:?}");
    assert!(seen.iter().all(|(_, t)| t == "app.action"));

    let filter = AuditFilterParams { decision: Some("deny".into()), ..Default::default() };
    assert_eq!(h.svc.audit.list(&acme, &filter, None, None).await.unwrap().items.len(), 3);
    // The tenant's own admin actions are in its log too; `other` sees only its own.
    let all = h.svc.audit.list(&other, &AuditFilterParams::default(), None, None).await.unwrap();
    assert!(all.items.iter().all(|r| r.tenant_id == other.tenant_id()));
    let acme_record = h.svc.audit.list(&acme, &AuditFilterParams::default(), Some(1), None).await.unwrap();
    let id = acme_record.items[0].id;
    assert!(matches!(h.svc.audit.get(&other, id).await, Err(DomainError::NotFound { .. })));
}

#[tokio::test]
async fn time_filters_and_bad_filters() {
    let h = harness();
    let caller = admin(&h, "acme").await;
    let start = h.clock.now();
    h.clock.advance(Duration::from_secs(60));
    h.svc.audit.write(&caller, entry("app.action")).await.unwrap();
    let rfc = |t: OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap();
    let filter = AuditFilterParams {
        from: Some(rfc(start + Duration::from_secs(30))),
        to: Some(rfc(start + Duration::from_secs(90))),
        ..Default::default()
    };
    let page = h.svc.audit.list(&caller, &filter, None, None).await.unwrap();
    assert_eq!(page.items.len(), 1);

    let bad = AuditFilterParams {
        agent_id: Some("nope".into()),
        actor_type: Some("robot".into()),
        from: Some("yesterday".into()),
        ..Default::default()
    };
    let err = h.svc.audit.list(&caller, &bad, Some(0), Some("???")).await.unwrap_err();
    assert_eq!(fields(err), ["agent_id", "actor_type", "from", "limit", "cursor"]);
    // A range that ends before it begins holds nothing (the document cannot refuse it).
    let backwards = AuditFilterParams { from: filter.to.clone(), to: filter.from.clone(), ..Default::default() };
    assert!(h.svc.audit.list(&caller, &backwards, None, None).await.unwrap().items.is_empty());
}

#[tokio::test]
async fn concurrent_appends_make_one_gap_free_chain_per_tenant() {
    let h = harness();
    let a = admin(&h, "acme").await;
    let b = admin(&h, "beta").await;
    let mut tasks = Vec::new();
    for i in 0..200 {
        let (svc, caller) = (h.svc.audit.clone(), if i % 2 == 0 { a.clone() } else { b.clone() });
        tasks.push(tokio::spawn(async move { svc.write(&caller, entry("app.action")).await.unwrap() }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    for caller in [&a, &b] {
        let v = h.svc.audit.verify(caller, None, None).await.unwrap();
        assert!(v.valid, "{v:?}");
        let head = h.store.audit_head(caller.tenant_id()).await.unwrap().unwrap();
        assert_eq!(v.checked as i64, head.seq);
    }
}

#[tokio::test]
async fn verification_of_a_range_and_bad_ranges() {
    let h = harness();
    let caller = admin(&h, "acme").await;
    for _ in 0..5 {
        h.svc.audit.write(&caller, entry("app.action")).await.unwrap();
    }
    let v = h.svc.audit.verify(&caller, Some(3), Some(4)).await.unwrap();
    assert!(v.valid);
    assert_eq!(v.checked, 2);
    let err = h.svc.audit.verify(&caller, Some(0), Some(4)).await.unwrap_err();
    assert_eq!(fields(err), ["from_seq"]);
    // A range that ends before it begins checks nothing.
    let v = h.svc.audit.verify(&caller, Some(4), Some(3)).await.unwrap();
    assert!(v.valid);
    assert_eq!(v.checked, 0);
}

#[tokio::test]
async fn admin_actions_are_audited() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    let analyst = h.user(&admin, "analyst@acme.test", Role::Analyst).await;
    h.svc.users.set_role(&admin, analyst.user.id, Role::Viewer).await.unwrap();
    h.svc.users.block(&admin, analyst.user.id).await.unwrap();
    let key = h
        .svc
        .api_keys
        .create(&admin, crate::services::NewApiKey { name: "ci".into(), permissions: None, expires_at: None });
    let key = key.await.unwrap();
    h.svc.api_keys.revoke(&admin, key.key.id).await.unwrap();
    let _ = h.svc.auth.login("admin@acme.test", "wrong password!!", None).await;

    let page = h.svc.audit.list(&admin, &AuditFilterParams::default(), Some(100), None).await.unwrap();
    let mut types: Vec<&str> = page.items.iter().map(|r| r.event_type.as_str()).collect();
    types.reverse();
    assert_eq!(
        types,
        [
            "tenant.created",
            "auth.login",
            "user.created",
            "auth.login",
            "user.role_changed",
            "user.blocked",
            "api_key.created",
            "api_key.revoked",
            "auth.login_failed",
        ]
    );
    let role_change = page.items.iter().find(|r| r.event_type == "user.role_changed").unwrap();
    assert_eq!(role_change.actor, Actor::new(ActorType::User, admin.user.id));
    assert_eq!(role_change.details.to_value(), json!({"previous_role": "analyst", "role": "viewer"}));
    // Secrets never reach the log.
    let text = serde_json::to_string(&page.items).unwrap();
    assert!(!text.contains(&key.api_key) && !text.contains("wrong password"));
}

async fn records(h: &Harness, caller: &Caller) -> Vec<Value> {
    let page = h.svc.audit.list(caller, &AuditFilterParams::default(), Some(500), None).await.unwrap();
    page.items.iter().rev().map(|r| serde_json::to_value(r).unwrap()).collect()
}

#[tokio::test]
async fn every_export_format_parses_back_to_the_listed_records() {
    let settings = AuditSettings { export_page: 3, ..AuditSettings::default() };
    let h = harness_with(settings);
    let caller = admin(&h, "acme").await;
    for i in 0..8 {
        let mut e = entry("app.action");
        e.details = Some(json!({"text": format!("line {i}\n, \"quoted\""), "n": i}));
        e.risk_score = if i == 3 { None } else { Some(0.1 * f64::from(i)) };
        h.svc.audit.write(&caller, e).await.unwrap();
    }
    let expected = records(&h, &caller).await;
    let all = AuditFilterParams::default();

    let jsonl = body(h.svc.audit.export(&caller, &all, ExportFormat::Jsonl).await.unwrap()).await;
    let parsed: Vec<Value> =
        String::from_utf8(jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(parsed, expected);

    let json = body(h.svc.audit.export(&caller, &all, ExportFormat::Json).await.unwrap()).await;
    assert_eq!(serde_json::from_slice::<Vec<Value>>(&json).unwrap(), expected);

    let csv = body(h.svc.audit.export(&caller, &all, ExportFormat::Csv).await.unwrap()).await;
    let mut reader = csv::Reader::from_reader(csv.as_slice());
    assert_eq!(reader.headers().unwrap().iter().collect::<Vec<_>>(), CSV_COLUMNS);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), expected.len());
    for (row, want) in rows.iter().zip(&expected) {
        assert_eq!(row[0], *want["id"].as_str().unwrap());
        assert_eq!(row[1].parse::<i64>().unwrap(), want["seq"].as_i64().unwrap());
        assert_eq!(row[2], *want["timestamp"].as_str().unwrap());
        assert_eq!(row[3], *want["actor"]["type"].as_str().unwrap());
        let risk = if row[10].is_empty() { Value::Null } else { serde_json::from_str(&row[10]).unwrap() };
        assert_eq!(risk, want["risk_score"]);
        assert_eq!(serde_json::from_str::<Value>(&row[11]).unwrap(), want["details"]);
        assert_eq!(row[13], *want["hash"].as_str().unwrap());
        assert_eq!(row[14], *want["origin"].as_str().unwrap());
    }

    // An empty selection is still a well-formed file.
    let none = AuditFilterParams { event_type: Some("nothing.here".into()), ..Default::default() };
    let json = body(h.svc.audit.export(&caller, &none, ExportFormat::Json).await.unwrap()).await;
    assert_eq!(serde_json::from_slice::<Vec<Value>>(&json).unwrap(), Vec::<Value>::new());
}

#[tokio::test]
async fn asynchronous_exports_run_download_and_expire() {
    let settings = AuditSettings { export_page: 2, export_chunk_bytes: 300, ..AuditSettings::default() };
    let h = harness_with(settings);
    let caller = admin(&h, "acme").await;
    let other = admin(&h, "other").await;
    for _ in 0..9 {
        h.svc.audit.write(&caller, entry("app.action")).await.unwrap();
    }
    let req = NewExport { format: ExportFormat::Jsonl, filters: AuditFilterParams::default() };
    let job = h.svc.audit.start_export(&caller, req).await.unwrap();
    assert_eq!(job.status, JobStatus::Queued);
    assert!(matches!(h.svc.audit.download(&caller, job.id).await, Err(DomainError::Conflict(_))));
    assert!(matches!(h.svc.audit.export_status(&other, job.id).await, Err(DomainError::NotFound { .. })));
    // Written after the job was accepted: not in its file.
    h.svc.audit.write(&caller, entry("app.late")).await.unwrap();

    assert!(h.run_next_export().await);
    assert!(!h.run_next_export().await);
    let done = h.svc.audit.export_status(&caller, job.id).await.unwrap();
    assert_eq!(done.status, JobStatus::Completed);
    assert_eq!(done.progress, 1.0);
    assert!(done.started_at.is_some() && done.finished_at.is_some());
    let file = h.svc.audit.download(&caller, job.id).await.unwrap();
    assert_eq!(file.length, Some(done.bytes as u64));
    let bytes = body(file).await;
    assert_eq!(bytes.len() as i64, done.bytes);
    let lines: Vec<Value> =
        String::from_utf8(bytes).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len() as i64, done.rows);
    assert!(lines.iter().all(|l| l["event_type"] != "app.late"));
    assert!(matches!(h.svc.audit.download(&other, job.id).await, Err(DomainError::NotFound { .. })));

    h.clock.advance(AuditSettings::default().export_retention + Duration::from_secs(1));
    assert_eq!(h.svc.jobs.purge_expired().await.unwrap(), 1);
    assert!(matches!(h.svc.audit.export_status(&caller, job.id).await, Err(DomainError::NotFound { .. })));
}

#[tokio::test]
async fn an_abandoned_export_is_taken_over_after_its_lease() {
    let h = harness();
    let caller = admin(&h, "acme").await;
    let req = NewExport { format: ExportFormat::Csv, filters: AuditFilterParams::default() };
    let job = h.svc.audit.start_export(&caller, req).await.unwrap();
    // A worker claims it and dies without a word.
    let now = h.clock.now();
    let kinds = [crate::model::JobKind::Export];
    let claimed = h.store.claim_job(&kinds, now, Uuid::from_u128(1), now + Duration::from_secs(60)).await.unwrap();
    assert_eq!(claimed.unwrap().id, job.id.0);
    assert!(!h.run_next_export().await, "the lease still holds");
    h.clock.advance(Duration::from_secs(61));
    assert!(h.run_next_export().await);
    let done = h.svc.audit.export_status(&caller, job.id).await.unwrap();
    assert_eq!(done.status, JobStatus::Completed);
    assert_eq!(done.attempts, 2);
}

#[tokio::test]
async fn bad_export_requests_are_refused() {
    let h = harness();
    let caller = admin(&h, "acme").await;
    let req = NewExport {
        format: ExportFormat::Json,
        filters: AuditFilterParams { agent_id: Some("x".into()), ..Default::default() },
    };
    assert_eq!(fields(h.svc.audit.start_export(&caller, req).await.unwrap_err()), ["filters.agent_id"]);
    let bad = AuditFilterParams { to: Some("soon".into()), ..Default::default() };
    assert!(h.svc.audit.export(&caller, &bad, ExportFormat::Csv).await.is_err());
}

/// Issue 32.9: each asynchronous export copies the log it selects and keeps it for a day, so
/// a tenant may have only a few queued or running at once; more answer 429 until one ends,
/// and another tenant is not counted with it.
#[tokio::test]
async fn a_tenant_queues_only_its_share_of_asynchronous_exports() {
    let h = harness_with(AuditSettings { max_queued_exports_per_tenant: 2, ..AuditSettings::default() });
    let caller = admin(&h, "acme").await;
    let other = admin(&h, "other").await;
    let req = || NewExport { format: ExportFormat::Jsonl, filters: AuditFilterParams::default() };
    h.svc.audit.start_export(&caller, req()).await.unwrap();
    h.svc.audit.start_export(&caller, req()).await.unwrap();
    let err = h.svc.audit.start_export(&caller, req()).await.unwrap_err();
    let DomainError::QuotaExceeded { message, .. } = err else { panic!("expected 429, got {err:?}") };
    assert!(message.contains("2 asynchronous exports") && message.contains("AGENTGOV_MAX_QUEUED_EXPORTS_PER_TENANT"));
    h.svc.audit.start_export(&other, req()).await.unwrap();

    // One finishes (the oldest job first): room for one more, not two.
    assert!(h.run_next_export().await);
    h.svc.audit.start_export(&caller, req()).await.unwrap();
    assert!(matches!(h.svc.audit.start_export(&caller, req()).await, Err(DomainError::QuotaExceeded { .. })));
}
