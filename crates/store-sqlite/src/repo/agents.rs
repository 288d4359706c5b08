//! The agent registry on SQLite.
//!
//! Every write runs in one `BEGIN IMMEDIATE` transaction on the single writer: an agent, its
//! embedding and its tenant's index version change together, so the search index never
//! finds a version that does not match the vectors stored with it. A heartbeat reads,
//! changes and writes the row inside that transaction, which holds SQLite's write lock.
//!
//! Lists are keyset queries on the `(tenant_id, id)` index. Timestamps are integer
//! microseconds, so the effective status (an `active` agent not seen since the cutoff is
//! `inactive`) is decided in SQL exactly as `AgentFilter::matches` decides it.

use agentgov_domain::ids::{AgentId, TenantId};
use agentgov_domain::model::{Agent, AgentEmbedding, AgentFilter, AgentStatus, AgentVector, Heartbeat, RiskLevels};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::store::AgentRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::SqliteConnection;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use diesel::sqlite::Sqlite;
use diesel::upsert::excluded;

use crate::SqliteStore;
use crate::columns::{Id, Micros};
use crate::error::TxResult;
use crate::repo::ceil_micros;
use crate::rows::{AgentEmbeddingRow, AgentRow, AgentVectorRow, body_text, convert, id_text};
use crate::schema::{agent_embeddings, agent_index_versions, agents};

/// Ids per `IN (...)` list of `get_agents`, far below SQLite's limit of 32,766 parameters.
const IDS_PER_QUERY: usize = 512;

diesel::define_sql_function! {
    /// SQL's `coalesce`, of an optional timestamp and a present one.
    fn coalesce(a: Nullable<BigInt>, b: BigInt) -> BigInt;
}

fn not_found(id: AgentId) -> DomainError {
    DomainError::not_found("agent", id)
}

/// When the agent was last seen, or created if never seen: what staleness is judged on.
fn last_seen_or_created() -> coalesce<agents::last_seen_at, agents::created_at> {
    coalesce(agents::last_seen_at, agents::created_at)
}

/// The tenant's agents passing `filter`, as a boxed query to refine.
fn filtered(tenant: TenantId, filter: AgentFilter) -> agents::BoxedQuery<'static, Sqlite> {
    let mut q = agents::table.filter(agents::tenant_id.eq(id_text(tenant.0))).into_boxed();
    let AgentFilter { agent_type, status, risk, capability, stale_before } = filter;
    if let Some(agent_type) = agent_type {
        q = q.filter(agents::agent_type.eq(agent_type));
    }
    if let Some(risk) = risk {
        q = q.filter(agents::risk.eq(risk.as_str()));
    }
    if let Some(capability) = capability {
        // An element equal to it, not a substring of the JSON text.
        q = q.filter(
            sql::<Bool>("EXISTS (SELECT 1 FROM json_each(agents.capabilities) WHERE json_each.value = ")
                .bind::<Text, _>(capability)
                .sql(")"),
        );
    }
    if let Some(status) = status {
        let stored = agents::status.eq(status.as_str());
        let active = agents::status.eq(AgentStatus::Active.as_str());
        // Stored timestamps are whole microseconds, so `ts < cutoff` is `ts < ceil(cutoff)`.
        q = match (status, stale_before.map(ceil_micros)) {
            (AgentStatus::Active, Some(cutoff)) => q.filter(stored.and(last_seen_or_created().ge(cutoff))),
            (AgentStatus::Inactive, Some(cutoff)) => q.filter(stored.or(active.and(last_seen_or_created().lt(cutoff)))),
            _ => q.filter(stored),
        };
    }
    q
}

fn agent_in_tenant(c: &mut SqliteConnection, tenant: &str, id: &str) -> TxResult<Option<AgentRow>> {
    Ok(agents::table
        .filter(agents::id.eq(id))
        .filter(agents::tenant_id.eq(tenant))
        .select(AgentRow::as_select())
        .first(c)
        .optional()?)
}

/// Stores the agent's embedding, replacing any it had.
fn put_embedding(c: &mut SqliteConnection, row: &AgentEmbeddingRow) -> TxResult<()> {
    diesel::insert_into(agent_embeddings::table)
        .values(row)
        .on_conflict(agent_embeddings::agent_id)
        .do_update()
        .set((
            agent_embeddings::model.eq(excluded(agent_embeddings::model)),
            agent_embeddings::model_version.eq(excluded(agent_embeddings::model_version)),
            agent_embeddings::text.eq(excluded(agent_embeddings::text)),
            agent_embeddings::vector.eq(excluded(agent_embeddings::vector)),
            agent_embeddings::refreshed_at.eq(excluded(agent_embeddings::refreshed_at)),
        ))
        .execute(c)?;
    Ok(())
}

/// Moves the tenant's index version on, inside the caller's transaction.
/// Sets the `risk` of each of the tenant's agents to its score's level by `levels`; answers
/// how many changed (`TenantRepo::update_tenant`).
pub(crate) fn relevel(c: &mut SqliteConnection, tenant: Id, levels: &RiskLevels) -> TxResult<u64> {
    let mut changed = 0;
    for (level, from, below) in levels.bands() {
        let mut target = diesel::update(agents::table)
            .filter(agents::tenant_id.eq(tenant))
            .filter(agents::risk.ne(level.as_str()))
            .into_boxed();
        if let Some(from) = from {
            target = target.filter(agents::risk_score.ge(from));
        }
        if let Some(below) = below {
            target = target.filter(agents::risk_score.lt(below));
        }
        changed += target.set(agents::risk.eq(level.as_str())).execute(c)?;
    }
    Ok(changed as u64)
}

fn bump_version(c: &mut SqliteConnection, tenant: Id) -> TxResult<()> {
    diesel::insert_into(agent_index_versions::table)
        .values((agent_index_versions::tenant_id.eq(tenant), agent_index_versions::version.eq(1_i64)))
        .on_conflict(agent_index_versions::tenant_id)
        .do_update()
        .set(agent_index_versions::version.eq(agent_index_versions::version + 1_i64))
        .execute(c)?;
    Ok(())
}

#[async_trait]
impl AgentRepo for SqliteStore {
    async fn insert_agent(&self, agent: &Agent, embedding: &AgentEmbedding) -> Result<()> {
        let row = AgentRow::try_from(agent)?;
        let embedding = AgentEmbeddingRow::of(agent.tenant_id, agent.id, embedding);
        self.transaction(move |c| {
            // A missing tenant fails the foreign key, a taken name the unique index: both
            // `Conflict`, translated with the rest of diesel's errors.
            diesel::insert_into(agents::table).values(&row).execute(c)?;
            diesel::insert_into(agent_embeddings::table).values(&embedding).execute(c)?;
            bump_version(c, row.tenant_id)
        })
        .await
    }

    async fn get_agent(&self, tenant: TenantId, id: AgentId) -> Result<Option<Agent>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| Ok(agent_in_tenant(c, &tenant, &id)?.map(Agent::try_from).transpose()?)).await
    }

    async fn get_agents(&self, tenant: TenantId, ids: &[AgentId]) -> Result<Vec<Agent>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let tenant = id_text(tenant.0);
        let ids: Vec<String> = ids.iter().map(|id| id_text(id.0)).collect();
        self.read(move |c| {
            let mut agents = Vec::with_capacity(ids.len());
            for batch in ids.chunks(IDS_PER_QUERY) {
                let rows = agents::table
                    .filter(agents::tenant_id.eq(&tenant))
                    .filter(agents::id.eq_any(batch))
                    .select(AgentRow::as_select())
                    .load(c)?;
                agents.extend(convert::<_, Agent>(rows)?);
            }
            Ok(agents)
        })
        .await
    }

    async fn list_agents(&self, tenant: TenantId, filter: &AgentFilter, page: &PageRequest) -> Result<Page<Agent>> {
        let (filter, after, limit) = (filter.clone(), page.after.map(id_text), page.fetch_limit());
        let rows = self
            .read(move |c| {
                let mut q =
                    filtered(tenant, filter).select(AgentRow::as_select()).order(agents::id.desc()).limit(limit);
                if let Some(after) = after {
                    q = q.filter(agents::id.lt(after));
                }
                Ok(convert(q.load(c)?)?)
            })
            .await?;
        Ok(Page::from_rows(rows, page, |a: &Agent| a.id.0))
    }

    async fn update_agent(&self, agent: &Agent, embedding: &AgentEmbedding) -> Result<()> {
        let (id, row) = (agent.id, AgentRow::try_from(agent)?);
        let embedding = AgentEmbeddingRow::of(agent.tenant_id, agent.id, embedding);
        self.transaction(move |c| {
            let target = agents::table.filter(agents::id.eq(&row.id)).filter(agents::tenant_id.eq(&row.tenant_id));
            // Every column but id, tenant and `created_at`, which never change.
            let n = diesel::update(target)
                .set((
                    agents::name.eq(&row.name),
                    agents::agent_type.eq(&row.agent_type),
                    agents::description.eq(&row.description),
                    agents::capabilities.eq(&row.capabilities),
                    agents::permissions.eq(&row.permissions),
                    agents::status.eq(&row.status),
                    agents::predicted_type.eq(&row.predicted_type),
                    agents::risk.eq(&row.risk),
                    agents::risk_score.eq(row.risk_score),
                    agents::metadata.eq(&row.metadata),
                    agents::last_seen_at.eq(row.last_seen_at),
                    agents::updated_at.eq(row.updated_at),
                ))
                .execute(c)?;
            if n == 0 {
                return Err(not_found(id).into());
            }
            put_embedding(c, &embedding)?;
            bump_version(c, row.tenant_id)
        })
        .await
    }

    async fn delete_agent(&self, tenant: TenantId, id: AgentId) -> Result<()> {
        let (tenant_text, id_text) = (id_text(tenant.0), id_text(id.0));
        self.transaction(move |c| {
            let target = agents::table.filter(agents::id.eq(&id_text)).filter(agents::tenant_id.eq(&tenant_text));
            if diesel::delete(target).execute(c)? == 0 {
                return Err(not_found(id).into());
            }
            // The schema cascades too; deleting explicitly does not depend on the pragma.
            diesel::delete(agent_embeddings::table.find(&id_text)).execute(c)?;
            bump_version(c, Id(tenant.as_uuid()))
        })
        .await
    }

    async fn heartbeat_agent(&self, tenant: TenantId, id: AgentId, beat: &Heartbeat) -> Result<Option<Agent>> {
        let (tenant_text, id_text) = (id_text(tenant.0), id_text(id.0));
        let (at, status) = (Micros(beat.at), beat.status);
        let metadata =
            beat.metadata.as_ref().map(|m| body_text(m, format_args!("the metadata of agent {id}"))).transpose()?;
        let embedding = beat.embedding.as_ref().map(|e| AgentEmbeddingRow::of(tenant, id, e));
        self.transaction(move |c| {
            let Some(mut row) = agent_in_tenant(c, &tenant_text, &id_text)? else { return Ok(None) };
            row.last_seen_at = Some(at);
            row.updated_at = at;
            if let Some(status) = status {
                row.status = status.as_str().to_owned();
            }
            if let Some(metadata) = metadata {
                row.metadata = metadata;
            }
            diesel::update(agents::table.find(&id_text))
                .set((
                    agents::last_seen_at.eq(row.last_seen_at),
                    agents::updated_at.eq(row.updated_at),
                    agents::status.eq(&row.status),
                    agents::metadata.eq(&row.metadata),
                ))
                .execute(c)?;
            match embedding {
                Some(embedding) => {
                    put_embedding(c, &embedding)?;
                    bump_version(c, Id(tenant.as_uuid()))?;
                }
                // The vector is unchanged, so the index version is too.
                None => {
                    diesel::update(agent_embeddings::table.find(&id_text))
                        .set(agent_embeddings::refreshed_at.eq(at))
                        .execute(c)?;
                }
            }
            Ok(Some(Agent::try_from(row)?))
        })
        .await
    }

    async fn get_agent_embedding(&self, tenant: TenantId, id: AgentId) -> Result<Option<AgentEmbedding>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = agent_embeddings::table
                .filter(agent_embeddings::agent_id.eq(id))
                .filter(agent_embeddings::tenant_id.eq(tenant))
                .select(AgentEmbeddingRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(AgentEmbedding::try_from).transpose()?)
        })
        .await
    }

    async fn agent_vectors(&self, tenant: TenantId) -> Result<Vec<AgentVector>> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let rows = agent_embeddings::table
                .filter(agent_embeddings::tenant_id.eq(tenant))
                .select(AgentVectorRow::as_select())
                .load(c)?;
            Ok(convert(rows)?)
        })
        .await
    }

    async fn agent_index_version(&self, tenant: TenantId) -> Result<i64> {
        let tenant = id_text(tenant.0);
        self.read(move |c| {
            let version = agent_index_versions::table
                .find(tenant)
                .select(agent_index_versions::version)
                .first::<i64>(c)
                .optional()?;
            Ok(version.unwrap_or(0))
        })
        .await
    }
}
