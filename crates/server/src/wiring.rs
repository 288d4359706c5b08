//! Builds the adapters the configuration asks for and wires them into the services.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agentgov_api::feed::{Feed, FeedSettings};
use agentgov_domain::model::JobKind;
use agentgov_domain::ports::{Cache, Embedder, EventBus, Store, SystemClock, UuidV7Gen};
use agentgov_domain::secrets::{AdminKey, PasswordHasher, TokenCodec, WebhookVerifier};
use agentgov_domain::services::anomalies::DetectorRun;
use agentgov_domain::services::audit::AuditLogSettings;
use agentgov_domain::services::discovery::ClusterRun;
use agentgov_domain::services::guard::{TrainError, TrainingRun};
use agentgov_domain::services::siem::{Forwarder, Step};
use agentgov_domain::services::{
    AgentSettings, AnomalyService, AuditSettings, AuthSettings, Background, BuiltinEmbedder, ClaimedJob,
    DiscoveryService, DiscoverySettings, FusedEmbedder, GuardService, GuardSettings, HitlService, HitlSettings,
    HitlWorker, PolicySettings, Ports, Secrets, ServerInfo, Services, SessionSettings, SessionWriters, Settings,
    SiemRoute, SiemService, SiemSettings, SsoSettings, StatusService,
};
use agentgov_embed_openai::{OpenAiConfig, OpenAiEmbedder};
use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures::StreamExt;
use futures::channel::mpsc::Receiver;
use ring::rand::{SecureRandom, SystemRandom};
use secrecy::{ExposeSecret, SecretString};

use crate::config::{Config, Database, SearchEmbedder};

/// Capacity of the in-process event bus; a subscriber further behind skips ahead.
const LOCAL_BUS_CAPACITY: usize = 4096;
/// Password hashes and checks of one tenant waiting for a hashing thread; past it, 429.
const HASH_QUEUE_PER_TENANT: usize = 64;

/// Whether this process is the only one writing the store: embedded mode, SQLite without
/// Redis, where the event bus is this process's own, so no other replica can share the store
/// (its caches would never hear of this one's changes). Postgres always counts on other
/// writers.
fn sole_writer(config: &Config) -> bool {
    config.redis_url.is_none() && matches!(config.database(), Ok(Database::Sqlite(_)))
}

/// Who else writes the agent sessions, and how this process learns of it: nobody when it is
/// the only writer; replicas marking their records in Redis when there is one; else (a
/// Postgres store without Redis) the store itself, read before each check of a session.
fn session_writers(config: &Config) -> SessionWriters {
    if sole_writer(config) {
        SessionWriters::Sole
    } else if config.redis_url.is_some() {
        SessionWriters::Announced
    } else {
        SessionWriters::Unannounced
    }
}

/// Opens the configured store, migrating it when the configuration says so.
pub async fn open_store(config: &Config, migrate: bool) -> anyhow::Result<Arc<dyn Store>> {
    match config.database()? {
        Database::Sqlite(path) => {
            use agentgov_store_sqlite::{FLUSH_AT, Indexing, SqliteStore};
            // The only writer writes its session index in bulk.
            let indexing =
                if sole_writer(config) { Indexing::Deferred { flush_at: FLUSH_AT } } else { Indexing::Immediate };
            let store = SqliteStore::open_with(&path, indexing)
                .with_context(|| format!("opening SQLite database {}", path.display()))?;
            Ok(Arc::new(store))
        }
        Database::Postgres(url) => {
            let store = agentgov_store_postgres::PgStore::connect(&url, config.db_pool_size)
                .await
                .context("connecting to Postgres")?;
            if migrate {
                store.run_migrations().await.context("running Postgres migrations")?;
            }
            Ok(Arc::new(store))
        }
    }
}

fn cache_and_bus(config: &Config) -> anyhow::Result<(Arc<dyn Cache>, Arc<dyn EventBus>)> {
    match &config.redis_url {
        Some(url) => {
            let url = url.expose_secret();
            let prefix = &config.redis_prefix;
            let cache = agentgov_cache_redis::RedisCache::connect(url, prefix, config.redis_pool_size)
                .context("connecting to Redis")?;
            let channel = format!("{prefix}events");
            let bus = agentgov_cache_redis::RedisBus::connect(url, &channel).context("connecting to Redis")?;
            Ok((Arc::new(cache), Arc::new(bus)))
        }
        None => Ok((
            Arc::new(agentgov_local::MemoryCache::new()),
            Arc::new(agentgov_local::MemoryBus::new(LOCAL_BUS_CAPACITY)),
        )),
    }
}

/// A configured secret, or (embedded mode) one generated once and kept in `data_dir/file`
/// (mode 0600), so it survives a restart. Its path is logged, never its value.
fn secret_or_generated(
    config: &Config,
    configured: Option<&SecretString>,
    file: &str,
    what: &str,
) -> anyhow::Result<Vec<u8>> {
    if let Some(secret) = configured {
        return Ok(secret.expose_secret().as_bytes().to_vec());
    }
    let path = config.data_dir.join(file);
    if path.exists() {
        let secret = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        return Ok(secret.trim_ascii().to_vec());
    }
    let mut bytes = [0u8; 48];
    SystemRandom::new().fill(&mut bytes).map_err(|_| anyhow::anyhow!("system random source failed"))?;
    let secret = URL_SAFE_NO_PAD.encode(bytes);
    write_private(&path, secret.as_bytes())?;
    tracing::info!(path = %path.display(), "generated the {what} for embedded mode; read it from this file");
    Ok(secret.into_bytes())
}

fn write_private(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).with_context(|| format!("creating {}", path.display()))?;
    std::io::Write::write_all(&mut file, contents).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// How often the job worker looks for jobs queued by other replicas.
const JOB_POLL: Duration = Duration::from_secs(2);
/// How often finished jobs past their keeping (export files) are deleted.
const JOB_PURGE_EVERY: Duration = Duration::from_secs(300);
/// How often a running training stores its progress (and notices a cancellation).
const TRAINING_REPORT: Duration = Duration::from_millis(500);
/// How often the guard's screening counts and the checks' decision counts are added to the store.
const STATS_FLUSH: Duration = Duration::from_secs(5);

/// How long a request to an SSO provider (discovery, keys, token) may take.
const SSO_HTTP_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts the work that runs beside the handlers on the current runtime: the audit log's
/// group-commit writer, the one job worker (exports, trainings, clusterings) and the
/// guard's statistics. Answers the HITL worker's wake-ups: that worker runs under a lease,
/// so `serve` starts it. Without `export_worker_on`, this process runs no exports.
fn spawn_background(services: &Services, background: Background, export_worker_on: bool) -> Receiver<()> {
    let Background { audit_writer, job_wakeups, hitl_wakeups } = background;
    tokio::spawn(audit_writer.run());
    tokio::task::spawn_blocking(agentgov_domain::services::guard::warm_up);
    tokio::task::spawn_blocking(agentgov_domain::services::anomalies::warm_up);
    let kinds: Vec<JobKind> =
        JobKind::ALL.iter().copied().filter(|k| export_worker_on || *k != JobKind::Export).collect();
    tokio::spawn(job_worker(services.clone(), kinds, job_wakeups));
    tokio::spawn(stats_flusher(services.guard.clone(), services.status.clone()));
    hitl_wakeups
}

/// The one job worker: claims queued jobs of `kinds` (from any replica, the tenant with the
/// fewest running first) and runs each with the service of its kind, at most one of each
/// kind at a time in this process (a training or an export per process is what the CPU and
/// the memory budget allow), several kinds side by side. When nothing can be claimed it
/// waits for a wake-up (a job queued by this process), a run to end, or the poll; now and
/// then it deletes the finished jobs past their keeping.
async fn job_worker(services: Services, kinds: Vec<JobKind>, mut wakeups: Receiver<()>) {
    let mut running: tokio::task::JoinSet<JobKind> = tokio::task::JoinSet::new();
    let mut busy: Vec<JobKind> = Vec::new();
    let mut next_purge = tokio::time::Instant::now();
    loop {
        let free: Vec<JobKind> = kinds.iter().copied().filter(|k| !busy.contains(k)).collect();
        if !free.is_empty() {
            match services.jobs.claim(&free).await {
                Ok(Some(claimed)) => {
                    let kind = claimed.job.kind;
                    busy.push(kind);
                    let services = services.clone();
                    running.spawn(async move {
                        // Its own task, so that a panic in a run still frees its kind here;
                        // the job, unfinished, is taken over once its lease runs out.
                        if let Err(e) = tokio::spawn(async move { run_job(&services, claimed).await }).await {
                            tracing::error!(error = %e, kind = kind.as_str(), "a job run stopped unexpectedly");
                        }
                        kind
                    });
                    continue;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "the job worker could not claim a job"),
            }
        }
        if tokio::time::Instant::now() >= next_purge {
            match services.jobs.purge_expired().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(deleted = n, "deleted finished jobs past their keeping"),
                Err(e) => tracing::warn!(error = %e, "could not delete finished jobs"),
            }
            next_purge = tokio::time::Instant::now() + JOB_PURGE_EVERY;
        }
        tokio::select! {
            woken = wakeups.next() => if woken.is_none() { tokio::time::sleep(JOB_POLL).await },
            () = tokio::time::sleep(JOB_POLL) => {}
            Some(Ok(kind)) = running.join_next() => busy.retain(|k| *k != kind),
        }
    }
}

/// Runs one claimed job with the service of its kind.
async fn run_job(services: &Services, claimed: ClaimedJob) {
    let (kind, id) = (claimed.job.kind, claimed.job.id);
    let outcome = match kind {
        JobKind::Export => services.audit.run_export(claimed).await,
        JobKind::GuardTraining => match services.guard.begin_training(claimed).await {
            Ok(run) => {
                run_training(&services.guard, run).await;
                Ok(())
            }
            Err(e) => Err(e),
        },
        JobKind::AnomalyTraining => match services.anomalies.begin_training(claimed).await {
            Ok(Some(run)) => {
                run_detector_training(&services.anomalies, run).await;
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        },
        JobKind::Replay => services.replays.run_replay(claimed).await,
        JobKind::Clustering => match services.discovery.begin_clustering(claimed).await {
            Ok(run) => {
                run_clustering(&services.discovery, run).await;
                Ok(())
            }
            Err(e) => Err(e),
        },
    };
    if let Err(e) = outcome {
        // The job stays claimed: another attempt takes it over once its lease runs out.
        tracing::warn!(job = %id, kind = kind.as_str(), error = %e, "a job run failed");
    }
}

/// Fits the anomaly detector on a blocking thread, then stores it.
async fn run_detector_training(anomalies: &AnomalyService, run: DetectorRun) {
    let run = Arc::new(run);
    let fitting = {
        let run = run.clone();
        tokio::task::spawn_blocking(move || run.train())
    };
    let outcome = match fitting.await {
        Ok(trained) => anomalies.finish_training(&run, trained).await,
        Err(e) => {
            tracing::error!(task = %run.task.id, error = %e, "anomaly detector training stopped unexpectedly");
            anomalies.fail_training(&run, "training stopped unexpectedly; start it again").await
        }
    };
    if let Err(e) = outcome {
        tracing::warn!(task = %run.task.id, error = %e, "could not store the detector training's outcome");
    }
}

/// This process's SIEM forwarders. [`SiemForwarders::stop`] ends them, each giving its
/// sink's lease up so another replica takes over at once (rather than after the lease
/// runs out); dropping it leaves them running.
pub struct SiemForwarders {
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// How long `SiemForwarders::stop` waits for a forwarder in the middle of a send.
const SIEM_STOP_GRACE: Duration = Duration::from_secs(5);

impl SiemForwarders {
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = tokio::time::timeout(SIEM_STOP_GRACE, task).await;
        }
    }
}

/// Starts one forwarding loop per configured SIEM sink (by `agentgov serve` only: a
/// command-line command must not take a sink's lease and leave).
pub fn spawn_siem_forwarders(siem: &SiemService) -> SiemForwarders {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let tasks = siem
        .routes()
        .iter()
        .map(|route| tokio::spawn(siem_forwarder(siem.clone(), route.clone(), stopped.clone())))
        .collect();
    SiemForwarders { stop, tasks }
}

/// Resolves when `stop` is told to stop; never when its sender is gone (dropped: detached).
async fn stop_requested(stop: &mut tokio::sync::watch::Receiver<bool>) {
    if stop.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Forwards one sink until told to stop: steps while there is work, polls when idle, backs
/// off while the sink fails (renewing its lease meanwhile, so the sink does not hop between
/// replicas), and looks again now and then when another replica holds the lease. On stop
/// it gives the lease up.
async fn siem_forwarder(siem: SiemService, route: SiemRoute, mut stop: tokio::sync::watch::Receiver<bool>) {
    let settings = siem.settings().clone();
    let mut state = Forwarder::default();
    loop {
        // A step is never cut short (a sink's write could be left half done); a stop is
        // noticed between steps and while waiting.
        if *stop.borrow() {
            break;
        }
        let (wait, keep_lease) = match siem.step(&route, &mut state).await {
            Ok(Step::Progressed) => continue,
            Ok(Step::Idle) => (settings.poll, false),
            Ok(Step::NotLeader) => (settings.lease_ttl / 3, false),
            Ok(Step::Failed) => (state.backoff(&settings), true),
            Err(e) => {
                tracing::warn!(sink = %route.name, error = %e, "SIEM forwarding could not read its progress");
                (settings.backoff_min, false)
            }
        };
        let until = tokio::time::Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep(left.min(settings.lease_ttl / 3)) => {}
                () = stop_requested(&mut stop) => {
                    siem.release(&route, &mut state).await;
                    return;
                }
            }
            if keep_lease && let Err(e) = siem.keep_lease(&route, &mut state).await {
                tracing::warn!(sink = %route.name, error = %e, "could not renew the SIEM lease");
            }
        }
    }
    siem.release(&route, &mut state).await;
}

/// The HITL worker of this process. [`HitlWorkerHandle::stop`] ends it, giving the `hitl`
/// lease up so another replica takes over at once; dropping it leaves it running.
pub struct HitlWorkerHandle {
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl HitlWorkerHandle {
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = tokio::time::timeout(SIEM_STOP_GRACE, self.task).await;
    }
}

/// What `agentgov serve` starts beside the services that a command-line command must not
/// (work under a lease, which a short-lived process would take and leave).
pub struct LeaseWork {
    hitl_wakeups: Receiver<()>,
    hitl_poll: Duration,
}

/// Starts the HITL worker (by `agentgov serve` only): on the replica holding the `hitl`
/// lease, expires requests and sends due callbacks every `poll`, and at once when this
/// process scheduled a callback.
pub fn spawn_hitl_worker(hitl: &HitlService, work: LeaseWork) -> HitlWorkerHandle {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(hitl_worker(hitl.clone(), work, stopped));
    HitlWorkerHandle { stop, task }
}

async fn hitl_worker(hitl: HitlService, mut work: LeaseWork, mut stop: tokio::sync::watch::Receiver<bool>) {
    // A round still sending renews the lease and looks for newly due callbacks on each tick.
    let every = work.hitl_poll.max(Duration::from_millis(100));
    let ticks = futures::stream::unfold((), move |()| async move {
        tokio::time::sleep(every).await;
        Some(((), ()))
    });
    let mut worker = HitlWorker::with_ticks(ticks);
    loop {
        if *stop.borrow() {
            break;
        }
        if let Err(e) = hitl.step(&mut worker).await {
            tracing::warn!(error = %e, "HITL expiry and callbacks: a round failed; trying again");
        }
        tokio::select! {
            () = wait_for_work(&mut work.hitl_wakeups, work.hitl_poll) => {}
            () = stop_requested(&mut stop) => break,
        }
    }
    hitl.release(&mut worker).await;
}

/// Reads the tenant's shadow events page by page (each page aggregated on a blocking
/// thread), clusters them on a blocking thread, and stores the candidates. A lost lease
/// (another worker took the job over) stops it quietly.
async fn run_clustering(discovery: &DiscoveryService, run: ClusterRun) {
    let run = Arc::new(run);
    let outcome: Result<(), String> = async {
        loop {
            let page = discovery.next_page(&run).await.map_err(|e| e.to_string())?;
            if page.is_empty() {
                break;
            }
            let r = run.clone();
            tokio::task::spawn_blocking(move || r.absorb(&page)).await.map_err(|e| e.to_string())?;
        }
        let r = run.clone();
        let clustering = tokio::task::spawn_blocking(move || r.cluster()).await.map_err(|e| e.to_string())?;
        discovery.finish_clustering(&run, clustering).await.map_err(|e| e.to_string())
    }
    .await;
    if let Err(error) = outcome {
        tracing::warn!(job = %run.job.id, %error, "clustering failed");
        if let Err(e) = discovery.fail_clustering(&run, "clustering stopped unexpectedly; start it again").await {
            tracing::warn!(job = %run.job.id, error = %e, "could not record the clustering failure");
        }
    }
}

/// Waits for a wake-up or `poll`, whichever comes first (only `poll` once the senders are
/// gone).
async fn wait_for_work(wakeups: &mut Receiver<()>, poll: Duration) {
    tokio::select! {
        woken = wakeups.next() => if woken.is_none() { tokio::time::sleep(poll).await },
        () = tokio::time::sleep(poll) => {}
    }
}

/// Fits the model on a blocking thread while this task reports its progress (which renews
/// the lease and notices a cancellation), then stores the outcome.
async fn run_training(guard: &GuardService, run: TrainingRun) {
    let run = Arc::new(run);
    let fitting = {
        let run = run.clone();
        tokio::task::spawn_blocking(move || run.train())
    };
    tokio::pin!(fitting);
    let result = loop {
        tokio::select! {
            done = &mut fitting => break done,
            () = tokio::time::sleep(TRAINING_REPORT) => {
                if let Err(e) = guard.report_progress(&run).await {
                    tracing::warn!(task = %run.task.id, error = %e, "could not store training progress");
                }
            }
        }
    };
    let result = result.unwrap_or_else(|e| {
        tracing::error!(task = %run.task.id, error = %e, "guard training stopped unexpectedly");
        Err(TrainError::Invalid("training stopped unexpectedly; start it again".into()))
    });
    if let Err(e) = guard.finish_training(&run, result).await {
        tracing::warn!(task = %run.task.id, error = %e, "could not store the training outcome");
    }
}

/// Adds the guard's screening counts and the checks' decision counts to the store every
/// few seconds.
async fn stats_flusher(guard: GuardService, status: StatusService) {
    loop {
        tokio::time::sleep(STATS_FLUSH).await;
        if let Err(e) = guard.flush_stats().await {
            tracing::warn!(error = %e, "could not store guard statistics; kept for the next flush");
        }
        if let Err(e) = status.flush_counts().await {
            tracing::warn!(error = %e, "could not store decision counts; kept for the next flush");
        }
    }
}

/// Delivers the bus's events to the services that react to other replicas' changes (a
/// policy or agent change drops the in-process copies here). Resubscribes after a lost
/// connection.
async fn follow_bus(bus: Arc<dyn EventBus>, services: Services, feed: Feed) {
    loop {
        match bus.subscribe().await {
            Ok(mut events) => {
                services.on_bus_subscribed();
                while let Some(event) = events.next().await {
                    services.on_bus_event(&event);
                    feed.publish(&event);
                }
                tracing::warn!("event bus subscription ended; resubscribing");
            }
            Err(e) => tracing::warn!(error = %e, "could not subscribe to the event bus; retrying"),
        }
        tokio::time::sleep(BUS_RETRY).await;
    }
}

/// Pause before resubscribing to the bus.
const BUS_RETRY: Duration = Duration::from_secs(1);

/// The configured external embeddings service, or the built-in embedder.
async fn embedder(config: &Config) -> anyhow::Result<Arc<dyn Embedder>> {
    let (Some(url), Some(model), Some(dimensions)) =
        (&config.embedding_url, &config.embedding_model, config.embedding_dimensions)
    else {
        return Ok(builtin_embedder(config.search_embedder).await);
    };
    let external = OpenAiEmbedder::new(OpenAiConfig {
        base_url: url.clone(),
        model: model.clone(),
        model_version: config.embedding_model_version,
        dimensions,
        send_dimensions: config.embedding_send_dimensions,
        api_key: config.embedding_api_key.clone(),
        timeout: Duration::from_secs(config.embedding_timeout_secs),
        max_batch: agentgov_embed_openai::DEFAULT_MAX_BATCH,
    })
    .context("embedding service")?;
    tracing::info!(endpoint = external.endpoint(), model, "agents are embedded by an external service");
    Ok(Arc::new(external))
}

/// The built-in embedder of agent search: fused with the Prompt Guard's encoder when that is
/// installed (loading it takes about a second, off the runtime's threads), and says so;
/// the hashing embedder alone otherwise, with the reason.
async fn builtin_embedder(choice: SearchEmbedder) -> Arc<dyn Embedder> {
    if choice == SearchEmbedder::Hashing {
        tracing::info!("agent search: the hashing embedder (search_embedder = hashing)");
        return Arc::new(BuiltinEmbedder::new());
    }
    let reason = match tokio::task::spawn_blocking(FusedEmbedder::installed).await {
        Ok(Ok(fused)) => {
            tracing::info!(
                model = fused.model().name,
                "agent search: the hashing embedder fused with the multilingual encoder"
            );
            return Arc::new(fused);
        }
        Ok(Err(reason)) => reason.to_owned(),
        Err(e) => format!("loading it failed: {e}"),
    };
    tracing::warn!(
        reason,
        "agent search: encoder stage off (ranking with the hashing embedder alone); install it with `cargo xtask guard-models`"
    );
    Arc::new(BuiltinEmbedder::new())
}

/// Rego in worker processes (the default), or in this process.
fn policy_engine(config: &Config) -> anyhow::Result<Arc<dyn agentgov_domain::ports::PolicyEngine>> {
    if !config.policy_isolation {
        tracing::warn!("tenant policies run inside the server process (policy_isolation = false)");
        return Ok(Arc::new(agentgov_policy_rego::RegoEngine::new().context("starting the policy engine")?));
    }
    let program = match &config.policy_worker_program {
        Some(program) => program.clone(),
        None => std::env::current_exe().context("locating this binary to start policy workers")?,
    };
    let command =
        agentgov_policy_rego::WorkerCommand { program, args: Vec::new(), memory_mib: config.policy_worker_memory_mib };
    let engine = agentgov_policy_rego::IsolatedEngine::new(command, config.policy_threads())
        .context("starting the policy engine")?;
    Ok(Arc::new(engine))
}

/// The guardrail spans' exporter when `otlp_endpoint` is set (docs/integrations.md), else
/// none. Its input hashes are keyed by `otlp_hash_key`, or a key derived from the JWT secret
/// (which every replica shares), never the secret itself.
fn telemetry(config: &Config) -> anyhow::Result<Arc<dyn agentgov_domain::ports::Telemetry>> {
    let Some(endpoint) = &config.otlp_endpoint else {
        return Ok(Arc::new(agentgov_domain::ports::NoTelemetry));
    };
    let hash_key = match &config.otlp_hash_key {
        Some(key) => key.expose_secret().as_bytes().to_vec(),
        None => {
            let jwt = secret_or_generated(config, config.jwt_secret.as_ref(), "jwt-secret", "JWT signing secret")?;
            let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &jwt);
            ring::hmac::sign(&key, b"agentgov: key of the OTLP spans' input hashes").as_ref().to_vec()
        }
    };
    let exporter = agentgov_otel::OtlpTelemetry::start(&agentgov_otel::OtlpConfig {
        endpoint: endpoint.clone(),
        protocol: config.otlp_protocol,
        hash_key,
        timeout: Duration::from_secs(config.otlp_timeout_secs),
    })
    .context("the OTLP exporter")?;
    tracing::info!(endpoint = %crate::config::redact_url(endpoint), protocol = ?config.otlp_protocol, "decisions and screenings are exported as OpenTelemetry spans");
    Ok(Arc::new(exporter))
}

/// What [`build_services`] makes.
pub struct Built {
    pub services: Services,
    pub info: ServerInfo,
    /// The real-time feed, fed by this process's bus follower.
    pub feed: Feed,
    /// Work under a lease, for `serve` to start.
    pub lease_work: LeaseWork,
    /// The guardrail spans' exporter, for `serve` to flush at the end.
    pub telemetry: Arc<dyn agentgov_domain::ports::Telemetry>,
}

/// Everything the HTTP layer needs; starts the background work on the current runtime.
pub async fn build_services(config: &Config) -> anyhow::Result<Built> {
    // Built (addresses, URLs, CA files checked) before anything is opened, so a mistake
    // stops start-up at once, with the sink named. `Config::validate` leaves this to here,
    // so each sink is built once.
    let siem_sinks = config.siem_sinks.iter().map(|s| s.to_route()).collect::<anyhow::Result<Vec<_>>>()?;
    let store = open_store(config, config.migrate_on_start).await?;
    let (cache, bus) = cache_and_bus(config)?;
    let policy = policy_engine(config)?;
    let telemetry = telemetry(config)?;
    let exporter = telemetry.clone();
    let clock = Arc::new(SystemClock);
    let ports = Ports {
        cache,
        bus,
        policy,
        clock: clock.clone(),
        ids: Arc::new(UuidV7Gen),
        embedder: embedder(config).await?,
        oidc: Arc::new(agentgov_sso_oidc::OidcAdapter::new(SSO_HTTP_TIMEOUT).context("the OpenID Connect client")?),
        siem_sinks: siem_sinks.into(),
        callbacks: Arc::new(
            agentgov_notify_http::HttpCallbacks::new(
                Duration::from_secs(config.hitl_callback_timeout_secs),
                config.callback_receivers()?,
            )
            .map_err(anyhow::Error::msg)?,
        ),
        offload: Arc::new(
            agentgov_local::TenantPool::new(
                "policy",
                config.policy_threads(),
                config.policy_threads_per_tenant(),
                config.policy_queue_per_tenant,
            )
            .context("the policy threads")?,
        ),
        hashing: Arc::new(
            agentgov_local::TenantPool::new(
                "hashing",
                config.hash_threads(),
                (config.hash_threads() / 2).max(1),
                HASH_QUEUE_PER_TENANT,
            )
            .context("the password hashing threads")?,
        ),
        telemetry,
    };
    let secrets = Secrets {
        hasher: PasswordHasher::new(config.argon2_memory_kib, config.argon2_iterations).context("argon2 parameters")?,
        tokens: TokenCodec::hs256(&secret_or_generated(
            config,
            config.jwt_secret.as_ref(),
            "jwt-secret",
            "JWT signing secret",
        )?)
        .context("JWT secret")?,
        webhook: WebhookVerifier::new(&secret_or_generated(
            config,
            config.webhook_secret.as_ref(),
            "webhook-secret",
            "webhook signing secret (WEBHOOK_SECRET)",
        )?),
        admin_key: AdminKey::new(config.admin_key.as_ref().map(|k| k.expose_secret())),
    };
    let settings = Settings {
        auth: AuthSettings {
            token_ttl: Duration::from_secs(config.token_ttl_secs),
            login_max_failures_per_email_ip: config.login_max_failures_per_email_ip,
            login_max_failures_per_ip: config.login_max_failures_per_ip,
            login_max_failures_per_email_per_minute: config.login_max_failures_per_email_per_minute,
            login_window: Duration::from_secs(config.login_window_secs),
            password_change_max_attempts: config.password_change_max_attempts,
            ..AuthSettings::default()
        },
        audit: AuditSettings {
            log: AuditLogSettings { max_batch: config.audit_max_batch, ..AuditLogSettings::default() },
            export_retention: Duration::from_secs(config.audit_export_retention_secs),
            max_queued_exports_per_tenant: config.max_queued_exports_per_tenant,
            ..AuditSettings::default()
        },
        agents: AgentSettings {
            stale_after: Duration::from_secs(config.agent_stale_after_secs),
            ..AgentSettings::default()
        },
        policies: PolicySettings {
            approval_threshold: config.approval_threshold,
            cache_ttl: Duration::from_secs(config.policy_cache_ttl_secs),
            hitl_timeout_secs: config.hitl_timeout_secs,
            max_policies_per_tenant: config.max_policies_per_tenant,
        },
        guard: GuardSettings::default(),
        sessions: SessionSettings {
            idle: Duration::from_secs(config.session_idle_secs),
            writers: session_writers(config),
            ..SessionSettings::default()
        },
        discovery: DiscoverySettings {
            window: Duration::from_secs(config.discovery_window_days * 86_400),
            ..DiscoverySettings::default()
        },
        sso: SsoSettings {
            providers: config.sso_providers.iter().map(|p| p.to_provider()).collect::<anyhow::Result<_>>()?,
            state_ttl: Duration::from_secs(config.sso_state_ttl_secs),
        },
        siem: SiemSettings {
            batch: config.siem_batch_size,
            poll: Duration::from_millis(config.siem_poll_ms),
            backoff_max: Duration::from_secs(config.siem_max_backoff_secs),
            ..SiemSettings::default()
        },
        hitl: HitlSettings {
            callback_max_attempts: config.hitl_callback_max_attempts,
            callback_backoff: Duration::from_millis(config.hitl_callback_backoff_ms),
            callback_backoff_max: Duration::from_secs(config.hitl_callback_max_backoff_secs),
            receivers: config.callback_receivers()?,
            callbacks_per_minute: config.hitl_callbacks_per_minute,
            approval_token_ttl: Duration::from_secs(config.hitl_approval_token_ttl_secs),
            max_open_callbacks_per_tenant: config.hitl_max_pending_callbacks_per_tenant,
            max_long_polls_per_tenant: config.hitl_max_long_polls_per_tenant,
            ..HitlSettings::default()
        },
    };
    let info = ServerInfo {
        version: env!("CARGO_PKG_VERSION"),
        mode: config.mode(),
        started_at: agentgov_domain::ports::Clock::now(clock.as_ref()),
    };
    let bus = ports.bus.clone();
    let (services, background) = Services::new(ports, store, secrets, settings, info.clone());
    let hitl_wakeups = spawn_background(&services, background, config.audit_export_worker);
    let work = LeaseWork { hitl_wakeups, hitl_poll: Duration::from_millis(config.hitl_poll_ms) };
    let feed = Feed::new(FeedSettings {
        max_sockets: config.ws_max_connections,
        max_sockets_per_tenant: config.ws_max_connections_per_tenant,
        ..FeedSettings::default()
    });
    tokio::spawn(follow_bus(bus, services.clone(), feed.clone()));
    Ok(Built { services, info, feed, lease_work: work, telemetry: exporter })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_secrets_are_generated_once_privately_and_configured_ones_win() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config { data_dir: dir.path().to_path_buf(), ..Config::default() };
        let first = secret_or_generated(&config, None, "webhook-secret", "webhook signing secret").unwrap();
        assert!(first.len() >= agentgov_domain::secrets::MIN_WEBHOOK_SECRET_LEN);
        let again = secret_or_generated(&config, None, "webhook-secret", "webhook signing secret").unwrap();
        assert_eq!(first, again, "kept across restarts");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("webhook-secret")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let configured = SecretString::from("configured-secret-0123456789abcdef");
        let used = secret_or_generated(&config, Some(&configured), "webhook-secret", "x").unwrap();
        assert_eq!(used, b"configured-secret-0123456789abcdef");
    }

    #[tokio::test]
    async fn a_sink_that_cannot_be_built_stops_start_up_before_the_store_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let sink = serde_json::from_value(serde_json::json!({
            "name": "soc", "kind": "syslog-tls", "address": "siem.example:6514", "tls_ca_file": "/nonexistent/ca.pem"
        }))
        .unwrap();
        let data_dir = dir.path().join("data");
        let config = Config { data_dir: data_dir.clone(), siem_sinks: vec![sink], ..Config::default() };
        config.validate().unwrap();
        let err = build_services(&config).await.err().unwrap().to_string();
        assert!(err.contains("siem_sinks[soc]: reading tls_ca_file"), "{err}");
        assert!(!data_dir.exists(), "nothing was opened");
    }

    #[tokio::test]
    async fn stopped_siem_forwarders_hand_their_leases_over_at_once() {
        use agentgov_domain::ports::{Clock, IdGen};
        let dir = tempfile::tempdir().unwrap();
        // A receiver that is down: the forwarder takes the lease, fails, and backs off.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let sink = serde_json::from_value(serde_json::json!({
            "name": "soc", "kind": "syslog-tcp", "address": closed.to_string()
        }))
        .unwrap();
        let config = Config {
            data_dir: dir.path().to_path_buf(),
            siem_sinks: vec![sink],
            argon2_memory_kib: 256,
            ..Config::default()
        };
        let services = build_services(&config).await.unwrap().services;
        let tenant = agentgov_domain::services::NewTenant {
            name: "acme".into(),
            admin_email: "admin@acme.test".into(),
            admin_password: "correct horse battery staple".into(),
        };
        services.tenants.create(tenant, "test").await.unwrap();
        let forwarders = spawn_siem_forwarders(&services.siem);
        let store = open_store(&config, false).await.unwrap();
        let other = UuidV7Gen.new_id();
        let now = || SystemClock.now();
        let mut failed = 0;
        for _ in 0..100 {
            failed = store.siem_sink_state("soc").await.unwrap().failed;
            if failed > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(failed > 0, "the forwarder tried");
        let until = now() + Duration::from_secs(30);
        assert!(!store.try_lease("siem:soc", other, now(), until).await.unwrap(), "held by the forwarder");
        forwarders.stop().await;
        assert!(store.try_lease("siem:soc", other, now(), until).await.unwrap(), "given up on stop");
    }
}
