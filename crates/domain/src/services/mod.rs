//! Use-case services. Each takes the authenticated `Caller` (where one is needed), checks
//! what the caller may do, validates input, and talks to the ports.

pub mod agents;
pub mod anomalies;
mod api_keys;
pub mod audit;
mod auth;
mod auth_cache;
mod caller;
pub mod discovery;
pub mod guard;
pub mod hitl;
pub mod passwords;
pub mod policies;
pub mod shares;
pub mod siem;
mod snapshots;
pub mod sso;
mod status;
mod tenants;
mod users;
pub mod validate;
pub mod webhook;

use std::sync::Arc;
use std::time::Duration;

pub use agents::{AgentService, AgentSettings, BuiltinEmbedder};
pub use anomalies::{AnomalyParams, AnomalyService, AnomalyStats, AnomalyUpdate, NewAnomalyReport};
pub use api_keys::{ApiKeyService, CreatedApiKey, NewApiKey};
pub use audit::{AuditEvent, AuditLog, AuditService, AuditSettings, AuditWriter};
pub use auth::{AuthService, CREDENTIALS_CHANGED, LoginResult, LoginUser};
pub use caller::{Caller, Credential};
pub use discovery::{DiscoveryService, DiscoverySettings};
pub use guard::{GuardService, GuardSettings};
pub use hitl::{HitlDecision, HitlRound, HitlService, HitlSettings, HitlWatch, HitlWorker, NewHitlRequest};
pub use policies::{PolicyService, PolicySettings};
pub use shares::{Place, Share, TenantShares};
pub use siem::{SiemFilter, SiemRoute, SiemService, SiemSettings};
pub use sso::{SsoService, SsoSettings};
pub use status::{ComponentHealth, DecisionHour, DecisionStats, PlatformStatus, Readiness, Stats, StatusService};
pub use tenants::{
    CreatedTenant, IssuedSecret, NewTenant, NewWebhookSecret, SECRET_ROTATION_GRACE, SecretInfo, SettingsChange,
    TENANT_SECRET_REMOVED, TENANT_SECRET_ROTATED, TENANT_UPDATED, TenantSecrets, TenantService, TenantView,
    UpdateTenant,
};
pub use users::{NewUser, UpdateUser, UserService};
pub use validate::normalize_email;
pub use webhook::{Delivery, WebhookAck, WebhookService};

use crate::ports::{Cache, CallbackSender, Clock, Embedder, EventBus, IdGen, OidcClient, PolicyEngine, Store};
use crate::secrets::{AdminKey, PasswordHasher, TokenCodec, WebhookVerifier};

/// Every port the services use, built once by the server.
#[derive(Clone)]
pub struct Ports {
    pub store: Arc<dyn Store>,
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
}

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

/// Tunables of authentication. Login attempts are limited on three keys (docs/API.md,
/// "Credentials"): an email from one client address (the only key that holds an attempt back
/// for long, and only that address), a client address across emails, and an email from every
/// address (a short ceiling that slows, never locks).
#[derive(Debug, Clone)]
pub struct AuthSettings {
    /// Lifetime of a session JWT and its API key.
    pub token_ttl: Duration,
    /// Failed logins of one email from one client address before that pair is held back.
    /// The first hold ends a minute after the pair's first failure; each later one lasts
    /// twice the one before, up to `login_window`.
    pub login_max_failures_per_email_ip: u64,
    /// Failed logins from one client address (any email) within `login_window` before 429.
    pub login_max_failures_per_ip: u64,
    /// Failed logins of one email from every address within a minute before 429; addresses
    /// the email signed in from lately are exempt.
    pub login_max_failures_per_email_per_minute: u64,
    /// The per-address window and the longest hold of an email+address pair.
    pub login_window: Duration,
    /// Attempts at `change_password` per user within `login_window` before 429.
    pub password_change_max_attempts: u64,
    /// `last_used_at` of an API key is written at most this often.
    pub key_touch_interval: Duration,
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            token_ttl: Duration::from_secs(3600),
            login_max_failures_per_email_ip: 5,
            login_max_failures_per_ip: 50,
            login_max_failures_per_email_per_minute: 10,
            login_window: Duration::from_secs(900),
            password_change_max_attempts: 5,
            key_touch_interval: Duration::from_secs(60),
        }
    }
}

/// Facts about the running server, for `/status`.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub version: &'static str,
    /// "embedded" or "distributed".
    pub mode: &'static str,
    pub started_at: time::OffsetDateTime,
}

/// The secrets the services need.
#[derive(Clone)]
pub struct Secrets {
    pub hasher: PasswordHasher,
    pub tokens: TokenCodec,
    pub admin_key: AdminKey,
    /// Checks the inbound webhook's `X-Webhook-Signature`.
    pub webhook: WebhookVerifier,
}

/// Tunables of every service.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub auth: AuthSettings,
    pub audit: AuditSettings,
    pub agents: AgentSettings,
    pub policies: PolicySettings,
    pub guard: guard::GuardSettings,
    pub discovery: discovery::DiscoverySettings,
    pub sso: sso::SsoSettings,
    pub siem: siem::SiemSettings,
    pub hitl: hitl::HitlSettings,
}

/// All services, cheap to clone (everything inside is shared).
#[derive(Clone)]
pub struct Services {
    pub auth: AuthService,
    pub tenants: TenantService,
    pub users: UserService,
    pub api_keys: ApiKeyService,
    pub status: StatusService,
    pub audit: AuditService,
    pub agents: AgentService,
    pub webhook: WebhookService,
    pub policies: PolicyService,
    pub guard: GuardService,
    pub discovery: DiscoveryService,
    pub sso: SsoService,
    pub siem: SiemService,
    pub hitl: HitlService,
    pub anomalies: AnomalyService,
    /// Each tenant's places among the sockets and long-polls open over every replica.
    pub shares: TenantShares,
}

/// Work the server runs beside the request handlers, once per process.
pub struct Background {
    /// Commits the audit log's batches; run it for as long as the services live.
    pub audit_writer: AuditWriter,
    /// Signals that an export was queued by this process (the worker should look now).
    pub export_wakeups: futures::channel::mpsc::Receiver<()>,
    /// Signals that a guard training task was queued by this process.
    pub training_wakeups: futures::channel::mpsc::Receiver<()>,
    /// Signals that a discovery clustering job was queued by this process.
    pub clustering_wakeups: futures::channel::mpsc::Receiver<()>,
    /// Signals that a HITL callback was scheduled by this process.
    pub hitl_wakeups: futures::channel::mpsc::Receiver<()>,
    /// Signals that an anomaly detector training was queued by this process.
    pub detector_wakeups: futures::channel::mpsc::Receiver<()>,
}

impl Services {
    /// Delivers an event from the bus (any replica's, this one's included) to the services
    /// that keep in-process copies of what it changed.
    pub fn on_bus_event(&self, event: &crate::ports::Event) {
        self.policies.on_event(event);
        self.agents.on_event(event);
        self.guard.on_event(event);
        self.discovery.on_event(event);
        self.hitl.on_event(event);
        self.anomalies.on_event(event);
    }

    /// After a (re)subscription to the bus: announcements made in the meantime may have
    /// been missed, so every in-process copy is dropped.
    pub fn on_bus_subscribed(&self) {
        self.policies.forget_compiled();
        self.agents.forget_snapshots();
        self.guard.forget_detectors();
        self.discovery.forget_decided();
        self.anomalies.forget_detectors();
    }

    pub fn new(ports: Ports, secrets: Secrets, settings: Settings, info: ServerInfo) -> (Self, Background) {
        let (log, audit_writer) =
            AuditLog::new(ports.store.clone(), ports.clock.clone(), ports.ids.clone(), settings.audit.log);
        let (wake, export_wakeups) = futures::channel::mpsc::channel(1);
        let passwords = passwords::Passwords::new(secrets.hasher, ports.hashing.clone());
        let auth = AuthService::new(ports.clone(), log.clone(), passwords.clone(), secrets.tokens, settings.auth);
        let agents = AgentService::new(ports.clone(), log.clone(), ports.embedder.clone(), settings.agents);
        let webhook = WebhookService::new(
            secrets.webhook.clone(),
            auth.clone(),
            agents.clone(),
            log.clone(),
            ports.store.clone(),
            ports.clock.clone(),
        );
        let tenant_defaults = settings.policies.tenant_defaults();
        let (wake_hitl, hitl_wakeups) = futures::channel::mpsc::channel(1);
        let hitl =
            HitlService::new(ports.clone(), log.clone(), agents.clone(), tenant_defaults, settings.hitl, wake_hitl);
        let (wake_training, training_wakeups) = futures::channel::mpsc::channel(1);
        let guard = GuardService::new(ports.clone(), log.clone(), agents.clone(), settings.guard, wake_training);
        let (wake_clustering, clustering_wakeups) = futures::channel::mpsc::channel(1);
        let discovery =
            DiscoveryService::new(ports.clone(), log.clone(), agents.clone(), settings.discovery, wake_clustering);
        let sso = SsoService::new(ports.clone(), auth.clone(), log.clone(), settings.sso);
        let siem = SiemService::new(ports.clone(), ports.siem_sinks.to_vec(), settings.siem);
        let (wake_detector, detector_wakeups) = futures::channel::mpsc::channel(1);
        let anomalies = AnomalyService::new(ports.clone(), log.clone(), agents.clone(), wake_detector);
        let counts = Arc::new(status::HourlyCounter::default());
        let policies = PolicyService::new(
            ports.clone(),
            log.clone(),
            agents.clone(),
            hitl.clone(),
            anomalies.clone(),
            settings.policies,
            counts.clone(),
        );
        let shares = TenantShares::new(ports.cache.clone(), ports.ids.clone());
        let readers =
            tenants::SettingsReaders { policies: policies.clone(), agents: agents.clone(), guard: guard.clone() };
        let services = Self {
            tenants: TenantService::new(
                ports.clone(),
                log.clone(),
                passwords.clone(),
                secrets.admin_key,
                tenant_defaults,
                readers,
                auth.clone(),
            ),
            users: UserService::new(ports.clone(), log.clone(), passwords, auth.clone()),
            api_keys: ApiKeyService::new(ports.clone(), log.clone(), auth.clone()),
            status: StatusService::new(ports.clone(), info, counts),
            audit: AuditService::new(ports, log, settings.audit, wake),
            agents,
            webhook,
            policies,
            guard,
            discovery,
            sso,
            siem,
            hitl,
            anomalies,
            shares,
            auth,
        };
        let background = Background {
            audit_writer,
            export_wakeups,
            training_wakeups,
            clustering_wakeups,
            hitl_wakeups,
            detector_wakeups,
        };
        (services, background)
    }
}

#[cfg(test)]
mod tests;
