//! `cargo xtask soak`: long mixed traffic across two replicas, and their memory over time.
//!
//! Production mode: two release servers on one throwaway Postgres database and one Redis
//! (`AGENTGOV_BENCH_REDIS_URL`, default `redis://127.0.0.1:6379`, under a key prefix of the
//! run's own), each on its own port. A tenant with an agent and five enabled policies, and
//! one that receives webhook deliveries. `--workers` connections (default 8) send, in turn
//! and alternately to each replica: a policy check, a signed webhook delivery with its own
//! `X-Webhook-Id`, a Prompt Guard screening, an agent search, a page of the audit log and
//! `GET /auth/me` with the admin's token. Every answer must be 2xx.
//!
//! Each replica's resident memory (`VmRSS`) is sampled every `SAMPLE_EVERY` for `--minutes`
//! (default 30). After a warm-up (the first `WARM_UP_SHARE` of the run: pools, caches and
//! the allocator's arenas fill), memory is flat when the median of the last
//! `WINDOW_SHARE` of the run is at most `FLAT_GROWTH` above the median of the same span
//! right after the warm-up, or within `FLAT_SLACK_KIB`. The least-squares slope after the
//! warm-up is printed too, in MiB per hour.

use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::json;

use crate::bench::mem;
use crate::bench::{policy, webhook};
use xtask::args::{self, Arg};
use xtask::cmd::step;
use xtask::http::Connection;
use xtask::server::{Backend, DEFAULT_POSTGRES_URL, Server, build_release, nonce};

const SAMPLE_EVERY: Duration = Duration::from_secs(10);
const WARM_UP_SHARE: f64 = 0.2;
const WINDOW_SHARE: f64 = 0.2;
const FLAT_GROWTH: f64 = 0.05;
const FLAT_SLACK_KIB: u64 = 4 * 1024;
const DEFAULT_REDIS_URL: &str = "redis://127.0.0.1:6379";
const PROMPT: &str = "Summarise the open support tickets about late deliveries and draft a polite reply to each.";

struct Options {
    minutes: u64,
    workers: u64,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Self> {
        let mut o = Options { minutes: 30, workers: 8 };
        for arg in args::parse(args, &[], &[("--minutes", 1), ("--workers", 1)])? {
            match arg {
                Arg::Number { flag: "--minutes", value, .. } => o.minutes = value,
                Arg::Number { value, .. } => o.workers = value,
                Arg::Switch(_) => {}
            }
        }
        Ok(o)
    }
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let options = Options::parse(args)?;
    step("soak: cargo build --release -p agentgov-server");
    let binary = build_release()?;
    let admin_url = std::env::var("AGENTGOV_BENCH_DATABASE_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.into());
    let redis_url = std::env::var("AGENTGOV_BENCH_REDIS_URL").unwrap_or_else(|_| DEFAULT_REDIS_URL.into());
    let prefix = format!("agentgov-soak-{}:", nonce());

    step("soak: two replicas on one Postgres database and one Redis");
    let extra = [("REDIS_URL", redis_url.clone()), ("AGENTGOV_REDIS_PREFIX", prefix.clone())];
    let first = Server::start_with(&binary, &Backend::Postgres { admin_url }, &extra)?;
    let second = first.replica()?;
    let replicas = [&first, &second];
    let (credentials, check_body) = policy::set_up(&first, "soak-checks")?;
    let webhook_key = first.tenant_api_key("soak-webhook")?;
    let traffic = Traffic {
        api_key: credentials.api_key,
        bearer: credentials.access_token,
        check_body,
        webhook_headers: webhook::headers(&first, &webhook_key)?,
        screen_body: json!({ "prompt": PROMPT }).to_string(),
    };
    for server in replicas {
        println!("    {} (pid {}, data dir {})", server.base, server.pid(), server.data_dir().display());
    }

    let duration = Duration::from_secs(options.minutes * 60);
    step(&format!(
        "soak: {} minutes, {} connections, RSS every {}s",
        options.minutes,
        options.workers,
        SAMPLE_EVERY.as_secs()
    ));
    let stop = AtomicBool::new(false);
    let counter = AtomicU64::new(0);
    let answered = AtomicU64::new(0);
    let failures: Mutex<Vec<String>> = Mutex::default();
    let samples = thread::scope(|s| {
        for worker in 0..options.workers {
            let (traffic, stop, counter, answered, failures) = (&traffic, &stop, &counter, &answered, &failures);
            let bases: Vec<String> = replicas.iter().map(|r| r.base.clone()).collect();
            s.spawn(move || traffic.run(worker, &bases, stop, counter, answered, failures));
        }
        let samples = sample(&replicas, duration, &answered, &failures);
        stop.store(true, Ordering::SeqCst);
        samples
    });
    let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    let answered = answered.load(Ordering::Relaxed);

    step("soak: memory");
    let mut problems = Vec::new();
    for (i, server) in replicas.iter().enumerate() {
        let series: Vec<(f64, u64)> = samples.iter().map(|s| (s.at, s.rss_kib[i])).collect();
        let verdict = Verdict::of(&series);
        println!("    replica {} ({}): {}", i + 1, server.base, verdict.describe());
        if !verdict.flat {
            problems.push(format!("replica {}'s memory grew: {}", i + 1, verdict.describe()));
        }
    }
    println!(
        "    {answered} requests answered 2xx in {:.0} min ({:.0}/s), {} failures",
        duration.as_secs_f64() / 60.0,
        answered as f64 / duration.as_secs_f64(),
        failures.len()
    );
    if let Some(first) = failures.first() {
        problems.push(format!("{} requests failed; the first: {first}", failures.len()));
    }
    for (i, server) in replicas.iter().enumerate() {
        let peak = mem::status_kib(server.pid(), "VmHWM").unwrap_or_default();
        println!("    replica {} peak RSS (VmHWM): {:.1} MiB", i + 1, peak as f64 / 1024.0);
    }
    drop(second);
    drop(first);
    remove_keys(&redis_url, &prefix);
    if !problems.is_empty() {
        bail!("{}", problems.join("; "));
    }
    Ok(())
}

/// Deletes the run's keys (`prefix*`) from the shared Redis, with `redis-cli` where it is
/// installed; a leftover only costs memory until its TTL, so failing here only warns.
fn remove_keys(redis_url: &str, prefix: &str) {
    let scan =
        Command::new("redis-cli").args(["-u", redis_url, "--scan", "--pattern"]).arg(format!("{prefix}*")).output();
    let keys = match scan {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => return eprintln!("    warning: could not list the run's Redis keys ({prefix}*) to delete them"),
    };
    let keys: Vec<&str> = keys.lines().filter(|key| !key.is_empty()).collect();
    for chunk in keys.chunks(500) {
        let deleted = Command::new("redis-cli").args(["-u", redis_url, "DEL"]).args(chunk).output();
        if !deleted.is_ok_and(|out| out.status.success()) {
            return eprintln!("    warning: could not delete the run's Redis keys ({prefix}*)");
        }
    }
    println!("    {} Redis keys of the run deleted", keys.len());
}

/// What the workers send.
struct Traffic {
    api_key: String,
    bearer: String,
    check_body: String,
    webhook_headers: Vec<String>,
    screen_body: String,
}

impl Traffic {
    /// Sends the mix in turn, alternating replicas, until `stop`; counts 2xx answers in
    /// `answered` and notes anything else in `failures`.
    fn run(
        &self,
        worker: u64,
        bases: &[String],
        stop: &AtomicBool,
        counter: &AtomicU64,
        answered: &AtomicU64,
        failures: &Mutex<Vec<String>>,
    ) {
        let mut connections: Vec<Connection> = bases.iter().filter_map(|base| Connection::new(base).ok()).collect();
        let key = vec![format!("X-API-Key: {}", self.api_key)];
        let bearer = vec![format!("Authorization: Bearer {}", self.bearer)];
        let mut turn = worker as usize;
        while !stop.load(Ordering::Relaxed) {
            let n = connections.len().max(1);
            let Some(connection) = connections.get_mut(turn % n) else { return };
            let answer = match turn % 6 {
                0 => connection.post_json("/api/v1/policies/check", &key, &self.check_body),
                1 => {
                    let mut headers = self.webhook_headers.clone();
                    headers.push(format!("X-Webhook-Id: soak-{}", counter.fetch_add(1, Ordering::Relaxed)));
                    connection.post_json("/webhooks/agent", &headers, webhook::BODY)
                }
                2 => connection.post_json("/api/v1/guard/validate", &key, &self.screen_body),
                3 => connection.get("/api/v1/agents/search?q=refund%20a%20damaged%20order&limit=5", &key),
                4 => connection.get("/api/v1/audit?limit=20", &key),
                _ => connection.get("/api/v1/auth/me", &bearer),
            };
            match answer {
                Ok(r) if (200..300).contains(&r.status) => {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
                Ok(r) => failures.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{}: {}", r.status, r.body)),
                Err(err) => failures.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{err:#}")),
            }
            turn += 1;
        }
    }
}

struct Sample {
    /// Seconds since the start.
    at: f64,
    rss_kib: [u64; 2],
}

/// Samples both replicas' RSS until `duration` has passed; prints a line a minute.
fn sample(
    replicas: &[&Server; 2],
    duration: Duration,
    answered: &AtomicU64,
    failures: &Mutex<Vec<String>>,
) -> Vec<Sample> {
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut printed_minute = 0;
    while started.elapsed() < duration {
        let rss = |server: &Server| mem::status_kib(server.pid(), "VmRSS").unwrap_or_default();
        let at = started.elapsed().as_secs_f64();
        samples.push(Sample { at, rss_kib: [rss(replicas[0]), rss(replicas[1])] });
        let minute = (at / 60.0) as u64;
        if minute > printed_minute || samples.len() == 1 {
            printed_minute = minute;
            let last = &samples[samples.len() - 1];
            println!(
                "    {:>3} min: RSS {:.1} / {:.1} MiB, {} answered, {} failed",
                minute,
                last.rss_kib[0] as f64 / 1024.0,
                last.rss_kib[1] as f64 / 1024.0,
                answered.load(Ordering::Relaxed),
                failures.lock().map(|f| f.len()).unwrap_or_default()
            );
        }
        thread::sleep(SAMPLE_EVERY.min(duration.saturating_sub(started.elapsed())).max(Duration::from_millis(1)));
    }
    samples
}

/// Whether a series of `(seconds, KiB)` samples is flat after the warm-up.
#[derive(Debug, PartialEq)]
struct Verdict {
    /// Median KiB right after the warm-up, and over the last window.
    early_kib: u64,
    late_kib: u64,
    /// Least-squares slope after the warm-up, MiB per hour.
    slope_mib_per_hour: f64,
    flat: bool,
}

impl Verdict {
    fn of(series: &[(f64, u64)]) -> Verdict {
        let end = series.last().map(|s| s.0).unwrap_or_default();
        let warm = end * WARM_UP_SHARE;
        let window = end * WINDOW_SHARE;
        let median_between = |from: f64, to: f64| {
            let mut values: Vec<u64> = series.iter().filter(|s| s.0 >= from && s.0 <= to).map(|s| s.1).collect();
            values.sort_unstable();
            values.get(values.len() / 2).copied().unwrap_or_default()
        };
        let early_kib = median_between(warm, warm + window);
        let late_kib = median_between(end - window, end);
        let after: Vec<(f64, f64)> = series.iter().filter(|s| s.0 >= warm).map(|s| (s.0, s.1 as f64)).collect();
        let slope_mib_per_hour = slope(&after) * 3600.0 / 1024.0;
        let growth = late_kib.saturating_sub(early_kib);
        let flat = growth <= FLAT_SLACK_KIB || (growth as f64) <= early_kib as f64 * FLAT_GROWTH;
        Verdict { early_kib, late_kib, slope_mib_per_hour, flat }
    }

    fn describe(&self) -> String {
        format!(
            "{:.1} MiB after the warm-up, {:.1} MiB at the end ({:+.1}%), slope {:+.2} MiB/h: {}",
            self.early_kib as f64 / 1024.0,
            self.late_kib as f64 / 1024.0,
            (self.late_kib as f64 - self.early_kib as f64) * 100.0 / (self.early_kib.max(1) as f64),
            self.slope_mib_per_hour,
            if self.flat { "flat" } else { "GROWING" }
        )
    }
}

/// The least-squares slope of `points` (y per x); 0 for fewer than two distinct x.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if points.len() < 2 {
        return 0.0;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let cov: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let var: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if var == 0.0 { 0.0 } else { cov / var }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn options_default_and_parse() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = Options::parse(&[]).unwrap();
        assert_eq!((o.minutes, o.workers), (30, 8));
        let o = Options::parse(&args(&["--minutes", "2", "--workers=3"])).unwrap();
        assert_eq!((o.minutes, o.workers), (2, 3));
        assert!(Options::parse(&args(&["--minutes", "0"])).is_err());
    }

    #[test]
    fn the_slope_is_least_squares() {
        assert_eq!(slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]), 2.0);
        assert_eq!(slope(&[(1.0, 1.0)]), 0.0);
        assert_eq!(slope(&[(1.0, 1.0), (1.0, 5.0)]), 0.0);
    }

    #[test]
    fn memory_is_flat_unless_it_keeps_growing() {
        // 30 minutes at 10 s: a warm-up climb, then level.
        let level: Vec<(f64, u64)> =
            (0..180).map(|i| (i as f64 * 10.0, if i < 20 { 50_000 + i * 2_000 } else { 90_000 + i % 3 })).collect();
        let v = Verdict::of(&level);
        assert!(v.flat, "{v:?}");
        assert_eq!((v.early_kib, v.late_kib), (90_001, 90_001));
        // A leak of 400 KiB every 10 s (140 MiB an hour) from a level start.
        let leak: Vec<(f64, u64)> = (0..180).map(|i| (i as f64 * 10.0, 100_000 + i * 400)).collect();
        let v = Verdict::of(&leak);
        assert!(!v.flat, "{v:?}");
        assert!((v.slope_mib_per_hour - 140.625).abs() < 1e-6, "{v:?}");
    }
}
