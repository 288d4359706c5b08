//! The records the domain works on.

pub mod agent;
pub mod anomaly;
pub mod api_key;
pub mod audit;
pub mod discovery;
pub mod export;
pub mod guard;
pub mod hitl;
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
pub use anomaly::{AnomalyCount, AnomalyFilter, AnomalyReport, AnomalySource, AnomalyStatus, AnomalyType, Severity};
pub use api_key::{ApiKey, ApiKeyKind};
pub use audit::{
    Actor, ActorType, AuditEntry, AuditFilter, AuditHash, AuditRecord, AuditScan, ChainFault, ChainHead,
    ChainVerification, ChainVerifier, JsonText, SeqOrder,
};
pub use discovery::{
    CandidateFilter, CandidateStatus, ClusterJob, ClusterOutcome, ClusterSummary, DiscoveryCandidate, DiscoveryEvent,
    EventDisposition, Fingerprint, FingerprintValue,
};
pub use export::{ExportFormat, ExportJob, ExportOutcome, ExportProgress, JobStatus, Lease};
pub use guard::{
    GUARD_LATENCY_BUCKETS_US, GuardClassMetrics, GuardDirection, GuardExample, GuardFeedback, GuardFeedbackKind,
    GuardLabel, GuardMetrics, GuardModelInfo, GuardModelRecord, GuardScores, GuardStatsKey, GuardTask,
    guard_latency_bucket,
};
pub use hitl::{CallbackStatus, HitlCallback, HitlFilter, HitlRequest, HitlStatus};
pub use policy::{Policy, PolicyFilter};
pub use role::{Permission, Role};
pub use session::Session;
pub use siem::{SiemBacklog, SiemSinkState};
pub use sso::SsoProvider;
pub use tenant::{EffectiveSettings, Tenant, TenantSettings};
pub use user::{User, UserStatus};
