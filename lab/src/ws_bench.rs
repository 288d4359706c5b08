//! `cargo xtask ws-bench`: the real-time feed's fan-out latency and the memory an idle
//! socket costs, embedded (in-process bus) and (unless `--skip-postgres`) on Postgres with
//! the Redis bus.
//!
//! Per mode:
//! 1. A release server on loopback; a tenant, its admin's JWT and one agent.
//! 2. `--clients` WebSocket clients (tokio-tungstenite, in this process) connect with the
//!    JWT and subscribe to `hitl.requested`. The server's RSS before the first connection
//!    and one second after the last gives the memory per idle socket.
//! 3. `--events` approval requests are opened (`POST /hitl/request`, one every
//!    `--interval-ms`, 100 by default, on one keep-alive connection). Each is published once and fanned out to every client.
//!    A client stamps each message when its frame arrives; the latency is that stamp minus
//!    the event's `ts`, which the server sets when it publishes (after the request and its
//!    audit record are stored). So it covers the bus (Redis pub/sub in Postgres mode), the
//!    fan-out and the socket writes, not the request's own storage.
//! 4. Printed: every (event, client) delivery's p50, p99 and max; the p50 and p99 of each
//!    event's last delivery (when all clients had it); deliveries counted against
//!    clients × events.
//!
//! The clients run on this machine with the server (two cores in all), so their own
//! decoding is inside the figures.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::bench::mem::status_kib;
use crate::siem_bench::{clock_ticks_per_second, process_ticks};
use xtask::args::{self, Arg};
use xtask::cmd::step;
use xtask::http::Connection;
use xtask::server::{Backend, Server, nonce};
use xtask::server::{DEFAULT_POSTGRES_URL, build_release};

const DEFAULT_CLIENTS: u64 = 1000;
const DEFAULT_EVENTS: u64 = 100;
/// Between two published events: more than one fan-out to the default thousand clients
/// takes, so each event's latency is its own, not a queue's.
const DEFAULT_INTERVAL_MS: u64 = 100;
const DEFAULT_REDIS_URL: &str = "redis://127.0.0.1:6379";
/// Clients connecting at once.
const CONNECT_BATCH: usize = 50;
/// How long the clients wait for the last deliveries after the last event.
const DRAIN: Duration = Duration::from_secs(10);

#[derive(Debug, PartialEq, Eq)]
struct Options {
    clients: u64,
    events: u64,
    interval_ms: u64,
    skip_postgres: bool,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Self> {
        let mut options = Options {
            clients: DEFAULT_CLIENTS,
            events: DEFAULT_EVENTS,
            interval_ms: DEFAULT_INTERVAL_MS,
            skip_postgres: false,
        };
        let numbers = [("--clients", 1), ("--events", 1), ("--interval-ms", 1)];
        for arg in args::parse(args, &["--skip-postgres"], &numbers)? {
            match arg {
                Arg::Switch(_) => options.skip_postgres = true,
                Arg::Number { flag: "--clients", value, .. } => options.clients = value,
                Arg::Number { flag: "--events", value, .. } => options.events = value,
                Arg::Number { value, .. } => options.interval_ms = value,
            }
        }
        if options.clients > 15_000 {
            bail!("--clients must be at most 15000 (file descriptors: each client is two)");
        }
        Ok(options)
    }
}

/// One mode's figures.
struct Summary {
    mode: &'static str,
    clients: usize,
    events: usize,
    delivered: usize,
    /// Every delivery's latency, microseconds, sorted.
    all: Vec<i64>,
    /// Each event's last delivery, microseconds, sorted.
    last: Vec<i64>,
    rss_before_kib: u64,
    rss_idle_kib: u64,
    /// CPU while the events were published and delivered, % of one core.
    server_cpu: f64,
    clients_cpu: f64,
}

impl Summary {
    fn line(&self) -> String {
        let ms = |us: i64| us as f64 / 1000.0;
        let per_socket = (self.rss_idle_kib.saturating_sub(self.rss_before_kib)) as f64 / self.clients as f64;
        format!(
            "{}: {} clients × {} events, {} of {} delivered; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
             all clients had an event after p50 {:.2} ms, p99 {:.2} ms; RSS {} → {} KiB idle = {:.1} KiB per socket; \
             CPU server {:.0}%, clients {:.0}% of a core",
            self.mode,
            self.clients,
            self.events,
            self.delivered,
            self.clients * self.events,
            ms(percentile(&self.all, 0.50)),
            ms(percentile(&self.all, 0.99)),
            ms(self.all.last().copied().unwrap_or_default()),
            ms(percentile(&self.last, 0.50)),
            ms(percentile(&self.last, 0.99)),
            self.rss_before_kib,
            self.rss_idle_kib,
            per_socket,
            self.server_cpu,
            self.clients_cpu,
        )
    }
}

/// The `q` quantile (nearest rank) of sorted `values`; 0 when empty.
fn percentile(sorted: &[i64], q: f64) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let options = Options::parse(args)?;
    step("ws-bench: cargo build --release -p agentgov-server");
    let binary = build_release()?;
    let mut summaries = vec![measure(&binary, &Backend::Embedded, &[], &options, "embedded (in-process bus)")?];
    if !options.skip_postgres {
        let postgres = std::env::var("AGENTGOV_BENCH_DATABASE_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.into());
        let redis = std::env::var("AGENTGOV_BENCH_REDIS_URL").unwrap_or_else(|_| DEFAULT_REDIS_URL.into());
        let env = [("REDIS_URL", redis), ("AGENTGOV_REDIS_PREFIX", format!("bench-{}:", nonce()))];
        let backend = Backend::Postgres { admin_url: postgres };
        summaries.push(measure(&binary, &backend, &env, &options, "Postgres + Redis bus")?);
    }
    step("ws-bench: results");
    for summary in &summaries {
        println!("    {}", summary.line());
    }
    Ok(())
}

fn measure(
    binary: &Path,
    backend: &Backend,
    env: &[(&str, String)],
    options: &Options,
    mode: &'static str,
) -> anyhow::Result<Summary> {
    step(&format!("ws-bench: {mode}"));
    let mut server = Server::start_with(binary, backend, env)?;
    let credentials = server.sign_in()?;
    let key = format!("X-API-Key: {}", credentials.api_key);
    let mut http = Connection::new(&server.base)?;
    let agent =
        http.post_json("/api/v1/agents/register", std::slice::from_ref(&key), r#"{"name":"bench","type":"llm"}"#)?;
    if agent.status != 201 {
        bail!("registering the agent answered {}: {}", agent.status, agent.body);
    }
    let agent: Value = serde_json::from_str(&agent.body)?;
    let ask = json!({"agent_id": agent["id"], "action": "read", "resource": "docs", "reason": "bench",
        "timeout_seconds": 3600})
    .to_string();
    // Warm the path once (the tenant's settings, the agent snapshot).
    http.post_json("/api/v1/hitl/request", std::slice::from_ref(&key), &ask)?;
    std::thread::sleep(Duration::from_secs(1));
    let rss_before_kib = status_kib(server.pid(), "VmRSS").context("reading the server's RSS")?;

    let ws = format!("{}/api/v1/ws?token={}", server.base.replacen("http://", "ws://", 1), credentials.access_token);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let clients = options.clients as usize;
    let events = options.events as usize;
    let spacing = Duration::from_millis(options.interval_ms);
    let pid = server.pid();
    let (deliveries, rss_idle_kib, (server_cpu, clients_cpu)) = runtime.block_on(async move {
        let mut sockets = Vec::with_capacity(clients);
        while sockets.len() < clients {
            let batch = CONNECT_BATCH.min(clients - sockets.len());
            let connected = futures::future::join_all((0..batch).map(|_| connect(&ws))).await;
            for socket in connected {
                sockets.push(socket?);
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let rss_idle_kib = status_kib(pid, "VmRSS").context("reading the server's RSS")?;
        println!("    {clients} sockets open: server RSS {rss_before_kib} → {rss_idle_kib} KiB");

        let cpu = CpuClock::start(pid)?;
        let readers: Vec<_> = sockets.into_iter().map(|socket| tokio::spawn(read(socket, events, spacing))).collect();
        let publisher = tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
            let started = Instant::now();
            for n in 0..events {
                let due = started + spacing * n as u32;
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                let answer = http.post_json("/api/v1/hitl/request", std::slice::from_ref(&key), &ask)?;
                if answer.status != 201 {
                    bail!("POST /hitl/request answered {}: {}", answer.status, answer.body);
                }
            }
            Ok(())
        });
        publisher.await??;
        let mut deliveries = Vec::with_capacity(clients);
        for reader in readers {
            deliveries.push(reader.await?);
        }
        anyhow::Ok((deliveries, rss_idle_kib, cpu.stop()?))
    })?;
    server.check_still_running()?;

    let mut all = Vec::new();
    let mut last: HashMap<String, i64> = HashMap::new();
    for (id, latency) in deliveries.into_iter().flatten() {
        all.push(latency);
        let slot = last.entry(id).or_insert(latency);
        *slot = (*slot).max(latency);
    }
    all.sort_unstable();
    let mut last: Vec<i64> = last.into_values().collect();
    last.sort_unstable();
    let summary = Summary {
        mode,
        clients,
        events,
        delivered: all.len(),
        all,
        last,
        rss_before_kib,
        rss_idle_kib,
        server_cpu,
        clients_cpu,
    };
    println!("    {}", summary.line());
    Ok(summary)
}

/// CPU time of the server and of this process (the clients) over a phase.
struct CpuClock {
    server: u32,
    started: Instant,
    server_ticks: u64,
    own_ticks: u64,
}

impl CpuClock {
    fn start(server: u32) -> anyhow::Result<Self> {
        Ok(Self {
            server,
            started: Instant::now(),
            server_ticks: process_ticks(server)?,
            own_ticks: process_ticks(std::process::id())?,
        })
    }

    /// (server, clients) in % of one core.
    fn stop(self) -> anyhow::Result<(f64, f64)> {
        let seconds = self.started.elapsed().as_secs_f64() * clock_ticks_per_second();
        let share = |now: u64, then: u64| now.saturating_sub(then) as f64 * 100.0 / seconds;
        Ok((
            share(process_ticks(self.server)?, self.server_ticks),
            share(process_ticks(std::process::id())?, self.own_ticks),
        ))
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A client subscribed to `hitl.requested`, once the server acknowledged it.
async fn connect(url: &str) -> anyhow::Result<Socket> {
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.context("opening a WebSocket")?;
    let subscribe = json!({"type": "subscribe", "events": ["hitl.requested"]}).to_string();
    socket.send(Message::Text(subscribe.into())).await?;
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(text))) if text.contains("\"subscribed\"") => return Ok(socket),
            Some(Ok(Message::Text(text))) => bail!("unexpected first message {text}"),
            Some(Ok(_)) => continue,
            other => bail!("the socket ended before the subscription was acknowledged: {other:?}"),
        }
    }
}

/// Reads until `events` events arrived (or [`DRAIN`] after the last one): each event's id
/// and its latency in microseconds (arrival minus the event's `ts`).
async fn read(mut socket: Socket, events: usize, spacing: Duration) -> Vec<(String, i64)> {
    let mut seen = Vec::with_capacity(events);
    while seen.len() < events {
        let wait = spacing * (events - seen.len()) as u32 + DRAIN;
        let Ok(Some(Ok(message))) = tokio::time::timeout(wait, socket.next()).await else { break };
        let arrived = time::OffsetDateTime::now_utc();
        let Message::Text(text) = message else { continue };
        if let Some((id, published)) = id_and_ts(&text) {
            let latency = (arrived - published).whole_microseconds();
            seen.push((id.to_owned(), i64::try_from(latency).unwrap_or(i64::MAX)));
        }
    }
    let _ = socket.close(None).await;
    seen
}

/// An event's `id` and `ts`, read off the text without parsing the rest (the clients share
/// the machine with the server: their own cost is part of what is measured).
fn id_and_ts(text: &str) -> Option<(&str, time::OffsetDateTime)> {
    let field = |name: &str| {
        let start = text.find(&format!("\"{name}\":\""))? + name.len() + 4;
        let len = text[start..].find('"')?;
        Some(&text[start..start + len])
    };
    let ts = time::OffsetDateTime::parse(field("ts")?, &time::format_description::well_known::Rfc3339).ok()?;
    Some((field("id")?, ts))
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn options_and_percentiles() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            Options::parse(&args(&["--clients", "10", "--events=5", "--skip-postgres"])).unwrap(),
            Options { clients: 10, events: 5, interval_ms: DEFAULT_INTERVAL_MS, skip_postgres: true }
        );
        assert!(Options::parse(&args(&["--clients", "0"])).is_err());
        assert!(Options::parse(&args(&["--clients", "20000"])).is_err());
        let text = r#"{"id":"0193-a","type":"hitl.requested","tenant_id":"t","ts":"2026-11-23T18:00:00.5Z","data":{"id":"x"}}"#;
        let (id, ts) = id_and_ts(text).unwrap();
        assert_eq!((id, ts.unix_timestamp(), ts.millisecond()), ("0193-a", 1_795_456_800, 500));
        let v: Vec<i64> = (1..=100).collect();
        assert_eq!((percentile(&v, 0.5), percentile(&v, 0.99), percentile(&[], 0.5)), (50, 99, 0));
    }
}
