//! Ports: the traits adapters implement. Held as `Arc<dyn Port>`.

pub mod cache;
pub mod callback;
pub mod clock;
pub mod embed;
pub mod events;
pub mod offload;
pub mod policy;
pub mod siem;
pub mod sso;
pub mod store;
pub mod telemetry;

pub use cache::{Cache, Counter, MAX_MAXIMA_MEMBERS, Maxima, Raise};
pub use callback::{CallbackError, CallbackFailure, CallbackSender};
pub use clock::{Clock, IdGen, SystemClock, UuidV7Gen};
pub use embed::{Embedder, EmbeddingModel};
pub use events::{Event, EventBus, EventStream};
pub use offload::{BatchRun, Job, Offload, OffloadError};
pub use policy::{CompiledPolicies, PolicyEngine, PolicyInput, PolicyModule, PolicyOutcome, RegoDiagnostic};
pub use siem::SiemSink;
pub use sso::{AuthorizationStart, OidcClient, VerifiedIdentity};
pub use store::{
    AgentRepo, AnomalyRepo, ApiKeyRepo, AuditRepo, DiscoveryRepo, GuardRepo, HitlRepo, HourlyKey, JobQueue, LeaseRepo,
    ModelRegistry, PolicyRepo, ResourceCounts, SessionRepo, SiemRepo, Store, TenantRepo, UserRepo,
};
pub use telemetry::{GuardrailRun, NoTelemetry, Target, Telemetry, TraceContext, Verdict};
