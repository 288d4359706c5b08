//! Conformance of the `AgentRepo` port: the registry, its filters, heartbeats, embeddings and
//! the search index's version. Expanded by `store_conformance_tests!` with the rest.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::{AgentId, TenantId};
use agentgov_domain::model::{Agent, AgentFilter, AgentStatus, Heartbeat, RiskLevel};
use agentgov_domain::ports::Store;
use uuid::Uuid;

use crate::fixtures::*;

async fn tenant(store: &Arc<dyn Store>, name: &str) -> TenantId {
    seed(store.as_ref(), name).await.tenant.id
}

async fn add(store: &Arc<dyn Store>, tenant: TenantId, name: &str) -> Agent {
    let agent = new_agent(tenant, name);
    store.insert_agent(&agent, &new_embedding(name)).await.unwrap();
    agent
}

fn is_name_conflict<T: std::fmt::Debug>(r: Result<T, DomainError>) -> bool {
    matches!(r, Err(DomainError::Conflict(ref m)) if m == "agent name already taken")
}

/// Every agent passing `filter`, walking pages of `limit`.
async fn listed(store: &Arc<dyn Store>, tenant: TenantId, filter: &AgentFilter, limit: u32) -> Vec<Agent> {
    all_pages(limit, |a: &Agent| a.id.0, async |req| store.list_agents(tenant, filter, &req).await).await
}

fn names(agents: &[Agent]) -> Vec<&str> {
    agents.iter().map(|a| a.name.as_str()).collect()
}

pub async fn agent_round_trips_every_field_with_its_embedding(store: Arc<dyn Store>) {
    let t = tenant(&store, "agents-rt").await;
    let mut agent = new_agent(t, "triage-bot");
    agent.last_seen_at = Some(precise(5, 123_457));
    agent.created_at = precise(1, 1);
    agent.updated_at = precise(2, 999_999);
    let embedding = new_embedding("triage-bot: résumé");
    store.insert_agent(&agent, &embedding).await.unwrap();
    assert_eq!(store.get_agent(t, agent.id).await.unwrap(), Some(agent.clone()));
    assert_eq!(store.get_agent_embedding(t, agent.id).await.unwrap(), Some(embedding.clone()));

    let mut bare = new_agent(t, "bare");
    bare.description = None;
    bare.capabilities = vec![];
    bare.permissions = json_object(serde_json::json!({}));
    bare.metadata = json_object(serde_json::json!({}));
    store.insert_agent(&bare, &new_embedding("bare")).await.unwrap();
    assert_eq!(store.get_agent(t, bare.id).await.unwrap(), Some(bare.clone()));

    let mut got = store.get_agents(t, &[bare.id, AgentId(Uuid::now_v7()), agent.id]).await.unwrap();
    got.sort_by_key(|a| a.id);
    assert_eq!(got, vec![agent, bare]);
}

pub async fn agents_are_invisible_to_other_tenants(store: Arc<dyn Store>) {
    let (a, b) = (tenant(&store, "agents-a").await, tenant(&store, "agents-b").await);
    let agent = add(&store, a, "shared-name").await;
    // The same name in another tenant is fine.
    let other = add(&store, b, "shared-name").await;
    assert_eq!(store.get_agent(b, agent.id).await.unwrap(), None);
    assert_eq!(store.get_agent_embedding(b, agent.id).await.unwrap(), None);
    assert_eq!(store.get_agents(b, &[agent.id]).await.unwrap(), vec![]);
    assert_eq!(names(&listed(&store, b, &AgentFilter::default(), 10).await), vec!["shared-name"]);
    assert_eq!(store.agent_vectors(b).await.unwrap().iter().map(|v| v.id).collect::<Vec<_>>(), vec![other.id]);
    let beat = Heartbeat { at: now(), status: None, metadata: None, embedding: None };
    assert_eq!(store.heartbeat_agent(b, agent.id, &beat).await.unwrap(), None);
    let moved = Agent { tenant_id: b, name: "renamed".into(), ..agent.clone() };
    assert!(matches!(store.update_agent(&moved, &new_embedding("x")).await, Err(DomainError::NotFound { .. })));
    assert!(matches!(store.delete_agent(b, agent.id).await, Err(DomainError::NotFound { .. })));
    assert_eq!(store.get_agent(a, agent.id).await.unwrap(), Some(agent), "untouched");
}

pub async fn agent_names_are_unique_per_tenant(store: Arc<dyn Store>) {
    let t = tenant(&store, "agents-unique").await;
    let first = add(&store, t, "billing").await;
    assert!(is_name_conflict(store.insert_agent(&new_agent(t, "billing"), &new_embedding("b")).await));
    let second = add(&store, t, "billing-2").await;
    let clash = Agent { name: "billing".into(), ..second.clone() };
    assert!(is_name_conflict(store.update_agent(&clash, &new_embedding("b")).await));
    // Keeping one's own name is no conflict.
    store.update_agent(&first, &new_embedding("billing")).await.unwrap();
    let orphan = new_agent(TenantId(Uuid::now_v7()), "orphan");
    assert!(matches!(store.insert_agent(&orphan, &new_embedding("o")).await, Err(DomainError::Conflict(_))));
    assert!(matches!(store.insert_agent(&first, &new_embedding("b")).await, Err(DomainError::Conflict(_))));
}

pub async fn agent_update_replaces_every_mutable_field(store: Arc<dyn Store>) {
    let t = tenant(&store, "agents-update").await;
    let agent = add(&store, t, "before").await;
    let changed = Agent {
        name: "after".into(),
        agent_type: "rag".into(),
        description: None,
        capabilities: vec!["docs:search".into()],
        permissions: json_object(serde_json::json!({"docs": "read"})),
        status: AgentStatus::Suspended,
        predicted_type: "rag".into(),
        risk: RiskLevel::Critical,
        risk_score: 0.91,
        metadata: json_object(serde_json::json!({"v": 2})),
        last_seen_at: Some(precise(9, 9)),
        updated_at: precise(10, 10),
        // An adapter keeps the stored creation time whatever it is given.
        created_at: precise(11, 11),
        ..agent.clone()
    };
    let embedding = new_embedding("after: docs");
    store.update_agent(&changed, &embedding).await.unwrap();
    let expected = Agent { created_at: agent.created_at, ..changed };
    assert_eq!(store.get_agent(t, agent.id).await.unwrap(), Some(expected));
    assert_eq!(store.get_agent_embedding(t, agent.id).await.unwrap(), Some(embedding));
    let absent = new_agent(t, "absent");
    assert!(matches!(store.update_agent(&absent, &new_embedding("a")).await, Err(DomainError::NotFound { .. })));
}

pub async fn agent_delete_removes_it_with_its_embedding(store: Arc<dyn Store>) {
    let t = tenant(&store, "agents-delete").await;
    let agent = add(&store, t, "doomed").await;
    let kept = add(&store, t, "kept").await;
    store.delete_agent(t, agent.id).await.unwrap();
    assert_eq!(store.get_agent(t, agent.id).await.unwrap(), None);
    assert_eq!(store.get_agent_embedding(t, agent.id).await.unwrap(), None);
    assert!(matches!(store.delete_agent(t, agent.id).await, Err(DomainError::NotFound { .. })));
    assert_eq!(store.agent_vectors(t).await.unwrap().iter().map(|v| v.id).collect::<Vec<_>>(), vec![kept.id]);
    // The name is free again.
    add(&store, t, "doomed").await;
}

pub async fn agent_lists_filter_and_page_newest_first(store: Arc<dyn Store>) {
    let t = tenant(&store, "lst-main").await;
    let base = now();
    let old = base - Duration::from_secs(3600);
    let mut made = Vec::new();
    for i in 0..7 {
        let mut a = new_agent(t, &format!("agent-{i}"));
        a.agent_type = if i % 2 == 0 { "llm" } else { "rag" }.into();
        a.risk = RiskLevel::ALL[i % 4];
        a.capabilities = vec![format!("cap-{}", i % 3), "common".into()];
        a.status = match i {
            5 => AgentStatus::Suspended,
            6 => AgentStatus::Inactive,
            _ => AgentStatus::Active,
        };
        // Agents 0 and 1 were last seen an hour ago; 2 was created then and never seen.
        match i {
            0 | 1 => a.last_seen_at = Some(old),
            2 => a.created_at = old,
            _ => a.last_seen_at = Some(base),
        }
        store.insert_agent(&a, &new_embedding(&a.name)).await.unwrap();
        made.push(a);
    }
    let other = tenant(&store, "lst-other").await;
    add(&store, other, "elsewhere").await;

    let all = listed(&store, t, &AgentFilter::default(), 3).await;
    assert_eq!(names(&all), vec!["agent-6", "agent-5", "agent-4", "agent-3", "agent-2", "agent-1", "agent-0"]);

    let by = |f: AgentFilter| {
        let store = store.clone();
        async move { listed(&store, t, &f, 2).await.into_iter().map(|a| a.name).collect::<HashSet<_>>() }
    };
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<HashSet<_>>();
    assert_eq!(
        by(AgentFilter { agent_type: Some("rag".into()), ..Default::default() }).await,
        set(&["agent-1", "agent-3", "agent-5"])
    );
    assert_eq!(
        by(AgentFilter { risk: Some(RiskLevel::Low), ..Default::default() }).await,
        set(&["agent-0", "agent-4"])
    );
    assert_eq!(
        by(AgentFilter { capability: Some("cap-2".into()), ..Default::default() }).await,
        set(&["agent-2", "agent-5"])
    );
    assert_eq!(
        by(AgentFilter { capability: Some("cap".into()), ..Default::default() }).await,
        set(&[]),
        "exact match only"
    );
    assert_eq!(by(AgentFilter { capability: Some("common".into()), ..Default::default() }).await.len(), 7);
    // Stored status without a staleness cutoff…
    assert_eq!(
        by(AgentFilter { status: Some(AgentStatus::Active), ..Default::default() }).await,
        set(&["agent-0", "agent-1", "agent-2", "agent-3", "agent-4"])
    );
    assert_eq!(by(AgentFilter { status: Some(AgentStatus::Inactive), ..Default::default() }).await, set(&["agent-6"]));
    // …and the effective status with one: active agents not seen for half an hour are inactive.
    let stale_before = Some(base - Duration::from_secs(1800));
    assert_eq!(
        by(AgentFilter { status: Some(AgentStatus::Active), stale_before, ..Default::default() }).await,
        set(&["agent-3", "agent-4"])
    );
    assert_eq!(
        by(AgentFilter { status: Some(AgentStatus::Inactive), stale_before, ..Default::default() }).await,
        set(&["agent-0", "agent-1", "agent-2", "agent-6"])
    );
    assert_eq!(
        by(AgentFilter { status: Some(AgentStatus::Suspended), stale_before, ..Default::default() }).await,
        set(&["agent-5"])
    );
    // Filters combine.
    let both = AgentFilter {
        agent_type: Some("llm".into()),
        status: Some(AgentStatus::Inactive),
        stale_before,
        ..Default::default()
    };
    assert_eq!(by(both).await, set(&["agent-0", "agent-2", "agent-6"]));
    for a in &made {
        assert!(all.contains(a));
    }
}

pub async fn agent_heartbeats_apply_atomically(store: Arc<dyn Store>) {
    let t = tenant(&store, "agents-beat").await;
    let agent = add(&store, t, "beating").await;
    let embedding = store.get_agent_embedding(t, agent.id).await.unwrap().unwrap();

    let at = precise(100, 5);
    let beat = Heartbeat { at, status: None, metadata: None, embedding: None };
    let after = store.heartbeat_agent(t, agent.id, &beat).await.unwrap().unwrap();
    assert_eq!(after, Agent { last_seen_at: Some(at), updated_at: at, ..agent.clone() });
    assert_eq!(store.get_agent(t, agent.id).await.unwrap(), Some(after.clone()));
    let refreshed = store.get_agent_embedding(t, agent.id).await.unwrap().unwrap();
    assert_eq!(refreshed, agent_embedding_at(&embedding, at), "only refreshed_at moves");

    let at2 = precise(200, 7);
    let new_vector = new_embedding("a new text");
    let metadata = json_object(serde_json::json!({"version": "2.0"}));
    let beat = Heartbeat {
        at: at2,
        status: Some(AgentStatus::Suspended),
        metadata: Some(metadata.clone()),
        embedding: Some(new_vector.clone()),
    };
    let after = store.heartbeat_agent(t, agent.id, &beat).await.unwrap().unwrap();
    let expected =
        Agent { last_seen_at: Some(at2), updated_at: at2, status: AgentStatus::Suspended, metadata, ..agent.clone() };
    assert_eq!(after, expected);
    assert_eq!(store.get_agent_embedding(t, agent.id).await.unwrap(), Some(new_vector));
    assert_eq!(store.heartbeat_agent(t, AgentId(Uuid::now_v7()), &beat).await.unwrap(), None);
}

fn agent_embedding_at(
    e: &agentgov_domain::model::AgentEmbedding,
    at: time::OffsetDateTime,
) -> agentgov_domain::model::AgentEmbedding {
    agentgov_domain::model::AgentEmbedding { refreshed_at: at, ..e.clone() }
}

pub async fn agent_index_version_moves_with_the_vectors(store: Arc<dyn Store>) {
    let (t, other) = (tenant(&store, "idx-main").await, tenant(&store, "idx-other").await);
    assert_eq!(store.agent_index_version(t).await.unwrap(), 0);
    assert!(store.agent_vectors(t).await.unwrap().is_empty());
    let mut seen = vec![store.agent_index_version(t).await.unwrap()];
    let mut changed = |v: i64| {
        let fresh = !seen.contains(&v);
        seen.push(v);
        fresh
    };

    let agent = add(&store, t, "indexed").await;
    assert!(changed(store.agent_index_version(t).await.unwrap()), "insert");
    let vectors = store.agent_vectors(t).await.unwrap();
    let stored = store.get_agent_embedding(t, agent.id).await.unwrap().unwrap();
    assert_eq!(vectors.len(), 1);
    assert_eq!(
        (vectors[0].id, &vectors[0].model, vectors[0].model_version),
        (agent.id, &stored.model, stored.model_version)
    );
    assert_eq!(vectors[0].vector, stored.vector);

    let version = store.agent_index_version(t).await.unwrap();
    let beat = Heartbeat { at: now(), status: Some(AgentStatus::Active), metadata: None, embedding: None };
    store.heartbeat_agent(t, agent.id, &beat).await.unwrap();
    assert_eq!(store.agent_index_version(t).await.unwrap(), version, "a heartbeat that keeps the vector");

    let beat = Heartbeat { embedding: Some(new_embedding("other text!")), ..beat };
    store.heartbeat_agent(t, agent.id, &beat).await.unwrap();
    assert!(changed(store.agent_index_version(t).await.unwrap()), "a heartbeat that replaces it");

    store.update_agent(&agent, &new_embedding("updated")).await.unwrap();
    assert!(changed(store.agent_index_version(t).await.unwrap()), "update");

    let other_before = store.agent_index_version(other).await.unwrap();
    store.delete_agent(t, agent.id).await.unwrap();
    assert!(changed(store.agent_index_version(t).await.unwrap()), "delete");
    assert!(store.agent_vectors(t).await.unwrap().is_empty());
    assert_eq!(store.agent_index_version(other).await.unwrap(), other_before, "other tenants keep theirs");
}
