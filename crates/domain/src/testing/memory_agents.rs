//! The agent registry of `MemoryStore`.

use std::collections::{BTreeMap, HashMap};
use std::sync::MutexGuard;

use async_trait::async_trait;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict, page_of};
use crate::error::{DomainError, Result};
use crate::ids::{AgentId, TenantId};
use crate::model::{Agent, AgentEmbedding, AgentFilter, AgentVector, Heartbeat, RiskLevels};
use crate::page::{Page, PageRequest};
use crate::ports::store::AgentRepo;

#[derive(Debug, Default)]
pub(super) struct AgentTables {
    agents: BTreeMap<Uuid, Agent>,
    embeddings: HashMap<Uuid, AgentEmbedding>,
    versions: HashMap<TenantId, i64>,
}

impl AgentTables {
    fn bump(&mut self, tenant: TenantId) {
        *self.versions.entry(tenant).or_default() += 1;
    }

    fn name_taken(&self, agent: &Agent) -> bool {
        self.agents.values().any(|a| a.tenant_id == agent.tenant_id && a.name == agent.name && a.id != agent.id)
    }

    fn of_tenant(&self, tenant: TenantId, id: AgentId) -> Option<&Agent> {
        self.agents.get(&id.0).filter(|a| a.tenant_id == tenant)
    }

    /// `TenantRepo::update_tenant`'s second half.
    pub(super) fn relevel(&mut self, tenant: TenantId, levels: &RiskLevels) -> u64 {
        let mut changed = 0;
        for agent in self.agents.values_mut().filter(|a| a.tenant_id == tenant) {
            let level = levels.level(agent.risk_score);
            if agent.risk != level {
                agent.risk = level;
                changed += 1;
            }
        }
        changed
    }
}

fn name_taken() -> DomainError {
    conflict("agent name already taken")
}

fn not_found(id: AgentId) -> DomainError {
    DomainError::NotFound { what: "agent", id: id.to_string() }
}

impl MemoryStore {
    pub(super) fn agent_tables(&self) -> MutexGuard<'_, AgentTables> {
        self.agents.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl AgentRepo for MemoryStore {
    async fn insert_agent(&self, agent: &Agent, embedding: &AgentEmbedding) -> Result<()> {
        if !self.tenant_exists(agent.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.agent_tables();
        if t.agents.contains_key(&agent.id.0) {
            return Err(conflict("agent already exists"));
        }
        if t.name_taken(agent) {
            return Err(name_taken());
        }
        t.agents.insert(agent.id.0, agent.clone());
        t.embeddings.insert(agent.id.0, embedding.clone());
        t.bump(agent.tenant_id);
        Ok(())
    }

    async fn get_agent(&self, tenant: TenantId, id: AgentId) -> Result<Option<Agent>> {
        Ok(self.agent_tables().of_tenant(tenant, id).cloned())
    }

    async fn get_agents(&self, tenant: TenantId, ids: &[AgentId]) -> Result<Vec<Agent>> {
        let t = self.agent_tables();
        Ok(ids.iter().filter_map(|id| t.of_tenant(tenant, *id).cloned()).collect())
    }

    async fn list_agents(&self, tenant: TenantId, filter: &AgentFilter, page: &PageRequest) -> Result<Page<Agent>> {
        let t = self.agent_tables();
        Ok(page_of(&t.agents, page, |a| a.tenant_id == tenant && filter.matches(a), |a| a.id.0))
    }

    async fn update_agent(&self, agent: &Agent, embedding: &AgentEmbedding) -> Result<()> {
        let mut t = self.agent_tables();
        let Some(stored) = t.of_tenant(agent.tenant_id, agent.id).cloned() else {
            return Err(not_found(agent.id));
        };
        if t.name_taken(agent) {
            return Err(name_taken());
        }
        t.agents.insert(agent.id.0, Agent { created_at: stored.created_at, ..agent.clone() });
        t.embeddings.insert(agent.id.0, embedding.clone());
        t.bump(agent.tenant_id);
        Ok(())
    }

    async fn delete_agent(&self, tenant: TenantId, id: AgentId) -> Result<()> {
        let mut t = self.agent_tables();
        if t.of_tenant(tenant, id).is_none() {
            return Err(not_found(id));
        }
        t.agents.remove(&id.0);
        t.embeddings.remove(&id.0);
        t.bump(tenant);
        Ok(())
    }

    async fn heartbeat_agent(&self, tenant: TenantId, id: AgentId, beat: &Heartbeat) -> Result<Option<Agent>> {
        let mut t = self.agent_tables();
        let Some(mut agent) = t.of_tenant(tenant, id).cloned() else { return Ok(None) };
        agent.last_seen_at = Some(beat.at);
        agent.updated_at = beat.at;
        if let Some(status) = beat.status {
            agent.status = status;
        }
        if let Some(metadata) = &beat.metadata {
            agent.metadata = metadata.clone();
        }
        t.agents.insert(id.0, agent.clone());
        match &beat.embedding {
            Some(embedding) => {
                t.embeddings.insert(id.0, embedding.clone());
                t.bump(tenant);
            }
            None => {
                if let Some(e) = t.embeddings.get_mut(&id.0) {
                    e.refreshed_at = beat.at;
                }
            }
        }
        Ok(Some(agent))
    }

    async fn get_agent_embedding(&self, tenant: TenantId, id: AgentId) -> Result<Option<AgentEmbedding>> {
        let t = self.agent_tables();
        Ok(t.of_tenant(tenant, id).and_then(|_| t.embeddings.get(&id.0).cloned()))
    }

    async fn agent_vectors(&self, tenant: TenantId) -> Result<Vec<AgentVector>> {
        let t = self.agent_tables();
        Ok(t.agents
            .values()
            .filter(|a| a.tenant_id == tenant)
            .filter_map(|a| {
                t.embeddings.get(&a.id.0).map(|e| AgentVector {
                    id: a.id,
                    model: e.model.clone(),
                    model_version: e.model_version,
                    vector: e.vector.clone(),
                })
            })
            .collect())
    }

    async fn agent_index_version(&self, tenant: TenantId) -> Result<i64> {
        Ok(self.agent_tables().versions.get(&tenant).copied().unwrap_or(0))
    }
}
