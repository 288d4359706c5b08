//! The agent registry: registration, updates, heartbeats, and semantic search over each
//! tenant's agents. Every agent gets a predicted type (`agentgov_detect::classify`), an
//! explainable risk (`agentgov_detect::risk`) and an embedding, recomputed whenever what
//! they are computed from changes.

mod index;
mod text;

use std::sync::Arc;
use std::time::Duration;

use agentgov_detect::classify::TypeClassifier;
use agentgov_detect::embed::{FUSED_ENCODER_TOKENS, HashingEmbedder};
use agentgov_detect::guard::encoder;
use agentgov_detect::risk;
use async_trait::async_trait;
use time::OffsetDateTime;

pub use self::index::AgentIndex;
use self::index::{FUSED_MODEL, HASHING_MODEL, covers, in_space_of};
use self::text::{embedding_text, flatten_permissions};
use super::audit::{AuditEvent, AuditLog, caller_actor};
use super::snapshots::Snapshots;
use super::validate::{check_description, check_name, check_object, check_text};
use super::{Caller, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::events::TENANT_UPDATED;
use crate::ids::{AgentId, TenantId};
use crate::model::{Agent, AgentEmbedding, AgentFilter, AgentStatus, Heartbeat, JsonObject, Permission, RiskLevel};
use crate::page::{Page, PageRequest};
use crate::ports::{Embedder, EmbeddingModel, Event, OffloadError};

const MAX_TYPE_LEN: usize = 50;
const MAX_DESCRIPTION_LEN: usize = 2000;
const MAX_CAPABILITIES: usize = 100;
const MAX_CAPABILITY_LEN: usize = 200;
/// Serialised size limit of `permissions` and of `metadata`.
const MAX_OBJECT_BYTES: usize = 16 * 1024;
const MAX_QUERY_LEN: usize = 500;
pub const DEFAULT_SEARCH_LIMIT: u32 = 10;
pub const MAX_SEARCH_LIMIT: u32 = 100;
/// Nearest neighbours shown in an agent's details.
const NEIGHBOURS: usize = 5;
/// How long an embedding run on the shared CPU pool may take, queueing included.
const EMBED_BUDGET: Duration = Duration::from_secs(5);

/// Tunables of the registry.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// An `active` agent with no heartbeat (nor registration) for this long is reported
    /// as `inactive`.
    pub stale_after: Duration,
    /// How long a policy check may reuse an agent it loaded. A change on this replica, or
    /// announced on the bus by another, drops it at once; the TTL bounds what the bus does
    /// not announce (a heartbeat on another replica).
    pub snapshot_ttl: Duration,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self { stale_after: Duration::from_secs(600), snapshot_ttl: Duration::from_secs(2) }
    }
}

/// The built-in embedder: no download, no network (`agentgov_detect::embed`).
pub struct BuiltinEmbedder {
    inner: HashingEmbedder,
    model: EmbeddingModel,
}

impl BuiltinEmbedder {
    pub fn new() -> Self {
        let model = HASHING_MODEL.clone();
        Self { inner: HashingEmbedder::new(model.dimensions), model }
    }
}

impl Default for BuiltinEmbedder {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Embedder for BuiltinEmbedder {
    fn model(&self) -> &EmbeddingModel {
        &self.model
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.inner.embed(t)).collect())
    }
}

/// The text of an agent or a query as a vector of the Prompt Guard's multilingual encoder.
pub type EncodeFn = Arc<dyn Fn(&str) -> Vec<f32> + Send + Sync>;

/// The built-in embedder fused with the Prompt Guard's multilingual encoder
/// (`agentgov_detect::embed::fuse`): each text's hashing vector and encoder vector side by
/// side, compared by the mean of the two cosines. It ranks the search-quality fixture better
/// than either alone (BENCHMARKS.md, "Search quality") and meets across languages, at
/// milliseconds of CPU per text, so it is `costly`.
pub struct FusedEmbedder {
    hashing: HashingEmbedder,
    encoder: EncodeFn,
    model: EmbeddingModel,
}

impl FusedEmbedder {
    /// Over `encoder`, which must give unit vectors of `encoder::DIM` values.
    pub fn new(encoder: EncodeFn) -> Self {
        let hashing = HashingEmbedder::new(HASHING_MODEL.dimensions);
        Self { hashing, encoder, model: FUSED_MODEL.clone() }
    }

    /// Over the process's encoder (`agentgov_detect::guard::encoder::shared`), or why it is
    /// off (its files are not installed, or `AGENTGOV_GUARD_ENCODER=off`).
    pub fn installed() -> std::result::Result<Self, &'static str> {
        match encoder::shared() {
            Some(e) => Ok(Self::new(Arc::new(|text: &str| e.embed(text, FUSED_ENCODER_TOKENS).to_vec()))),
            None => Err(encoder::shared_error().unwrap_or("not loaded")),
        }
    }
}

#[async_trait]
impl Embedder for FusedEmbedder {
    fn model(&self) -> &EmbeddingModel {
        &self.model
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| agentgov_detect::embed::fuse(&self.hashing.embed(t), &(self.encoder)(t))).collect())
    }

    fn costly(&self) -> bool {
        true
    }
}

/// `POST /agents/register` and `PUT /agents/{id}` (a full update: what is left out is
/// reset to its default, except `status`, which an update without it keeps).
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AgentRequest {
    /// Unique within the tenant; 1 to 200 characters, not all blank, no control characters
    /// (stored trimmed).
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub name: String,
    /// The declared type, e.g. `llm`; 1 to 50 characters, as `name`.
    #[serde(rename = "type")]
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 50,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub agent_type: String,
    /// At most 2,000 characters; no control characters but newlines and tabs.
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 2000, pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$")
    )]
    pub description: Option<String>,
    /// At most 100, each 1 to 200 characters without white space at either end or control
    /// characters, no duplicates.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = capabilities_schema))]
    pub capabilities: Vec<String>,
    /// A JSON object of resource → access, e.g. `{"payments": "write"}`; at most 16 KiB.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub permissions: JsonObject,
    /// A JSON object; at most 16 KiB.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub metadata: JsonObject,
    /// Default `active` when registering; kept when left out of an update.
    pub status: Option<AgentStatus>,
}

/// `capabilities` as the OpenAPI document states it.
#[cfg(feature = "openapi")]
pub(crate) fn capabilities_schema() -> utoipa::openapi::schema::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    let item = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(MAX_CAPABILITY_LEN))
        .pattern(Some(super::validate::TRIMMED_PATTERN));
    ArrayBuilder::new()
        .items(item)
        .max_items(Some(MAX_CAPABILITIES))
        .unique_items(true)
        .description(Some("At most 100, each 1 to 200 characters without white space at either end or control characters, no duplicates."))
        .build()
}

/// `POST /agents/{id}/heartbeat` (and the webhook's `agent.heartbeat`).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct HeartbeatRequest {
    /// The agent's own report; a `suspended` agent cannot lift its suspension this way.
    pub status: Option<AgentStatus>,
    /// Replaces the stored metadata.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub metadata: Option<JsonObject>,
}

/// The filters of `GET /agents`, as sent.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct AgentListParams {
    /// Declared type, exact.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", param(rename = "type"))]
    pub agent_type: Option<String>,
    /// `active`, `inactive` (including active agents not seen lately) or `suspended`.
    pub status: Option<String>,
    /// `low`, `medium`, `high` or `critical`.
    pub risk: Option<String>,
    /// Agents having this capability, exact.
    pub capability: Option<String>,
}

/// One search result: the agent and how well it matches (cosine similarity, -1 to 1).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchHit {
    #[serde(flatten)]
    pub agent: Agent,
    pub score: f32,
}

/// `GET /agents/search`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchResults {
    /// Best first.
    pub items: Vec<SearchHit>,
    /// The embedding model that ranked them.
    pub model: EmbeddingModel,
}

/// A registered agent near another in embedding space.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Neighbour {
    pub id: AgentId,
    pub name: String,
    pub score: f32,
}

/// What an agent's embedding is made of.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EmbeddingSummary {
    pub model: String,
    pub model_version: i32,
    pub dimensions: usize,
    /// The text that was embedded.
    pub text: String,
    #[serde(with = "time::serde::rfc3339")]
    pub refreshed_at: OffsetDateTime,
    /// The nearest other agents of the tenant, best first.
    pub neighbours: Vec<Neighbour>,
}

/// One reason an agent's risk is what it is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RiskFactor {
    /// The category, e.g. `payments`, `deletion`, `shell`, `credentials`, `pii`.
    pub code: String,
    /// Its contribution, 0 to 1 (combined as 1 - Π(1 - weight)).
    pub weight: f64,
    /// The capability or permission that raised it, verbatim.
    pub evidence: String,
    pub reason: String,
}

/// `GET /agents/{id}/details`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentDetails {
    #[serde(flatten)]
    pub agent: Agent,
    /// Strongest first.
    pub risk_factors: Vec<RiskFactor>,
    /// How sure the type classifier is of `predicted_type`, 0 to 1.
    pub predicted_type_confidence: f32,
    pub embedding: Option<EmbeddingSummary>,
}

/// What the built-in models make of an agent's declared fields.
struct Derived {
    predicted_type: String,
    predicted_type_confidence: f32,
    risk_score: f64,
    risk_factors: Vec<RiskFactor>,
    text: String,
}

super::ports::repos!(Repos { agents: AgentRepo, tenants: TenantRepo });
#[derive(Clone)]
pub struct AgentService {
    repos: Repos,
    ports: Ports,
    audit: AuditLog,
    embedder: Arc<dyn Embedder>,
    classifier: Arc<TypeClassifier>,
    index: AgentIndex,
    /// Agents as policy checks load them (see `snapshots.rs`).
    snapshots: Snapshots<(TenantId, AgentId), Agent>,
    settings: AgentSettings,
}

fn not_found(id: AgentId) -> DomainError {
    DomainError::not_found("agent", id)
}

impl AgentService {
    pub fn new(
        ports: Ports,
        repos: Repos,
        audit: AuditLog,
        embedder: Arc<dyn Embedder>,
        settings: AgentSettings,
    ) -> Self {
        let index = AgentIndex::new(embedder.model().clone());
        let snapshots = Snapshots::new(settings.snapshot_ttl, 100_000);
        Self {
            ports,
            repos,
            audit,
            embedder,
            classifier: Arc::new(TypeClassifier::builtin()),
            index,
            snapshots,
            settings,
        }
    }

    /// The embedding model in use, for `/status`.
    pub fn model(&self) -> &EmbeddingModel {
        self.embedder.model()
    }

    fn stale_before(&self) -> Option<OffsetDateTime> {
        Some(self.ports.clock.now() - self.settings.stale_after)
    }

    /// The agent as reported: its effective status.
    fn reported(&self, mut agent: Agent) -> Agent {
        agent.status = agent.effective_status(self.stale_before());
        agent
    }

    fn derive(&self, agent: &Agent) -> Derived {
        let permissions = flatten_permissions(&agent.permissions);
        let prediction = self.classifier.predict(&agent.name, agent.description.as_deref(), &agent.capabilities);
        let assessment = risk::assess(&agent.capabilities, &permissions);
        let risk_score = assessment.score.clamp(0.0, 1.0);
        Derived {
            predicted_type: prediction.label.to_owned(),
            predicted_type_confidence: prediction.confidence,
            risk_score,
            risk_factors: assessment
                .factors
                .into_iter()
                .map(|f| RiskFactor {
                    code: f.code.to_owned(),
                    weight: f.weight,
                    evidence: f.evidence,
                    reason: f.reason.to_owned(),
                })
                .collect(),
            text: embedding_text(agent, &permissions),
        }
    }

    /// The embedder's vectors of `texts`; a costly embedder runs on the shared CPU pool,
    /// fairly per tenant (a tenant whose queue there is full gets 429, an embedding past its
    /// budget 503).
    async fn embed(&self, tenant: TenantId, texts: Vec<String>) -> Result<Vec<Vec<f32>>> {
        if !self.embedder.costly() {
            return self.embedder.embed(&texts).await;
        }
        let embedder = Arc::clone(&self.embedder);
        let embedded =
            self.ports.offload.call(tenant, EMBED_BUDGET, move || futures::executor::block_on(embedder.embed(&texts)));
        match embedded.await {
            Ok(vectors) => vectors,
            Err(OffloadError::Busy) => Err(DomainError::RateLimited { retry_after: Duration::from_secs(1) }),
            Err(e) => Err(DomainError::Unavailable(format!("the agent's text could not be embedded: {e}"))),
        }
    }

    async fn embedding(&self, tenant: TenantId, text: String) -> Result<AgentEmbedding> {
        let mut vectors = self.embed(tenant, vec![text.clone()]).await?;
        let vector = vectors.pop().filter(|v| v.len() == self.model().dimensions).ok_or_else(|| {
            DomainError::Internal(format!("the embedder returned no vector of {} dimensions", self.model().dimensions))
        })?;
        let model = self.model();
        Ok(AgentEmbedding {
            model: model.name.clone(),
            model_version: model.version,
            text,
            vector,
            refreshed_at: self.ports.clock.now(),
        })
    }

    /// Fills the derived fields of `agent` (its risk level by the tenant's bounds) and
    /// makes its embedding.
    async fn prepare(&self, agent: &mut Agent) -> Result<AgentEmbedding> {
        let d = self.derive(agent);
        let levels = match self.repos.tenants.get_tenant(agent.tenant_id).await? {
            Some(tenant) => tenant.settings.risk_levels.unwrap_or_default(),
            None => return Err(DomainError::not_found("tenant", agent.tenant_id)),
        };
        agent.predicted_type = d.predicted_type;
        agent.risk = levels.level(d.risk_score);
        agent.risk_score = d.risk_score;
        self.embedding(agent.tenant_id, d.text).await
    }

    async fn record(&self, caller: &Caller, event_type: &str, agent: &Agent) {
        self.snapshots.invalidate(&(agent.tenant_id, agent.id));
        let details = serde_json::json!({
            "name": agent.name, "type": agent.agent_type, "status": agent.status,
            "predicted_type": agent.predicted_type, "risk": agent.risk, "risk_score": agent.risk_score,
            "capabilities": agent.capabilities,
        });
        let mut event = AuditEvent::new(caller.tenant_id(), caller_actor(caller), event_type)
            .action(event_type.rsplit('.').next().unwrap_or(event_type))
            .resource(format!("agents/{}", agent.id))
            .details(details);
        event.agent_id = Some(agent.id.as_uuid());
        event.risk_score = Some(agent.risk_score);
        self.audit.record_after(event).await;
        self.publish(event_type, agent).await;
    }

    /// Tells the real-time feed; a failure is logged (the change stands).
    async fn publish(&self, event_type: &str, agent: &Agent) {
        let data = match serde_json::to_value(agent) {
            Ok(data) => data,
            Err(e) => {
                tracing::error!(error = %e, "could not serialise an agent event");
                return;
            }
        };
        self.ports.announce(agent.tenant_id, event_type, data).await;
    }

    /// `POST /agents/register`.
    pub async fn register(&self, caller: &Caller, req: AgentRequest) -> Result<Agent> {
        self.register_as(caller, AgentId(self.ports.ids.new_id()), req).await
    }

    /// Registers an agent under an id chosen beforehand (a confirmed discovery candidate
    /// names its agent before registering it).
    pub(crate) async fn register_as(&self, caller: &Caller, id: AgentId, req: AgentRequest) -> Result<Agent> {
        caller.require_permission(Permission::AgentsWrite)?;
        validate(&req)?;
        let now = self.ports.clock.now();
        let mut agent = Agent {
            id,
            tenant_id: caller.tenant_id(),
            name: req.name.trim().to_owned(),
            agent_type: req.agent_type.trim().to_owned(),
            description: req.description.map(|d| d.trim().to_owned()).filter(|d| !d.is_empty()),
            capabilities: req.capabilities.into_iter().map(|c| c.trim().to_owned()).collect(),
            permissions: req.permissions,
            status: req.status.unwrap_or(AgentStatus::Active),
            predicted_type: String::new(),
            risk: RiskLevel::Low,
            risk_score: 0.0,
            metadata: req.metadata,
            last_seen_at: None,
            created_at: now,
            updated_at: now,
        };
        let embedding = self.prepare(&mut agent).await?;
        self.repos.agents.insert_agent(&agent, &embedding).await?;
        self.record(caller, "agent.registered", &agent).await;
        Ok(self.reported(agent))
    }

    /// `GET /agents`: newest first.
    pub async fn list(
        &self,
        caller: &Caller,
        params: &AgentListParams,
        limit: Option<i64>,
        cursor: Option<&str>,
    ) -> Result<Page<Agent>> {
        caller.require_permission(Permission::AgentsRead)?;
        let mut v = Violations::new();
        let page = PageRequest::parse(limit, cursor).or_else(|e| v.absorb(e).map(|()| PageRequest::default()))?;
        let filter = AgentFilter {
            agent_type: params.agent_type.clone(),
            status: parse_param(
                &mut v,
                "status",
                params.status.as_deref(),
                AgentStatus::parse,
                "active, inactive, suspended",
            ),
            risk: parse_param(&mut v, "risk", params.risk.as_deref(), RiskLevel::parse, "low, medium, high, critical"),
            capability: params.capability.clone(),
            stale_before: self.stale_before(),
        };
        v.into_result()?;
        let found = self.repos.agents.list_agents(caller.tenant_id(), &filter, &page).await?;
        Ok(Page { items: found.items.into_iter().map(|a| self.reported(a)).collect(), next_cursor: found.next_cursor })
    }

    async fn stored(&self, caller: &Caller, id: AgentId) -> Result<Agent> {
        self.stored_in(caller.tenant_id(), id).await
    }

    async fn stored_in(&self, tenant: TenantId, id: AgentId) -> Result<Agent> {
        self.repos.agents.get_agent(tenant, id).await?.ok_or_else(|| not_found(id))
    }

    /// The tenant's agent as reported, for a policy check (which checks its own
    /// permission): from the snapshots when it was loaded lately and has not changed since.
    pub(crate) async fn reported_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent> {
        let key = (tenant, id);
        if let Some(agent) = self.snapshots.get(&key) {
            return Ok(self.reported(agent));
        }
        let generation = self.snapshots.generation();
        let agent = self.stored_in(tenant, id).await?;
        self.snapshots.insert(key, agent.clone(), generation);
        Ok(self.reported(agent))
    }

    /// Reacts to an event from the bus: an agent registered, changed or deleted on any
    /// replica is dropped from the snapshots here, and so are a tenant's agents when its
    /// settings change.
    pub fn on_event(&self, event: &Event) {
        if event.event_type == TENANT_UPDATED {
            // New risk levels may have re-levelled any of its agents; snapshots are keyed
            // by agent and settings change rarely, so all are dropped.
            self.forget_snapshots();
        } else if event.event_type.starts_with("agent.")
            && let Some(id) = event.data.get("id").and_then(|v| v.as_str()).and_then(|s| s.parse().ok())
        {
            self.snapshots.invalidate(&(event.tenant_id, id));
        }
    }

    /// Forgets every snapshot (after bus announcements may have been missed).
    pub fn forget_snapshots(&self) {
        self.snapshots.invalidate_all();
    }

    /// `GET /agents/{id}`.
    pub async fn get(&self, caller: &Caller, id: AgentId) -> Result<Agent> {
        caller.require_permission(Permission::AgentsRead)?;
        Ok(self.reported(self.stored(caller, id).await?))
    }

    /// `GET /agents/{id}/details`.
    pub async fn details(&self, caller: &Caller, id: AgentId) -> Result<AgentDetails> {
        caller.require_permission(Permission::AgentsRead)?;
        let agent = self.stored(caller, id).await?;
        let derived = self.derive(&agent);
        let tenant = caller.tenant_id();
        let embedding = match self.repos.agents.get_agent_embedding(tenant, id).await? {
            Some(mut e) => {
                let dimensions = e.vector.len();
                let vector = std::mem::take(&mut e.vector);
                let near = match in_space_of(self.model(), &e.model, e.model_version, vector) {
                    Some(v) => self.index.nearest(self.repos.agents.as_ref(), tenant, &v, NEIGHBOURS, Some(id)).await?,
                    None => Vec::new(),
                };
                let ids: Vec<AgentId> = near.iter().map(|(id, _)| *id).collect();
                let agents = self.repos.agents.get_agents(tenant, &ids).await?;
                let neighbours = near
                    .into_iter()
                    .filter_map(|(nid, score)| {
                        agents.iter().find(|a| a.id == nid).map(|a| Neighbour { id: nid, name: a.name.clone(), score })
                    })
                    .collect();
                Some(EmbeddingSummary {
                    model: e.model,
                    model_version: e.model_version,
                    dimensions,
                    text: e.text,
                    refreshed_at: e.refreshed_at,
                    neighbours,
                })
            }
            None => None,
        };
        Ok(AgentDetails {
            agent: self.reported(agent),
            risk_factors: derived.risk_factors,
            predicted_type_confidence: derived.predicted_type_confidence,
            embedding,
        })
    }

    /// `PUT /agents/{id}`: a full update.
    pub async fn update(&self, caller: &Caller, id: AgentId, req: AgentRequest) -> Result<Agent> {
        caller.require_permission(Permission::AgentsWrite)?;
        validate(&req)?;
        let stored = self.stored(caller, id).await?;
        let mut agent = Agent {
            name: req.name.trim().to_owned(),
            agent_type: req.agent_type.trim().to_owned(),
            description: req.description.map(|d| d.trim().to_owned()).filter(|d| !d.is_empty()),
            capabilities: req.capabilities.into_iter().map(|c| c.trim().to_owned()).collect(),
            permissions: req.permissions,
            metadata: req.metadata,
            status: req.status.unwrap_or(stored.status),
            updated_at: self.ports.clock.now(),
            ..stored
        };
        let embedding = self.prepare(&mut agent).await?;
        self.repos.agents.update_agent(&agent, &embedding).await?;
        self.record(caller, "agent.updated", &agent).await;
        Ok(self.reported(agent))
    }

    /// `DELETE /agents/{id}`.
    pub async fn delete(&self, caller: &Caller, id: AgentId) -> Result<()> {
        caller.require_permission(Permission::AgentsWrite)?;
        let agent = self.stored(caller, id).await?;
        self.repos.agents.delete_agent(caller.tenant_id(), id).await?;
        self.record(caller, "agent.deleted", &agent).await;
        Ok(())
    }

    /// `POST /agents/{id}/heartbeat`, and the webhook's `agent.heartbeat`: the agent is
    /// seen now, and its embedding is refreshed: recomputed if the text changed or the
    /// stored vector does not hold one of the model in use (see `index::covers`), otherwise
    /// only re-stamped.
    pub async fn heartbeat(&self, caller: &Caller, id: AgentId, req: HeartbeatRequest) -> Result<Agent> {
        caller.require_permission(Permission::AgentsWrite)?;
        let mut v = Violations::new();
        if let Some(m) = &req.metadata {
            check_object(&mut v, "metadata", m, MAX_OBJECT_BYTES);
        }
        v.into_result()?;
        let tenant = caller.tenant_id();
        let stored = self.stored(caller, id).await?;
        if stored.status == AgentStatus::Suspended && req.status.is_some_and(|s| s != AgentStatus::Suspended) {
            return Err(DomainError::Conflict("the agent is suspended; only an update (PUT) can reinstate it".into()));
        }
        let current = self.repos.agents.get_agent_embedding(tenant, id).await?;
        let text = embedding_text(&stored, &flatten_permissions(&stored.permissions));
        let fresh =
            current.is_some_and(|e| e.text == text && covers(self.model(), &e.model, e.model_version, e.vector.len()));
        let embedding = if fresh { None } else { Some(self.embedding(tenant, text).await?) };
        let beat = Heartbeat { at: self.ports.clock.now(), status: req.status, metadata: req.metadata, embedding };
        let agent = self.repos.agents.heartbeat_agent(tenant, id, &beat).await?.ok_or_else(|| not_found(id))?;
        self.snapshots.invalidate(&(tenant, id));
        Ok(self.reported(agent))
    }

    /// `GET /agents/search`: the tenant's agents ranked by similarity to `q`.
    pub async fn search(&self, caller: &Caller, q: Option<&str>, limit: Option<i64>) -> Result<SearchResults> {
        caller.require_permission(Permission::AgentsRead)?;
        let mut v = Violations::new();
        let q = q.unwrap_or_default();
        check_text(&mut v, "q", q, MAX_QUERY_LEN);
        let q = q.trim();
        let limit = match limit {
            None => DEFAULT_SEARCH_LIMIT,
            Some(n) if (1..=i64::from(MAX_SEARCH_LIMIT)).contains(&n) => n as u32,
            Some(_) => {
                v.add("limit", format!("must be between 1 and {MAX_SEARCH_LIMIT}"));
                DEFAULT_SEARCH_LIMIT
            }
        };
        v.into_result()?;
        let tenant = caller.tenant_id();
        let query = self.embed(tenant, vec![q.to_owned()]).await?.pop().unwrap_or_default();
        if query.iter().all(|x| *x == 0.0) {
            // Nothing to compare (only stop words, say): every agent would score 0.
            return Ok(SearchResults { items: Vec::new(), model: self.model().clone() });
        }
        let near = self.index.nearest(self.repos.agents.as_ref(), tenant, &query, limit as usize, None).await?;
        let ids: Vec<AgentId> = near.iter().map(|(id, _)| *id).collect();
        let mut agents = self.repos.agents.get_agents(tenant, &ids).await?;
        // Best first; an agent deleted since the index was read is simply absent.
        let items = near
            .into_iter()
            .filter_map(|(id, score)| {
                let at = agents.iter().position(|a| a.id == id)?;
                Some(SearchHit { agent: self.reported(agents.swap_remove(at)), score })
            })
            .collect();
        Ok(SearchResults { items, model: self.model().clone() })
    }
}

fn parse_param<T>(
    v: &mut Violations,
    field: &str,
    raw: Option<&str>,
    parse: impl Fn(&str) -> Option<T>,
    allowed: &str,
) -> Option<T> {
    let raw = raw?;
    let parsed = parse(raw);
    if parsed.is_none() {
        v.add(field, format!("must be one of: {allowed}"));
    }
    parsed
}

fn validate(req: &AgentRequest) -> Result<()> {
    let mut v = Violations::new();
    check_name(&mut v, "name", &req.name);
    check_text(&mut v, "type", &req.agent_type, MAX_TYPE_LEN);
    if let Some(d) = &req.description {
        check_description(&mut v, "description", d, MAX_DESCRIPTION_LEN);
    }
    if req.capabilities.len() > MAX_CAPABILITIES {
        v.add("capabilities", format!("must have at most {MAX_CAPABILITIES} items"));
    } else {
        for (i, c) in req.capabilities.iter().enumerate() {
            let field = format!("capabilities[{i}]");
            check_text(&mut v, &field, c, MAX_CAPABILITY_LEN);
            if c.trim() != c {
                v.add(field.clone(), "must not begin or end with white space");
            }
            if let Some(first) = req.capabilities[..i].iter().position(|d| d == c) {
                v.add(field, format!("repeats capabilities[{first}]"));
            }
        }
    }
    check_object(&mut v, "permissions", &req.permissions, MAX_OBJECT_BYTES);
    check_object(&mut v, "metadata", &req.metadata, MAX_OBJECT_BYTES);
    v.into_result()
}

#[cfg(test)]
mod tests;
