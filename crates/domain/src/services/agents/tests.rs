//! The agent registry against in-memory fakes.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::model::RiskLevels;
use crate::model::Role;
use crate::model::{AuditFilter, AuditScan, SeqOrder};
use crate::ports::{AuditRepo, Clock};
use crate::services::tenants::{SettingsChange, UpdateTenant};
use crate::services::tests::{Harness, harness, replica_with};
use crate::testing::RecordingOffload;

async fn admin(h: &Harness, tenant: &str) -> Caller {
    h.tenant(tenant).await;
    h.login(&format!("admin@{tenant}.test")).await.1
}

fn req(name: &str, description: &str, capabilities: &[&str], permissions: serde_json::Value) -> AgentRequest {
    AgentRequest {
        name: name.into(),
        agent_type: "llm".into(),
        description: Some(description.into()),
        capabilities: capabilities.iter().map(|c| c.to_string()).collect(),
        permissions: match permissions {
            serde_json::Value::Object(m) => m,
            _ => JsonObject::new(),
        },
        metadata: JsonObject::new(),
        status: None,
    }
}

fn fields(err: DomainError) -> Vec<String> {
    match err {
        DomainError::Validation(errors) => errors.into_iter().map(|e| e.field).collect(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[tokio::test]
async fn registration_derives_type_risk_and_embedding_and_is_audited() {
    let h = harness();
    let a = admin(&h, "acme").await;
    let payer = req(
        "Payout Runner",
        "Sends money to vendors by bank transfer",
        &["transfer funds", "delete records"],
        json!({"payments": "write", "ledger": {"entries": "delete"}}),
    );
    let agent = h.svc.agents.register(&a, payer).await.unwrap();
    assert_eq!(agent.status, AgentStatus::Active);
    assert!(agent.risk_score > 0.5, "{agent:?}");
    assert_eq!(agent.risk, RiskLevel::of_score(agent.risk_score));
    assert!(!agent.predicted_type.is_empty());

    let details = h.svc.agents.details(&a, agent.id).await.unwrap();
    assert!(details.risk_factors.iter().any(|f| f.code == "payments"), "{:?}", details.risk_factors);
    let e = details.embedding.unwrap();
    assert_eq!((e.model.as_str(), e.dimensions), (agentgov_detect::embed::MODEL_NAME, 512));
    assert!(e.text.contains("transfer funds") && e.text.contains("payments: write"), "{}", e.text);

    let records = h
        .store
        .scan_audit(
            a.tenant_id(),
            &AuditFilter::default(),
            AuditScan { order: SeqOrder::Asc, after_seq: None, limit: 100 },
        )
        .await
        .unwrap();
    let registered = records.iter().find(|r| r.event_type == "agent.registered").unwrap();
    assert_eq!(registered.agent_id, Some(agent.id.as_uuid()));
}

#[tokio::test]
async fn invalid_registrations_name_every_bad_field() {
    let h = harness();
    let a = admin(&h, "acme").await;
    let mut bad = req(" ", "x", &["ok", "", "ok"], json!({}));
    bad.agent_type = "t".repeat(51);
    bad.metadata = JsonObject::from_iter([("blob".to_owned(), json!("x".repeat(17 * 1024)))]);
    let err = h.svc.agents.register(&a, bad).await.unwrap_err();
    assert_eq!(fields(err), vec!["name", "type", "capabilities[1]", "capabilities[2]", "metadata"]);
    let dup = h.svc.agents.register(&a, req("one", "x", &[], json!({}))).await;
    assert!(dup.is_ok());
    let err = h.svc.agents.register(&a, req("one", "y", &[], json!({}))).await.unwrap_err();
    assert!(matches!(err, DomainError::Conflict(ref m) if m == "agent name already taken"), "{err:?}");
}

#[tokio::test]
async fn viewers_read_but_cannot_write_and_tenants_are_isolated() {
    let h = harness();
    let a = admin(&h, "acme").await;
    let viewer = h.user(&a, "v@acme.test", Role::Viewer).await;
    let agent = h.svc.agents.register(&a, req("bot", "x", &[], json!({}))).await.unwrap();
    assert_eq!(h.svc.agents.get(&viewer, agent.id).await.unwrap().id, agent.id);
    let err = h.svc.agents.register(&viewer, req("bot2", "x", &[], json!({}))).await.unwrap_err();
    assert!(matches!(err, DomainError::Forbidden(_)));

    let other = admin(&h, "other").await;
    for result in [
        h.svc.agents.get(&other, agent.id).await.map(|_| ()),
        h.svc.agents.details(&other, agent.id).await.map(|_| ()),
        h.svc.agents.update(&other, agent.id, req("x", "y", &[], json!({}))).await.map(|_| ()),
        h.svc.agents.heartbeat(&other, agent.id, HeartbeatRequest::default()).await.map(|_| ()),
        h.svc.agents.delete(&other, agent.id).await,
    ] {
        assert!(matches!(result, Err(DomainError::NotFound { .. })), "{result:?}");
    }
    let found = h.svc.agents.search(&other, Some("bot"), None).await.unwrap();
    assert!(found.items.is_empty());
}

#[tokio::test]
async fn the_tenants_risk_levels_level_its_agents_now_and_when_they_change() {
    let h = harness();
    let a = admin(&h, "acme").await;
    let other = admin(&h, "other").await;
    let payer = || req("payer", "Sends money", &["transfer funds"], json!({"payments": "write"}));
    let mine = h.svc.agents.register(&a, payer()).await.unwrap();
    let theirs = h.svc.agents.register(&other, payer()).await.unwrap();
    let score = mine.risk_score;
    assert!(score > 0.3 && mine.risk != RiskLevel::Critical, "{mine:?}");

    // Critical from just at the agent's score: it moves at once, the other tenant's does not.
    let levels = RiskLevels { medium: score / 3.0, high: score / 2.0, critical: score };
    let settings = SettingsChange { risk_levels: Some(Some(levels)), ..SettingsChange::default() };
    h.svc.tenants.update_own(&a, UpdateTenant { name: None, settings: Some(settings) }).await.unwrap();
    assert_eq!(h.svc.agents.get(&a, mine.id).await.unwrap().risk, RiskLevel::Critical);
    let critical = AgentListParams { risk: Some("critical".into()), ..AgentListParams::default() };
    assert_eq!(h.svc.agents.list(&a, &critical, None, None).await.unwrap().items.len(), 1);
    assert_eq!(h.svc.agents.get(&other, theirs.id).await.unwrap().risk, mine.risk);
    // New and updated agents take the tenant's levels.
    let second = h
        .svc
        .agents
        .register(&a, req("payer 2", "Sends money", &["transfer funds"], json!({"payments": "write"})))
        .await
        .unwrap();
    assert_eq!((second.risk_score, second.risk), (score, RiskLevel::Critical));
    let updated = h.svc.agents.update(&a, mine.id, payer()).await.unwrap();
    assert_eq!(updated.risk, RiskLevel::Critical);
}

#[tokio::test]
async fn agents_not_seen_lately_are_listed_inactive_until_a_heartbeat() {
    let h = harness();
    let a = admin(&h, "acme").await;
    let agent = h.svc.agents.register(&a, req("sleepy", "x", &[], json!({}))).await.unwrap();
    h.clock.advance(Duration::from_secs(601));
    assert_eq!(h.svc.agents.get(&a, agent.id).await.unwrap().status, AgentStatus::Inactive);
    let inactive = AgentListParams { status: Some("inactive".into()), ..Default::default() };
    assert_eq!(h.svc.agents.list(&a, &inactive, None, None).await.unwrap().items.len(), 1);

    let beat = HeartbeatRequest { status: None, metadata: Some(JsonObject::from_iter([("v".to_owned(), json!(2))])) };
    let after = h.svc.agents.heartbeat(&a, agent.id, beat).await.unwrap();
    assert_eq!(after.status, AgentStatus::Active);
    assert_eq!(after.last_seen_at, Some(h.clock.now()));
    assert_eq!(after.metadata.get("v"), Some(&json!(2)));
    assert!(h.svc.agents.list(&a, &inactive, None, None).await.unwrap().items.is_empty());
    let e = h.svc.agents.details(&a, agent.id).await.unwrap().embedding.unwrap();
    assert_eq!(e.refreshed_at, h.clock.now(), "the heartbeat refreshed the embedding");
}

#[tokio::test]
async fn a_suspended_agent_cannot_reinstate_itself_by_heartbeat() {
    let h = harness();
    let a = admin(&h, "acme").await;
    let mut suspended = req("held", "x", &[], json!({}));
    suspended.status = Some(AgentStatus::Suspended);
    let agent = h.svc.agents.register(&a, suspended).await.unwrap();
    let beat = HeartbeatRequest { status: Some(AgentStatus::Active), metadata: None };
    assert!(matches!(h.svc.agents.heartbeat(&a, agent.id, beat).await, Err(DomainError::Conflict(_))));
    let after = h.svc.agents.heartbeat(&a, agent.id, HeartbeatRequest::default()).await.unwrap();
    assert_eq!(after.status, AgentStatus::Suspended);
    // A full update without a status keeps it, too.
    let updated = h.svc.agents.update(&a, agent.id, req("held", "y", &[], json!({}))).await.unwrap();
    assert_eq!(updated.status, AgentStatus::Suspended);
}

#[tokio::test]
async fn search_ranks_by_meaning_and_follows_updates_and_deletes() {
    let h = harness();
    let a = admin(&h, "acme").await;
    let payer = h
        .svc
        .agents
        .register(
            &a,
            req(
                "Payout Runner",
                "Disburses seller earnings by wire transfer",
                &["initiate payouts"],
                json!({"payments": "write"}),
            ),
        )
        .await
        .unwrap();
    let docs = h
        .svc
        .agents
        .register(
            &a,
            req(
                "Docs Helper",
                "Answers questions from the engineering wiki",
                &["search documents"],
                json!({"wiki": "read"}),
            ),
        )
        .await
        .unwrap();
    let found = h.svc.agents.search(&a, Some("agents that can move money"), Some(2)).await.unwrap();
    assert_eq!(
        found.items[0].agent.id,
        payer.id,
        "{:?}",
        found.items.iter().map(|i| (&i.agent.name, i.score)).collect::<Vec<_>>()
    );
    assert!(found.items[0].score > found.items[1].score);

    // An update changes what the index holds at once.
    let renamed = req(
        "Docs Helper",
        "Pays supplier invoices and moves money between accounts",
        &["transfer funds"],
        json!({"payments": "write"}),
    );
    h.svc.agents.update(&a, docs.id, renamed).await.unwrap();
    h.svc.agents.delete(&a, payer.id).await.unwrap();
    let found = h.svc.agents.search(&a, Some("agents that can move money"), None).await.unwrap();
    assert_eq!(found.items.iter().map(|i| i.agent.id).collect::<Vec<_>>(), vec![docs.id]);

    let nothing = h.svc.agents.search(&a, Some("which agents can do any of it"), None).await.unwrap();
    assert!(nothing.items.is_empty(), "a query of stop words only matches nothing");

    let err = h.svc.agents.search(&a, Some("  "), Some(0)).await.unwrap_err();
    assert_eq!(fields(err), vec!["q", "limit"]);
}

/// Stands in for the multilingual encoder (which needs its weights): a unit vector of
/// `encoder::DIM` values that depends on the text's words, whatever their case.
fn fake_encoder() -> EncodeFn {
    Arc::new(|text: &str| {
        let mut v = vec![0.0_f32; encoder::DIM];
        for word in text.split_whitespace() {
            let bucket =
                word.to_lowercase().bytes().fold(7_usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b)));
            v[bucket % encoder::DIM] += 1.0;
        }
        agentgov_detect::embed::normalize(&mut v);
        v
    })
}

fn score_of(found: &SearchResults, id: AgentId) -> f32 {
    found.items.iter().find(|i| i.agent.id == id).map(|i| i.score).unwrap()
}

/// The fused embedder computes on the shared CPU pool as the tenant's job (429 when the
/// tenant's queue there is full), stores vectors of both halves, and meets the vectors of
/// the hashing embedder both ways: a replica of either model finds the other's agents, a
/// fused vector serves the hashing embedder as it is, and a heartbeat under the fused
/// model moves a hashing vector up.
#[tokio::test]
async fn the_fused_embedder_runs_on_the_pool_and_meets_hashing_vectors() {
    let h = harness();
    let a = admin(&h, "acme").await;
    let payer = req(
        "Payout Runner",
        "Disburses seller earnings by wire transfer",
        &["initiate payouts"],
        json!({"payments": "write"}),
    );
    let payer = h.svc.agents.register(&a, payer).await.unwrap();
    let pool = Arc::new(RecordingOffload::new(EMBED_BUDGET));
    let fused = replica_with(&h, Arc::new(FusedEmbedder::new(fake_encoder())), pool.clone());
    assert_eq!(fused.svc.agents.model().name, agentgov_detect::embed::FUSED_MODEL_NAME);
    assert_eq!(fused.svc.agents.model().dimensions, agentgov_detect::embed::DEFAULT_DIMENSIONS + encoder::DIM);

    let docs = req(
        "Docs Helper",
        "Answers questions from the engineering wiki",
        &["search documents"],
        json!({"wiki": "read"}),
    );
    let docs = fused.svc.agents.register(&a, docs).await.unwrap();
    assert_eq!(pool.tenants(), [a.tenant_id()], "embedded on the pool as the tenant's job");
    let stored = fused.svc.agents.details(&a, docs.id).await.unwrap().embedding.unwrap();
    assert_eq!((stored.model.as_str(), stored.dimensions), (agentgov_detect::embed::FUSED_MODEL_NAME, 1024));

    // Each replica finds both agents; an agent of the hashing model scores its hashing
    // cosine under the fused one, and a fused agent its hashing cosine under the hashing one.
    let query = "agents that can move money";
    let by_hashing = h.svc.agents.search(&a, Some(query), None).await.unwrap();
    let by_fused = fused.svc.agents.search(&a, Some(query), None).await.unwrap();
    assert_eq!(by_fused.model.name, agentgov_detect::embed::FUSED_MODEL_NAME);
    assert_eq!(by_hashing.items.len(), 2);
    assert_eq!(by_fused.items.len(), 2);
    assert_eq!(by_fused.items[0].agent.id, payer.id);
    assert!((score_of(&by_hashing, payer.id) - score_of(&by_fused, payer.id)).abs() < 1e-4);
    let hashing = HashingEmbedder::default();
    let (q, d) = (hashing.embed(query), hashing.embed(&stored.text));
    assert!((score_of(&by_hashing, docs.id) - agentgov_detect::embed::dot(&q, &d)).abs() < 1e-4);
    assert_eq!(pool.tenants().len(), 2, "the query was embedded on the pool too");
    let neighbours = fused.svc.agents.details(&a, payer.id).await.unwrap().embedding.unwrap().neighbours;
    assert_eq!(neighbours.iter().map(|n| n.id).collect::<Vec<_>>(), [docs.id]);

    // A heartbeat under the hashing model keeps the fused vector (it holds the hashing
    // one); under the fused model it moves the hashing vector up.
    h.svc.agents.heartbeat(&a, docs.id, HeartbeatRequest::default()).await.unwrap();
    let kept = h.svc.agents.details(&a, docs.id).await.unwrap().embedding.unwrap();
    assert_eq!(kept.model, agentgov_detect::embed::FUSED_MODEL_NAME);
    fused.svc.agents.heartbeat(&a, payer.id, HeartbeatRequest::default()).await.unwrap();
    let moved = h.svc.agents.details(&a, payer.id).await.unwrap().embedding.unwrap();
    assert_eq!((moved.model.as_str(), moved.dimensions), (agentgov_detect::embed::FUSED_MODEL_NAME, 1024));
    assert_eq!(pool.tenants().len(), 3);

    // A tenant whose queue on the pool is full is told to come back, and nothing changed.
    pool.fill();
    let err = fused.svc.agents.search(&a, Some(query), None).await.unwrap_err();
    assert!(matches!(err, DomainError::RateLimited { .. }), "{err:?}");
    let late = req("Late Agent", "Registers while the pool is full", &[], json!({}));
    assert!(matches!(fused.svc.agents.register(&a, late).await, Err(DomainError::RateLimited { .. })));
    assert_eq!(h.svc.agents.list(&a, &AgentListParams::default(), None, None).await.unwrap().items.len(), 2);
}
