//! Builds the adapters the configuration asks for and wires them into the services.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::ports::{Cache, EventBus, Store, SystemClock, UuidV7Gen};
use agentgov_domain::secrets::{AdminKey, PasswordHasher, TokenCodec};
use agentgov_domain::services::{AuthSettings, Ports, Secrets, ServerInfo, Services};
use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};
use secrecy::ExposeSecret;

use crate::config::{Config, Database};

/// Capacity of the in-process event bus; a subscriber further behind skips ahead.
const LOCAL_BUS_CAPACITY: usize = 4096;

/// Opens the configured store, migrating it when the configuration says so.
pub async fn open_store(config: &Config, migrate: bool) -> anyhow::Result<Arc<dyn Store>> {
    match config.database()? {
        Database::Sqlite(path) => {
            let store = agentgov_store_sqlite::SqliteStore::open(&path)
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

/// The configured JWT secret, or (embedded mode) one generated once and kept under
/// `data_dir`, so tokens survive a restart.
fn jwt_secret(config: &Config) -> anyhow::Result<Vec<u8>> {
    if let Some(secret) = &config.jwt_secret {
        return Ok(secret.expose_secret().as_bytes().to_vec());
    }
    let path = config.data_dir.join("jwt-secret");
    if path.exists() {
        let secret = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        return Ok(secret.trim_ascii().to_vec());
    }
    let mut bytes = [0u8; 48];
    SystemRandom::new().fill(&mut bytes).map_err(|_| anyhow::anyhow!("system random source failed"))?;
    let secret = URL_SAFE_NO_PAD.encode(bytes);
    write_private(&path, secret.as_bytes())?;
    tracing::info!(path = %path.display(), "generated a JWT signing secret for embedded mode");
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

/// Everything the HTTP layer needs.
pub async fn build_services(config: &Config) -> anyhow::Result<(Services, ServerInfo)> {
    let store = open_store(config, config.migrate_on_start).await?;
    let (cache, bus) = cache_and_bus(config)?;
    let policy = agentgov_policy_rego::RegoEngine::new().context("starting the policy engine")?;
    let clock = Arc::new(SystemClock);
    let ports = Ports { store, cache, bus, policy: Arc::new(policy), clock: clock.clone(), ids: Arc::new(UuidV7Gen) };
    let secrets = Secrets {
        hasher: PasswordHasher::new(config.argon2_memory_kib, config.argon2_iterations).context("argon2 parameters")?,
        tokens: TokenCodec::hs256(&jwt_secret(config)?).context("JWT secret")?,
        admin_key: AdminKey::new(config.admin_key.as_ref().map(|k| k.expose_secret())),
    };
    let settings = AuthSettings {
        token_ttl: Duration::from_secs(config.token_ttl_secs),
        login_max_failures_per_email: config.login_max_failures_per_email,
        login_max_failures_per_ip: config.login_max_failures_per_ip,
        login_window: Duration::from_secs(config.login_window_secs),
        ..AuthSettings::default()
    };
    let info = ServerInfo {
        version: env!("CARGO_PKG_VERSION"),
        mode: config.mode(),
        started_at: agentgov_domain::ports::Clock::now(clock.as_ref()),
    };
    Ok((Services::new(ports, secrets, settings, info.clone()), info))
}
