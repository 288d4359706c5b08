//! The server under test: a child process on a free loopback port with a temporary data dir,
//! in embedded mode (SQLite in that dir) or on a throwaway Postgres database; killed and
//! cleaned up (data dir, database) when dropped, also when the benchmark fails part-way. It
//! can be killed and started again on the same data (`crash`), and joined by a second
//! replica on the same database (`soak`).

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use std::process::Stdio;

use crate::cmd::{self, cargo};

const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
const ADMIN_EMAIL: &str = "bench-admin@agentgov.test";

/// Where the server keeps its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// SQLite in the temporary data dir, in-process cache and bus.
    Embedded,
    /// A database created for the run next to the one `admin_url` names (dropped afterwards),
    /// with the in-process cache and bus (a single replica needs no Redis).
    Postgres { admin_url: String },
}

impl Backend {
    /// Embedded, then (unless `skip_postgres`) Postgres next to
    /// `$AGENTGOV_BENCH_DATABASE_URL` (default [`DEFAULT_POSTGRES_URL`]).
    pub fn every(skip_postgres: bool) -> Vec<Backend> {
        let mut backends = vec![Backend::Embedded];
        if !skip_postgres {
            let admin_url =
                std::env::var("AGENTGOV_BENCH_DATABASE_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.into());
            backends.push(Backend::Postgres { admin_url });
        }
        backends
    }

    pub fn label(&self) -> &'static str {
        match self {
            Backend::Embedded => "embedded (SQLite)",
            Backend::Postgres { .. } => "Postgres",
        }
    }
}

/// What a signed-in tenant admin holds.
pub struct Credentials {
    pub access_token: String,
    /// The tenant's first API key (the admin's: every permission, `audit:write` included).
    pub api_key: String,
}

pub struct Server {
    child: Child,
    /// What [`Server::restart`] starts again: the binary and the environment it is given.
    binary: PathBuf,
    env: Vec<(String, String)>,
    dir: PathBuf,
    pub base: String,
    admin_key: String,
    password: String,
    /// `WEBHOOK_SECRET`, set in both modes so the benchmark can sign webhook deliveries.
    pub webhook_secret: String,
    /// Dropped after `Server::drop` has killed the child (fields drop after the struct).
    database: Option<Database>,
}

impl Server {
    pub fn start(binary: &Path, backend: &Backend) -> anyhow::Result<Self> {
        Self::start_with(binary, backend, &[])
    }

    /// [`Server::start`] with more environment variables (`AGENTGOV_SIEM_SINKS`, …), set
    /// after (so over) the ones `start` sets.
    pub fn start_with(binary: &Path, backend: &Backend, extra_env: &[(&str, String)]) -> anyhow::Result<Self> {
        let nonce = nonce();
        let (dir_guard, dir) = DirGuard::create(&nonce)?;
        let database = match backend {
            Backend::Embedded => None,
            Backend::Postgres { admin_url } => Some(Database::create(admin_url, &nonce)?),
        };
        let port = free_port()?;
        let admin_key = format!("bench-admin-key-{nonce}");
        let webhook_secret = format!("bench-webhook-secret-{nonce}-0123456789abcdef");
        let mut env = vec![
            ("AGENTGOV_DATA_DIR".to_owned(), dir.display().to_string()),
            ("AGENTGOV_BIND".to_owned(), format!("127.0.0.1:{port}")),
            ("AGENTGOV_ADMIN_KEY".to_owned(), admin_key.clone()),
            ("AGENTGOV_LOG_LEVEL".to_owned(), "warn".to_owned()),
            // Set in embedded mode too (which would otherwise generate one in the data dir),
            // so the benchmark knows the secret to sign webhook deliveries with.
            ("WEBHOOK_SECRET".to_owned(), webhook_secret.clone()),
        ];
        if let Some(db) = &database {
            env.push(("DATABASE_URL".to_owned(), db.url.clone()));
            env.push(("AGENTGOV_JWT_SECRET".to_owned(), format!("bench-jwt-secret-{nonce}-0123456789abcdef")));
        }
        env.extend(extra_env.iter().map(|(name, value)| ((*name).to_owned(), value.clone())));
        let child = spawn(binary, &env, &dir, false)?;
        let mut server = Server {
            child,
            binary: binary.to_owned(),
            env,
            dir: dir_guard.release(),
            base: format!("http://127.0.0.1:{port}"),
            admin_key,
            password: format!("pw-{nonce}"),
            webhook_secret,
            database,
        };
        server.wait_healthy()?;
        Ok(server)
    }

    /// Another replica of this server: the same settings and database (Postgres mode only),
    /// and Redis when `REDIS_URL` was given; a port and data dir of its own. Drop it before
    /// this one, which owns the database.
    pub fn replica(&self) -> anyhow::Result<Server> {
        if self.database.is_none() {
            bail!("a second replica needs Postgres mode: embedded SQLite belongs to one process");
        }
        let nonce = nonce();
        let (dir_guard, dir) = DirGuard::create(&nonce)?;
        let port = free_port()?;
        let mut env = self.env.clone();
        for (name, value) in &mut env {
            match name.as_str() {
                "AGENTGOV_DATA_DIR" => *value = dir.display().to_string(),
                "AGENTGOV_BIND" => *value = format!("127.0.0.1:{port}"),
                _ => {}
            }
        }
        let child = spawn(&self.binary, &env, &dir, false)?;
        let mut server = Server {
            child,
            binary: self.binary.clone(),
            env,
            dir: dir_guard.release(),
            base: format!("http://127.0.0.1:{port}"),
            admin_key: self.admin_key.clone(),
            password: self.password.clone(),
            webhook_secret: self.webhook_secret.clone(),
            database: None,
        };
        server.wait_healthy()?;
        Ok(server)
    }

    /// Kills the server with SIGKILL: no shutdown of any kind, as a crash or the OOM killer
    /// would end it. [`Server::restart`] starts it again.
    pub fn kill(&mut self) -> anyhow::Result<()> {
        self.child.kill().context("sending SIGKILL to the server")?;
        self.child.wait().context("waiting for the killed server")?;
        Ok(())
    }

    /// Starts the server again on the same port, data dir or database and settings (after
    /// [`Server::kill`], or after it exited), and waits until it answers `/health`.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        if self.child.try_wait()?.is_none() {
            bail!("restart: the server is still running");
        }
        self.child = spawn(&self.binary, &self.env, &self.dir, true)?;
        self.wait_healthy()
    }

    pub fn data_dir(&self) -> &Path {
        &self.dir
    }

    /// The throwaway database's name, in Postgres mode.
    pub fn database_name(&self) -> Option<&str> {
        self.database.as_ref().map(|db| db.name.as_str())
    }

    /// The `X-Admin-Key` header of the platform operator (`/tenants`, `/siem/status`).
    pub fn admin_header(&self) -> String {
        format!("X-Admin-Key: {}", self.admin_key)
    }

    /// The platform operator's key itself (`AGENTGOV_ADMIN_KEY`).
    pub fn admin_key(&self) -> &str {
        &self.admin_key
    }

    /// The throwaway database's URL, in Postgres mode.
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_ref().map(|db| db.url.as_str())
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Before a measured phase that writes: on Postgres, a `CHECKPOINT`, so that the phase
    /// does not pay for flushing what the phases before it wrote (after a million appends,
    /// `max_wal_size` would otherwise start a checkpoint in the middle of the next phase).
    /// The phase's own writes still reach checkpoints as they would in service. Embedded
    /// mode has nothing to settle: the server checkpoints SQLite's WAL itself.
    pub fn settle(&self) -> anyhow::Result<()> {
        match &self.database {
            Some(db) => psql(&db.url, "CHECKPOINT").map(drop).context("CHECKPOINT before a measured phase"),
            None => Ok(()),
        }
    }

    /// Creates a tenant and signs its admin in.
    /// The e-mail and password of the admin [`Server::sign_in`] signs in.
    pub fn admin_login(&self) -> (&str, &str) {
        (ADMIN_EMAIL, &self.password)
    }

    pub fn sign_in(&self) -> anyhow::Result<Credentials> {
        self.sign_in_as("bench", ADMIN_EMAIL)
    }

    /// Creates another tenant (`name`, with a made-up admin of that name) and signs its admin
    /// in: for a phase that needs the admin's JWT as well as the key (creating policies).
    pub fn tenant_credentials(&self, name: &str) -> anyhow::Result<Credentials> {
        self.sign_in_as(name, &format!("bench-{name}@agentgov.test"))
    }

    fn sign_in_as(&self, name: &str, admin_email: &str) -> anyhow::Result<Credentials> {
        let api_key = self.create_tenant(name, admin_email)?;
        let login =
            self.post("/api/v1/auth/login", &[], &json!({"email": admin_email, "password": self.password}), 200)?;
        let access_token = login["access_token"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("login returned no access_token: {login}"))?;
        Ok(Credentials { access_token, api_key })
    }

    /// Creates another tenant (`name`, with a made-up admin of that name, never signed in)
    /// and returns its admin's API key: every permission, in a log and registry of its own.
    pub fn tenant_api_key(&self, name: &str) -> anyhow::Result<String> {
        self.create_tenant(name, &format!("bench-{name}@agentgov.test"))
    }

    fn create_tenant(&self, name: &str, admin_email: &str) -> anyhow::Result<String> {
        let tenant = json!({"name": name, "admin_email": admin_email, "admin_password": self.password});
        let created = self.post("/api/v1/tenants", &[&self.admin_header()], &tenant, 201)?;
        created["api_key"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("POST /api/v1/tenants returned no api_key: {created}"))
    }

    /// Fails (with the server's log) if the server died during the run.
    pub fn check_still_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("the server exited during the benchmark ({status}); its log:\n{}", self.log());
        }
        Ok(())
    }

    fn wait_healthy(&mut self) -> anyhow::Result<()> {
        let url = format!("{}/api/v1/health", self.base);
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("the server exited at start-up ({status}); its log:\n{}", self.log());
            }
            let probe = Command::new("curl").args(["-fsS", "-o", "/dev/null", "--max-time", "2", &url]).output()?;
            if probe.status.success() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{url} did not answer within {}s; server log:\n{}", STARTUP_TIMEOUT.as_secs(), self.log());
            }
            sleep(Duration::from_millis(200));
        }
    }

    /// GETs `path` (which must answer 200 with JSON); returns the JSON and curl's total time
    /// in seconds.
    pub fn get(&self, path: &str, headers: &[&str], max_time: Duration) -> anyhow::Result<(Value, f64)> {
        let mut command = Command::new("curl");
        command.args(["-sS", "--max-time", &max_time.as_secs().max(1).to_string()]);
        for header in headers {
            command.args(["-H", header]);
        }
        command.args(["-w", "\n%{http_code} %{time_total}"]).arg(format!("{}{path}", self.base));
        let out = crate::cmd::output(&mut command)?;
        let (response, trailer) = out.rsplit_once('\n').context("curl printed no status code")?;
        let (status, seconds) = trailer.trim().split_once(' ').context("curl printed no time")?;
        if status != "200" {
            bail!("GET {path} answered {status}, expected 200: {response}");
        }
        let seconds: f64 = seconds.parse().with_context(|| format!("curl time_total {seconds:?}"))?;
        let json =
            serde_json::from_str(response).with_context(|| format!("GET {path} returned non-JSON: {response}"))?;
        Ok((json, seconds))
    }

    /// POSTs `body` as JSON and returns the JSON response, which must have status `expect`.
    fn post(&self, path: &str, headers: &[&str], body: &Value, expect: u16) -> anyhow::Result<Value> {
        let mut command = Command::new("curl");
        command.args(["-sS", "--max-time", "30", "-X", "POST", "-H", "Content-Type: application/json"]);
        for header in headers {
            command.args(["-H", header]);
        }
        command.args(["--data-binary", &body.to_string(), "-w", "\n%{http_code}"]).arg(format!("{}{path}", self.base));
        let out = crate::cmd::output(&mut command)?;
        let (response, status) = out.rsplit_once('\n').context("curl printed no status code")?;
        let status: u16 = status.trim().parse().with_context(|| format!("curl status {status:?}"))?;
        if status != expect {
            bail!("POST {path} answered {status}, expected {expect}: {response}");
        }
        serde_json::from_str(response).with_context(|| format!("POST {path} returned non-JSON: {response}"))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_else(|err| format!("(unreadable: {err})"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
        // `self.database` drops next, now that no server holds connections to it.
    }
}

/// `binary serve` with `env` (and none of the settings' variables from our own environment),
/// its output to `dir/server.log` (appended to on a restart).
fn spawn(binary: &Path, env: &[(String, String)], dir: &Path, append: bool) -> anyhow::Result<Child> {
    let log = File::options()
        .create(true)
        .append(append)
        .write(true)
        .truncate(!append)
        .open(dir.join("server.log"))
        .context("opening the server log")?;
    let mut command = Command::new(binary);
    command.arg("serve").env_remove("DATABASE_URL").env_remove("REDIS_URL").env_remove("AGENTGOV_JWT_SECRET");
    // The harness's own settings (`AGENTGOV_BENCH_*`), which the server would refuse as
    // unknown settings of its own.
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| n.starts_with("AGENTGOV_BENCH_")) {
            command.env_remove(name);
        }
    }
    command
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))
}

/// Removes the data dir if the server never got to own it.
struct DirGuard(Option<PathBuf>);

impl DirGuard {
    /// A new data dir under the temp dir, named after `nonce`.
    fn create(nonce: &str) -> anyhow::Result<(DirGuard, PathBuf)> {
        let dir = std::env::temp_dir().join(format!("agentgov-bench-{nonce}"));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok((DirGuard(Some(dir.clone())), dir))
    }

    fn release(mut self) -> PathBuf {
        self.0.take().unwrap_or_default()
    }
}

impl Drop for DirGuard {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A throwaway Postgres database, dropped (with any lingering connections) on drop.
struct Database {
    admin_url: String,
    name: String,
    url: String,
}

impl Database {
    fn create(admin_url: &str, nonce: &str) -> anyhow::Result<Self> {
        let name = format!("agentgov_bench_{}", nonce.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
        let url = with_database(admin_url, &name)?;
        psql(admin_url, &format!("CREATE DATABASE {name}"))
            .with_context(|| format!("creating the benchmark database {name}"))?;
        Ok(Database { admin_url: admin_url.to_owned(), name, url })
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Err(err) = psql(&self.admin_url, &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name)) {
            eprintln!("warning: could not drop the benchmark database {}: {err:#}", self.name);
        }
    }
}

/// Runs one SQL command with `psql` against `url`.
pub fn psql(url: &str, sql: &str) -> anyhow::Result<String> {
    crate::cmd::output(Command::new("psql").args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql]))
}

/// `url` with its database (the path) replaced by `name`; the query string is kept.
pub fn with_database(url: &str, name: &str) -> anyhow::Result<String> {
    let (scheme, rest) = url.split_once("://").with_context(|| format!("not a URL: {url}"))?;
    let (location, query) = match rest.split_once('?') {
        Some((location, query)) => (location, Some(query)),
        None => (rest, None),
    };
    let authority = location.split_once('/').map_or(location, |(authority, _)| authority);
    if authority.is_empty() {
        bail!("no host in {url}");
    }
    Ok(match query {
        Some(query) => format!("{scheme}://{authority}/{name}?{query}"),
        None => format!("{scheme}://{authority}/{name}"),
    })
}

/// A port the OS just handed out on loopback (released again for the server to bind).
pub fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free loopback port")?;
    Ok(listener.local_addr()?.port())
}

/// Unique enough for a temp dir name, a database name and throwaway credentials.
pub fn nonce() -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
    format!("{}-{nanos:x}", std::process::id())
}

/// An existing database to connect to for `CREATE DATABASE`; the benchmark's own database
/// is created next to it. Overridden by `AGENTGOV_BENCH_DATABASE_URL`.
pub const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// Builds the server in release mode and returns the path of the `agentgov` binary; with
/// `AGENTGOV_BENCH_BINARY` set, that binary instead, unbuilt (to compare two builds in
/// alternating runs).
pub fn build_release() -> anyhow::Result<PathBuf> {
    if let Some(binary) = std::env::var_os("AGENTGOV_BENCH_BINARY") {
        let binary = PathBuf::from(binary);
        if !binary.is_file() {
            bail!("AGENTGOV_BENCH_BINARY={} is not a file", binary.display());
        }
        eprintln!("    the server binary is {} (AGENTGOV_BENCH_BINARY), not built", binary.display());
        return Ok(binary);
    }
    build_server(&["--release"])
}

/// Builds the `agentgov` binary (`extra`: more `cargo build` arguments, e.g. `--release`)
/// and answers where cargo put it.
pub fn build_server(extra: &[&str]) -> anyhow::Result<PathBuf> {
    let mut command = cargo();
    command
        .args(["build", "-p", "agentgov-server", "--message-format=json-render-diagnostics"])
        .args(extra)
        .stderr(Stdio::inherit());
    let messages = cmd::output(&mut command)?;
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "agentgov")
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .context("cargo build reported no `agentgov` executable")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_is_replaced_in_the_url() {
        let url = |u: &str| with_database(u, "db2").unwrap();
        assert_eq!(url("postgres://postgres@127.0.0.1:5432/test"), "postgres://postgres@127.0.0.1:5432/db2");
        assert_eq!(url("postgres://u:p@h/test?sslmode=disable"), "postgres://u:p@h/db2?sslmode=disable");
        assert_eq!(url("postgresql://h:5432"), "postgresql://h:5432/db2");
        assert!(with_database("localhost", "db2").is_err());
    }
}
