//! `cargo xtask faults`: the service's dependencies fail under load, in production mode.
//!
//! A private PostgreSQL (initdb into a temp dir, a free loopback port) and a private Redis
//! (a child `redis-server`, nothing saved) back a release server with `DATABASE_URL` and
//! `REDIS_URL`; the machine's own services are never touched. Worker threads keep sending a
//! mix of requests that read and write the database and the cache (agent list, policy
//! check, `/auth/me`, audit append, `/status`, password login) while, for Postgres and then
//! Redis:
//!
//! 1. a healthy baseline runs for a few seconds;
//! 2. the component is stopped (`pg_ctl stop -m fast`; the Redis child killed) and held down
//!    (`--hold`, default 10 s) while `GET /api/v1/health/ready` is polled: it must answer
//!    503 problem+json naming the component (`database`, `cache`) as down;
//! 3. it is started again on the same port, and the time is taken until `/health/ready` is
//!    200, every request has answered 2xx for a quiet spell, and the real-time feed (fed by
//!    the Redis bus, which the server must subscribe to again) delivers an event: a fresh
//!    WebSocket sees the `agent.registered` of an agent registered after it (at most 30 s);
//! 4. a few more healthy seconds.
//!
//! Every response is judged by the phases it was in flight in. While everything is up,
//! anything but 2xx is a violation; once a component is down or coming back (for a request
//! in flight when it went, too), 2xx and 503 `application/problem+json` are the only
//! acceptable answers (a 500, a 401, a 503 of another content type are not). In every phase a request that takes longer than
//! [`HANG_BOUND`] (the service's own bounds are 5 s for a database connection and 2 s for
//! each Redis step) or ends in a connection error is a violation. The summary prints each
//! phase's statuses, latencies and violations; any violation, or a component that
//! `/health/ready` did not name in time or that the service did not recover from, fails
//! the command.
//!
//! Requests go through a small keep-alive HTTP/1.1 client of this module's own (the
//! harness's `xtask::http` gives no response headers, and the content type of every 503 is
//! part of what is checked).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::bench::audit::key_header;
use crate::bench::policy;
use xtask::args::{self, Arg};
use xtask::cmd::{self, step};
use xtask::http::{Connection, Response};
use xtask::server::build_release;
use xtask::server::{Backend, Server, free_port, nonce};

/// Healthy load before each fault, and again after recovery.
const BASELINE: Duration = Duration::from_secs(5);
const DEFAULT_HOLD_SECS: u64 = 10;
const DEFAULT_WORKERS: u64 = 6;
/// Longest a request may take, in any phase. The service bounds a database connection
/// checkout at 5 s and each Redis connect, checkout and command at 2 s; an authenticated
/// request that finds Redis down tries it at most a few times.
const HANG_BOUND: Duration = Duration::from_secs(10);
/// The client gives up on a response after this long (counted as a hang).
const READ_TIMEOUT: Duration = Duration::from_secs(20);
/// Longest `/health/ready` may take to name a component that went down.
const DETECT_BOUND: Duration = Duration::from_secs(15);
/// Longest the service may take to answer 2xx again once a component is back.
const RECOVER_BOUND: Duration = Duration::from_secs(30);
/// Recovered: `/health/ready` is 200 and no request has failed for this long.
const QUIET: Duration = Duration::from_secs(3);
/// How often `/health/ready` is polled.
const PROBE_EVERY: Duration = Duration::from_millis(250);
/// How long one look at the real-time feed waits: to connect, to be subscribed, for the event.
const FEED_WAIT: Duration = Duration::from_secs(2);
/// How many violations of each phase are shown in full.
const SHOWN_VIOLATIONS: usize = 8;
/// The login user the load signs in as (a password login costs one Argon2id hash).
const LOGIN_EMAIL: &str = "faults-login@agentgov.test";
const LOGIN_PASSWORD: &str = "faults-login-password-0123";

struct Options {
    hold: Duration,
    workers: usize,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Self> {
        let mut options = Options { hold: Duration::from_secs(DEFAULT_HOLD_SECS), workers: DEFAULT_WORKERS as usize };
        for arg in args::parse(args, &[], &[("--hold", 1), ("--workers", 1)])? {
            match arg {
                Arg::Number { flag: "--hold", value, .. } => options.hold = Duration::from_secs(value),
                Arg::Number { value, .. } => options.workers = usize::try_from(value).unwrap_or(usize::MAX).min(256),
                Arg::Switch(_) => {}
            }
        }
        Ok(options)
    }
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let options = Options::parse(args)?;
    for tool in ["curl", "psql", "redis-server"] {
        if !cmd::exists(tool) {
            bail!("`{tool}` is not on PATH; install it (curl, postgresql-client, redis-server), then rerun");
        }
    }
    let pg_bin = postgres_bin()?;

    step("faults: cargo build --release -p agentgov-server");
    let binary = build_release()?;

    step("faults: a private PostgreSQL and Redis on free loopback ports");
    // Declared before the server, so they are dropped (stopped, removed) after it.
    let mut postgres = PrivatePostgres::start(&pg_bin)?;
    let mut redis = PrivateRedis::start()?;
    println!("    PostgreSQL on port {} ({}), Redis on port {}", postgres.port, postgres.dir.display(), redis.port);

    step("faults: the release server on them (production mode)");
    let backend = Backend::Postgres { admin_url: postgres.admin_url() };
    let server = Server::start_with(&binary, &backend, &[("REDIS_URL", redis.url())])?;
    println!("    {} (database {})", server.base, server.database_name().unwrap_or("?"));
    let outcome = exercise(&server, &mut postgres, &mut redis, &options);
    let kept = std::env::temp_dir().join("agentgov-faults-server.log");
    match std::fs::copy(server.data_dir().join("server.log"), &kept) {
        Ok(_) => {
            let log = std::fs::read_to_string(&kept).unwrap_or_default();
            println!("    server log kept in {}", kept.display());
            for (error, count) in internal_errors(&log) {
                println!("      internal error ×{count}: {error}");
            }
        }
        Err(err) => eprintln!("warning: could not keep the server log: {err}"),
    }
    drop(server);
    let report = outcome?;
    report.print();
    let failures = report.failures();
    if !failures.is_empty() {
        bail!("dependency faults: {} acceptance failure(s):\n  - {}", failures.len(), failures.join("\n  - "));
    }
    println!("    every acceptance property held");
    Ok(())
}

/// The internal errors the server logged (`internal error error=…`, the cause of each 500),
/// each with how often it was logged.
fn internal_errors(log: &str) -> BTreeMap<String, u64> {
    let mut errors = BTreeMap::new();
    for line in log.lines() {
        if let Some((_, error)) = line.split_once("internal error error=") {
            *errors.entry(error.trim().to_owned()).or_default() += 1;
        }
    }
    errors
}

/// The PostgreSQL server binaries: `$AGENTGOV_FAULTS_PG_BIN`, else the newest
/// `/usr/lib/postgresql/<version>/bin` holding `initdb`.
fn postgres_bin() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("AGENTGOV_FAULTS_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .context("no /usr/lib/postgresql: install the PostgreSQL server, or set AGENTGOV_FAULTS_PG_BIN")?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin"))))
        .filter(|(_, bin)| bin.join("initdb").exists())
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .context("no /usr/lib/postgresql/<version>/bin/initdb; set AGENTGOV_FAULTS_PG_BIN")
}

/// Whether this process runs as root (PostgreSQL refuses to).
fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// A PostgreSQL cluster of its own in a temp dir; stopped and removed on drop.
struct PrivatePostgres {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    /// Run the server's commands as `postgres` (this process is root).
    as_postgres: bool,
}

impl PrivatePostgres {
    fn start(bin: &Path) -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("agentgov-faults-pg-{}", nonce()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut postgres = PrivatePostgres { bin: bin.to_owned(), dir, port: free_port()?, as_postgres: is_root() };
        if postgres.as_postgres {
            cmd::output(Command::new("chown").arg("postgres:postgres").arg(&postgres.dir))
                .context("handing the cluster's dir to the postgres user")?;
        }
        let data = postgres.data();
        cmd::output(postgres.command("initdb").arg("-D").arg(&data).args([
            "--auth=trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
        ]))
        .context("initdb")?;
        postgres.resume()?;
        Ok(postgres)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// One of the server's programs, as the user that may run it.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts the cluster (again) on its port; returns once it accepts connections.
    fn resume(&mut self) -> anyhow::Result<()> {
        let options = format!("-p {} -k {} -c listen_addresses=127.0.0.1", self.port, self.dir.display());
        let mut command = self.command("pg_ctl");
        command.arg("-D").arg(self.data()).arg("-l").arg(self.dir.join("postgres.log"));
        command.args(["-o", &options, "-w", "-t", "60", "start"]);
        cmd::output(&mut command).context("pg_ctl start").map(drop)
    }

    /// A fast shutdown: sessions are ended, in-flight transactions rolled back.
    fn stop(&mut self) -> anyhow::Result<()> {
        self.pg_ctl_stop("fast")
    }

    fn pg_ctl_stop(&mut self, mode: &str) -> anyhow::Result<()> {
        let mut command = self.command("pg_ctl");
        command.arg("-D").arg(self.data()).args(["-m", mode, "-w", "-t", "60", "stop"]);
        cmd::output(&mut command).context("pg_ctl stop").map(drop)
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        // Whatever state a failed run left it in: a server that (half) started has its pid file.
        if self.data().join("postmaster.pid").exists()
            && let Err(err) = self.pg_ctl_stop("immediate")
        {
            eprintln!("warning: could not stop the private PostgreSQL: {err:#}");
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A `redis-server` child on its own port, saving nothing; killed and removed on drop.
struct PrivateRedis {
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl PrivateRedis {
    fn start() -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("agentgov-faults-redis-{}", nonce()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut redis = PrivateRedis { dir, port: free_port()?, child: None };
        redis.resume()?;
        Ok(redis)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts Redis (again) on its port, empty; returns once it answers PING.
    fn resume(&mut self) -> anyhow::Result<()> {
        let log = File::options().create(true).append(true).open(self.dir.join("redis.log"))?;
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("starting redis-server")?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !redis_pong(self.port) {
            if let Some(child) = &mut self.child
                && let Some(status) = child.try_wait()?
            {
                let log = std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default();
                bail!("redis-server exited at start-up ({status}):\n{log}");
            }
            if Instant::now() > deadline {
                bail!("redis-server on port {} did not answer PING within 10s", self.port);
            }
            sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Kills Redis outright, as a crash would.
    fn stop(&mut self) -> anyhow::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill().context("killing redis-server")?;
            child.wait().context("waiting for redis-server")?;
        }
        Ok(())
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        let _ = self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether a Redis on `port` answers `PING`.
fn redis_pong(port: u16) -> bool {
    let ping = || -> std::io::Result<bool> {
        let mut stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(1)))?;
        stream.write_all(b"PING\r\n")?;
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line)?;
        Ok(line.starts_with("+PONG"))
    };
    ping().unwrap_or(false)
}

/// The backing service a fault takes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Component {
    Postgres,
    Redis,
}

impl Component {
    const ALL: [Component; 2] = [Component::Postgres, Component::Redis];

    fn label(self) -> &'static str {
        match self {
            Component::Postgres => "Postgres",
            Component::Redis => "Redis",
        }
    }

    /// Its name in `/health/ready`'s `components`.
    fn readiness_name(self) -> &'static str {
        match self {
            Component::Postgres => "database",
            Component::Redis => "cache",
        }
    }
}

/// Where a request was sent, relative to one component's fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Before,
    Down,
    Recovering,
    After,
}

impl Stage {
    const ALL: [Stage; 4] = [Stage::Before, Stage::Down, Stage::Recovering, Stage::After];

    fn label(self) -> &'static str {
        match self {
            Stage::Before => "before",
            Stage::Down => "down",
            Stage::Recovering => "recovering",
            Stage::After => "after",
        }
    }

    /// What is acceptable: only 2xx while everything is up; 503 too otherwise.
    fn expect(self) -> Expect {
        match self {
            Stage::Before | Stage::After => Expect::Healthy,
            Stage::Down | Stage::Recovering => Expect::Degraded,
        }
    }
}

/// The phases in order: each component's stages.
fn phase_index(component: usize, stage: Stage) -> usize {
    component * Stage::ALL.len() + Stage::ALL.iter().position(|s| *s == stage).unwrap_or(0)
}

/// What a request sent in phase `sent` and answered in phase `answered` may answer: one
/// in flight when a component went away (or came back) is judged as sent during the fault.
fn expect_for(sent: usize, answered: usize) -> Expect {
    let degraded =
        (sent..=answered.max(sent)).any(|phase| Stage::ALL[phase % Stage::ALL.len()].expect() == Expect::Degraded);
    if degraded { Expect::Degraded } else { Expect::Healthy }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Every backing service is up: every request must succeed.
    Healthy,
    /// One is down or coming back: success, or 503 problem+json.
    Degraded,
}

/// What one request came to.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Ok,
    /// 503 `application/problem+json` while a component is away: the wanted answer.
    Unavailable,
    Violation(String),
}

/// Judges one response (or the error that came instead) sent in a phase expecting `expect`.
fn classify(expect: Expect, outcome: &Result<Response, String>, latency: Duration) -> Verdict {
    let reply = match outcome {
        Ok(reply) => reply,
        Err(err) => return Verdict::Violation(format!("no response after {:.2}s: {err}", latency.as_secs_f64())),
    };
    if latency > HANG_BOUND {
        return Verdict::Violation(format!("{} after {:.2}s", reply.status, latency.as_secs_f64()));
    }
    match (reply.status, expect) {
        (200..=299, _) => Verdict::Ok,
        (503, Expect::Degraded) if reply.is_problem() => Verdict::Unavailable,
        (503, Expect::Degraded) => Verdict::Violation(format!("503 with Content-Type {:?}", reply.content_type)),
        (status, _) => Verdict::Violation(format!("{status}: {}", excerpt(&reply.body))),
    }
}

fn excerpt(body: &str) -> String {
    let mut text: String = body.chars().take(200).collect();
    if text.len() < body.len() {
        text.push('…');
    }
    text
}

/// Whether a `/health/ready` reply says `component` is down: 503 problem+json whose
/// `components` has it with `up: false` and whose `detail` names it.
fn readiness_names(reply: &Response, component: &str) -> Result<String, String> {
    if reply.status != 503 {
        return Err(format!("answered {}", reply.status));
    }
    if !reply.is_problem() {
        return Err(format!("503 with Content-Type {:?}", reply.content_type));
    }
    let body: Value = serde_json::from_str(&reply.body).map_err(|e| format!("not JSON ({e}): {}", reply.body))?;
    let detail = body["detail"].as_str().unwrap_or_default();
    let down: Vec<&str> = body["components"]
        .as_array()
        .map(|components| components.iter().filter(|c| c["up"] == false).filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    if !down.contains(&component) {
        return Err(format!("components down: {down:?}, not {component}"));
    }
    if !detail.contains(component) {
        return Err(format!("detail {detail:?} does not name {component}"));
    }
    Ok(detail.to_owned())
}

/// The requests of the load, each touching the database, the cache or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Call {
    /// API key (cache: auth epoch; database: key, owner), then the agents.
    ListAgents,
    /// API key, the agent, the compiled policies, a durable `policy.decision` record.
    PolicyCheck,
    /// JWT (cache: revoked set, auth epoch; database: session, user).
    Me,
    /// API key, then a durable audit append.
    AuditLog,
    /// API key, the tenant and the readiness of every component.
    Status,
    /// Password login (cache: failure counters; database: user, new session and key).
    Login,
}

impl Call {
    /// The mix each worker cycles through (from its own starting point): logins, which
    /// each cost an Argon2id hash, one in ten.
    const MIX: [Call; 10] = [
        Call::ListAgents,
        Call::PolicyCheck,
        Call::Me,
        Call::AuditLog,
        Call::Status,
        Call::ListAgents,
        Call::PolicyCheck,
        Call::Me,
        Call::AuditLog,
        Call::Login,
    ];

    fn label(self) -> &'static str {
        match self {
            Call::ListAgents => "GET /api/v1/agents",
            Call::PolicyCheck => "POST /api/v1/policies/check",
            Call::Me => "GET /api/v1/auth/me",
            Call::AuditLog => "POST /api/v1/audit/log",
            Call::Status => "GET /api/v1/status",
            Call::Login => "POST /api/v1/auth/login",
        }
    }
}

/// The tenant the load works in.
struct Fixture {
    key: Vec<String>,
    bearer: Vec<String>,
    check: String,
    login: String,
    /// The real-time feed, signed in as the tenant's admin.
    feed_url: String,
}

impl Fixture {
    /// The policy benchmark's tenant (one agent, five enabled policies; see
    /// [`policy::set_up`]) and a second user to sign in as.
    fn set_up(server: &Server) -> anyhow::Result<Self> {
        let (credentials, check) = policy::set_up(server, "faults")?;
        let key = vec![key_header(&credentials.api_key)];
        let bearer = vec![format!("Authorization: Bearer {}", credentials.access_token)];
        let mut client = Connection::with_timeout(&server.base, READ_TIMEOUT)?;
        let user = json!({"email": LOGIN_EMAIL, "password": LOGIN_PASSWORD, "role": "viewer"});
        policy::created(client.post_json("/api/v1/users", &bearer, &user.to_string())?)
            .context("creating the login user")?;
        let authority = server.base.trim_start_matches("http://");
        let feed_url = format!("ws://{authority}/api/v1/ws?token={}", credentials.access_token);
        Ok(Fixture {
            key,
            bearer,
            check,
            login: json!({"email": LOGIN_EMAIL, "password": LOGIN_PASSWORD}).to_string(),
            feed_url,
        })
    }

    fn send(&self, client: &mut Connection, call: Call) -> anyhow::Result<Response> {
        match call {
            Call::ListAgents => client.get("/api/v1/agents?limit=10", &self.key),
            Call::PolicyCheck => client.post_json("/api/v1/policies/check", &self.key, &self.check),
            Call::Me => client.get("/api/v1/auth/me", &self.bearer),
            Call::AuditLog => client.post_json("/api/v1/audit/log", &self.key, crate::bench::audit::ENTRY),
            Call::Status => client.get("/api/v1/status", &self.key),
            Call::Login => client.post_json("/api/v1/auth/login", &[], &self.login),
        }
    }
}

/// Whether the real-time feed carries events: a fresh WebSocket subscribed to
/// `agent.registered` sees the event of an agent (`name`) registered once it is subscribed.
/// `Ok(false)`: the socket, the subscription, the registration or the event did not come
/// within [`FEED_WAIT`] each.
fn feed_delivers(runtime: &tokio::runtime::Runtime, client: &mut Connection, fixture: &Fixture, name: &str) -> bool {
    let look = async {
        let wait = |what: &'static str| move |_| anyhow::anyhow!("{what} took over {FEED_WAIT:?}");
        let (mut socket, _) = tokio::time::timeout(FEED_WAIT, tokio_tungstenite::connect_async(&fixture.feed_url))
            .await
            .map_err(wait("connecting"))??;
        let subscribe = json!({"type": "subscribe", "events": ["agent.registered"]}).to_string();
        socket.send(Message::Text(subscribe.into())).await?;
        let subscribed = async {
            while let Some(message) = socket.next().await {
                if let Message::Text(text) = message?
                    && text.contains("\"subscribed\"")
                {
                    return Ok(());
                }
            }
            bail!("the feed closed before subscribing")
        };
        tokio::time::timeout(FEED_WAIT, subscribed).await.map_err(wait("subscribing"))??;
        let agent = json!({"name": name, "type": "support", "description": "Probes the real-time feed."});
        let registered = client.post_json("/api/v1/agents/register", &fixture.key, &agent.to_string())?;
        if registered.status != 201 {
            bail!("registering {name} answered {}", registered.status);
        }
        let delivered = async {
            while let Some(message) = socket.next().await {
                if let Message::Text(text) = message?
                    && text.contains(name)
                {
                    return Ok(());
                }
            }
            bail!("the feed closed before the event")
        };
        tokio::time::timeout(FEED_WAIT, delivered).await.map_err(wait("the event"))??;
        let _ = socket.close(None).await;
        anyhow::Ok(())
    };
    runtime.block_on(look).is_ok()
}

/// What the requests sent in one phase came to.
#[derive(Debug, Default, Clone)]
struct PhaseStats {
    /// Per call, per status (0: no response) the number of requests.
    counts: BTreeMap<(Call, u16), u64>,
    /// Every request's latency, in microseconds.
    latencies_us: Vec<u32>,
    violations: u64,
    /// The first few violations, described.
    examples: Vec<String>,
    /// Since the run started, when the last request that did not succeed was answered.
    last_failure: Option<Duration>,
}

impl PhaseStats {
    fn record(&mut self, call: Call, status: u16, latency: Duration, verdict: Verdict, ended: Duration) {
        *self.counts.entry((call, status)).or_default() += 1;
        self.latencies_us.push(u32::try_from(latency.as_micros()).unwrap_or(u32::MAX));
        if verdict != Verdict::Ok {
            self.last_failure = self.last_failure.max(Some(ended));
        }
        if let Verdict::Violation(reason) = verdict {
            self.violations += 1;
            if self.examples.len() < SHOWN_VIOLATIONS {
                self.examples.push(format!("{}: {reason}", call.label()));
            }
        }
    }

    fn merge(&mut self, other: PhaseStats) {
        for (key, count) in other.counts {
            *self.counts.entry(key).or_default() += count;
        }
        self.latencies_us.extend(other.latencies_us);
        self.violations += other.violations;
        let room = SHOWN_VIOLATIONS.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.into_iter().take(room));
        self.last_failure = self.last_failure.max(other.last_failure);
    }

    fn requests(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Requests per status over every call.
    fn by_status(&self) -> BTreeMap<u16, u64> {
        let mut statuses = BTreeMap::new();
        for ((_, status), count) in &self.counts {
            *statuses.entry(*status).or_default() += count;
        }
        statuses
    }

    /// The latency at quantile `q` (0 to 1), nearest rank.
    fn latency(&mut self, q: f64) -> Duration {
        self.latencies_us.sort_unstable();
        let Some(last) = self.latencies_us.len().checked_sub(1) else { return Duration::ZERO };
        let rank = ((last as f64) * q).round() as usize;
        Duration::from_micros(u64::from(self.latencies_us[rank.min(last)]))
    }
}

/// `200 ×12, 503 ×3, error ×1`.
fn status_summary(statuses: &BTreeMap<u16, u64>) -> String {
    if statuses.is_empty() {
        return "no requests".into();
    }
    statuses
        .iter()
        .map(|(status, count)| match status {
            0 => format!("error ×{count}"),
            status => format!("{status} ×{count}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// State the workers and the controller share.
struct Shared {
    started: Instant,
    phase: AtomicUsize,
    stop: AtomicBool,
    /// Since `started`, in milliseconds: when the last request that did not succeed ended.
    last_failure_ms: AtomicU64,
}

impl Shared {
    fn since_start(&self) -> Duration {
        self.started.elapsed()
    }
}

/// One worker: the mix, round and round, until told to stop; its statistics per phase.
fn worker(base: &str, fixture: &Fixture, shared: &Shared, first: usize, phases: usize) -> Vec<PhaseStats> {
    let mut stats = vec![PhaseStats::default(); phases];
    let mut client = match Connection::with_timeout(base, READ_TIMEOUT) {
        Ok(client) => client,
        Err(_) => return stats,
    };
    let mut next = first;
    while !shared.stop.load(Ordering::Relaxed) {
        let call = Call::MIX[next % Call::MIX.len()];
        next += 1;
        let phase = shared.phase.load(Ordering::Relaxed).min(phases - 1);
        let sent = Instant::now();
        let outcome = fixture.send(&mut client, call).map_err(|e| format!("{e:#}"));
        let latency = sent.elapsed();
        let ended = shared.since_start();
        let answered = shared.phase.load(Ordering::Relaxed).min(phases - 1);
        let verdict = classify(expect_for(phase, answered), &outcome, latency);
        if verdict != Verdict::Ok {
            let ms = u64::try_from(ended.as_millis()).unwrap_or(u64::MAX);
            shared.last_failure_ms.fetch_max(ms, Ordering::Relaxed);
        }
        let status = outcome.as_ref().map_or(0, |reply| reply.status);
        stats[phase].record(call, status, latency, verdict, ended);
    }
    stats
}

/// What happened to one component's fault, as the controller saw it.
#[derive(Debug, Default)]
struct FaultTimes {
    /// How long stopping it took (`pg_ctl stop` waits for the shutdown).
    stop_took: Duration,
    /// From stopped until `/health/ready` named it; `None`: not within [`DETECT_BOUND`].
    detected_after: Option<Duration>,
    /// The first readiness detail that named it.
    detail: String,
    /// Readiness probes while it was down after the first that named it, and those that did
    /// not (with the first such answer).
    probes_down: u64,
    probes_wrong: Vec<String>,
    /// The slowest readiness answer in the whole fault.
    slowest_probe: Duration,
    /// How long starting it again took (until it accepted connections).
    start_took: Duration,
    /// From started until `/health/ready` answered 200 (for good), and until every request
    /// succeeded; `None`: not within [`RECOVER_BOUND`].
    ready_after: Option<Duration>,
    requests_ok_after: Option<Duration>,
    /// From started until the real-time feed delivered an event again.
    feed_after: Option<Duration>,
}

/// The run's findings.
struct Report {
    workers: usize,
    hold: Duration,
    phases: Vec<PhaseStats>,
    faults: Vec<(Component, FaultTimes)>,
    problems: Vec<String>,
}

fn exercise(
    server: &Server,
    postgres: &mut PrivatePostgres,
    redis: &mut PrivateRedis,
    options: &Options,
) -> anyhow::Result<Report> {
    step("faults: a tenant with an agent, a policy and a login user");
    let fixture = Fixture::set_up(server)?;
    let mut probe = Connection::with_timeout(&server.base, READ_TIMEOUT)?;
    for call in Call::MIX {
        let reply = fixture.send(&mut probe, call)?;
        if !(200..300).contains(&reply.status) {
            bail!("{} answered {} before any fault: {}", call.label(), reply.status, reply.body);
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    if !feed_delivers(&runtime, &mut probe, &fixture, "feed-probe-0") {
        bail!("the real-time feed delivered no event before any fault");
    }
    let mut feed = Feed { runtime, fixture: &fixture, probes: 0 };
    let phases = Component::ALL.len() * Stage::ALL.len();
    let shared = Shared {
        started: Instant::now(),
        phase: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        last_failure_ms: AtomicU64::new(0),
    };
    let collected = Mutex::new(vec![PhaseStats::default(); phases]);
    let mut faults = Vec::new();
    let mut problems = Vec::new();
    std::thread::scope(|scope| {
        for first in 0..options.workers {
            let (fixture, shared, collected) = (&fixture, &shared, &collected);
            scope.spawn(move || {
                let stats = worker(&server.base, fixture, shared, first, phases);
                if let Ok(mut all) = collected.lock() {
                    for (into, from) in all.iter_mut().zip(stats) {
                        into.merge(from);
                    }
                }
            });
        }
        step(&format!("faults: {} workers under load", options.workers));
        for (index, component) in Component::ALL.into_iter().enumerate() {
            let faulty: &mut dyn Faulty = match component {
                Component::Postgres => &mut *postgres,
                Component::Redis => &mut *redis,
            };
            match one_fault(&mut probe, &mut feed, &shared, index, component, faulty, options.hold) {
                Ok(times) => faults.push((component, times)),
                Err(err) => {
                    problems.push(format!("{}: {err:#}", component.label()));
                    break;
                }
            }
        }
        shared.stop.store(true, Ordering::Relaxed);
    });
    let phases = collected.into_inner().map_err(|_| anyhow::anyhow!("a load worker panicked"))?;
    Ok(Report { workers: options.workers, hold: options.hold, phases, faults, problems })
}

/// A backing service the run can stop and start again.
trait Faulty {
    fn stop(&mut self) -> anyhow::Result<()>;
    fn resume(&mut self) -> anyhow::Result<()>;
}

impl Faulty for PrivatePostgres {
    fn stop(&mut self) -> anyhow::Result<()> {
        PrivatePostgres::stop(self)
    }

    fn resume(&mut self) -> anyhow::Result<()> {
        PrivatePostgres::resume(self)
    }
}

impl Faulty for PrivateRedis {
    fn stop(&mut self) -> anyhow::Result<()> {
        PrivateRedis::stop(self)
    }

    fn resume(&mut self) -> anyhow::Result<()> {
        PrivateRedis::resume(self)
    }
}

/// Looks at the real-time feed, registering a new agent each time.
struct Feed<'a> {
    runtime: tokio::runtime::Runtime,
    fixture: &'a Fixture,
    probes: u64,
}

impl Feed<'_> {
    fn delivers(&mut self, client: &mut Connection) -> bool {
        self.probes += 1;
        feed_delivers(&self.runtime, client, self.fixture, &format!("feed-probe-{}", self.probes))
    }
}

/// One `/health/ready` answer, and how long it took.
fn ready(probe: &mut Connection) -> (Result<Response, String>, Duration) {
    let sent = Instant::now();
    let reply = probe.get("/api/v1/health/ready", &[]).map_err(|e| format!("{e:#}"));
    (reply, sent.elapsed())
}

/// Baseline, fault, hold, recovery and the healthy stretch after, for one component.
fn one_fault(
    probe: &mut Connection,
    feed: &mut Feed,
    shared: &Shared,
    index: usize,
    component: Component,
    faulty: &mut dyn Faulty,
    hold: Duration,
) -> anyhow::Result<FaultTimes> {
    let name = component.readiness_name();
    let label = component.label();
    let mut times = FaultTimes::default();
    let set_phase = |stage| shared.phase.store(phase_index(index, stage), Ordering::Relaxed);

    set_phase(Stage::Before);
    println!("    {label}: healthy baseline, {}s", BASELINE.as_secs());
    sleep(BASELINE);

    set_phase(Stage::Down);
    let stopping = Instant::now();
    faulty.stop().with_context(|| format!("stopping {label}"))?;
    let stopped = Instant::now();
    times.stop_took = stopped - stopping;
    println!("    {label}: stopped ({:.2}s); holding it down {}s", times.stop_took.as_secs_f64(), hold.as_secs());
    while stopped.elapsed() < hold || (times.detected_after.is_none() && stopped.elapsed() < DETECT_BOUND) {
        let (reply, took) = ready(probe);
        times.slowest_probe = times.slowest_probe.max(took);
        let named = reply.and_then(|reply| readiness_names(&reply, name));
        match (&named, times.detected_after) {
            (Ok(detail), None) => {
                times.detected_after = Some(stopped.elapsed());
                times.detail = detail.clone();
                println!(
                    "    {label}: /health/ready named `{name}` after {:.2}s: {detail}",
                    stopped.elapsed().as_secs_f64()
                );
            }
            (Ok(_), Some(_)) => times.probes_down += 1,
            (Err(_), None) => {}
            (Err(wrong), Some(_)) => {
                times.probes_down += 1;
                times.probes_wrong.push(wrong.clone());
            }
        }
        sleep(PROBE_EVERY);
    }

    set_phase(Stage::Recovering);
    let starting = Instant::now();
    faulty.resume().with_context(|| format!("starting {label} again"))?;
    let up = Instant::now();
    times.start_took = up - starting;
    let up_ms = u64::try_from(shared.since_start().as_millis()).unwrap_or(u64::MAX);
    println!("    {label}: started again ({:.2}s); waiting for recovery", times.start_took.as_secs_f64());
    let mut ready_since: Option<Duration> = None;
    loop {
        let (reply, took) = ready(probe);
        times.slowest_probe = times.slowest_probe.max(took);
        let is_ready = reply.is_ok_and(|reply| reply.status == 200);
        ready_since = match (is_ready, ready_since) {
            (true, None) => Some(up.elapsed()),
            (true, since) => since,
            (false, _) => None,
        };
        if times.feed_after.is_none() && ready_since.is_some() && feed.delivers(probe) {
            times.feed_after = Some(up.elapsed());
        }
        let last_failure_ms = shared.last_failure_ms.load(Ordering::Relaxed).max(up_ms);
        let now_ms = u64::try_from(shared.since_start().as_millis()).unwrap_or(u64::MAX);
        let quiet = Duration::from_millis(now_ms.saturating_sub(last_failure_ms));
        if let Some(since) = ready_since
            && quiet >= QUIET
            && times.feed_after.is_some()
        {
            times.ready_after = Some(since);
            times.requests_ok_after = Some(Duration::from_millis(last_failure_ms - up_ms));
            break;
        }
        if up.elapsed() > RECOVER_BOUND {
            println!("    {label}: not recovered within {}s", RECOVER_BOUND.as_secs());
            set_phase(Stage::After);
            return Ok(times);
        }
        sleep(PROBE_EVERY);
    }
    println!(
        "    {label}: recovered: /health/ready 200 after {:.2}s, every request 2xx after {:.2}s, the feed delivering after {:.2}s",
        times.ready_after.unwrap_or_default().as_secs_f64(),
        times.requests_ok_after.unwrap_or_default().as_secs_f64(),
        times.feed_after.unwrap_or_default().as_secs_f64()
    );

    set_phase(Stage::After);
    sleep(BASELINE);
    Ok(times)
}

impl Report {
    fn print(&self) {
        step(&format!(
            "faults: summary ({} workers; each component held down {}s; bounds: request {}s, detection {}s, recovery {}s)",
            self.workers,
            self.hold.as_secs(),
            HANG_BOUND.as_secs(),
            DETECT_BOUND.as_secs(),
            RECOVER_BOUND.as_secs()
        ));
        for (index, component) in Component::ALL.into_iter().enumerate() {
            println!("  {}:", component.label());
            if let Some((_, times)) = self.faults.iter().find(|(c, _)| *c == component) {
                let secs = |d: Option<Duration>| d.map_or("never".into(), |d| format!("{:.2}s", d.as_secs_f64()));
                println!(
                    "    stop took {:.2}s; /health/ready named `{}` {} after ({} after the stop began; {:?}); {} later probes, {} not naming it; slowest probe {:.3}s",
                    times.stop_took.as_secs_f64(),
                    component.readiness_name(),
                    secs(times.detected_after),
                    secs(times.detected_after.map(|d| d + times.stop_took)),
                    times.detail,
                    times.probes_down,
                    times.probes_wrong.len(),
                    times.slowest_probe.as_secs_f64()
                );
                println!(
                    "    start took {:.2}s; then /health/ready 200 after {} ({} after the start began), every request 2xx after {}, the feed delivering after {}",
                    times.start_took.as_secs_f64(),
                    secs(times.ready_after),
                    secs(times.ready_after.map(|d| d + times.start_took)),
                    secs(times.requests_ok_after),
                    secs(times.feed_after)
                );
            }
            for stage in Stage::ALL {
                let mut stats = self.phases[phase_index(index, stage)].clone();
                println!(
                    "    {:<10} {:>7} requests: {}; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; violations {}",
                    stage.label(),
                    stats.requests(),
                    status_summary(&stats.by_status()),
                    ms(stats.latency(0.5)),
                    ms(stats.latency(0.99)),
                    ms(stats.latency(1.0)),
                    stats.violations
                );
                if stage == Stage::Down {
                    let calls: Vec<Call> = stats.counts.keys().map(|(call, _)| *call).collect();
                    let mut calls = calls;
                    calls.dedup();
                    for call in calls {
                        let statuses: BTreeMap<u16, u64> =
                            stats.counts.iter().filter(|((c, _), _)| *c == call).map(|((_, s), n)| (*s, *n)).collect();
                        println!("      {:<30} {}", call.label(), status_summary(&statuses));
                    }
                }
                for example in &stats.examples {
                    println!("      violation: {example}");
                }
            }
        }
    }

    /// Every acceptance property that did not hold.
    fn failures(&self) -> Vec<String> {
        let mut failures = self.problems.clone();
        for (index, component) in Component::ALL.into_iter().enumerate() {
            let label = component.label();
            for stage in Stage::ALL {
                let stats = &self.phases[phase_index(index, stage)];
                if stats.violations > 0 {
                    failures.push(format!(
                        "{label} {}: {} request(s) answered outside the contract, e.g. {}",
                        stage.label(),
                        stats.violations,
                        stats.examples.first().map_or("?", String::as_str)
                    ));
                }
            }
            let Some((_, times)) = self.faults.iter().find(|(c, _)| *c == component) else { continue };
            let name = component.readiness_name();
            if times.detected_after.is_none() {
                failures
                    .push(format!("{label}: /health/ready never named `{name}` within {}s", DETECT_BOUND.as_secs()));
            }
            if let Some(wrong) = times.probes_wrong.first() {
                failures.push(format!(
                    "{label}: {} /health/ready answers while down did not name `{name}`, e.g. {wrong}",
                    times.probes_wrong.len()
                ));
            }
            if times.slowest_probe > HANG_BOUND {
                failures.push(format!("{label}: /health/ready took {:.2}s", times.slowest_probe.as_secs_f64()));
            }
            if times.ready_after.is_none() {
                failures.push(format!("{label}: the service did not recover within {}s", RECOVER_BOUND.as_secs()));
            }
            if times.feed_after.is_none() {
                failures.push(format!(
                    "{label}: the real-time feed delivered no event within {}s of the restart",
                    RECOVER_BOUND.as_secs()
                ));
            }
        }
        failures
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {

    use super::*;

    fn reply(status: u16, content_type: &str, body: &str) -> Response {
        Response { status, content_type: content_type.into(), body: body.into() }
    }

    const FAST: Duration = Duration::from_millis(5);

    #[test]
    fn healthy_phases_accept_only_success() {
        let ok = Ok(reply(201, "application/json", "{}"));
        assert_eq!(classify(Expect::Healthy, &ok, FAST), Verdict::Ok);
        let unavailable = Ok(reply(503, "application/problem+json", r#"{"status":503}"#));
        assert!(matches!(classify(Expect::Healthy, &unavailable, FAST), Verdict::Violation(_)));
        let unauthorized = Ok(reply(401, "application/problem+json", r#"{"status":401}"#));
        assert!(matches!(classify(Expect::Healthy, &unauthorized, FAST), Verdict::Violation(_)));
    }

    #[test]
    fn degraded_phases_accept_503_problem_json_and_nothing_else() {
        let unavailable = Ok(reply(503, "application/problem+json", "{}"));
        assert_eq!(classify(Expect::Degraded, &unavailable, FAST), Verdict::Unavailable);
        let with_charset = Ok(reply(503, "Application/Problem+JSON; charset=utf-8", "{}"));
        assert_eq!(classify(Expect::Degraded, &with_charset, FAST), Verdict::Unavailable);
        assert_eq!(classify(Expect::Degraded, &Ok(reply(200, "application/json", "{}")), FAST), Verdict::Ok);
        let plain = Ok(reply(503, "text/plain", "down"));
        assert_eq!(
            classify(Expect::Degraded, &plain, FAST),
            Verdict::Violation("503 with Content-Type \"text/plain\"".into())
        );
        let internal = Ok(reply(500, "application/problem+json", r#"{"detail":"internal error"}"#));
        assert_eq!(
            classify(Expect::Degraded, &internal, FAST),
            Verdict::Violation(r#"500: {"detail":"internal error"}"#.into())
        );
        // A database outage must not read as bad credentials.
        let unauthorized = Ok(reply(401, "application/problem+json", "{}"));
        assert!(matches!(classify(Expect::Degraded, &unauthorized, FAST), Verdict::Violation(_)));
    }

    #[test]
    fn slow_answers_and_connection_errors_are_violations_anywhere() {
        let slow = HANG_BOUND + Duration::from_millis(1);
        let ok = Ok(reply(200, "application/json", "{}"));
        assert_eq!(classify(Expect::Healthy, &ok, slow), Verdict::Violation("200 after 10.00s".into()));
        let unavailable = Ok(reply(503, "application/problem+json", "{}"));
        assert!(matches!(classify(Expect::Degraded, &unavailable, slow), Verdict::Violation(_)));
        let reset = Err("connection reset".to_owned());
        assert_eq!(
            classify(Expect::Degraded, &reset, FAST),
            Verdict::Violation("no response after 0.01s: connection reset".into())
        );
    }

    #[test]
    fn readiness_must_name_the_component_down() {
        let body = json!({
            "type": "urn:agentgov:problem:service-unavailable", "status": 503,
            "detail": "not ready: database down",
            "components": [
                {"name": "database", "backend": "postgres", "up": false, "latency_ms": 1, "error": "database is unreachable"},
                {"name": "cache", "backend": "redis", "up": true, "latency_ms": 0},
            ],
        })
        .to_string();
        let down = reply(503, "application/problem+json", &body);
        assert_eq!(readiness_names(&down, "database").unwrap(), "not ready: database down");
        assert!(readiness_names(&down, "cache").unwrap_err().contains("not cache"));
        assert_eq!(readiness_names(&reply(200, "application/json", "{}"), "database").unwrap_err(), "answered 200");
        assert!(readiness_names(&reply(503, "application/json", &body), "database").is_err());
        assert!(readiness_names(&reply(503, "application/problem+json", "oops"), "database").is_err());
        let unnamed = body.replace("not ready: database down", "not ready");
        assert!(readiness_names(&reply(503, "application/problem+json", &unnamed), "database").is_err());
    }

    #[test]
    fn phase_statistics_merge_and_rank() {
        let mut a = PhaseStats::default();
        a.record(Call::Me, 200, Duration::from_millis(1), Verdict::Ok, Duration::from_secs(1));
        a.record(Call::Me, 503, Duration::from_millis(3), Verdict::Unavailable, Duration::from_secs(2));
        let mut b = PhaseStats::default();
        b.record(Call::Login, 500, Duration::from_millis(2), Verdict::Violation("500".into()), Duration::from_secs(3));
        a.merge(b);
        assert_eq!(a.requests(), 3);
        assert_eq!(status_summary(&a.by_status()), "200 ×1, 500 ×1, 503 ×1");
        assert_eq!((a.violations, a.examples.clone()), (1, vec!["POST /api/v1/auth/login: 500".to_owned()]));
        assert_eq!(a.last_failure, Some(Duration::from_secs(3)));
        assert_eq!(
            (a.latency(0.0), a.latency(0.5), a.latency(1.0)),
            (Duration::from_millis(1), Duration::from_millis(2), Duration::from_millis(3))
        );
        assert_eq!(status_summary(&BTreeMap::from([(0, 2)])), "error ×2");
        assert_eq!(PhaseStats::default().latency(0.99), Duration::ZERO);
    }

    #[test]
    fn requests_in_flight_across_a_fault_are_judged_as_sent_during_it() {
        let (before, down) = (phase_index(0, Stage::Before), phase_index(0, Stage::Down));
        let (after, next) = (phase_index(0, Stage::After), phase_index(1, Stage::Before));
        assert_eq!(expect_for(before, before), Expect::Healthy);
        assert_eq!(expect_for(before, down), Expect::Degraded);
        assert_eq!(expect_for(phase_index(0, Stage::Recovering), after), Expect::Degraded);
        assert_eq!(expect_for(after, after), Expect::Healthy);
        assert_eq!(expect_for(after, next), Expect::Healthy);
        assert_eq!(expect_for(down, down), Expect::Degraded);
    }

    #[test]
    fn internal_errors_are_read_from_the_server_log() {
        let log = "2026-11-24T02:38:01Z ERROR agentgov_api::problem: internal error error=database: terminating connection\n\
                   2026-11-24T02:38:01Z ERROR tracing_actix_web::middleware: Error encountered: ApiError { status: 503 }\n\
                   2026-11-24T02:38:02Z ERROR agentgov_api::problem: internal error error=database: terminating connection\n";
        assert_eq!(internal_errors(log), BTreeMap::from([("database: terminating connection".to_owned(), 2)]));
        assert!(internal_errors("").is_empty());
    }

    #[test]
    fn phases_are_numbered_per_component_and_stage() {
        assert_eq!(phase_index(0, Stage::Before), 0);
        assert_eq!(phase_index(0, Stage::After), 3);
        assert_eq!(phase_index(1, Stage::Down), 5);
        assert_eq!(Stage::ALL[phase_index(1, Stage::Recovering) % Stage::ALL.len()], Stage::Recovering);
    }

    #[test]
    fn options_default_and_parse() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = Options::parse(&[]).unwrap();
        assert_eq!((o.hold, o.workers), (Duration::from_secs(10), 6));
        let o = Options::parse(&args(&["--hold", "20", "--workers=3"])).unwrap();
        assert_eq!((o.hold, o.workers), (Duration::from_secs(20), 3));
        assert!(Options::parse(&args(&["--hold", "0"])).is_err());
        assert!(Options::parse(&args(&["--skip-postgres"])).is_err());
    }
}
