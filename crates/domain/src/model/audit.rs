//! The audit log's records and the hash chain that makes tampering evident.
//!
//! Each tenant's log is a chain: record `n` stores `prev_hash` (the hash of record `n - 1`,
//! or 32 zero bytes for the first) and `hash = SHA-256(prev_hash ‖ canonical bytes)`, where
//! the canonical bytes are a fixed-order JSON encoding of every other field (see
//! `canonical_bytes`). `details` is stored as the exact JSON text that was hashed, so a
//! record read back from any store re-hashes to the same value.
//!
//! Adapters append with [`ChainHead::seal`] inside their transaction: it assigns the next
//! sequence number, keeps timestamps non-decreasing along the chain, and computes the hash.
//! [`ChainVerifier`] walks a chain back and names the first sequence number that breaks it.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::ids::{AuditId, TenantId};
use crate::ports::clock::truncate_to_micros;

/// Who caused an audited event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ActorType {
    /// An AI agent (webhook events, policy checks on its behalf).
    Agent,
    /// A person signed in with a session JWT.
    User,
    /// A program holding an API key (SDKs, agents writing their own entries).
    ApiKey,
    /// The platform itself, or its operator through the admin key or the command line.
    System,
}

impl ActorType {
    pub const ALL: [ActorType; 4] = [ActorType::Agent, ActorType::User, ActorType::ApiKey, ActorType::System];

    pub fn as_str(self) -> &'static str {
        match self {
            ActorType::Agent => "agent",
            ActorType::User => "user",
            ActorType::ApiKey => "api_key",
            ActorType::System => "system",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

impl fmt::Display for ActorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The namespaces (an event type's first dotted word) the service records its own events
/// under. `POST /audit/log` refuses every event type in them (422 naming `event_type`), so
/// a record of such a type was written by the service: [`AuditOrigin::of`]. Namespaces the
/// service does not use yet (`agentgov`, `export`, `service`, `siem`, `sso`, `system`,
/// `webhook`) are reserved too, so that a later service event never takes a name a client
/// may already have written under. Only ever add to this list.
pub const SERVICE_NAMESPACES: [&str; 18] = [
    "agent",
    "agentgov",
    "anomaly",
    "api_key",
    "audit",
    "auth",
    "discovery",
    "export",
    "guard",
    "hitl",
    "policy",
    "service",
    "siem",
    "sso",
    "system",
    "tenant",
    "user",
    "webhook",
];

/// Every event type the service records itself, each in a [`SERVICE_NAMESPACES`]
/// namespace (a test checks it; `AuditEvent::new` asserts the namespace in debug builds).
/// docs/API.md ("Audit log") lists the same.
pub const SERVICE_EVENT_TYPES: [&str; 47] = [
    // The webhook's `agent.action`, written for the agent once its signature is checked.
    "agent.action",
    "agent.registered",
    "agent.updated",
    "agent.deleted",
    "agent.observed",
    "anomaly.reported",
    "anomaly.status_changed",
    "anomaly.training.requested",
    "anomaly.model.trained",
    "anomaly.model.activated",
    "api_key.created",
    "api_key.revoked",
    "auth.login",
    "auth.login_failed",
    "auth.logout",
    "discovery.cluster.requested",
    "discovery.clustered",
    "discovery.candidate.confirmed",
    "discovery.candidate.dismissed",
    "guard.blocked",
    "guard.feedback",
    "guard.training.requested",
    "guard.training.cancelled",
    "guard.model.trained",
    "guard.model.activated",
    "hitl.requested",
    "hitl.approved",
    "hitl.rejected",
    "hitl.expired",
    "hitl.cancelled",
    "hitl.escalated",
    "hitl.callback_failed",
    "policy.created",
    "policy.updated",
    "policy.deleted",
    "policy.decision",
    "tenant.created",
    "tenant.updated",
    "tenant.secret_rotated",
    "tenant.secret_removed",
    "user.created",
    "user.updated",
    "user.role_changed",
    "user.blocked",
    "user.unblocked",
    "user.deleted",
    "user.password_changed",
];

/// Whether `event_type` lies in a namespace of the service's own events.
pub fn is_service_event_type(event_type: &str) -> bool {
    let namespace = event_type.split('.').next().unwrap_or(event_type);
    SERVICE_NAMESPACES.contains(&namespace)
}

/// The start of an event type in a [`SERVICE_NAMESPACES`] namespace, as a regular expression.
pub fn service_namespace_regex() -> String {
    format!(r"^({})(\.|$)", SERVICE_NAMESPACES.join("|"))
}

/// The OpenAPI `pattern` that keeps `POST /audit/log`'s `event_type` out of the service's
/// namespaces: [`service_namespace_regex`] as a negative lookahead (JSON Schema patterns are
/// ECMA-262 regular expressions, which have it).
pub fn client_event_type_pattern() -> String {
    format!("^(?!{})", service_namespace_regex().trim_start_matches('^'))
}

/// Who wrote a record: the service itself, or a client through `POST /audit/log`.
///
/// Derived from the record's `event_type` (which the hash covers), not stored: clients may
/// not write event types of the service's namespaces, so a record of such a type is the
/// service's. Records written before that rule (agentgov before issue 32) under a type of
/// those namespaces also read `service`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AuditOrigin {
    /// Recorded by the service (its own events, and the webhook's `agent.action`).
    Service,
    /// Written through `POST /audit/log` by an API key or a user.
    Client,
}

impl AuditOrigin {
    /// The origin of a record of `event_type`.
    pub fn of(event_type: &str) -> Self {
        if is_service_event_type(event_type) { AuditOrigin::Service } else { AuditOrigin::Client }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AuditOrigin::Service => "service",
            AuditOrigin::Client => "client",
        }
    }
}

impl fmt::Display for AuditOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `{"type": "user", "id": "0193…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Actor {
    #[serde(rename = "type")]
    pub kind: ActorType,
    /// The agent, user or API key id; for `system`, what acted (`admin_key`, `cli`, …).
    pub id: String,
}

impl Actor {
    pub fn new(kind: ActorType, id: impl ToString) -> Self {
        Self { kind, id: id.to_string() }
    }

    pub fn system(what: &str) -> Self {
        Self::new(ActorType::System, what)
    }
}

/// A JSON object kept as the exact text that was hashed.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonText(Box<RawValue>);

impl JsonText {
    /// Serialises `value` once; the text is what is stored, hashed and served.
    pub fn from_value(value: &serde_json::Value) -> Self {
        // A `Value` always serialises, and its text is valid JSON, so it is not parsed
        // again to check it (as `RawValue::from_string` would). The text is the same as
        // `value.to_string()`: compact, object keys in `Value`'s (sorted) order.
        match serde_json::value::to_raw_value(value) {
            Ok(raw) => Self(raw),
            Err(_) => Self::empty_object(),
        }
    }

    /// Serialises `value` (which must serialise to a JSON object) once; an object's keys
    /// are in the order the value gives them.
    pub fn from_serialize(value: &impl Serialize) -> Self {
        match serde_json::value::to_raw_value(value) {
            Ok(raw) if raw.get().starts_with('{') => Self(raw),
            _ => Self::empty_object(),
        }
    }

    /// Text read back from a store. Rejects what is not JSON.
    pub fn from_stored(text: String) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text).map(Self)
    }

    pub fn empty_object() -> Self {
        Self::from_stored("{}".to_owned()).unwrap_or_else(|_| unreachable!("{{}} is JSON"))
    }

    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(self.as_str()).unwrap_or(serde_json::Value::Null)
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A SHA-256 digest, shown as 64 lower-case hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AuditHash(pub [u8; 32]);

impl AuditHash {
    /// The `prev_hash` of a tenant's first record.
    pub const GENESIS: AuditHash = AuditHash([0; 32]);

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        <[u8; 32]>::try_from(bytes).ok().map(Self)
    }
}

impl fmt::Debug for AuditHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl Serialize for AuditHash {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for AuditHash {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = hex::decode(&text).map_err(serde::de::Error::custom)?;
        Self::from_slice(&bytes).ok_or_else(|| serde::de::Error::custom("a hash has 32 bytes"))
    }
}

/// An event to append: everything but the chain fields, which the store assigns.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    pub id: AuditId,
    pub tenant_id: TenantId,
    /// When the event was recorded; the chain may move it forward (never back) so that
    /// timestamps never decrease along a tenant's chain.
    pub timestamp: OffsetDateTime,
    pub actor: Actor,
    pub event_type: String,
    pub agent_id: Option<Uuid>,
    pub action: Option<String>,
    pub resource: Option<String>,
    pub decision: Option<String>,
    pub risk_score: Option<f64>,
    pub details: JsonText,
    /// The agent's session (conversation or run) the event belongs to.
    pub session_id: Option<String>,
}

impl From<AuditRecord> for AuditEntry {
    /// The entry a record was sealed from, to seal again onto a head that has moved on. Its
    /// timestamp is the sealed one: no earlier than the entry's and than the old head's,
    /// which a later head of the same chain is no earlier than either, so sealing it again
    /// gives the timestamp sealing the original entry would.
    fn from(r: AuditRecord) -> Self {
        AuditEntry {
            id: r.id,
            tenant_id: r.tenant_id,
            timestamp: r.timestamp,
            actor: r.actor,
            event_type: r.event_type,
            agent_id: r.agent_id,
            action: r.action,
            resource: r.resource,
            decision: r.decision,
            risk_score: r.risk_score,
            details: r.details,
            session_id: r.session_id,
        }
    }
}

/// One record of the audit log.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditRecord {
    pub id: AuditId,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub tenant_id: TenantId,
    /// Position in the tenant's chain: 1, 2, 3… without gaps.
    pub seq: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub timestamp: OffsetDateTime,
    pub actor: Actor,
    /// E.g. `agent.action`, `hitl.approved`, `user.role_changed` (the service's own) or
    /// `app.tool_call` (a client's).
    pub event_type: String,
    /// `service` for an event the service recorded, `client` for an entry written through
    /// `POST /audit/log`: derived from `event_type`, neither stored nor hashed.
    pub origin: AuditOrigin,
    pub agent_id: Option<Uuid>,
    pub action: Option<String>,
    pub resource: Option<String>,
    pub decision: Option<String>,
    pub risk_score: Option<f64>,
    /// Free-form JSON object: input, output, reasoning, context…
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub details: JsonText,
    /// The agent's session (a conversation or run id) the record belongs to: a policy
    /// check's `session_id`, an observation's session; `null` otherwise. Hashed when present.
    pub session_id: Option<String>,
    /// Hash of the previous record of the tenant (64 zeros for the first).
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "0000000000000000000000000000000000000000000000000000000000000000"))]
    pub prev_hash: AuditHash,
    /// SHA-256 of `prev_hash` and the record's canonical bytes, hex.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub hash: AuditHash,
}

impl AuditRecord {
    /// How much a security analyst should care, on CEF's 0 (lowest) to 10 scale: the event's
    /// kind sets a floor, a denial or block raises it to 7 (a required approval to 5), and
    /// the risk score (0..1, times 10) raises it further. SIEM sinks send it and filter on
    /// it; the mapping is in docs/siem.md.
    pub fn severity(&self) -> u8 {
        let base: u8 = match self.event_type.as_str() {
            "guard.blocked" | "anomaly.detected" => 8,
            "auth.login_failed" | "hitl.rejected" | "hitl.expired" => 5,
            k if k.starts_with("tenant.") || k.starts_with("user.") || k.starts_with("api_key.") => 4,
            k if k.starts_with("policy.") && k != "policy.decision" => 4,
            k if k.starts_with("discovery.candidate") => 4,
            _ => 2,
        };
        let decided = match self.decision.as_deref() {
            Some("deny" | "denied" | "blocked") => 7,
            Some("require_approval" | "approval_required") => 5,
            _ => 0,
        };
        let risk = self.risk_score.map_or(0, |s| (s.clamp(0.0, 1.0) * 10.0).round() as u8);
        base.max(decided).max(risk).min(10)
    }

    /// The hash this record should carry, recomputed from its fields.
    pub fn computed_hash(&self) -> AuditHash {
        link(&self.prev_hash, &canonical_bytes(self.tenant_id, self.seq, &self.entry_view()))
    }

    fn entry_view(&self) -> EntryView<'_> {
        EntryView {
            id: self.id,
            timestamp: self.timestamp,
            actor: &self.actor,
            event_type: &self.event_type,
            agent_id: self.agent_id,
            action: self.action.as_deref(),
            resource: self.resource.as_deref(),
            decision: self.decision.as_deref(),
            risk_score: self.risk_score,
            details: &self.details,
            session_id: self.session_id.as_deref(),
        }
    }
}

/// The fields hashed, borrowed from an entry or a record.
struct EntryView<'a> {
    id: AuditId,
    timestamp: OffsetDateTime,
    actor: &'a Actor,
    event_type: &'a str,
    agent_id: Option<Uuid>,
    action: Option<&'a str>,
    resource: Option<&'a str>,
    decision: Option<&'a str>,
    risk_score: Option<f64>,
    details: &'a JsonText,
    session_id: Option<&'a str>,
}

/// Version 1 of the canonical encoding: field order is fixed by this struct, the timestamp
/// is whole microseconds since the Unix epoch, and `details` is the stored text verbatim.
#[derive(Serialize)]
struct CanonicalV1<'a> {
    v: u8,
    tenant_id: Uuid,
    seq: i64,
    id: Uuid,
    ts: i64,
    actor_type: &'static str,
    actor_id: &'a str,
    event_type: &'a str,
    agent_id: Option<Uuid>,
    action: Option<&'a str>,
    resource: Option<&'a str>,
    decision: Option<&'a str>,
    risk_score: Option<f64>,
    details: &'a RawValue,
    /// Left out when absent, so that records written before sessions hash as they did.
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

/// Microseconds since the Unix epoch: the precision every store keeps.
pub fn unix_micros(t: OffsetDateTime) -> i64 {
    i64::try_from(t.unix_timestamp_nanos() / 1_000).unwrap_or(i64::MAX)
}

/// The instant `micros` microseconds after the Unix epoch.
pub fn from_unix_micros(micros: i64) -> Option<OffsetDateTime> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000).ok()
}

fn canonical_bytes(tenant: TenantId, seq: i64, e: &EntryView<'_>) -> Vec<u8> {
    let canonical = CanonicalV1 {
        v: 1,
        tenant_id: tenant.0,
        seq,
        id: e.id.0,
        ts: unix_micros(e.timestamp),
        actor_type: e.actor.kind.as_str(),
        actor_id: &e.actor.id,
        event_type: e.event_type,
        agent_id: e.agent_id,
        action: e.action,
        resource: e.resource,
        decision: e.decision,
        risk_score: e.risk_score,
        details: &e.details.0,
        session_id: e.session_id,
    };
    // Serialising strings, numbers and raw JSON into a Vec cannot fail; a non-finite
    // `risk_score` would be written as `null`, and validation keeps it in [0, 1].
    serde_json::to_vec(&canonical).unwrap_or_default()
}

fn link(prev: &AuditHash, canonical: &[u8]) -> AuditHash {
    let mut h = Sha256::new();
    h.update(prev.0);
    h.update(canonical);
    AuditHash(h.finalize().into())
}

/// Which records of a tenant a list, export or count covers. Every field narrows; `from` is
/// inclusive and `to` exclusive; `min_seq`/`max_seq` are inclusive.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AuditFilter {
    pub agent_id: Option<Uuid>,
    pub event_type: Option<String>,
    pub action: Option<String>,
    pub decision: Option<String>,
    pub actor_type: Option<ActorType>,
    pub actor_id: Option<String>,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub from: Option<OffsetDateTime>,
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub to: Option<OffsetDateTime>,
    pub min_seq: Option<i64>,
    pub max_seq: Option<i64>,
    #[serde(default)]
    pub session_id: Option<String>,
}

impl AuditFilter {
    /// Whether `r` passes the filter (the in-memory store and tests use it; SQL adapters
    /// express the same conditions in their queries).
    pub fn matches(&self, r: &AuditRecord) -> bool {
        self.agent_id.is_none_or(|a| r.agent_id == Some(a))
            && self.event_type.as_ref().is_none_or(|e| &r.event_type == e)
            && self.action.as_ref().is_none_or(|a| r.action.as_ref() == Some(a))
            && self.decision.as_ref().is_none_or(|d| r.decision.as_ref() == Some(d))
            && self.actor_type.is_none_or(|t| r.actor.kind == t)
            && self.actor_id.as_ref().is_none_or(|i| &r.actor.id == i)
            && self.from.is_none_or(|f| r.timestamp >= f)
            && self.to.is_none_or(|t| r.timestamp < t)
            && self.min_seq.is_none_or(|m| r.seq >= m)
            && self.max_seq.is_none_or(|m| r.seq <= m)
            && self.session_id.as_ref().is_none_or(|s| r.session_id.as_ref() == Some(s))
    }
}

/// Direction of a scan along the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqOrder {
    /// Oldest first: exports and verification.
    Asc,
    /// Newest first: lists.
    Desc,
}

/// One batch of a keyset scan: up to `limit` records strictly after `after_seq` in `order`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditScan {
    pub order: SeqOrder,
    pub after_seq: Option<i64>,
    pub limit: u32,
}

/// The end of a tenant's chain: its last sequence number, hash and timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainHead {
    pub seq: i64,
    pub hash: AuditHash,
    pub timestamp: OffsetDateTime,
}

impl ChainHead {
    /// The head of an empty chain.
    pub const GENESIS: ChainHead =
        ChainHead { seq: 0, hash: AuditHash::GENESIS, timestamp: OffsetDateTime::UNIX_EPOCH };

    /// Appends `entry` to the chain: assigns the next sequence number, moves the timestamp
    /// forward to the head's if the entry's is earlier (clocks of replicas differ), computes
    /// the hash, and advances the head.
    pub fn seal(&mut self, entry: AuditEntry) -> AuditRecord {
        let timestamp = truncate_to_micros(entry.timestamp).max(self.timestamp);
        let mut record = AuditRecord {
            id: entry.id,
            tenant_id: entry.tenant_id,
            seq: self.seq + 1,
            timestamp,
            actor: entry.actor,
            origin: AuditOrigin::of(&entry.event_type),
            event_type: entry.event_type,
            agent_id: entry.agent_id,
            action: entry.action,
            resource: entry.resource,
            decision: entry.decision,
            risk_score: entry.risk_score,
            details: entry.details,
            session_id: entry.session_id,
            prev_hash: self.hash,
            hash: AuditHash::GENESIS,
        };
        record.hash = record.computed_hash();
        *self = ChainHead { seq: record.seq, hash: record.hash, timestamp };
        record
    }
}

/// Why a chain failed verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChainFault {
    /// A record's fields no longer hash to its stored `hash` (it was altered).
    HashMismatch,
    /// A record's `prev_hash` is not the previous record's `hash` (one was replaced).
    PrevHashMismatch,
    /// A sequence number is absent (a record was removed).
    Missing,
}

/// Outcome of `GET /audit/verify`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChainVerification {
    pub valid: bool,
    /// Records checked.
    pub checked: u64,
    /// The first sequence number at which the chain breaks; `null` when valid.
    pub first_invalid_seq: Option<i64>,
    /// What is wrong at `first_invalid_seq`.
    pub fault: Option<ChainFault>,
    /// The chain's head as stored: its last sequence number (0 when the log is empty) and
    /// hash. Record them elsewhere to detect a rewrite of the whole chain later.
    pub head_seq: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub head_hash: AuditHash,
}

/// Checks records of one tenant in ascending `seq` order, from `first_seq` on.
#[derive(Debug, Clone)]
pub struct ChainVerifier {
    expected_seq: i64,
    prev_hash: AuditHash,
    checked: u64,
    fault: Option<(i64, ChainFault)>,
}

impl ChainVerifier {
    /// Starts at `first_seq`, whose `prev_hash` must be `anchor` (the stored hash of record
    /// `first_seq - 1`, or the genesis hash when starting at 1).
    pub fn new(first_seq: i64, anchor: AuditHash) -> Self {
        Self { expected_seq: first_seq, prev_hash: anchor, checked: 0, fault: None }
    }

    /// A verifier that has already failed (the anchor record is missing).
    pub fn failed_at(seq: i64, fault: ChainFault) -> Self {
        Self { expected_seq: seq, prev_hash: AuditHash::GENESIS, checked: 0, fault: Some((seq, fault)) }
    }

    /// Checks the next record; `false` once the chain is broken (stop feeding it).
    pub fn check(&mut self, record: &AuditRecord) -> bool {
        if self.fault.is_some() {
            return false;
        }
        self.checked += 1;
        let fault = if record.seq != self.expected_seq {
            Some((self.expected_seq.min(record.seq), ChainFault::Missing))
        } else if record.prev_hash != self.prev_hash {
            Some((record.seq, ChainFault::PrevHashMismatch))
        } else if record.computed_hash() != record.hash {
            Some((record.seq, ChainFault::HashMismatch))
        } else {
            None
        };
        self.fault = fault;
        self.expected_seq = record.seq + 1;
        self.prev_hash = record.hash;
        fault.is_none()
    }

    pub fn is_broken(&self) -> bool {
        self.fault.is_some()
    }

    /// The result. `last_seq` is the last sequence number that should have been seen (the
    /// head's, or the end of the requested range): records missing at the end are a fault.
    /// `head` is the stored head, reported as is.
    pub fn finish(self, last_seq: i64, head: ChainHead) -> ChainVerification {
        let mut fault = self.fault;
        if fault.is_none() && self.expected_seq <= last_seq {
            fault = Some((self.expected_seq, ChainFault::Missing));
        }
        if fault.is_none() && last_seq == head.seq && head.seq > 0 && self.prev_hash != head.hash {
            fault = Some((head.seq, ChainFault::PrevHashMismatch));
        }
        ChainVerification {
            valid: fault.is_none(),
            checked: self.checked,
            first_invalid_seq: fault.map(|f| f.0),
            fault: fault.map(|f| f.1),
            head_seq: head.seq,
            head_hash: head.hash,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_namespace_regex_is_is_service_event_type() {
        let re = regex::Regex::new(&service_namespace_regex()).unwrap();
        for t in ["agent", "agent.registered", "policy.decision", "agents.x", "app.agent", "user_x", "siem.x.y", "a"] {
            assert_eq!(re.is_match(t), is_service_event_type(t), "{t}");
        }
        assert_eq!(client_event_type_pattern(), format!("^(?!{})", &service_namespace_regex()[1..]));
    }

    fn entry(n: u128, ts: i64) -> AuditEntry {
        AuditEntry {
            id: AuditId(Uuid::from_u128(n)),
            tenant_id: TenantId(Uuid::from_u128(7)),
            timestamp: from_unix_micros(ts).unwrap(),
            actor: Actor::new(ActorType::User, "u1"),
            event_type: "user.created".into(),
            agent_id: None,
            action: Some("create".into()),
            resource: Some("users/1".into()),
            decision: None,
            risk_score: Some(0.25),
            details: JsonText::from_value(&serde_json::json!({"b": 1, "a": [true, null, "x\"y"]})),
            session_id: None,
        }
    }

    #[test]
    fn details_text_is_the_compact_serialisation_with_sorted_keys() {
        let value = serde_json::json!({"z": {"y": 1.5, "b": "caf\u{e9} \"q\""}, "a": [true, null, {"k": -2}]});
        let text = JsonText::from_value(&value);
        assert_eq!(text.as_str(), value.to_string());
        assert_eq!(text.as_str(), r#"{"a":[true,null,{"k":-2}],"z":{"b":"café \"q\"","y":1.5}}"#);
        assert_eq!(text.to_value(), value);
    }

    #[test]
    fn details_serialised_from_a_struct_keep_its_order_and_must_be_objects() {
        #[derive(Serialize)]
        struct Details<'a> {
            reason: &'a str,
            count: u32,
        }
        let text = JsonText::from_serialize(&Details { reason: "caf\u{e9} \"q\"", count: 2 });
        assert_eq!(text.as_str(), r#"{"reason":"café \"q\"","count":2}"#);
        assert_eq!(JsonText::from_serialize(&[1, 2]).as_str(), "{}", "not an object");
        assert_eq!(JsonText::from_serialize(&f64::NAN).as_str(), "{}", "does not serialise");
    }

    #[test]
    fn a_record_sealed_again_onto_a_later_head_is_as_if_its_entry_had_been() {
        let stale = chain(2).pop().map(|r| ChainHead { seq: r.seq, hash: r.hash, timestamp: r.timestamp }).unwrap();
        let mut moved = stale;
        // Another writer appended after the stale head, later than the entry's own time.
        moved.seal(entry(50, 1_700_000_000_000_900));
        // Recorded before the stale head (so sealing onto it moved the time forward), and after.
        for ts in [1_700_000_000_000_001, 1_700_000_000_000_500] {
            let original = entry(60, ts);
            let (mut onto_stale, mut onto_moved, mut again) = (stale, moved, moved);
            let resealed = again.seal(AuditEntry::from(onto_stale.seal(original.clone())));
            assert_eq!(resealed, onto_moved.seal(original), "recorded at {ts}");
        }
    }

    fn chain(n: u128) -> Vec<AuditRecord> {
        let mut head = ChainHead::GENESIS;
        (1..=n).map(|i| head.seal(entry(i, 1_700_000_000_000_000 + i as i64))).collect()
    }

    fn verify(records: &[AuditRecord], last: i64) -> ChainVerification {
        let mut v = ChainVerifier::new(1, AuditHash::GENESIS);
        for r in records {
            if !v.check(r) {
                break;
            }
        }
        let head = records.last().map_or(ChainHead::GENESIS, |r| ChainHead {
            seq: last,
            hash: r.hash,
            timestamp: r.timestamp,
        });
        v.finish(last, head)
    }

    #[test]
    fn sealing_numbers_and_links_records() {
        let records = chain(3);
        assert_eq!(records.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(records[0].prev_hash, AuditHash::GENESIS);
        assert_eq!(records[1].prev_hash, records[0].hash);
        assert!(verify(&records, 3).valid);
    }

    #[test]
    fn the_hash_is_stable_across_versions() {
        // Pinned: a change to the canonical encoding would orphan every stored chain.
        let records = chain(1);
        assert_eq!(records[0].hash.to_hex(), "c520fa623cb46daa4ed06fb28fed52a93ca1bef7189bbaa29c21c9b99c1b6dbd");
    }

    #[test]
    fn a_session_id_is_hashed_when_present_and_absent_otherwise() {
        // A record without a session hashes as before (the pinned hash above); with one,
        // the session is covered: changing it breaks the hash.
        let mut head = ChainHead::GENESIS;
        let mut with = entry(1, 1_000);
        with.session_id = Some("run-1".into());
        let mut sealed = head.seal(with);
        assert_eq!(sealed.computed_hash(), sealed.hash);
        let mut other = ChainHead::GENESIS;
        let plain = other.seal(entry(1, 1_000));
        assert_ne!(plain.hash, sealed.hash);
        sealed.session_id = Some("run-2".into());
        assert_ne!(sealed.computed_hash(), sealed.hash);
    }

    #[test]
    fn timestamps_never_go_back_along_the_chain() {
        let mut head = ChainHead::GENESIS;
        let first = head.seal(entry(1, 2_000_000));
        let second = head.seal(entry(2, 1_000_000));
        assert_eq!(second.timestamp, first.timestamp);
    }

    #[test]
    fn an_altered_record_is_named() {
        let mut records = chain(5);
        records[2].details = JsonText::from_value(&serde_json::json!({"b": 2}));
        let v = verify(&records, 5);
        assert!(!v.valid);
        assert_eq!((v.first_invalid_seq, v.fault), (Some(3), Some(ChainFault::HashMismatch)));
    }

    #[test]
    fn a_removed_record_is_named() {
        let mut records = chain(5);
        records.remove(1);
        let v = verify(&records, 5);
        assert_eq!((v.first_invalid_seq, v.fault), (Some(2), Some(ChainFault::Missing)));
    }

    #[test]
    fn a_removed_last_record_is_named_against_the_head() {
        let mut records = chain(5);
        let head = ChainHead { seq: 5, hash: records[4].hash, timestamp: records[4].timestamp };
        records.pop();
        let mut v = ChainVerifier::new(1, AuditHash::GENESIS);
        records.iter().for_each(|r| assert!(v.check(r)));
        let v = v.finish(5, head);
        assert_eq!((v.first_invalid_seq, v.fault), (Some(5), Some(ChainFault::Missing)));
    }

    #[test]
    fn a_rehashed_record_breaks_the_next_link() {
        let mut records = chain(4);
        records[1].action = Some("other".into());
        records[1].hash = records[1].computed_hash();
        let v = verify(&records, 4);
        assert_eq!((v.first_invalid_seq, v.fault), (Some(3), Some(ChainFault::PrevHashMismatch)));
    }

    #[test]
    fn records_serialise_hashes_as_hex_and_details_verbatim() {
        let records = chain(1);
        let json = serde_json::to_value(&records[0]).unwrap();
        assert_eq!(json["prev_hash"], "0".repeat(64));
        assert_eq!(json["details"]["a"][2], "x\"y");
        assert_eq!(json["actor"], serde_json::json!({"type": "user", "id": "u1"}));
        assert!(json.get("tenant_id").is_none());
    }
}
