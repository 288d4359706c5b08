//! Configuration: compiled defaults, then an optional TOML file, then environment variables
//! (`AGENTGOV_*`, plus the conventional `DATABASE_URL`, `REDIS_URL` and `WEBHOOK_SECRET`).
//! Validated once at start-up and printed with secrets masked.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// Environment variables that start with `AGENTGOV_` but are not settings. The Prompt
/// Guard's encoder reads its two itself, when first used (`detect::guard::encoder`); the
/// Python SDK's clients read the last three (`Agentgov.from_env`, the Claude Code hook), and
/// a shell that runs both must not stop the server.
const NOT_SETTINGS: &[&str] =
    &["config", "test_database_url", "test_redis_url", "guard_models", "guard_encoder", "url", "api_key", "agent_id"];

/// Settings read from their conventional names, without the `AGENTGOV_` prefix.
const UNPREFIXED: &[&str] = &["DATABASE_URL", "REDIS_URL", "WEBHOOK_SECRET"];

#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address to listen on.
    pub bind: SocketAddr,
    /// Where the embedded SQLite database (and a generated JWT secret) live.
    pub data_dir: PathBuf,
    /// `postgres://…` for production; `sqlite://PATH` for another SQLite file. Unset: the
    /// embedded SQLite file under `data_dir`.
    #[serde(serialize_with = "ser_secret_opt")]
    pub database_url: Option<SecretString>,
    /// `redis://…`: shared cache, rate limits, token revocation and events across replicas.
    #[serde(serialize_with = "ser_secret_opt")]
    pub redis_url: Option<SecretString>,
    /// Prefix of every Redis key and of the event channel, so deployments can share a Redis.
    pub redis_prefix: String,
    /// The platform operator's key for `/tenants` (and SIEM). Unset: those endpoints answer 401.
    #[serde(serialize_with = "ser_secret_opt")]
    pub admin_key: Option<SecretString>,
    /// HS256 signing secret for session JWTs, at least 32 bytes. Required with Postgres (every
    /// replica must share it); embedded mode generates one under `data_dir` if unset.
    #[serde(serialize_with = "ser_secret_opt")]
    pub jwt_secret: Option<SecretString>,
    /// HMAC secret of the inbound webhook (`WEBHOOK_SECRET`), at least 32 bytes. Required with
    /// Postgres; embedded mode generates one under `data_dir` if unset.
    #[serde(serialize_with = "ser_secret_opt")]
    pub webhook_secret: Option<SecretString>,
    /// Lifetime of a session JWT and its API key, in seconds.
    pub token_ttl_secs: u64,
    /// Largest request body in bytes (413 beyond).
    pub body_limit_bytes: usize,
    /// Reverse proxies in front that append to `X-Forwarded-For` (0: trust only the socket).
    pub trusted_proxy_hops: usize,
    /// Failed logins of one email from one client address before that pair is held back (a
    /// minute at first, doubling with each hold, up to `login_window_secs`).
    pub login_max_failures_per_email_ip: u64,
    /// Failed logins from one client address, any email, within `login_window_secs`.
    pub login_max_failures_per_ip: u64,
    /// Failed logins of one email from every address within a minute (addresses it signed
    /// in from lately are exempt): slows a distributed guesser, never locks for long.
    pub login_max_failures_per_email_per_minute: u64,
    pub login_window_secs: u64,
    /// Attempts at `POST /users/me/change-password` per user within `login_window_secs`.
    pub password_change_max_attempts: u64,
    /// When set, `/metrics` answers only `Authorization: Bearer <token>` (at least 16
    /// characters); unset, it is open, for scrapers on a private network.
    #[serde(serialize_with = "ser_secret_opt")]
    pub metrics_token: Option<SecretString>,
    /// Connections in the Postgres pool (and SQLite readers).
    pub db_pool_size: usize,
    /// Multiplexed Redis connections the cache's commands share, in turn (each carries
    /// every concurrent request's commands, pipelined).
    pub redis_pool_size: usize,
    /// Run Postgres migrations at start-up (SQLite always migrates at start-up).
    pub migrate_on_start: bool,
    /// HTTP worker threads; default: one per core.
    pub workers: Option<usize>,
    /// `pretty` or `json`.
    pub log_format: LogFormat,
    /// A tracing filter, e.g. `info` or `agentgov=debug,info`. `RUST_LOG` overrides it.
    pub log_level: String,
    /// Seconds in-flight requests get to finish after SIGTERM/SIGINT.
    pub shutdown_timeout_secs: u64,
    /// Argon2id memory cost (KiB) and passes for password hashing. The default, 46 MiB and one
    /// pass, is one of OWASP's recommended settings; being above glibc's 32 MiB dynamic
    /// mmap threshold, each hash's memory is returned to the system when freed (19 MiB blocks
    /// stayed resident in every thread's arena).
    pub argon2_memory_kib: u32,
    pub argon2_iterations: u32,
    /// Most audit entries committed in one transaction (group commit).
    pub audit_max_batch: usize,
    /// How long a finished asynchronous export's file is kept, in seconds.
    pub audit_export_retention_secs: u64,
    /// Run queued asynchronous exports on this replica (any replica may run any tenant's).
    pub audit_export_worker: bool,
    /// An active agent with no heartbeat (nor registration) for this many seconds is listed
    /// as `inactive`.
    pub agent_stale_after_secs: u64,
    /// A policy check whose risk score is at or above this needs approval (0 to 1], for
    /// tenants that set no threshold of their own.
    pub approval_threshold: f64,
    /// How long a replica may keep a tenant's compiled policies should a change announced
    /// on the bus be missed, in seconds.
    pub policy_cache_ttl_secs: u64,
    /// An external OpenAI-compatible embeddings service (`{url}/v1/embeddings`) instead of
    /// the built-in embedder. Needs `embedding_model` and `embedding_dimensions`.
    pub embedding_url: Option<String>,
    pub embedding_model: Option<String>,
    /// Bump when the same model name starts giving different vectors (agents are then
    /// re-embedded on their next update or heartbeat).
    pub embedding_model_version: i32,
    pub embedding_dimensions: Option<usize>,
    /// Send `dimensions` in requests (for models that can shorten their vectors).
    pub embedding_send_dimensions: bool,
    /// Sent as `Authorization: Bearer`.
    #[serde(serialize_with = "ser_secret_opt")]
    pub embedding_api_key: Option<SecretString>,
    pub embedding_timeout_secs: u64,
    /// The built-in embedder of agent search: `fused` (the hashing embedder fused with the
    /// Prompt Guard's multilingual encoder when its files are installed, the hashing
    /// embedder alone otherwise) or `hashing`. Unused when `embedding_url` is set.
    pub search_embedder: SearchEmbedder,
    /// OpenID Connect providers for single sign-on (`[[sso_providers]]` in the file, or
    /// `AGENTGOV_SSO_PROVIDERS='[{id="okta", …}]'`). See the README.
    pub sso_providers: Vec<SsoProviderConfig>,
    /// How long a started SSO sign-in may take to come back, in seconds (1 to 3600).
    pub sso_state_ttl_secs: u64,
    /// Discovery clustering groups the shadow events received in the last this many days
    /// (1 to 3650).
    pub discovery_window_days: u64,
    /// Where the audit log is forwarded (`[[siem_sinks]]` in the file, or
    /// `AGENTGOV_SIEM_SINKS='[{name="soc", kind="syslog-tcp", address="siem:6514"}]'`).
    /// See docs/siem.md.
    pub siem_sinks: Vec<crate::siem_config::SiemSinkConfig>,
    /// Most audit records a SIEM sink is sent per tenant in one batch (1 to 10000).
    pub siem_batch_size: u32,
    /// How often an idle SIEM forwarder looks for new records, in milliseconds (10 to 60000).
    pub siem_poll_ms: u64,
    /// The longest wait between retries to a SIEM that is down, in seconds (1 to 3600).
    pub siem_max_backoff_secs: u64,
    /// Most policies one tenant may store (1 to 10000).
    pub max_policies_per_tenant: u64,
    /// Threads that compile and evaluate Rego, for all tenants together (1 to 256; unset:
    /// the number of CPUs).
    pub policy_threads: Option<usize>,
    /// Of those, how many one tenant may hold at once (1 to `policy_threads`; unset: half,
    /// at least one).
    pub policy_threads_per_tenant: Option<usize>,
    /// Policy evaluations of one tenant waiting for a thread; past it a check is 429
    /// (1 to 100000).
    pub policy_queue_per_tenant: usize,
    /// Threads that compute Argon2 password hashes and checks (sign-in, user creation,
    /// password change), apart from the HTTP threads; one tenant may hold half of them, and
    /// sign-ins for unknown e-mails share one tenant's half (1 to 256; unset: the CPUs).
    pub hash_threads: Option<usize>,
    /// Run tenant Rego in worker processes (one per policy thread), which may die and are
    /// started again, rather than in the server's own process.
    pub policy_isolation: bool,
    /// Address-space limit of a policy worker, in MiB (256 to 1048576).
    pub policy_worker_memory_mib: u64,
    /// The program a policy worker runs as (with the argument `policy-worker`). Unset: this
    /// binary.
    pub policy_worker_program: Option<PathBuf>,
    /// How long an approval request waits for a decision, in seconds (1 to 604800), for
    /// tenants that set no window of their own and requests that name none.
    pub hitl_timeout_secs: u32,
    /// An agent session with no check or observation for this long has ended, and its id
    /// starts a new one, in seconds (60 to 2592000).
    pub session_idle_secs: u64,
    /// How often the replica holding the HITL lease expires requests and sends due
    /// callbacks, in milliseconds (10 to 60000).
    pub hitl_poll_ms: u64,
    /// Attempts at a HITL callback before it is given up (1 to 100).
    pub hitl_callback_max_attempts: u32,
    /// The wait after a callback's first failed attempt, doubling after each, in
    /// milliseconds (10 to 3600000); at most `hitl_callback_max_backoff_secs`.
    pub hitl_callback_backoff_ms: u64,
    /// The longest wait between callback attempts, in seconds (1 to 86400).
    pub hitl_callback_max_backoff_secs: u64,
    /// How long a callback receiver has to answer one attempt, in seconds (1 to 300).
    pub hitl_callback_timeout_secs: u64,
    /// Private address ranges HITL callbacks may reach, comma-separated CIDRs
    /// (`10.0.0.0/8,fd00::/8`; a bare address is a range of one). Empty (the default): only
    /// globally routable unicast addresses; loopback, private, link-local (metadata) and
    /// every other non-public address are refused.
    pub hitl_callback_allow_private: String,
    /// HITL callback attempts per tenant per minute, over all replicas (1 to 1000000); the
    /// rest wait for the next minute.
    pub hitl_callbacks_per_minute: u64,
    /// How long an approval token lasts after the approval, seconds (10 to 86400); past it
    /// the token is refused and the action needs a new approval.
    pub hitl_approval_token_ttl_secs: u64,
    /// Real-time feed sockets this replica keeps open at once (1 to 1000000); more are
    /// refused with 503.
    pub ws_max_connections: usize,
    /// Real-time feed sockets one tenant keeps open at once over every replica (1 to
    /// 1000000); more are refused with 429 before the upgrade.
    pub ws_max_connections_per_tenant: u64,
    /// HITL long-polls (`?wait=`) one tenant keeps waiting at once over every replica (1 to
    /// 1000000); more answer 429.
    pub hitl_max_long_polls_per_tenant: u64,
    /// Approval requests of one tenant whose callback is still to be sent (pending with a
    /// `callback_url`, or scheduled) (1 to 1000000); a further request with a callback
    /// answers 429.
    pub hitl_max_pending_callbacks_per_tenant: u64,
    /// Asynchronous audit exports one tenant may have queued or running at once (1 to 100);
    /// more answer 429 until one finishes.
    pub max_queued_exports_per_tenant: u64,
    /// An OpenTelemetry collector to export a span per decision and per Prompt Guard
    /// screening to (`http://collector:4317`); unset, nothing is exported. docs/integrations.md.
    pub otlp_endpoint: Option<String>,
    /// `grpc` (port 4317) or `http/protobuf` (port 4318, `{endpoint}/v1/traces`).
    pub otlp_protocol: agentgov_otel::Protocol,
    /// Key of the spans' input hashes (at least 32 bytes; every replica must share it).
    /// Unset: derived from the JWT secret.
    #[serde(serialize_with = "ser_secret_opt")]
    pub otlp_hash_key: Option<SecretString>,
    /// How long one export to the collector may take, in seconds (1 to 60).
    pub otlp_timeout_secs: u64,
}

/// One OpenID Connect provider.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsoProviderConfig {
    /// `a-z`, `0-9`, `-`, `_`; 1 to 64 characters.
    pub id: String,
    /// Shown to users; default: the id.
    #[serde(default)]
    pub name: Option<String>,
    /// The issuer URL exactly as the provider spells it (its discovery document's `issuer`,
    /// trailing slash included); discovery at `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    #[serde(serialize_with = "ser_secret")]
    pub client_secret: SecretString,
    /// Where users may be sent back (exact URLs); at least one.
    pub redirect_uris: Vec<String>,
    /// Scopes besides `openid`; default `email profile`.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The tenant whose users sign in with it (a UUID).
    pub tenant_id: String,
    /// Role of users created at first sign-in; default `viewer`.
    #[serde(default = "default_sso_role")]
    pub default_role: String,
    /// E-mail domains that may sign in; empty: any.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Create a user at the first sign-in of a verified e-mail; default false.
    #[serde(default)]
    pub create_users: bool,
    /// Accept ID tokens whose `email_verified` is missing or false; default false (refused).
    /// Only for a provider that verifies every address it hands out.
    #[serde(default)]
    pub trust_unverified_email: bool,
}

/// An absolute `http://` or `https://` URL with a host.
fn is_http_url(raw: &str) -> bool {
    url::Url::parse(raw).is_ok_and(|u| matches!(u.scheme(), "https" | "http") && u.host().is_some())
}

fn default_sso_role() -> String {
    "viewer".into()
}

impl SsoProviderConfig {
    /// The provider as the domain uses it; every field checked.
    pub fn to_provider(&self) -> anyhow::Result<agentgov_domain::model::SsoProvider> {
        let id = &self.id;
        check_name("sso_providers: id", id)?;
        let absolute = |what: &str, raw: &str| -> anyhow::Result<()> {
            if !is_http_url(raw) {
                bail!("sso_providers[{id}]: {what} `{raw}` must be an absolute http(s) URL");
            }
            Ok(())
        };
        absolute("issuer", &self.issuer)?;
        if self.redirect_uris.is_empty() {
            bail!("sso_providers[{id}]: redirect_uris needs at least one URL");
        }
        for r in &self.redirect_uris {
            absolute("redirect URI", r)?;
        }
        if self.client_id.is_empty() || self.client_secret.expose_secret().is_empty() {
            bail!("sso_providers[{id}]: client_id and client_secret are required");
        }
        let tenant_id = self
            .tenant_id
            .parse::<agentgov_domain::ids::TenantId>()
            .map_err(|_| anyhow::anyhow!("sso_providers[{id}]: tenant_id must be a tenant's UUID"))?;
        let default_role =
            self.default_role.parse().map_err(|e: String| anyhow::anyhow!("sso_providers[{id}]: {e}"))?;
        Ok(agentgov_domain::model::SsoProvider {
            id: id.clone(),
            name: self.name.clone().unwrap_or_else(|| id.clone()),
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.expose_secret().to_owned(),
            redirect_uris: self.redirect_uris.clone(),
            scopes: self.scopes.clone(),
            tenant_id,
            default_role,
            allowed_domains: self.allowed_domains.iter().map(|d| d.trim().to_ascii_lowercase()).collect(),
            create_users: self.create_users,
            trust_unverified_email: self.trust_unverified_email,
        })
    }
}

/// A configured name (an SSO provider's id, a SIEM sink's name): 1 to 64 of `a-z`, `0-9`,
/// `-` and `_`, as it appears in URLs and stored keys.
pub(crate) fn check_name(what: &str, name: &str) -> anyhow::Result<()> {
    if name.is_empty()
        || name.len() > 64
        || !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    {
        bail!("{what} `{name}` must be 1 to 64 of a-z, 0-9, - and _");
    }
    Ok(())
}

/// The built-in embedder of agent search (`search_embedder`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchEmbedder {
    Fused,
    Hashing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Pretty,
    Json,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("./data"),
            database_url: None,
            redis_url: None,
            redis_prefix: "agentgov:".into(),
            admin_key: None,
            jwt_secret: None,
            webhook_secret: None,
            token_ttl_secs: 3600,
            body_limit_bytes: 1024 * 1024,
            trusted_proxy_hops: 0,
            login_max_failures_per_email_ip: 5,
            login_max_failures_per_ip: 50,
            login_max_failures_per_email_per_minute: 10,
            login_window_secs: 900,
            password_change_max_attempts: 5,
            metrics_token: None,
            db_pool_size: 16,
            redis_pool_size: 1,
            migrate_on_start: true,
            workers: None,
            log_format: LogFormat::Pretty,
            log_level: "info".into(),
            shutdown_timeout_secs: 30,
            argon2_memory_kib: 46 * 1024,
            argon2_iterations: 1,
            audit_max_batch: 512,
            audit_export_retention_secs: 24 * 3600,
            audit_export_worker: true,
            agent_stale_after_secs: 600,
            approval_threshold: 0.8,
            policy_cache_ttl_secs: 60,
            embedding_url: None,
            embedding_model: None,
            embedding_model_version: 1,
            embedding_dimensions: None,
            embedding_send_dimensions: false,
            embedding_api_key: None,
            embedding_timeout_secs: 10,
            search_embedder: SearchEmbedder::Fused,
            sso_providers: Vec::new(),
            sso_state_ttl_secs: 600,
            discovery_window_days: 30,
            siem_sinks: Vec::new(),
            siem_batch_size: 500,
            siem_poll_ms: 500,
            siem_max_backoff_secs: 60,
            max_policies_per_tenant: 100,
            policy_threads: None,
            policy_threads_per_tenant: None,
            policy_queue_per_tenant: 256,
            hash_threads: None,
            policy_isolation: true,
            policy_worker_memory_mib: 2048,
            policy_worker_program: None,
            hitl_timeout_secs: 3600,
            session_idle_secs: 86_400,
            hitl_poll_ms: 1000,
            hitl_callback_max_attempts: 8,
            hitl_callback_backoff_ms: 2000,
            hitl_callback_max_backoff_secs: 300,
            hitl_callback_timeout_secs: 10,
            hitl_callback_allow_private: String::new(),
            hitl_callbacks_per_minute: 120,
            hitl_approval_token_ttl_secs: 300,
            ws_max_connections: 10_000,
            ws_max_connections_per_tenant: 1000,
            hitl_max_long_polls_per_tenant: 1000,
            hitl_max_pending_callbacks_per_tenant: 1000,
            max_queued_exports_per_tenant: 2,
            otlp_endpoint: None,
            otlp_protocol: agentgov_otel::Protocol::Grpc,
            otlp_hash_key: None,
            otlp_timeout_secs: 10,
        }
    }
}

fn ser_secret<S: serde::Serializer>(v: &SecretString, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v.expose_secret())
}

pub(crate) fn ser_secret_opt<S: serde::Serializer>(v: &Option<SecretString>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(secret) => s.serialize_some(secret.expose_secret()),
        None => s.serialize_none(),
    }
}

/// Where the data lives, decided from `database_url`'s scheme; an unknown scheme is an error,
/// never a silent new SQLite file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Config {
    /// Threads that compile and evaluate Rego: `policy_threads`, else the number of CPUs.
    pub fn policy_threads(&self) -> usize {
        self.policy_threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from))
    }

    /// Threads for Argon2: `hash_threads`, else the number of CPUs.
    pub fn hash_threads(&self) -> usize {
        self.hash_threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from))
    }

    /// Of [`policy_threads`](Self::policy_threads), how many one tenant may hold at once.
    pub fn policy_threads_per_tenant(&self) -> usize {
        self.policy_threads_per_tenant.unwrap_or_else(|| (self.policy_threads() / 2).max(1))
    }

    /// Loads defaults, then `file` (if any), then the environment.
    pub fn load(file: Option<&Path>) -> anyhow::Result<Self> {
        let mut fig = Figment::from(Serialized::defaults(Config::default()));
        if let Some(file) = file {
            if !file.exists() {
                bail!("config file {} does not exist", file.display());
            }
            fig = fig.merge(Toml::file(file));
        }
        fig = fig.merge(Env::raw().only(UNPREFIXED)).merge(Env::prefixed("AGENTGOV_").ignore(NOT_SETTINGS));
        let config: Config = fig.extract().context("invalid configuration")?;
        config.validate()?;
        Ok(config)
    }

    /// Every environment variable `load` and the command line accept, spelled as in the
    /// environment: `AGENTGOV_<FIELD>` for each field `Config`'s `Deserialize` accepts (the
    /// list `deny_unknown_fields` checks), the `AGENTGOV_*` names that are not settings
    /// (`AGENTGOV_CONFIG`, the tests' URLs), and `DATABASE_URL`, `REDIS_URL`,
    /// `WEBHOOK_SECRET`. Any other `AGENTGOV_*` variable makes `load` fail. Sorted.
    pub fn env_names() -> Vec<String> {
        let mut fields: &'static [&'static str] = &[];
        // Fails by design once the field names are captured.
        let _ = Config::deserialize(FieldNames(&mut fields));
        let mut names: Vec<String> = fields
            .iter()
            .chain(NOT_SETTINGS)
            .map(|f| format!("AGENTGOV_{}", f.to_ascii_uppercase()))
            .chain(UNPREFIXED.iter().map(|n| (*n).to_owned()))
            .collect();
        names.sort();
        names
    }

    /// Where HITL callbacks may go: public addresses and `hitl_callback_allow_private`.
    pub fn callback_receivers(&self) -> anyhow::Result<agentgov_domain::net::ReceiverPolicy> {
        agentgov_domain::net::ReceiverPolicy::parse(&self.hitl_callback_allow_private)
            .map_err(|e| anyhow::anyhow!("hitl_callback_allow_private: {e}"))
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        self.database()?;
        if self.token_ttl_secs < 60 || self.token_ttl_secs > 7 * 24 * 3600 {
            bail!("token_ttl_secs must be between 60 and 604800");
        }
        if self.trusted_proxy_hops > 10 {
            bail!("trusted_proxy_hops must be at most 10");
        }
        if self.body_limit_bytes < 1024 {
            bail!("body_limit_bytes must be at least 1024");
        }
        if self.redis_prefix.is_empty() || self.redis_prefix.chars().any(char::is_whitespace) {
            bail!("redis_prefix must be non-empty, without spaces");
        }
        if !(1..=5000).contains(&self.audit_max_batch) {
            bail!("audit_max_batch must be between 1 and 5000");
        }
        if self.audit_export_retention_secs < 60 {
            bail!("audit_export_retention_secs must be at least 60");
        }
        if self.agent_stale_after_secs == 0 {
            bail!("agent_stale_after_secs must be at least 1");
        }
        if !(self.approval_threshold > 0.0 && self.approval_threshold <= 1.0) {
            bail!("approval_threshold must be above 0 and at most 1");
        }
        if self.policy_cache_ttl_secs == 0 {
            bail!("policy_cache_ttl_secs must be at least 1");
        }
        if self.embedding_url.is_some() && (self.embedding_model.is_none() || self.embedding_dimensions.is_none()) {
            bail!("AGENTGOV_EMBEDDING_URL needs AGENTGOV_EMBEDDING_MODEL and AGENTGOV_EMBEDDING_DIMENSIONS");
        }
        if self.embedding_timeout_secs == 0 {
            bail!("embedding_timeout_secs must be at least 1");
        }
        if self.db_pool_size == 0 || self.redis_pool_size == 0 {
            bail!("pool sizes must be at least 1");
        }
        if self.login_max_failures_per_email_ip == 0
            || self.login_max_failures_per_ip == 0
            || self.login_max_failures_per_email_per_minute == 0
            || self.login_window_secs == 0
            || self.password_change_max_attempts == 0
        {
            bail!("login limits, the password change limit and the login window must be at least 1");
        }
        if let Some(token) = &self.metrics_token
            && token.expose_secret().len() < 16
        {
            bail!("metrics_token must be at least 16 characters");
        }
        if let Some(secret) = &self.jwt_secret
            && secret.expose_secret().len() < agentgov_domain::secrets::MIN_JWT_SECRET_LEN
        {
            bail!("jwt_secret must be at least {} bytes", agentgov_domain::secrets::MIN_JWT_SECRET_LEN);
        }
        if let Some(key) = &self.admin_key
            && key.expose_secret().len() < 16
        {
            bail!("admin_key must be at least 16 characters");
        }
        if let Some(url) = &self.redis_url {
            let url = url.expose_secret();
            if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
                bail!("redis_url must start with redis:// or rediss://");
            }
        }
        if matches!(self.database()?, Database::Postgres(_)) && self.jwt_secret.is_none() {
            bail!("AGENTGOV_JWT_SECRET is required with a Postgres DATABASE_URL: every replica must share it");
        }
        if let Some(secret) = &self.webhook_secret
            && secret.expose_secret().len() < agentgov_domain::secrets::MIN_WEBHOOK_SECRET_LEN
        {
            bail!("WEBHOOK_SECRET must be at least {} bytes", agentgov_domain::secrets::MIN_WEBHOOK_SECRET_LEN);
        }
        if !(1..=3650).contains(&self.discovery_window_days) {
            bail!("discovery_window_days must be between 1 and 3650");
        }
        if !(1..=3600).contains(&self.sso_state_ttl_secs) {
            bail!("sso_state_ttl_secs must be between 1 and 3600");
        }
        let mut ids = std::collections::HashSet::new();
        for p in &self.sso_providers {
            p.to_provider()?;
            if !ids.insert(p.id.as_str()) {
                bail!("sso_providers: the id `{}` is used twice", p.id);
            }
        }
        if !(1..=10_000).contains(&self.siem_batch_size) {
            bail!("siem_batch_size must be between 1 and 10000");
        }
        if !(10..=60_000).contains(&self.siem_poll_ms) {
            bail!("siem_poll_ms must be between 10 and 60000");
        }
        if !(1..=3600).contains(&self.siem_max_backoff_secs) {
            bail!("siem_max_backoff_secs must be between 1 and 3600");
        }
        if !(1..=10_000).contains(&self.max_policies_per_tenant) {
            bail!("max_policies_per_tenant must be between 1 and 10000");
        }
        if self.policy_threads.is_some_and(|n| !(1..=256).contains(&n)) {
            bail!("policy_threads must be between 1 and 256");
        }
        if self.policy_threads_per_tenant.is_some_and(|n| n < 1 || n > self.policy_threads()) {
            bail!("policy_threads_per_tenant must be between 1 and policy_threads");
        }
        if self.hash_threads.is_some_and(|n| !(1..=256).contains(&n)) {
            bail!("hash_threads must be between 1 and 256");
        }
        if !(1..=100_000).contains(&self.policy_queue_per_tenant) {
            bail!("policy_queue_per_tenant must be between 1 and 100000");
        }
        if !(256..=1_048_576).contains(&self.policy_worker_memory_mib) {
            bail!("policy_worker_memory_mib must be between 256 and 1048576");
        }
        if !(1..=agentgov_domain::services::hitl::MAX_HITL_TIMEOUT_SECS).contains(&self.hitl_timeout_secs) {
            bail!("hitl_timeout_secs must be between 1 and 604800");
        }
        if !(60..=2_592_000).contains(&self.session_idle_secs) {
            bail!("session_idle_secs must be between 60 and 2592000");
        }
        if !(10..=60_000).contains(&self.hitl_poll_ms) {
            bail!("hitl_poll_ms must be between 10 and 60000");
        }
        if !(1..=100).contains(&self.hitl_callback_max_attempts) {
            bail!("hitl_callback_max_attempts must be between 1 and 100");
        }
        if !(10..=3_600_000).contains(&self.hitl_callback_backoff_ms) {
            bail!("hitl_callback_backoff_ms must be between 10 and 3600000");
        }
        if !(1..=86_400).contains(&self.hitl_callback_max_backoff_secs) {
            bail!("hitl_callback_max_backoff_secs must be between 1 and 86400");
        }
        if !(1..=300).contains(&self.hitl_callback_timeout_secs) {
            bail!("hitl_callback_timeout_secs must be between 1 and 300");
        }
        self.callback_receivers()?;
        if !(1..=1_000_000).contains(&self.hitl_callbacks_per_minute) {
            bail!("hitl_callbacks_per_minute must be between 1 and 1000000");
        }
        if !(10..=86_400).contains(&self.hitl_approval_token_ttl_secs) {
            bail!("hitl_approval_token_ttl_secs must be between 10 and 86400");
        }
        if !(1..=1_000_000).contains(&self.ws_max_connections) {
            bail!("ws_max_connections must be between 1 and 1000000");
        }
        if !(1..=1_000_000).contains(&self.ws_max_connections_per_tenant) {
            bail!("ws_max_connections_per_tenant must be between 1 and 1000000");
        }
        if !(1..=1_000_000).contains(&self.hitl_max_long_polls_per_tenant) {
            bail!("hitl_max_long_polls_per_tenant must be between 1 and 1000000");
        }
        if !(1..=1_000_000).contains(&self.hitl_max_pending_callbacks_per_tenant) {
            bail!("hitl_max_pending_callbacks_per_tenant must be between 1 and 1000000");
        }
        if !(1..=100).contains(&self.max_queued_exports_per_tenant) {
            bail!("max_queued_exports_per_tenant must be between 1 and 100");
        }
        if let Some(endpoint) = &self.otlp_endpoint
            && !is_http_url(endpoint)
        {
            bail!("otlp_endpoint must be an http:// or https:// URL with a host");
        }
        if let Some(key) = &self.otlp_hash_key
            && key.expose_secret().len() < 32
        {
            bail!("otlp_hash_key must be at least 32 bytes");
        }
        if !(1..=60).contains(&self.otlp_timeout_secs) {
            bail!("otlp_timeout_secs must be between 1 and 60");
        }
        let mut names = std::collections::HashSet::new();
        // Each sink's own settings are checked where it is built, once, by
        // `wiring::build_services`.
        for sink in &self.siem_sinks {
            if !names.insert(sink.name.as_str()) {
                bail!("siem_sinks: the name `{}` is used twice", sink.name);
            }
        }
        if matches!(self.database()?, Database::Postgres(_)) && self.webhook_secret.is_none() {
            bail!("WEBHOOK_SECRET is required with a Postgres DATABASE_URL: senders and every replica must share it");
        }
        Ok(())
    }

    pub fn database(&self) -> anyhow::Result<Database> {
        let Some(url) = &self.database_url else {
            return Ok(Database::Sqlite(self.data_dir.join("agentgov.db")));
        };
        let url = url.expose_secret();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Database::Postgres(url.to_owned()))
        } else if let Some(path) = url.strip_prefix("sqlite://") {
            if path.is_empty() {
                bail!("database_url sqlite:// needs a file path, e.g. sqlite://./data/agentgov.db");
            }
            Ok(Database::Sqlite(PathBuf::from(path)))
        } else {
            bail!("database_url must start with postgres://, postgresql:// or sqlite:// (got {})", redact_url(url))
        }
    }

    /// `embedded` (in-process cache and bus) or `distributed` (Redis).
    pub fn mode(&self) -> &'static str {
        if self.redis_url.is_some() { "distributed" } else { "embedded" }
    }
}

/// A deserializer that reads nothing: it keeps the field names a struct's `Deserialize`
/// passes to `deserialize_struct`, then fails.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> serde::Deserializer<'de> for FieldNames<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(serde::de::Error::custom("only the field names were wanted"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// A URL with its password (if any) replaced by `****`.
pub fn redact_url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("****"));
            u.to_string()
        }
        Ok(u) => u.to_string(),
        Err(_) => "<unparseable url>".into(),
    }
}

fn mask(v: &Option<SecretString>) -> &'static str {
    if v.is_some() { "****" } else { "(unset)" }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured, so a new setting cannot be left out of the start-up log.
        let Config {
            bind,
            data_dir,
            database_url,
            redis_url,
            redis_prefix,
            admin_key,
            jwt_secret,
            webhook_secret,
            token_ttl_secs,
            body_limit_bytes,
            trusted_proxy_hops,
            login_max_failures_per_email_ip,
            login_max_failures_per_ip,
            login_max_failures_per_email_per_minute,
            login_window_secs,
            password_change_max_attempts,
            metrics_token,
            db_pool_size,
            redis_pool_size,
            migrate_on_start,
            workers,
            log_format,
            log_level,
            shutdown_timeout_secs,
            argon2_memory_kib,
            argon2_iterations,
            audit_max_batch,
            audit_export_retention_secs,
            audit_export_worker,
            agent_stale_after_secs,
            approval_threshold,
            policy_cache_ttl_secs,
            embedding_url,
            embedding_model,
            embedding_model_version,
            embedding_dimensions,
            embedding_send_dimensions,
            embedding_api_key,
            embedding_timeout_secs,
            search_embedder,
            sso_providers,
            sso_state_ttl_secs,
            discovery_window_days,
            siem_sinks,
            siem_batch_size,
            siem_poll_ms,
            siem_max_backoff_secs,
            max_policies_per_tenant,
            policy_threads,
            policy_threads_per_tenant,
            policy_queue_per_tenant,
            hash_threads,
            policy_isolation,
            policy_worker_memory_mib,
            policy_worker_program,
            hitl_timeout_secs,
            session_idle_secs,
            hitl_poll_ms,
            hitl_callback_max_attempts,
            hitl_callback_backoff_ms,
            hitl_callback_max_backoff_secs,
            hitl_callback_timeout_secs,
            hitl_callback_allow_private,
            hitl_callbacks_per_minute,
            hitl_approval_token_ttl_secs,
            ws_max_connections,
            ws_max_connections_per_tenant,
            hitl_max_long_polls_per_tenant,
            hitl_max_pending_callbacks_per_tenant,
            max_queued_exports_per_tenant,
            otlp_endpoint,
            otlp_protocol,
            otlp_hash_key,
            otlp_timeout_secs,
        } = self;
        let url = |v: &Option<SecretString>| v.as_ref().map(|s| redact_url(s.expose_secret()));
        f.debug_struct("Config")
            .field("bind", bind)
            .field("data_dir", data_dir)
            .field("database_url", &url(database_url))
            .field("redis_url", &url(redis_url))
            .field("redis_prefix", redis_prefix)
            .field("admin_key", &mask(admin_key))
            .field("jwt_secret", &mask(jwt_secret))
            .field("webhook_secret", &mask(webhook_secret))
            .field("token_ttl_secs", token_ttl_secs)
            .field("body_limit_bytes", body_limit_bytes)
            .field("trusted_proxy_hops", trusted_proxy_hops)
            .field("login_max_failures_per_email_ip", login_max_failures_per_email_ip)
            .field("login_max_failures_per_ip", login_max_failures_per_ip)
            .field("login_max_failures_per_email_per_minute", login_max_failures_per_email_per_minute)
            .field("login_window_secs", login_window_secs)
            .field("password_change_max_attempts", password_change_max_attempts)
            .field("metrics_token", &mask(metrics_token))
            .field("db_pool_size", db_pool_size)
            .field("redis_pool_size", redis_pool_size)
            .field("migrate_on_start", migrate_on_start)
            .field("workers", workers)
            .field("log_format", log_format)
            .field("log_level", log_level)
            .field("shutdown_timeout_secs", shutdown_timeout_secs)
            .field("argon2_memory_kib", argon2_memory_kib)
            .field("argon2_iterations", argon2_iterations)
            .field("audit_max_batch", audit_max_batch)
            .field("audit_export_retention_secs", audit_export_retention_secs)
            .field("audit_export_worker", audit_export_worker)
            .field("agent_stale_after_secs", agent_stale_after_secs)
            .field("approval_threshold", approval_threshold)
            .field("policy_cache_ttl_secs", policy_cache_ttl_secs)
            .field("embedding_url", &embedding_url.as_deref().map(redact_url))
            .field("embedding_model", embedding_model)
            .field("embedding_model_version", embedding_model_version)
            .field("embedding_dimensions", embedding_dimensions)
            .field("embedding_send_dimensions", embedding_send_dimensions)
            .field("embedding_api_key", &mask(embedding_api_key))
            .field("embedding_timeout_secs", embedding_timeout_secs)
            .field("search_embedder", search_embedder)
            .field("sso_state_ttl_secs", sso_state_ttl_secs)
            .field("discovery_window_days", discovery_window_days)
            .field(
                "sso_providers",
                &sso_providers.iter().map(|p| format!("{} ({})", p.id, p.issuer)).collect::<Vec<_>>(),
            )
            .field("siem_sinks", &siem_sinks.iter().map(|s| s.describe()).collect::<Vec<_>>())
            .field("siem_batch_size", siem_batch_size)
            .field("siem_poll_ms", siem_poll_ms)
            .field("siem_max_backoff_secs", siem_max_backoff_secs)
            .field("max_policies_per_tenant", max_policies_per_tenant)
            .field("policy_threads", policy_threads)
            .field("policy_threads_per_tenant", policy_threads_per_tenant)
            .field("policy_queue_per_tenant", policy_queue_per_tenant)
            .field("hash_threads", hash_threads)
            .field("policy_isolation", policy_isolation)
            .field("policy_worker_memory_mib", policy_worker_memory_mib)
            .field("policy_worker_program", policy_worker_program)
            .field("hitl_timeout_secs", hitl_timeout_secs)
            .field("session_idle_secs", session_idle_secs)
            .field("hitl_poll_ms", hitl_poll_ms)
            .field("hitl_callback_max_attempts", hitl_callback_max_attempts)
            .field("hitl_callback_backoff_ms", hitl_callback_backoff_ms)
            .field("hitl_callback_max_backoff_secs", hitl_callback_max_backoff_secs)
            .field("hitl_callback_timeout_secs", hitl_callback_timeout_secs)
            .field("hitl_callback_allow_private", hitl_callback_allow_private)
            .field("hitl_callbacks_per_minute", hitl_callbacks_per_minute)
            .field("hitl_approval_token_ttl_secs", hitl_approval_token_ttl_secs)
            .field("ws_max_connections", ws_max_connections)
            .field("ws_max_connections_per_tenant", ws_max_connections_per_tenant)
            .field("hitl_max_long_polls_per_tenant", hitl_max_long_polls_per_tenant)
            .field("hitl_max_pending_callbacks_per_tenant", hitl_max_pending_callbacks_per_tenant)
            .field("max_queued_exports_per_tenant", max_queued_exports_per_tenant)
            .field("otlp_endpoint", &otlp_endpoint.as_deref().map(redact_url))
            .field("otlp_protocol", otlp_protocol)
            .field("otlp_hash_key", &mask(otlp_hash_key))
            .field("otlp_timeout_secs", otlp_timeout_secs)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(f: impl FnOnce(&mut Config)) -> Config {
        let mut c = Config::default();
        f(&mut c);
        c
    }

    #[test]
    fn defaults_are_valid_and_embedded() {
        let c = Config::default();
        c.validate().unwrap();
        assert_eq!(c.mode(), "embedded");
        assert_eq!(c.database().unwrap(), Database::Sqlite(PathBuf::from("./data/agentgov.db")));
    }

    #[test]
    fn database_scheme_decides_the_backend_and_unknown_schemes_fail() {
        let pg = with(|c| {
            c.database_url = Some("postgres://u:pw@db/agentgov".into());
            c.jwt_secret = Some("x".repeat(32).into());
            c.webhook_secret = Some("w".repeat(32).into());
        });
        assert!(matches!(pg.database().unwrap(), Database::Postgres(_)));
        pg.validate().unwrap();
        let mut no_webhook = pg.clone();
        no_webhook.webhook_secret = None;
        let err = no_webhook.validate().unwrap_err().to_string();
        assert!(err.contains("WEBHOOK_SECRET is required"), "{err}");
        let mut short = pg.clone();
        short.webhook_secret = Some("too short".into());
        assert!(short.validate().is_err());
        let mysql = with(|c| c.database_url = Some("mysql://db/x".into()));
        assert!(mysql.validate().is_err());
        let sqlite = with(|c| c.database_url = Some("sqlite:///tmp/x.db".into()));
        assert_eq!(sqlite.database().unwrap(), Database::Sqlite(PathBuf::from("/tmp/x.db")));
    }

    #[test]
    fn an_embedding_service_needs_its_model_and_dimensions() {
        let c = with(|c| c.embedding_url = Some("http://127.0.0.1:9/".into()));
        assert!(c.validate().unwrap_err().to_string().contains("AGENTGOV_EMBEDDING_MODEL"));
        let c = with(|c| {
            c.embedding_url = Some("http://127.0.0.1:9/".into());
            c.embedding_model = Some("m".into());
            c.embedding_dimensions = Some(8);
            c.embedding_api_key = Some("sk-very-secret".into());
        });
        c.validate().unwrap();
        assert!(!format!("{c:?}").contains("sk-very-secret"));
    }

    #[test]
    #[expect(clippy::result_large_err, reason = "figment's Jail API, not ours")]
    fn the_search_embedder_is_fused_unless_set_to_hashing_and_other_names_fail() {
        assert_eq!(Config::default().search_embedder, SearchEmbedder::Fused);
        figment::Jail::expect_with(|jail| {
            jail.set_env("AGENTGOV_SEARCH_EMBEDDER", "hashing");
            assert_eq!(Config::load(None).unwrap().search_embedder, SearchEmbedder::Hashing);
            jail.set_env("AGENTGOV_SEARCH_EMBEDDER", "minilm");
            let err = format!("{:#}", Config::load(None).unwrap_err());
            assert!(err.contains("minilm") && err.contains("fused"), "{err}");
            Ok(())
        });
    }

    #[test]
    fn a_metrics_token_must_be_long_enough_and_login_limits_positive() {
        let short = with(|c| c.metrics_token = Some("short".into()));
        assert!(short.validate().unwrap_err().to_string().contains("metrics_token"));
        let zero = with(|c| c.password_change_max_attempts = 0);
        assert!(zero.validate().is_err());
        let zero = with(|c| c.login_max_failures_per_email_per_minute = 0);
        assert!(zero.validate().is_err());
    }

    #[test]
    fn postgres_requires_a_shared_jwt_secret() {
        let c = with(|c| c.database_url = Some("postgres://db/agentgov".into()));
        assert!(c.validate().unwrap_err().to_string().contains("AGENTGOV_JWT_SECRET"));
    }

    #[test]
    fn debug_output_masks_every_secret() {
        let c = with(|c| {
            c.database_url = Some("postgres://user:hunter2hunter2@db/agentgov".into());
            c.redis_url = Some("redis://:redispass@cache:6379".into());
            c.admin_key = Some("admin-key-secret-value".into());
            c.jwt_secret = Some("j".repeat(40).into());
            c.webhook_secret = Some("webhook-secret-value-at-least-32-bytes".into());
            c.metrics_token = Some("metrics-scrape-token-value".into());
            c.otlp_hash_key = Some("otlp-hash-key-value-at-least-32-bytes".into());
        });
        c.validate().unwrap();
        let printed = format!("{c:?}");
        for secret in [
            "hunter2hunter2",
            "redispass",
            "admin-key-secret-value",
            &"j".repeat(40),
            "webhook-secret-value-at-least-32-bytes",
            "metrics-scrape-token-value",
            "otlp-hash-key-value-at-least-32-bytes",
        ] {
            assert!(!printed.contains(secret), "{secret} leaked in {printed}");
        }
        assert!(printed.contains("postgres://user:****@db/agentgov"));
    }

    #[test]
    #[expect(clippy::result_large_err, reason = "figment's Jail API, not ours")]
    fn environment_overrides_file_and_typos_fail_fast() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("agentgov.toml", "bind = \"127.0.0.1:9000\"\ntoken_ttl_secs = 120\n")?;
            jail.set_env("AGENTGOV_TOKEN_TTL_SECS", "300");
            jail.set_env("AGENTGOV_TEST_DATABASE_URL", "postgres://ignored");
            let c = Config::load(Some(Path::new("agentgov.toml"))).unwrap();
            assert_eq!(c.bind.port(), 9000);
            assert_eq!(c.token_ttl_secs, 300);
            jail.set_env("AGENTGOV_TOKEN_TTL", "300");
            assert!(Config::load(None).is_err());
            Ok(())
        });
    }

    #[test]
    #[expect(clippy::result_large_err, reason = "figment's Jail API, not ours")]
    fn callback_receivers_default_to_public_only_and_take_a_list_of_ranges() {
        let loopback = "127.0.0.1".parse().unwrap();
        assert!(!Config::default().callback_receivers().unwrap().permits(loopback));
        let bad = with(|c| c.hitl_callback_allow_private = "10.0.0.0/8,localhost".into());
        assert!(bad.validate().unwrap_err().to_string().contains("hitl_callback_allow_private"));
        assert!(with(|c| c.hitl_callbacks_per_minute = 0).validate().is_err());
        assert!(with(|c| c.hitl_approval_token_ttl_secs = 5).validate().is_err());
        assert!(with(|c| c.ws_max_connections_per_tenant = 0).validate().is_err());
        assert!(with(|c| c.hitl_max_long_polls_per_tenant = 0).validate().is_err());
        assert!(with(|c| c.hitl_max_pending_callbacks_per_tenant = 0).validate().is_err());
        assert!(with(|c| c.max_queued_exports_per_tenant = 101).validate().is_err());
        assert!(with(|c| c.otlp_endpoint = Some("collector:4317".into())).validate().is_err());
        assert!(with(|c| c.otlp_endpoint = Some("ftp://collector:4317".into())).validate().is_err());
        assert!(with(|c| c.otlp_endpoint = Some("http://collector:4317".into())).validate().is_ok());
        assert!(with(|c| c.otlp_hash_key = Some("short".into())).validate().is_err());
        assert!(with(|c| c.otlp_timeout_secs = 0).validate().is_err());
        figment::Jail::expect_with(|jail| {
            jail.set_env("AGENTGOV_HITL_CALLBACK_ALLOW_PRIVATE", "127.0.0.0/8, fd00::/8");
            jail.set_env("AGENTGOV_HITL_CALLBACKS_PER_MINUTE", "30");
            let c = Config::load(None).unwrap();
            let receivers = c.callback_receivers().unwrap();
            assert!(receivers.permits(loopback) && receivers.permits("fd00:ec2::254".parse().unwrap()));
            assert!(!receivers.permits("169.254.169.254".parse().unwrap()));
            assert_eq!(c.hitl_callbacks_per_minute, 30);
            jail.set_env("AGENTGOV_HITL_CALLBACK_ALLOW_PRIVATE", "127.0.0.1");
            assert!(Config::load(None).unwrap().callback_receivers().unwrap().permits(loopback));
            Ok(())
        });
    }

    #[test]
    #[expect(clippy::result_large_err, reason = "figment's Jail API, not ours")]
    fn env_names_are_the_variables_load_accepts() {
        let names = Config::env_names();
        let defaults = serde_json::to_value(Config::default()).unwrap();
        let fields = defaults.as_object().unwrap();
        assert_eq!(names.len(), fields.len() + NOT_SETTINGS.len() + UNPREFIXED.len(), "{names:?}");
        for field in fields.keys() {
            assert!(names.contains(&format!("AGENTGOV_{}", field.to_ascii_uppercase())), "{field}");
        }
        for name in ["AGENTGOV_CONFIG", "AGENTGOV_SHUTDOWN_TIMEOUT_SECS", "DATABASE_URL", "WEBHOOK_SECRET"] {
            assert!(names.iter().any(|n| n == name), "{name}");
        }
        assert!(!names.iter().any(|n| n == "AGENTGOV_TOKEN_TTL"));
        figment::Jail::expect_with(|jail| {
            jail.set_env("AGENTGOV_CONFIG", "ignored.toml");
            jail.set_env("AGENTGOV_SHUTDOWN_TIMEOUT_SECS", "5");
            jail.set_env("AGENTGOV_WORKERS", "2");
            jail.set_env("AGENTGOV_GUARD_MODELS", "/opt/agentgov/models");
            jail.set_env("AGENTGOV_GUARD_ENCODER", "off");
            assert_eq!(Config::load(None).unwrap().shutdown_timeout_secs, 5);
            Ok(())
        });
    }

    fn provider() -> SsoProviderConfig {
        SsoProviderConfig {
            id: "okta".into(),
            name: None,
            issuer: "https://acme.okta.com/oauth2/default/".into(),
            client_id: "client".into(),
            client_secret: "sso-client-secret-value".into(),
            redirect_uris: vec!["https://app.acme.com/sso/callback".into()],
            scopes: vec![],
            tenant_id: "0193a4c2-0000-7000-8000-000000000001".into(),
            default_role: "viewer".into(),
            allowed_domains: vec![" Acme.COM ".into()],
            create_users: false,
            trust_unverified_email: false,
        }
    }

    #[test]
    fn sso_providers_are_checked_at_start_up_and_their_secrets_masked() {
        let ok = with(|c| c.sso_providers = vec![provider()]);
        ok.validate().unwrap();
        let p = ok.sso_providers[0].to_provider().unwrap();
        assert_eq!(p.name, "okta");
        assert_eq!(p.issuer, "https://acme.okta.com/oauth2/default/", "kept exactly as the provider spells it");
        assert_eq!(p.allowed_domains, ["acme.com"]);
        assert!(!format!("{ok:?}").contains("sso-client-secret-value"));
        type Spoil = fn(&mut SsoProviderConfig);
        let bad: [(&str, Spoil); 6] = [
            ("id", |p| p.id = "Okta!".into()),
            ("issuer", |p| p.issuer = "not a url".into()),
            ("redirect_uris", |p| p.redirect_uris = vec![]),
            ("client_secret", |p| p.client_secret = "".into()),
            ("tenant_id", |p| p.tenant_id = "acme".into()),
            ("unknown role", |p| p.default_role = "root".into()),
        ];
        for (what, spoil) in bad {
            let mut p = provider();
            spoil(&mut p);
            let err = with(|c| c.sso_providers = vec![p]).validate().unwrap_err().to_string();
            assert!(err.contains(what), "{what}: {err}");
        }
        let twice = with(|c| c.sso_providers = vec![provider(), provider()]);
        assert!(twice.validate().unwrap_err().to_string().contains("twice"));
        assert!(with(|c| c.sso_state_ttl_secs = 0).validate().is_err());
    }
}
