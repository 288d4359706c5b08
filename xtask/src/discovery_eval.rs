//! `cargo xtask discovery-eval`: how well and how fast shadow-agent discovery works.
//!
//! 1. **Quality, in process.** A seeded generator (`agentgov_detect::discovery::synth`)
//!    makes `--events` events from `--agents` hidden agents with noise (replica hosts,
//!    varying addresses and library versions, dated model names, missing fields, agents on
//!    shared machines) and one-off background traffic; the clusterer the server uses groups
//!    them. Printed: the adjusted Rand index and purity against the hidden agents
//!    (background and noise each one group), how many clusters, and the time to aggregate
//!    and to cluster.
//! 2. **Through the server** (unless `--skip-http`): a release build on loopback, embedded
//!    and (unless `--skip-postgres`) on Postgres. The same events go through
//!    `POST /api/v1/discovery/ingest/batch` in batches of 10,000 over `--connections`
//!    connections (bodies serialised before the clock starts), then `POST /discovery/cluster`
//!    runs to completion. Printed: ingest events/s and the job's wall time and summary.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use agentgov_detect::discovery::synth::{SynthConfig, SynthEvent, generate};
use agentgov_detect::discovery::{Aggregator, Params, cluster, metrics};
use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::args::{self, Arg};
use crate::cmd::step;
use crate::http::Connection;
use crate::server::build_release;
use crate::server::{Backend, Server};

pub const BATCH: usize = 10_000;

struct Options {
    events: usize,
    agents: usize,
    seed: u64,
    connections: usize,
    skip_http: bool,
    skip_postgres: bool,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Self> {
        let mut o =
            Options { events: 1_000_000, agents: 200, seed: 7, connections: 4, skip_http: false, skip_postgres: false };
        let numbers = [("--events", 1), ("--agents", 1), ("--seed", 0), ("--connections", 1)];
        for arg in args::parse(args, &["--skip-http", "--skip-postgres"], &numbers)? {
            match arg {
                Arg::Number { flag: "--events", value, .. } => o.events = value as usize,
                Arg::Number { flag: "--agents", value, .. } => o.agents = value as usize,
                Arg::Number { flag: "--seed", value, .. } => o.seed = value,
                Arg::Number { value, .. } => o.connections = value as usize,
                Arg::Switch("--skip-http") => o.skip_http = true,
                Arg::Switch(_) => o.skip_postgres = true,
            }
        }
        Ok(o)
    }
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let o = Options::parse(args)?;
    let cfg = SynthConfig { seed: o.seed, agents: o.agents, events: o.events, ..SynthConfig::default() };
    step(&format!(
        "discovery-eval: {} events from {} hidden agents ({:.0}% background, {:.0}% of fields missing, {:.0}% of agents on shared hosts), seed {}",
        cfg.events,
        cfg.agents,
        cfg.background_share * 100.0,
        cfg.missing_rate * 100.0,
        cfg.shared_host_share * 100.0,
        cfg.seed
    ));
    let events = generate(&cfg);
    quality(&events, cfg.agents);
    if o.skip_http {
        return Ok(());
    }
    step("discovery-eval: cargo build --release -p agentgov-server");
    let binary = build_release()?;
    let bodies = batches(&events);
    let backends = Backend::every(o.skip_postgres);
    for backend in backends {
        through_server(&binary, &backend, &bodies, events.len(), o.connections)?;
    }
    Ok(())
}

fn quality(events: &[SynthEvent], agents: usize) {
    let started = Instant::now();
    let mut agg = Aggregator::new();
    let signatures: Vec<usize> =
        events.iter().enumerate().map(|(i, e)| agg.add(&e.observation(), e.at, i as u128)).collect();
    let aggregated = started.elapsed();
    let started = Instant::now();
    let clustering = cluster(&agg, &Params::default(), &[]);
    let clustered = started.elapsed();
    let noise = u32::MAX;
    let truth: Vec<u32> = events.iter().map(|e| e.truth.unwrap_or(noise)).collect();
    let predicted: Vec<u32> =
        signatures.iter().map(|s| clustering.assignment[*s].map_or(noise, |c| c as u32)).collect();
    let ari = metrics::adjusted_rand_index(&truth, &predicted);
    let purity = metrics::purity(&truth, &predicted, noise);
    let background = events.iter().filter(|e| e.truth.is_none()).count();
    let background_clustered = events.iter().zip(&predicted).filter(|(e, p)| e.truth.is_none() && **p != noise).count();
    println!(
        "    {} signatures; aggregated in {:.2}s, clustered in {:.2}s",
        agg.signatures(),
        aggregated.as_secs_f64(),
        clustered.as_secs_f64()
    );
    println!(
        "    {} clusters for {agents} hidden agents; ARI {ari:.4}; purity {purity:.4}; noise {} events; background put in a cluster: {background_clustered} of {background}",
        clustering.clusters.len(),
        clustering.noise_events
    );
}

/// The events as request bodies of `BATCH` events each.
pub fn batches(events: &[SynthEvent]) -> Vec<String> {
    events
        .chunks(BATCH)
        .map(|chunk| {
            let items: Vec<Value> = chunk
                .iter()
                .map(|e| {
                    let mut v = json!({
                        "source": e.source,
                        "timestamp": rfc3339(e.at),
                        "tool_calls": e.tool_calls,
                    });
                    for (name, value) in [
                        ("host", &e.host),
                        ("ip", &e.ip),
                        ("user_agent", &e.user_agent),
                        ("process", &e.process),
                        ("endpoint", &e.endpoint),
                        ("model", &e.model),
                        ("api_key_fingerprint", &e.api_key_fingerprint),
                    ] {
                        if let Some(value) = value {
                            v[name] = json!(value);
                        }
                    }
                    v
                })
                .collect();
            json!({ "events": items }).to_string()
        })
        .collect()
}

/// Unix seconds as RFC 3339 UTC.
fn rfc3339(secs: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|at| at.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

fn through_server(
    binary: &std::path::Path,
    backend: &Backend,
    bodies: &[String],
    events: usize,
    connections: usize,
) -> anyhow::Result<()> {
    let mode = backend.label();
    step(&format!("discovery-eval [{mode}]: starting the server on loopback"));
    let mut server = Server::start(binary, backend)?;
    let key = server.tenant_api_key("discovery")?;
    step(&format!(
        "discovery-eval [{mode}]: POST /api/v1/discovery/ingest/batch, {} batches of {BATCH} over {connections} connections",
        bodies.len()
    ));
    let next = Arc::new(AtomicUsize::new(0));
    let accepted = Arc::new(AtomicUsize::new(0));
    let failures: Arc<Mutex<Vec<String>>> = Arc::default();
    let started = Instant::now();
    thread::scope(|s| {
        for _ in 0..connections {
            let (next, accepted, failures, key, base) =
                (next.clone(), accepted.clone(), failures.clone(), key.clone(), server.base.clone());
            s.spawn(move || {
                let Ok(mut conn) = Connection::new(&base) else { return };
                let headers = [format!("X-API-Key: {key}")];
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(body) = bodies.get(i) else { break };
                    match conn.post_json("/api/v1/discovery/ingest/batch", &headers, body) {
                        Ok(r) if r.status == 202 => {
                            let n = serde_json::from_str::<Value>(&r.body)
                                .ok()
                                .and_then(|v| v["accepted"].as_u64())
                                .unwrap_or(0);
                            accepted.fetch_add(n as usize, Ordering::Relaxed);
                        }
                        Ok(r) => {
                            failures.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{}: {}", r.status, r.body))
                        }
                        Err(e) => failures.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{e:#}")),
                    }
                }
            });
        }
    });
    let seconds = started.elapsed().as_secs_f64();
    let accepted = accepted.load(Ordering::Relaxed);
    let failures = failures.lock().unwrap_or_else(|e| e.into_inner()).clone();
    println!(
        "    {accepted} of {events} events accepted in {seconds:.2}s: {:.0} events/s ({} failed batches)",
        accepted as f64 / seconds,
        failures.len()
    );
    if let Some(first) = failures.first() {
        bail!("a batch failed: {first}");
    }
    server.check_still_running()?;

    step(&format!("discovery-eval [{mode}]: POST /api/v1/discovery/cluster, to completion"));
    let mut conn = Connection::new(&server.base)?;
    let headers = [format!("X-API-Key: {key}")];
    let started = Instant::now();
    let queued = conn.post_json("/api/v1/discovery/cluster", &headers, "")?;
    if queued.status != 202 {
        bail!("POST /discovery/cluster answered {}: {}", queued.status, queued.body);
    }
    let job: Value = serde_json::from_str(&queued.body)?;
    let id = job["id"].as_str().context("the job has no id")?.to_owned();
    let key_header = format!("X-API-Key: {key}");
    let job = loop {
        let (job, _) =
            server.get(&format!("/api/v1/discovery/cluster/{id}"), &[&key_header], Duration::from_secs(30))?;
        match job["status"].as_str() {
            Some("completed") => break job,
            Some("failed" | "cancelled") => bail!("the clustering job ended as {}", job),
            _ => thread::sleep(Duration::from_millis(250)),
        }
        if started.elapsed() > Duration::from_secs(1800) {
            bail!("clustering did not finish within 30 minutes");
        }
    };
    println!(
        "    completed in {:.1}s (wall, polled every 250 ms); summary: {}",
        started.elapsed().as_secs_f64(),
        job["summary"]
    );
    server.check_still_running()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_790_000_000), "2026-09-21T14:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
