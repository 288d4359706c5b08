//! The agent registry: agents, their embeddings, and each tenant's index version, which
//! moves in the same transaction as every insert or delete of an agent and every
//! replacement of a vector. Every write that touches more than the agent row takes the agent
//! row first (by inserting, updating or deleting it), then the embedding, then the version,
//! so concurrent writes wait for each other instead of deadlocking.

use agentgov_domain::ids::{AgentId, TenantId};
use agentgov_domain::model::{Agent, AgentEmbedding, AgentFilter, AgentStatus, AgentVector, Heartbeat, RiskLevels};
use agentgov_domain::page::{Page, PageRequest};
use agentgov_domain::ports::AgentRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Bytea, Integer, Nullable, Text, Timestamptz, Untyped, Uuid as SqlUuid};
use diesel::upsert::excluded;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use super::page_of;
use crate::error::{self, TxError};
use crate::rows::{AgentEmbeddingRow, AgentRow, AgentVectorRow, body_text, vector_bytes};
use crate::schema::{agent_embeddings, agent_index_versions, agents};
use crate::store::PgStore;

define_sql_function! {
    /// Postgres's `COALESCE` of an optional and a required instant.
    fn coalesce(a: Nullable<Timestamptz>, b: Timestamptz) -> Timestamptz;
}

/// Sets the `risk` of each of the tenant's agents to its score's level by `levels`; answers
/// how many changed (`TenantRepo::update_tenant`, inside its transaction).
pub(crate) async fn relevel(
    conn: &mut AsyncPgConnection,
    tenant: uuid::Uuid,
    levels: &RiskLevels,
) -> Result<u64, diesel::result::Error> {
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
        changed += target.set(agents::risk.eq(level.as_str())).execute(conn).await?;
    }
    Ok(changed as u64)
}

fn not_found(id: AgentId) -> DomainError {
    DomainError::not_found("agent", id)
}

/// The rest of a heartbeat's statement, after the `beat` row of its parameters (see
/// [`BeatStatement`]). The embedding's columns are replaced when the beat brings a vector,
/// and only `refreshed_at` moves otherwise; the index version is bumped only in the first
/// case. The embedding's update reads the agent's, so the agent row is locked first, as
/// every other write of an agent does.
const BEAT_SQL: &str = "
, agent AS (
    UPDATE agents AS a
    SET last_seen_at = b.at, updated_at = b.at,
        status = coalesce(b.status, a.status), metadata = coalesce(b.metadata, a.metadata)
    FROM beat AS b
    WHERE a.id = b.id AND a.tenant_id = b.tenant_id
    RETURNING a.*
), embedding AS (
    UPDATE agent_embeddings AS e
    SET model = coalesce(b.model, e.model), model_version = coalesce(b.model_version, e.model_version),
        text = coalesce(b.text, e.text), vector = coalesce(b.vector, e.vector),
        refreshed_at = coalesce(b.refreshed_at, b.at)
    FROM beat AS b
    WHERE e.agent_id IN (SELECT id FROM agent)
), bumped AS (
    INSERT INTO agent_index_versions (tenant_id, version)
    SELECT agent.tenant_id, 1 FROM agent, beat WHERE beat.vector IS NOT NULL
    ON CONFLICT (tenant_id) DO UPDATE SET version = agent_index_versions.version + 1
)
SELECT * FROM agent";

/// A heartbeat as one statement: one round trip where a transaction of three statements
/// takes five, and just as atomic (heartbeats are the registry's hot path). It is a query
/// type of its own rather than `sql_query`, which diesel prepares anew on every call (a
/// second round trip): a static query id lets the prepared statement be cached per
/// connection. The parameters come first, as the one-row `beat`, so that the SQL can use
/// each of them more than once. The embedding's are all null when it is kept.
struct BeatStatement<'a> {
    id: Uuid,
    tenant: Uuid,
    at: OffsetDateTime,
    status: Option<&'static str>,
    metadata: Option<String>,
    model: Option<&'a str>,
    model_version: Option<i32>,
    text: Option<&'a str>,
    vector: Option<Vec<u8>>,
    refreshed_at: Option<OffsetDateTime>,
}

impl<'a> BeatStatement<'a> {
    fn new(tenant: TenantId, id: AgentId, beat: &'a Heartbeat) -> Result<Self> {
        let e = beat.embedding.as_ref();
        Ok(Self {
            id: id.as_uuid(),
            tenant: tenant.as_uuid(),
            at: beat.at,
            status: beat.status.map(AgentStatus::as_str),
            metadata: beat
                .metadata
                .as_ref()
                .map(|m| body_text(m, format_args!("the metadata of agent {id}")))
                .transpose()?,
            model: e.map(|e| e.model.as_str()),
            model_version: e.map(|e| e.model_version),
            text: e.map(|e| e.text.as_str()),
            vector: e.map(|e| vector_bytes(&e.vector)),
            refreshed_at: e.map(|e| e.refreshed_at),
        })
    }
}

impl QueryId for BeatStatement<'_> {
    type QueryId = BeatStatement<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for BeatStatement<'_> {
    type SqlType = Untyped;
}

impl QueryFragment<Pg> for BeatStatement<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(
            "WITH beat (id, tenant_id, at, status, metadata, model, model_version, text, vector, refreshed_at) \
             AS (VALUES (",
        );
        out.push_bind_param::<SqlUuid, _>(&self.id)?;
        out.push_sql(", ");
        out.push_bind_param::<SqlUuid, _>(&self.tenant)?;
        out.push_sql(", ");
        out.push_bind_param::<Timestamptz, _>(&self.at)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.status)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.metadata)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.model)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Integer>, _>(&self.model_version)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, _>(&self.text)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Bytea>, _>(&self.vector)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Timestamptz>, _>(&self.refreshed_at)?;
        out.push_sql("))");
        out.push_sql(BEAT_SQL);
        Ok(())
    }
}

#[async_trait]
impl AgentRepo for PgStore {
    async fn insert_agent(&self, agent: &Agent, embedding: &AgentEmbedding) -> Result<()> {
        let row = AgentRow::try_from(agent)?;
        let vector = AgentEmbeddingRow::of(agent.tenant_id, agent.id, embedding);
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        // A missing tenant fails the agent's foreign key (`Conflict`).
        conn.transaction(async |conn| -> Result<(), TxError> {
            diesel::insert_into(agents::table).values(&row).execute(conn).await?;
            diesel::insert_into(agent_embeddings::table).values(&vector).execute(conn).await?;
            bump_index_version(conn, row.tenant_id).await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn get_agent(&self, tenant: TenantId, id: AgentId) -> Result<Option<Agent>> {
        let mut conn = self.conn().await?;
        let row = agents::table
            .filter(agents::id.eq(id.as_uuid()))
            .filter(agents::tenant_id.eq(tenant.as_uuid()))
            .select(AgentRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(Agent::try_from).transpose()
    }

    async fn get_agents(&self, tenant: TenantId, ids: &[AgentId]) -> Result<Vec<Agent>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Uuid> = ids.iter().map(|id| id.as_uuid()).collect();
        let mut conn = self.conn().await?;
        let rows: Vec<AgentRow> = agents::table
            .filter(agents::tenant_id.eq(tenant.as_uuid()))
            .filter(agents::id.eq_any(ids))
            .select(AgentRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(Agent::try_from).collect()
    }

    async fn list_agents(&self, tenant: TenantId, filter: &AgentFilter, page: &PageRequest) -> Result<Page<Agent>> {
        let mut query = agents::table
            .filter(agents::tenant_id.eq(tenant.as_uuid()))
            .select(AgentRow::as_select())
            .order(agents::id.desc())
            .limit(page.fetch_limit())
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(agents::id.lt(after));
        }
        if let Some(agent_type) = &filter.agent_type {
            query = query.filter(agents::agent_type.eq(agent_type));
        }
        if let Some(risk) = filter.risk {
            query = query.filter(agents::risk.eq(risk.as_str()));
        }
        if let Some(capability) = &filter.capability {
            // `@>` of one element is exact membership, and can use the GIN index.
            query = query.filter(agents::capabilities.contains(vec![capability.as_str()]));
        }
        if let Some(status) = filter.status {
            // The effective status, as `Agent::effective_status` decides it.
            let active = AgentStatus::Active.as_str();
            query = match (status, filter.stale_before.map(ceil_to_micros)) {
                (AgentStatus::Active, Some(cutoff)) => query
                    .filter(agents::status.eq(active))
                    .filter(coalesce(agents::last_seen_at, agents::created_at).ge(cutoff)),
                (AgentStatus::Inactive, Some(cutoff)) => {
                    query.filter(agents::status.eq(AgentStatus::Inactive.as_str()).or(
                        agents::status.eq(active).and(coalesce(agents::last_seen_at, agents::created_at).lt(cutoff)),
                    ))
                }
                (status, _) => query.filter(agents::status.eq(status.as_str())),
            };
        }
        let mut conn = self.conn().await?;
        let rows: Vec<AgentRow> = query.load(&mut conn).await.map_err(error::db)?;
        page_of(rows, page, |a: &Agent| a.id.as_uuid())
    }

    async fn update_agent(&self, agent: &Agent, embedding: &AgentEmbedding) -> Result<()> {
        let (tenant, id) = (agent.tenant_id.as_uuid(), agent.id.as_uuid());
        let row = AgentRow::try_from(agent)?;
        let vector = AgentEmbeddingRow::of(agent.tenant_id, agent.id, embedding);
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            // Every field but id, tenant and `created_at`.
            let updated = diesel::update(agents::table.filter(agents::id.eq(id)).filter(agents::tenant_id.eq(tenant)))
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
                .execute(conn)
                .await?;
            if updated == 0 {
                return Err(TxError::Domain(not_found(agent.id)));
            }
            replace_embedding(conn, &vector).await?;
            bump_index_version(conn, tenant).await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn delete_agent(&self, tenant: TenantId, id: AgentId) -> Result<()> {
        let (tenant_id, agent_id) = (tenant.as_uuid(), id.as_uuid());
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            // The embedding goes with the agent (ON DELETE CASCADE).
            let deleted =
                diesel::delete(agents::table.filter(agents::id.eq(agent_id)).filter(agents::tenant_id.eq(tenant_id)))
                    .execute(conn)
                    .await?;
            if deleted == 0 {
                return Err(TxError::Domain(not_found(id)));
            }
            bump_index_version(conn, tenant_id).await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn heartbeat_agent(&self, tenant: TenantId, id: AgentId, beat: &Heartbeat) -> Result<Option<Agent>> {
        let statement = BeatStatement::new(tenant, id, beat)?;
        let mut conn = self.conn().await?;
        let row: Option<AgentRow> = statement.get_result(&mut conn).await.optional().map_err(error::db)?;
        row.map(Agent::try_from).transpose()
    }

    async fn get_agent_embedding(&self, tenant: TenantId, id: AgentId) -> Result<Option<AgentEmbedding>> {
        let mut conn = self.conn().await?;
        let row = agent_embeddings::table
            .filter(agent_embeddings::agent_id.eq(id.as_uuid()))
            .filter(agent_embeddings::tenant_id.eq(tenant.as_uuid()))
            .select(AgentEmbeddingRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        row.map(AgentEmbedding::try_from).transpose()
    }

    async fn agent_vectors(&self, tenant: TenantId) -> Result<Vec<AgentVector>> {
        let mut conn = self.conn().await?;
        let rows: Vec<AgentVectorRow> = agent_embeddings::table
            .filter(agent_embeddings::tenant_id.eq(tenant.as_uuid()))
            .select(AgentVectorRow::as_select())
            .load(&mut conn)
            .await
            .map_err(error::db)?;
        rows.into_iter().map(AgentVector::try_from).collect()
    }

    async fn agent_index_version(&self, tenant: TenantId) -> Result<i64> {
        let mut conn = self.conn().await?;
        let version = agent_index_versions::table
            .find(tenant.as_uuid())
            .select(agent_index_versions::version)
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        Ok(version.unwrap_or(0))
    }
}

/// Stores `vector` as the agent's embedding, whether or not it has one.
async fn replace_embedding(conn: &mut AsyncPgConnection, vector: &AgentEmbeddingRow) -> QueryResult<usize> {
    diesel::insert_into(agent_embeddings::table)
        .values(vector)
        .on_conflict(agent_embeddings::agent_id)
        .do_update()
        .set((
            agent_embeddings::model.eq(excluded(agent_embeddings::model)),
            agent_embeddings::model_version.eq(excluded(agent_embeddings::model_version)),
            agent_embeddings::text.eq(excluded(agent_embeddings::text)),
            agent_embeddings::vector.eq(excluded(agent_embeddings::vector)),
            agent_embeddings::refreshed_at.eq(excluded(agent_embeddings::refreshed_at)),
        ))
        .execute(conn)
        .await
}

/// Moves the tenant's index version on (from 0, the absent row, to 1). The row stays locked
/// until the transaction ends, so concurrent changes of one tenant's vectors each move it.
async fn bump_index_version(conn: &mut AsyncPgConnection, tenant: Uuid) -> QueryResult<usize> {
    diesel::insert_into(agent_index_versions::table)
        .values((agent_index_versions::tenant_id.eq(tenant), agent_index_versions::version.eq(1_i64)))
        .on_conflict(agent_index_versions::tenant_id)
        .do_update()
        .set(agent_index_versions::version.eq(agent_index_versions::version + 1))
        .execute(conn)
        .await
}

/// `t` rounded up to whole microseconds, Postgres's precision (diesel would truncate it).
/// Stored instants are whole microseconds, and for those `s < t` exactly when
/// `s < ceil(t)`, so the staleness filter decides as `AgentFilter::matches` does with `t`.
fn ceil_to_micros(t: OffsetDateTime) -> OffsetDateTime {
    match t.nanosecond() % 1_000 {
        0 => t,
        extra => t.checked_add(time::Duration::nanoseconds(i64::from(1_000 - extra))).unwrap_or(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_cutoffs_round_up_to_whole_microseconds() {
        let whole = OffsetDateTime::UNIX_EPOCH + time::Duration::microseconds(1_500);
        assert_eq!(ceil_to_micros(whole), whole);
        assert_eq!(ceil_to_micros(whole + time::Duration::nanoseconds(1)), whole + time::Duration::microseconds(1));
        assert_eq!(ceil_to_micros(whole - time::Duration::nanoseconds(999)), whole);
        let early = OffsetDateTime::UNIX_EPOCH - time::Duration::nanoseconds(1_500);
        assert_eq!(ceil_to_micros(early), OffsetDateTime::UNIX_EPOCH - time::Duration::microseconds(1));
    }
}
