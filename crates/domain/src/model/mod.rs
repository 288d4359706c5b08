//! The records the domain works on.

/// An enumeration whose JSON and column form is a snake_case string: the enum with its
/// derives, `ALL`, `as_str` and `parse`.
macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }
    };
}

pub mod agent;
pub mod agent_session;
pub mod anomaly;
pub mod api_key;
pub mod audit;
pub mod discovery;
pub mod export;
pub mod guard;
pub mod hitl;
pub mod job;
pub mod policy;
pub mod role;
pub mod session;
pub mod siem;
pub mod sso;
pub mod tenant;
pub mod user;

pub use agent::{
    Agent, AgentEmbedding, AgentFilter, AgentStatus, AgentVector, Heartbeat, JsonObject, RiskLevel, RiskLevels,
};
pub use agent_session::{ExpectedFold, SessionDecisions, SessionFold, SessionRate, SessionState, SessionView};
pub use anomaly::{
    AnomalyCount, AnomalyEval, AnomalyFilter, AnomalyModelInfo, AnomalyModelRecord, AnomalyReport, AnomalySource,
    AnomalyStatus, AnomalyTask, AnomalyType, Severity,
};
pub use api_key::{ApiKey, ApiKeyKind};
pub use audit::{
    Actor, ActorType, AuditEntry, AuditFilter, AuditHash, AuditOrigin, AuditRecord, AuditScan, ChainFault, ChainHead,
    ChainVerification, ChainVerifier, JsonText, SERVICE_EVENT_TYPES, SERVICE_NAMESPACES, SeqOrder,
    is_service_event_type,
};
pub use discovery::{
    CandidateFilter, CandidateStatus, ClusterJob, ClusterOutcome, ClusterSummary, DiscoveryCandidate, DiscoveryEvent,
    EventDisposition, Fingerprint, FingerprintValue,
};
pub use export::{ExportFormat, ExportJob, ExportState};
pub use guard::{
    GUARD_LATENCY_BUCKETS_US, GuardClassMetrics, GuardDirection, GuardExample, GuardFeedback, GuardFeedbackKind,
    GuardLabel, GuardMetrics, GuardModelInfo, GuardModelRecord, GuardScores, GuardStatsKey, GuardTask,
    guard_latency_bucket,
};
pub use hitl::{
    ApprovalGrant, CallbackStatus, EscalationStep, HitlCallback, HitlEscalation, HitlFilter, HitlRequest, HitlStatus,
    MAX_ESCALATION_STEPS, PolicyVersion, action_digest,
};
pub use job::{Job, JobEnd, JobKind, JobStatus, JobView, Lease, ModelKind, ModelVersion, StoredModel};
pub use policy::{
    Policy, PolicyFilter, PolicyMode, ReplayChange, ReplayCounts, ReplayExample, ReplayJob, ReplayReport,
};
pub use role::{Permission, Role};
pub use session::Session;
pub use siem::{SiemBacklog, SiemSinkState};
pub use sso::SsoProvider;
pub use tenant::{EffectiveSettings, SecretPurpose, Tenant, TenantSecret, TenantSettings};
pub use user::{User, UserStatus};

/// The tenant of a record read back from JSON that leaves it out (the store's column, or
/// the caller, says whose it is).
fn nil_tenant() -> crate::ids::TenantId {
    crate::ids::TenantId(uuid::Uuid::nil())
}

/// A nested member of a request body that must be a JSON object. serde's derive also fills
/// a struct from an array, by position (`"settings": [null, null]` would read as a change of
/// nothing); deserialising through `Object` takes only an object, and its members are still
/// read (and their errors placed) by the caller's deserializer.
#[derive(Debug)]
pub struct Object<T>(pub T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData)).map(Object)
    }
}

/// `#[serde(deserialize_with = "object::option")]` and its siblings: [`Object`] for a member
/// that is optional, a list, or set-or-null.
pub mod object {
    use serde::{Deserialize, Deserializer};

    use super::Object;

    pub fn value<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
        Object::<T>::deserialize(d).map(|o| o.0)
    }

    pub fn option<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
        Option::<Object<T>>::deserialize(d).map(|o| o.map(|o| o.0))
    }

    pub fn vec<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        Vec::<Object<T>>::deserialize(d).map(|v| v.into_iter().map(|o| o.0).collect())
    }

    /// A member given as `null` (`Some(None)`) told from one left out (`None`, with
    /// `#[serde(default)]`).
    pub fn given<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
        option(d).map(Some)
    }
}
