//! The ports every service is built with, as one bundle the server fills in once.

use std::sync::Arc;

use crate::ports::siem::SiemRoute;
use crate::ports::{Cache, CallbackSender, Clock, Embedder, EventBus, IdGen, OidcClient, PolicyEngine, Telemetry};

/// Every port the services share, built once by the server. The store is not here: each
/// service is handed only the repositories it uses (its `Repos`, declared with [`repos!`]).
#[derive(Clone)]
pub struct Ports {
    pub cache: Arc<dyn Cache>,
    pub bus: Arc<dyn EventBus>,
    pub policy: Arc<dyn PolicyEngine>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGen>,
    /// Embeds agents and search queries.
    pub embedder: Arc<dyn Embedder>,
    /// Speaks OpenID Connect to the configured SSO providers.
    pub oidc: Arc<dyn OidcClient>,
    /// The configured SIEM sinks, each with its name and filter (empty: no forwarding).
    pub siem_sinks: Arc<[SiemRoute]>,
    /// Sends the signed HITL callbacks.
    pub callbacks: Arc<dyn CallbackSender>,
    /// Runs Rego compilation and evaluation, and the Prompt Guard's costly screenings (the
    /// encoder stage, very long texts), off the request threads, fairly per tenant.
    pub offload: Arc<dyn crate::ports::Offload>,
    /// Runs Argon2 (password hashes and checks) off the request threads, fairly per tenant.
    pub hashing: Arc<dyn crate::ports::Offload>,
    /// Exports each decision and screening as a guardrail span (`NoTelemetry`: off).
    pub telemetry: Arc<dyn Telemetry>,
}

/// Declares the repositories a service uses, as one `Arc<dyn …Repo>` field per repository
/// trait, and `of(store)` to narrow the whole store to them (trait upcasting: the object is
/// shared, only the view is narrower).
///
/// ```ignore
/// repos!(Repos { hitl: HitlRepo, tenants: TenantRepo });
/// ```
macro_rules! repos {
    ($name:ident { $($field:ident: $repo:ident),+ $(,)? }) => {
        /// The repositories this service uses, and no others.
        #[derive(Clone)]
        pub struct $name {
            $(pub $field: std::sync::Arc<dyn crate::ports::$repo>,)+
        }

        impl $name {
            pub fn of(store: &std::sync::Arc<dyn crate::ports::Store>) -> Self {
                Self { $($field: store.clone(),)+ }
            }
        }
    };
}
pub(crate) use repos;

impl Ports {
    /// Publishes `data` as a `event_type` event of `tenant` on the bus (the real-time feed
    /// and every replica). A failure is logged, not returned: what it announces has
    /// happened, and the replicas' caches expire on their own.
    pub(crate) async fn announce(&self, tenant: crate::ids::TenantId, event_type: &str, data: serde_json::Value) {
        let event = crate::ports::Event {
            id: self.ids.new_id(),
            event_type: event_type.to_owned(),
            tenant_id: tenant,
            ts: self.clock.now(),
            data,
        };
        if let Err(e) = self.bus.publish(&event).await {
            tracing::warn!(error = %e, event_type, "could not publish an event");
        }
    }
}
