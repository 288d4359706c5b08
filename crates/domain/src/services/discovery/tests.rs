//! The discovery service against in-memory fakes: validation, attribution, batches,
//! clustering jobs, confirmation and dismissal, isolation and permissions.

use agentgov_detect::discovery::synth::{SynthConfig, SynthEvent, generate};

use super::*;
use crate::events::DISCOVERY_CANDIDATE;
use crate::ports::{AgentRepo, Clock, DiscoveryRepo, JobQueue};
use crate::services::NewApiKey;
use crate::services::tests::{Harness, harness};

async fn admin(h: &Harness, tenant: &str) -> Caller {
    h.tenant(tenant).await;
    h.login(&format!("admin@{tenant}.test")).await.1
}

fn event(host: &str) -> IngestEvent {
    IngestEvent {
        source: "gateway".into(),
        host: Some(host.into()),
        process: Some("python3 /srv/bot/report_bot.py".into()),
        user_agent: Some("langchain/0.2.1".into()),
        ip: Some("10.1.2.3".into()),
        endpoint: Some("https://api.openai.com/v1/chat/completions".into()),
        model: Some("gpt-4o".into()),
        tool_calls: vec!["query_sql".into()],
        api_key_fingerprint: Some("sha256:0011223344556677".into()),
        ..IngestEvent::default()
    }
}

fn ingest_of(e: &SynthEvent) -> IngestEvent {
    let at = OffsetDateTime::from_unix_timestamp(e.at).unwrap().format(&Rfc3339).unwrap();
    IngestEvent {
        source: e.source.clone(),
        timestamp: Some(at),
        host: e.host.clone(),
        ip: e.ip.clone(),
        user_agent: e.user_agent.clone(),
        process: e.process.clone(),
        endpoint: e.endpoint.clone(),
        model: e.model.clone(),
        tool_calls: e.tool_calls.clone(),
        api_key_fingerprint: e.api_key_fingerprint.clone(),
        ..IngestEvent::default()
    }
}

/// Ingests generated events of `agents` hidden agents (no background).
async fn ingest_synthetic(h: &Harness, caller: &Caller, agents: usize, events: usize, seed: u64) -> Vec<SynthEvent> {
    let cfg = SynthConfig { seed, agents, events, background_share: 0.0, ..SynthConfig::default() };
    let generated = generate(&cfg);
    for chunk in generated.chunks(2_000) {
        let batch = IngestBatch { events: chunk.iter().map(|e| serde_json::to_value(json_of(e)).unwrap()).collect() };
        let report = h.svc.discovery.ingest_batch(caller, batch).await.unwrap();
        assert_eq!(report.rejected, 0, "{:?}", report.errors.first());
    }
    generated
}

fn json_of(e: &SynthEvent) -> serde_json::Value {
    let i = ingest_of(e);
    serde_json::json!({
        "source": i.source, "timestamp": i.timestamp, "host": i.host, "ip": i.ip, "user_agent": i.user_agent,
        "process": i.process, "endpoint": i.endpoint, "model": i.model, "tool_calls": i.tool_calls,
        "api_key_fingerprint": i.api_key_fingerprint,
    })
}

/// Runs the queued clustering job to its end, as the worker would.
async fn cluster_now(h: &Harness) -> ClusterJob {
    let claimed = h.claim(crate::model::JobKind::Clustering).await.expect("a queued job");
    let run = h.svc.discovery.begin_clustering(claimed).await.unwrap();
    loop {
        let page = h.svc.discovery.next_page(&run).await.unwrap();
        if page.is_empty() {
            break;
        }
        run.absorb(&page);
    }
    let clustering = run.cluster();
    h.svc.discovery.finish_clustering(&run, clustering).await.unwrap();
    let job = h.store.get_job(run.job.id.0).await.unwrap().unwrap();
    crate::model::JobView::from_job(job).unwrap()
}

async fn candidates(h: &Harness, caller: &Caller, status: Option<&str>) -> Vec<DiscoveryCandidate> {
    let params = CandidateListParams { status: status.map(str::to_owned) };
    h.svc.discovery.list(caller, &params, Some(500), None).await.unwrap().items
}

fn fields(err: DomainError) -> Vec<String> {
    match err {
        DomainError::Validation(errors) => errors.into_iter().map(|e| e.field).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn ingest_validates_every_field_and_says_which() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    let bad = IngestEvent {
        source: " ".into(),
        timestamp: Some("yesterday".into()),
        ip: Some("10.0.0".into()),
        tool_calls: vec![String::new()],
        api_key_fingerprint: Some("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH".into()),
        agent_id: Some("not-a-uuid".into()),
        ..IngestEvent::default()
    };
    let got = fields(h.svc.discovery.ingest(&admin, bad).await.unwrap_err());
    for f in ["source", "timestamp", "ip", "tool_calls[0]", "api_key_fingerprint", "agent_id"] {
        assert!(got.iter().any(|g| g == f), "{f} missing from {got:?}");
    }
    let future = (h.clock.now() + time::Duration::hours(1)).format(&Rfc3339).unwrap();
    let err = h.svc.discovery.ingest(&admin, IngestEvent { timestamp: Some(future), ..event("h") }).await.unwrap_err();
    assert_eq!(fields(err), ["timestamp"]);
    let empty = IngestEvent { source: "proxy".into(), ..IngestEvent::default() };
    assert_eq!(fields(h.svc.discovery.ingest(&admin, empty).await.unwrap_err()), ["host"]);

    let stored = h.svc.discovery.ingest(&admin, event("billing-1.prod")).await.unwrap();
    assert_eq!(stored.disposition, EventDisposition::Shadow);
    assert_eq!(stored.observed_at, h.clock.now(), "no timestamp: when it arrived");
}

#[tokio::test]
async fn events_naming_a_registered_agent_are_attributed_and_never_clustered() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    let req = AgentRequest {
        name: "billing".into(),
        agent_type: "llm".into(),
        description: None,
        capabilities: vec![],
        permissions: JsonObject::new(),
        metadata: JsonObject::new(),
        status: None,
    };
    let agent = h.svc.agents.register(&admin, req).await.unwrap();
    let known = IngestEvent { agent_id: Some(agent.id.to_string()), ..event("billing-1.prod") };
    let stored = h.svc.discovery.ingest(&admin, known).await.unwrap();
    assert_eq!(stored.disposition, EventDisposition::Attributed);
    assert_eq!(stored.attributed_agent_id, Some(agent.id));
    // An id the tenant never registered is shadow activity (it names itself, nothing more).
    let unknown = IngestEvent { agent_id: Some(Uuid::now_v7().to_string()), ..event("billing-1.prod") };
    assert_eq!(h.svc.discovery.ingest(&admin, unknown).await.unwrap().disposition, EventDisposition::Shadow);
    let shadow = h.store.scan_shadow_events(admin.tenant_id(), None, 100).await.unwrap();
    assert_eq!(shadow.len(), 1);
}

#[tokio::test]
async fn a_batch_keeps_valid_items_and_reports_the_others() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    let batch = IngestBatch {
        events: vec![
            serde_json::json!({"source": "gateway", "host": "a-1.prod", "process": "node a.js"}),
            serde_json::json!({"source": "gateway", "ip": "999.1.1.1"}),
            serde_json::json!({"source": "gateway", "host": "b", "surprise": true}),
            serde_json::json!("not an object"),
            serde_json::json!({"source": "edr", "host": "c-2.prod"}),
        ],
    };
    let report = h.svc.discovery.ingest_batch(&admin, batch).await.unwrap();
    assert_eq!((report.accepted, report.rejected, report.shadow), (2, 3, 2));
    let indexes: Vec<usize> = report.errors.iter().map(|e| e.index).collect();
    assert_eq!(indexes, [1, 2, 3]);
    assert_eq!(report.errors[0].errors[0].field, "ip");
    assert_eq!(report.errors[1].errors[0].field, "surprise", "{:?}", report.errors[1]);

    let none_valid = IngestBatch { events: vec![serde_json::json!({"source": "x", "ip": "nope"})] };
    assert_eq!(fields(h.svc.discovery.ingest_batch(&admin, none_valid).await.unwrap_err()), ["events[0].ip"]);
    let too_many = IngestBatch { events: vec![serde_json::json!({}); MAX_BATCH + 1] };
    assert_eq!(fields(h.svc.discovery.ingest_batch(&admin, too_many).await.unwrap_err()), ["events"]);
    let empty = IngestBatch { events: vec![] };
    assert_eq!(fields(h.svc.discovery.ingest_batch(&admin, empty).await.unwrap_err()), ["events"]);
}

#[tokio::test]
async fn clustering_finds_the_hidden_agents_publishes_them_and_updates_them_on_reclustering() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    ingest_synthetic(&h, &admin, 4, 800, 11).await;
    let job = h.svc.discovery.start_clustering(&admin).await.unwrap();
    assert_eq!(job.status, JobStatus::Queued);
    let again = h.svc.discovery.start_clustering(&admin).await.unwrap();
    assert_eq!(again.id, job.id, "one job at a time: the queued one is answered");

    let done = cluster_now(&h).await;
    assert_eq!(done.status, JobStatus::Completed);
    let summary = done.summary.unwrap();
    assert_eq!(summary.events, 800);
    assert_eq!(summary.candidates_created, 4, "{summary:?}");
    let found = candidates(&h, &admin, Some("pending")).await;
    assert_eq!(found.len(), 4);
    for c in &found {
        assert!(c.confidence > 0.5 && c.event_count >= 20, "{c:?}");
        assert!(!c.suggested_name.is_empty() && !c.capabilities.is_empty());
        assert!(!c.sample_events.is_empty() && c.sample_events.len() <= SAMPLES);
        assert!(c.fingerprint.0.contains_key("process"));
        assert!(c.first_seen <= c.last_seen);
    }
    let published = h.bus.published.lock().unwrap().clone();
    assert_eq!(published.iter().filter(|e| e.event_type == DISCOVERY_CANDIDATE).count(), 4);

    // More of the same agents' activity: the same candidates, with more events.
    ingest_synthetic(&h, &admin, 4, 400, 11).await;
    h.svc.discovery.start_clustering(&admin).await.unwrap();
    let second = cluster_now(&h).await.summary.unwrap();
    assert_eq!((second.candidates_created, second.candidates_updated), (0, 4), "{second:?}");
    let after = candidates(&h, &admin, None).await;
    assert_eq!(after.len(), 4);
    let ids = |cs: &[DiscoveryCandidate]| cs.iter().map(|c| c.id).collect::<HashSet<_>>();
    assert_eq!(ids(&after), ids(&found));
    assert_eq!(second.events, 1200);
    assert_eq!(after.iter().map(|c| c.event_count).sum::<i64>(), second.events - second.noise_events);
    assert!(second.noise_events < 20, "{second:?}");
}

#[tokio::test]
async fn confirming_registers_exactly_one_agent_and_claims_its_future_events() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    let generated = ingest_synthetic(&h, &admin, 3, 600, 5).await;
    h.svc.discovery.start_clustering(&admin).await.unwrap();
    cluster_now(&h).await;
    let candidate = candidates(&h, &admin, None).await.remove(0);

    let (a, b) = tokio::join!(
        h.svc.discovery.confirm(&admin, candidate.id, ConfirmRequest::default()),
        h.svc.discovery.confirm(&admin, candidate.id, ConfirmRequest::default()),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.agent.id, b.agent.id);
    assert_eq!(u8::from(a.created) + u8::from(b.created), 1, "one of them registered it");
    let agents = h.store.list_agents(admin.tenant_id(), &Default::default(), &PageRequest::first(50)).await.unwrap();
    assert_eq!(agents.items.len(), 1);
    assert_eq!(agents.items[0].name, candidate.suggested_name);
    let stored = h.svc.discovery.get(&admin, candidate.id).await.unwrap();
    assert_eq!((stored.status, stored.agent_id), (CandidateStatus::Confirmed, Some(a.agent.id)));

    // The next events of that agent belong to it.
    let sample = stored.sample_events[0].clone();
    let similar = generated.iter().find(|e| e.process == sample.process && e.host == sample.host).unwrap();
    let next = h.svc.discovery.ingest(&admin, ingest_of(similar)).await.unwrap();
    assert_eq!(next.disposition, EventDisposition::Attributed);
    assert_eq!(next.attributed_agent_id, Some(a.agent.id));
    assert_eq!(next.candidate_id, Some(candidate.id));

    let err = h.svc.discovery.dismiss(&admin, candidate.id, DismissRequest::default()).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(_)), "{err:?}");
    // Re-clustering leaves the confirmed agent's events out.
    h.svc.discovery.start_clustering(&admin).await.unwrap();
    let summary = cluster_now(&h).await.summary.unwrap();
    assert!(summary.matched_decided >= candidate.event_count * 9 / 10, "{summary:?}");
    assert_eq!(candidates(&h, &admin, Some("pending")).await.len(), 2);
}

#[tokio::test]
async fn dismissing_suppresses_matching_events_and_blocks_confirmation() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    let generated = ingest_synthetic(&h, &admin, 2, 300, 9).await;
    h.svc.discovery.start_clustering(&admin).await.unwrap();
    cluster_now(&h).await;
    let candidate = candidates(&h, &admin, None).await.remove(0);
    let req = DismissRequest { reason: Some("  the data team's notebook  ".into()) };
    let dismissed = h.svc.discovery.dismiss(&admin, candidate.id, req).await.unwrap();
    assert_eq!(dismissed.status, CandidateStatus::Dismissed);
    assert_eq!(dismissed.reason.as_deref(), Some("the data team's notebook"));
    let again = h.svc.discovery.dismiss(&admin, candidate.id, DismissRequest::default()).await.unwrap();
    assert_eq!(again.reason, dismissed.reason, "repeating it changes nothing");
    let err = h.svc.discovery.confirm(&admin, candidate.id, ConfirmRequest::default()).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(_)), "{err:?}");

    let sample = dismissed.sample_events[0].clone();
    let similar = generated.iter().find(|e| e.process == sample.process && e.host == sample.host).unwrap();
    let next = h.svc.discovery.ingest(&admin, ingest_of(similar)).await.unwrap();
    assert_eq!(next.disposition, EventDisposition::Suppressed);
    assert_eq!(next.candidate_id, Some(candidate.id));
}

#[tokio::test]
async fn a_failed_registration_leaves_the_candidate_pending() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    ingest_synthetic(&h, &admin, 1, 100, 3).await;
    h.svc.discovery.start_clustering(&admin).await.unwrap();
    cluster_now(&h).await;
    let candidate = candidates(&h, &admin, None).await.remove(0);
    let taken = AgentRequest {
        name: candidate.suggested_name.clone(),
        agent_type: "llm".into(),
        description: None,
        capabilities: vec![],
        permissions: JsonObject::new(),
        metadata: JsonObject::new(),
        status: None,
    };
    h.svc.agents.register(&admin, taken).await.unwrap();
    let err = h.svc.discovery.confirm(&admin, candidate.id, ConfirmRequest::default()).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(ref m) if m.contains("name")), "{err:?}");
    assert_eq!(h.svc.discovery.get(&admin, candidate.id).await.unwrap().status, CandidateStatus::Pending);
    let renamed = ConfirmRequest { name: Some("reporting-bot".into()), ..ConfirmRequest::default() };
    let confirmed = h.svc.discovery.confirm(&admin, candidate.id, renamed).await.unwrap();
    assert!(confirmed.created);
    assert_eq!(confirmed.agent.name, "reporting-bot");
}

#[tokio::test]
async fn tenants_see_only_their_own_candidates_jobs_and_events() {
    let h = harness();
    let acme = admin(&h, "acme").await;
    let other = admin(&h, "other").await;
    ingest_synthetic(&h, &acme, 2, 200, 4).await;
    let job = h.svc.discovery.start_clustering(&acme).await.unwrap();
    cluster_now(&h).await;
    let candidate = candidates(&h, &acme, None).await.remove(0);
    assert!(candidates(&h, &other, None).await.is_empty());
    let nf = |e: DomainError| matches!(e, DomainError::NotFound { .. });
    assert!(nf(h.svc.discovery.get(&other, candidate.id).await.unwrap_err()));
    assert!(nf(h.svc.discovery.confirm(&other, candidate.id, ConfirmRequest::default()).await.unwrap_err()));
    assert!(nf(h.svc.discovery.dismiss(&other, candidate.id, DismissRequest::default()).await.unwrap_err()));
    assert!(nf(h.svc.discovery.cluster_status(&other, job.id).await.unwrap_err()));
    // Another tenant's clustering reads only its own events.
    h.svc.discovery.start_clustering(&other).await.unwrap();
    let summary = cluster_now(&h).await.summary.unwrap();
    assert_eq!(summary.events, 0);
}

#[tokio::test]
async fn reading_keys_cannot_ingest_cluster_or_decide() {
    let h = harness();
    let admin = admin(&h, "acme").await;
    let req = NewApiKey { name: "reader".into(), permissions: Some(vec!["discovery:read".into()]), expires_at: None };
    let created = h.svc.api_keys.create(&admin, req).await.unwrap();
    let reader = h.svc.auth.authenticate_api_key(&created.api_key).await.unwrap();
    let forbidden = |e: DomainError| matches!(e, DomainError::Forbidden(_));
    assert!(forbidden(h.svc.discovery.ingest(&reader, event("h-1")).await.unwrap_err()));
    assert!(forbidden(h.svc.discovery.start_clustering(&reader).await.unwrap_err()));
    let id = CandidateId(Uuid::now_v7());
    assert!(forbidden(h.svc.discovery.confirm(&reader, id, ConfirmRequest::default()).await.unwrap_err()));
    assert!(forbidden(h.svc.discovery.dismiss(&reader, id, DismissRequest::default()).await.unwrap_err()));
    assert!(h.svc.discovery.list(&reader, &CandidateListParams::default(), None, None).await.is_ok());
}

#[tokio::test]
async fn clustering_starts_reading_at_the_window() {
    let h = harness();
    let now = h.clock.now();
    let at = |days_ago: i64| {
        let millis = ((now - time::Duration::days(days_ago)).unix_timestamp_nanos() / 1_000_000) as u64;
        DiscoveryEventId(uuid::Builder::from_unix_timestamp_millis(millis, &[0xff; 10]).into_uuid())
    };
    let start = h.svc.discovery.window_start(now);
    assert!(start > at(31) && start < at(29), "the default window is 30 days");
    // A page after `start` holds what was received within the window (ids are UUID v7).
    assert!(at(0) > start);
}
