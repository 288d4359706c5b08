//! Use-case services. Each takes the authenticated `Caller` (where one is needed), checks
//! what the caller may do, validates input, and talks to the ports.

pub mod agents;
pub mod anomalies;
mod api_keys;
pub mod audit;
mod auth;
mod auth_cache;
mod caller;
pub mod check;
mod counts;
pub mod discovery;
pub mod guard;
pub mod hitl;
pub mod jobs;
pub mod passwords;
pub mod policies;
mod ports;
mod replay;
mod session_marks;
pub mod sessions;
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

pub use agents::{AgentService, AgentSettings, BuiltinEmbedder, EncodeFn, FusedEmbedder};
pub use anomalies::{AnomalyParams, AnomalyService, AnomalyStats, AnomalyUpdate, NewAnomalyReport};
pub use api_keys::{ApiKeyService, CreatedApiKey, NewApiKey};
pub use audit::{AuditEvent, AuditLog, AuditService, AuditSettings, AuditWriter};
pub use auth::{AuthService, AuthSettings, LoginResult, LoginUser};
pub use caller::{Caller, Credential};
pub use discovery::{DiscoveryService, DiscoverySettings};
pub use guard::{GuardService, GuardSettings};
pub use hitl::{
    HitlApproval, HitlDecision, HitlRound, HitlService, HitlSettings, HitlWatch, HitlWorker, NewHitlRequest,
    TokenRefusal,
};
pub use jobs::{ClaimedJob, JobClaims, KindSettings};
pub use policies::{PolicyService, PolicySettings};
pub use ports::Ports;
pub use replay::{NewReplay, ReplayService};
pub use sessions::{SessionService, SessionSettings, SessionWriters};
pub use shares::{Place, Share, TenantShares};
pub use siem::{SiemFilter, SiemRoute, SiemService, SiemSettings};
pub use sso::{SsoService, SsoSettings};
pub use status::{
    ComponentHealth, DecisionHour, DecisionStats, PlatformStatus, Readiness, ServerInfo, Stats, StatusService,
};
pub use tenants::{
    CreatedTenant, IssuedSecret, NewTenant, NewWebhookSecret, SECRET_ROTATION_GRACE, SecretInfo, SettingsChange,
    TenantSecrets, TenantService, TenantView, UpdateTenant,
};
pub use users::{NewUser, UpdateUser, UserService};
pub use validate::normalize_email;
pub use webhook::{Delivery, WebhookAck, WebhookService};

use crate::model::JobKind;
use crate::ports::Store;
use crate::secrets::{AdminKey, PasswordHasher, TokenCodec, WebhookVerifier};

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
    pub sessions: sessions::SessionSettings,
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
    /// Replays of policy versions over past decisions (jobs).
    pub replays: ReplayService,
    pub guard: GuardService,
    pub discovery: DiscoveryService,
    pub sso: SsoService,
    pub siem: SiemService,
    pub hitl: HitlService,
    pub anomalies: AnomalyService,
    pub sessions: SessionService,
    /// Each tenant's places among the sockets and long-polls open over every replica.
    pub shares: TenantShares,
    /// Claims queued jobs of every kind for the server's one worker.
    pub jobs: JobClaims,
}

/// Work the server runs beside the request handlers, once per process.
pub struct Background {
    /// Commits the audit log's batches; run it for as long as the services live.
    pub audit_writer: AuditWriter,
    /// Signals that a job (of any kind) was queued by this process: the worker should look
    /// now.
    pub job_wakeups: futures::channel::mpsc::Receiver<()>,
    /// Signals that a HITL callback was scheduled by this process.
    pub hitl_wakeups: futures::channel::mpsc::Receiver<()>,
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

    /// Builds every service from the shared `ports` and the `store`, of which each service is
    /// handed only the repositories it uses.
    pub fn new(
        ports: Ports,
        store: Arc<dyn Store>,
        secrets: Secrets,
        settings: Settings,
        info: ServerInfo,
    ) -> (Self, Background) {
        let (log, mut audit_writer) =
            AuditLog::new(store.clone(), ports.clock.clone(), ports.ids.clone(), settings.audit.log);
        // Other replicas write the sessions: this process's records of them are marked.
        let marks = (settings.sessions.writers == SessionWriters::Announced).then(|| {
            let replica = ports.ids.new_id().simple().to_string();
            session_marks::SessionMarks::new(ports.cache.clone(), &replica, settings.sessions.idle)
        });
        let log = match &marks {
            Some(marks) => log.marking_sessions(marks.clone()),
            None => log,
        };
        // One wake-up for the one job worker, whatever the kind queued.
        let (wake, job_wakeups) = futures::channel::mpsc::channel(1);
        let passwords = passwords::Passwords::new(secrets.hasher, ports.hashing.clone());
        let auth = AuthService::new(
            ports.clone(),
            auth::Repos::of(&store),
            log.clone(),
            passwords.clone(),
            secrets.tokens.clone(),
            settings.auth,
        );
        let agents = AgentService::new(
            ports.clone(),
            agents::Repos::of(&store),
            log.clone(),
            ports.embedder.clone(),
            settings.agents,
        );
        let webhook = WebhookService::new(
            secrets.webhook.clone(),
            auth.clone(),
            agents.clone(),
            log.clone(),
            store.clone(),
            ports.clock.clone(),
        );
        let tenant_defaults = settings.policies.tenant_defaults();
        let (wake_hitl, hitl_wakeups) = futures::channel::mpsc::channel(1);
        let hitl = HitlService::new(
            ports.clone(),
            hitl::Repos::of(&store),
            log.clone(),
            agents.clone(),
            tenant_defaults,
            settings.hitl,
            wake_hitl,
            secrets.tokens,
        );
        let guard = GuardService::new(
            ports.clone(),
            guard::Repos::of(&store),
            log.clone(),
            agents.clone(),
            settings.guard,
            wake.clone(),
        );
        let discovery = DiscoveryService::new(
            ports.clone(),
            discovery::Repos::of(&store),
            log.clone(),
            agents.clone(),
            settings.discovery,
            wake.clone(),
        );
        let sso = SsoService::new(ports.clone(), sso::Repos::of(&store), auth.clone(), log.clone(), settings.sso);
        let siem = SiemService::new(ports.clone(), siem::Repos::of(&store), ports.siem_sinks.to_vec(), settings.siem);
        let anomalies =
            AnomalyService::new(ports.clone(), anomalies::Repos::of(&store), log.clone(), agents.clone(), wake.clone());
        let sessions = SessionService::new(
            ports.clone(),
            sessions::Repos::of(&store),
            log.clone(),
            agents.clone(),
            guard.clone(),
            settings.sessions,
            marks,
        );
        audit_writer.observe(sessions.commit_observer());
        let counts = Arc::new(status::HourlyCounter::default());
        let policies = PolicyService::new(
            ports.clone(),
            policies::Repos::of(&store),
            log.clone(),
            agents.clone(),
            hitl.clone(),
            anomalies.clone(),
            sessions.clone(),
            settings.policies,
            counts.clone(),
        );
        let shares = TenantShares::new(ports.cache.clone(), ports.ids.clone());
        let readers =
            tenants::SettingsReaders { policies: policies.clone(), agents: agents.clone(), guard: guard.clone() };
        let replays = ReplayService::new(
            ports.clone(),
            replay::Repos::of(&store),
            policies.clone(),
            sessions.clone(),
            wake.clone(),
        );
        let audit = AuditService::new(ports.clone(), audit::Repos::of(&store), log.clone(), settings.audit, wake);
        let kinds = [
            (JobKind::Export, audit.job_settings()),
            (JobKind::GuardTraining, guard.job_settings()),
            (JobKind::AnomalyTraining, anomalies.job_settings()),
            (JobKind::Clustering, discovery.job_settings()),
            (JobKind::Replay, replays.job_settings()),
        ];
        let jobs = JobClaims::new(store.clone(), ports.clock.clone(), ports.ids.clone(), kinds.into_iter().collect());
        let services = Self {
            tenants: TenantService::new(
                ports.clone(),
                tenants::Repos::of(&store),
                log.clone(),
                passwords.clone(),
                secrets.admin_key,
                tenant_defaults,
                readers,
                auth.clone(),
            ),
            users: UserService::new(ports.clone(), users::Repos::of(&store), log.clone(), passwords, auth.clone()),
            api_keys: ApiKeyService::new(ports.clone(), api_keys::Repos::of(&store), log.clone(), auth.clone()),
            status: StatusService::new(ports, store, info, counts),
            audit,
            agents,
            webhook,
            policies,
            replays,
            guard,
            discovery,
            sso,
            siem,
            hitl,
            anomalies,
            sessions,
            shares,
            auth,
            jobs,
        };
        let background = Background { audit_writer, job_wakeups, hitl_wakeups };
        (services, background)
    }
}

/// Lets other tasks run once (a wait without a timer: the domain has no runtime).
pub(crate) struct YieldNow(pub(crate) bool);

impl std::future::Future for YieldNow {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.0 {
            std::task::Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests;
