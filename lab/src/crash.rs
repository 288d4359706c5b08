//! `cargo xtask crash`: what a `kill -9` in the middle of work leaves behind.
//!
//! For each mode (embedded, then Postgres unless `--skip-postgres`), a release server on
//! loopback with two tenants: one that receives signed webhook deliveries (`agent.action`,
//! each with its own `X-Webhook-Id`), and one with an agent and five enabled policies that
//! receives policy checks and runs the asynchronous jobs (its shadow-agent events ingested
//! first, so that clustering has work to do). Then `--kills` rounds of:
//!
//! 1. **Load:** `WEBHOOK_WORKERS` connections sending deliveries and `CHECK_WORKERS` sending
//!    checks for `--seconds`; every answer is noted (the delivery id of each 200, the
//!    `decision_id` of each answered check). Shortly before the end (1.5 s, 0.4 s or 50 ms,
//!    by round), one of each job is queued: an asynchronous JSONL export of the whole log,
//!    Prompt Guard training, anomaly detector training and shadow-agent clustering; their
//!    state is read just before the kill.
//! 2. **Crash:** SIGKILL, with requests in flight, then the same binary started again on the
//!    same data; timed from the kill until `/health` answers.
//! 3. **Retry:** every delivery that got no answer is sent again with its `X-Webhook-Id`, as
//!    a sender would retry it; each must now answer 200.
//! 4. **Proof:** both tenants' chains verify (`GET /audit/verify`); every acknowledged or
//!    retried delivery id is in the log exactly once; every answered check's `decision_id` is
//!    in the log; every job reaches `completed` (an export's file then downloads) or
//!    `failed` with a reason, none stays queued or running (a job interrupted by the crash is
//!    taken over when its lease, 60 s, runs out).
//!
//! Any answer other than 200 before the kill, a connection error before the kill, or a
//! failed proof fails the command.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use agentgov_detect::discovery::synth::{SynthConfig, generate};
use anyhow::{Context, bail};
use serde_json::Value;

use crate::bench::audit::key_header;
use crate::bench::{audit, policy, webhook};
use xtask::args::{self, Arg};
use xtask::cmd::{self, step};
use xtask::discovery_eval;
use xtask::http::Connection;
use xtask::server::build_release;
use xtask::server::{Backend, Server};

const WEBHOOK_WORKERS: usize = 8;
const CHECK_WORKERS: usize = 8;
/// How long before the kill the jobs are queued, by round in turn: so that some are killed
/// while queued, some while running, and some are done before the kill.
const JOBS_BEFORE_KILL: [Duration; 3] =
    [Duration::from_millis(1500), Duration::from_millis(400), Duration::from_millis(50)];
/// A job interrupted by the crash waits for its lease (60 s) before another worker takes it.
const JOB_DEADLINE: Duration = Duration::from_secs(300);
const RETRIES: u32 = 20;

struct Options {
    kills: u64,
    seconds: u64,
    events: u64,
    skip_postgres: bool,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Self> {
        let mut o = Options { kills: 3, seconds: 8, events: 200_000, skip_postgres: false };
        let numbers = [("--kills", 1), ("--seconds", 3), ("--events", 1)];
        for arg in args::parse(args, &["--skip-postgres"], &numbers)? {
            match arg {
                Arg::Number { flag: "--kills", value, .. } => o.kills = value,
                Arg::Number { flag: "--seconds", value, .. } => o.seconds = value,
                Arg::Number { value, .. } => o.events = value,
                Arg::Switch(_) => o.skip_postgres = true,
            }
        }
        Ok(o)
    }
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let options = Options::parse(args)?;
    if !cmd::exists("curl") {
        bail!("`curl` is not on PATH; install it (e.g. `apt-get install curl`), then rerun");
    }
    step("crash: cargo build --release -p agentgov-server");
    let binary = build_release()?;
    let events = generate(&SynthConfig { events: options.events as usize, ..SynthConfig::default() });
    let shadow_batches = discovery_eval::batches(&events);

    let backends = Backend::every(options.skip_postgres);
    let mut summary = Vec::new();
    let mut problems = Vec::new();
    for backend in &backends {
        let rounds = crash_mode(&binary, backend, &shadow_batches, &options)?;
        for (i, round) in rounds.iter().enumerate() {
            summary.push(format!("{} kill {}: {}", backend.label(), i + 1, round.line()));
            problems.extend(round.problems.iter().map(|p| format!("{} kill {}: {p}", backend.label(), i + 1)));
        }
    }
    step("crash: summary");
    for line in &summary {
        println!("    {line}");
    }
    if !problems.is_empty() {
        bail!("{} problem(s):\n  {}", problems.len(), problems.join("\n  "));
    }
    println!("    every acknowledged request survived; every chain verifies; every job ended");
    Ok(())
}

/// What one kill showed.
#[derive(Default)]
struct Round {
    deliveries: usize,
    checks: usize,
    retried: usize,
    restart: Duration,
    records: u64,
    jobs: Vec<JobOutcome>,
    problems: Vec<String>,
}

impl Round {
    fn line(&self) -> String {
        let jobs: Vec<String> = self.jobs.iter().map(JobOutcome::describe).collect();
        format!(
            "{} deliveries and {} checks acknowledged, {} unanswered deliveries retried; up again in {:.2}s; \
             {} records verified; jobs: {}",
            self.deliveries,
            self.checks,
            self.retried,
            self.restart.as_secs_f64(),
            self.records,
            jobs.join(", ")
        )
    }
}

/// The tenants and what the workers send.
struct Setup {
    webhook_key: String,
    webhook_headers: Vec<String>,
    jobs_key: String,
    /// The jobs tenant admin's session: anomaly training takes no API key.
    jobs_auth: String,
    check_body: String,
}

fn crash_mode(binary: &Path, backend: &Backend, shadow: &[String], options: &Options) -> anyhow::Result<Vec<Round>> {
    let mode = backend.label();
    step(&format!("crash [{mode}]: starting the server on loopback"));
    let mut server = Server::start(binary, backend)?;
    let webhook_key = server.tenant_api_key("crash-webhook")?;
    let webhook_headers = webhook::headers(&server, &webhook_key)?;
    let (credentials, check_body) = policy::set_up(&server, "crash-jobs")?;
    let jobs_auth = format!("Authorization: Bearer {}", credentials.access_token);
    let setup = Setup { webhook_key, webhook_headers, jobs_key: credentials.api_key, jobs_auth, check_body };
    step(&format!("crash [{mode}]: {} batches of shadow-agent events, for clustering", shadow.len()));
    let mut connection = Connection::new(&server.base)?;
    for body in shadow {
        let answer = connection.post_json("/api/v1/discovery/ingest/batch", &[key_header(&setup.jobs_key)], body)?;
        if answer.status != 202 {
            bail!("POST /discovery/ingest/batch answered {}: {}", answer.status, answer.body);
        }
    }

    let mut rounds = Vec::new();
    let mut delivered: HashSet<String> = HashSet::new();
    let mut decided: HashSet<String> = HashSet::new();
    for round_no in 1..=options.kills {
        step(&format!("crash [{mode}]: kill {round_no} of {}, after {}s of load", options.kills, options.seconds));
        let mut round = Round::default();
        let load = load_and_kill(&mut server, &setup, round_no, Duration::from_secs(options.seconds))?;
        round.problems.extend(load.problems);
        round.deliveries = load.delivered.len();
        round.checks = load.decided.len();

        let killed_at = Instant::now();
        server.restart()?;
        round.restart = killed_at.elapsed();

        round.retried = load.unanswered.len();
        for id in &load.unanswered {
            if let Err(err) = deliver_until_stored(&server, &setup.webhook_headers, id) {
                round.problems.push(format!("retrying delivery {id}: {err:#}"));
            }
        }
        delivered.extend(load.delivered);
        delivered.extend(load.unanswered);
        decided.extend(load.decided);

        for key in [&setup.webhook_key, &setup.jobs_key] {
            let (verified, _) = audit::verify(&server, mode, key)?;
            round.records += verified.records;
            if !verified.valid {
                round
                    .problems
                    .push(format!("a chain does not verify after the restart ({} records)", verified.records));
            }
        }
        let stored = stored_deliveries(&server, &setup.webhook_key)?;
        let missing = delivered.iter().filter(|id| !stored.contains_key(*id)).count();
        let repeated = stored.values().filter(|&&n| n > 1).count();
        if missing > 0 {
            round.problems.push(format!("{missing} acknowledged deliveries are not in the audit log"));
        }
        if repeated > 0 {
            round.problems.push(format!("{repeated} deliveries are stored more than once"));
        }
        let decisions = stored_ids(&server, &setup.jobs_key, "policy.decision")?;
        let unaudited = decided.iter().filter(|id| !decisions.contains(*id)).count();
        if unaudited > 0 {
            round.problems.push(format!("{unaudited} answered checks have no audit record"));
        }

        for job in load.jobs {
            let outcome = job.finish(&server, &setup.jobs_auth)?;
            if let Some(problem) = outcome.problem() {
                round.problems.push(problem);
            }
            round.jobs.push(outcome);
        }
        println!("    {}", round.line());
        for problem in &round.problems {
            println!("    PROBLEM: {problem}");
        }
        rounds.push(round);
    }
    Ok(rounds)
}

/// What the workers saw until the server died.
struct Load {
    /// Delivery ids answered 200.
    delivered: Vec<String>,
    /// Delivery ids sent without an answer (the server died first).
    unanswered: Vec<String>,
    /// `decision_id`s of checks answered 200.
    decided: Vec<String>,
    jobs: Vec<Job>,
    problems: Vec<String>,
}

/// Runs the workers for `seconds`, queues the jobs the round's `JOBS_BEFORE_KILL` before the
/// end, then kills the server under them. Should anything fail first, the workers are stopped
/// and the server is left running.
fn load_and_kill(server: &mut Server, setup: &Setup, round: u64, seconds: Duration) -> anyhow::Result<Load> {
    let killing = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let sequence = AtomicU64::new(0);
    let delivered = Mutex::new(Vec::new());
    let unanswered = Mutex::new(Vec::new());
    let decided = Mutex::new(Vec::new());
    let problems = Mutex::new(Vec::new());
    let base = server.base.clone();
    let note = |list: &Mutex<Vec<String>>, item: String| list.lock().unwrap_or_else(|e| e.into_inner()).push(item);
    let jobs = thread::scope(|s| -> anyhow::Result<Vec<Job>> {
        for _ in 0..WEBHOOK_WORKERS {
            s.spawn(|| {
                let Ok(mut connection) = Connection::new(&base) else { return };
                while !stop.load(Ordering::SeqCst) {
                    let id = format!("crash-{round}-{}", sequence.fetch_add(1, Ordering::Relaxed));
                    let mut headers = setup.webhook_headers.clone();
                    headers.push(format!("X-Webhook-Id: {id}"));
                    match connection.post_json("/webhooks/agent", &headers, webhook::BODY) {
                        Ok(r) if r.status == 200 => note(&delivered, id),
                        Ok(r) => {
                            note(&problems, format!("a delivery answered {} before the kill: {}", r.status, r.body))
                        }
                        Err(err) => {
                            note(&unanswered, id);
                            if !killing.load(Ordering::SeqCst) {
                                note(&problems, format!("a delivery failed before the kill: {err:#}"));
                            }
                            return;
                        }
                    }
                }
            });
        }
        for _ in 0..CHECK_WORKERS {
            s.spawn(|| {
                let Ok(mut connection) = Connection::new(&base) else { return };
                let headers = [key_header(&setup.jobs_key)];
                while !stop.load(Ordering::SeqCst) {
                    match connection.post_json("/api/v1/policies/check", &headers, &setup.check_body) {
                        Ok(r) if r.status == 200 => match decision_id(&r.body) {
                            Some(id) => note(&decided, id),
                            None => note(&problems, format!("a check answered 200 without a decision_id: {}", r.body)),
                        },
                        Ok(r) => note(&problems, format!("a check answered {} before the kill: {}", r.status, r.body)),
                        Err(err) => {
                            if !killing.load(Ordering::SeqCst) {
                                note(&problems, format!("a check failed before the kill: {err:#}"));
                            }
                            return;
                        }
                    }
                }
            });
        }
        let queued = (|| {
            let before_kill = JOBS_BEFORE_KILL[(round as usize - 1) % JOBS_BEFORE_KILL.len()];
            thread::sleep(seconds.saturating_sub(before_kill));
            let mut jobs = Job::queue_all(server, &setup.jobs_auth)?;
            thread::sleep(before_kill);
            for job in &mut jobs {
                job.before_kill = job.status(server, &setup.jobs_auth).map(|(status, _)| status).unwrap_or_default();
            }
            Ok(jobs)
        })();
        if queued.is_ok() {
            killing.store(true, Ordering::SeqCst);
            let killed = server.kill();
            stop.store(true, Ordering::SeqCst);
            killed?;
        } else {
            stop.store(true, Ordering::SeqCst);
        }
        queued
    })?;
    let take = |list: Mutex<Vec<String>>| list.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(Load {
        delivered: take(delivered),
        unanswered: take(unanswered),
        decided: take(decided),
        jobs,
        problems: take(problems),
    })
}

/// Sends delivery `id` again until it answers 200 (a restarted server may still be warming up
/// its pools).
fn deliver_until_stored(server: &Server, headers: &[String], id: &str) -> anyhow::Result<()> {
    let mut connection = Connection::new(&server.base)?;
    let mut headers = headers.to_vec();
    headers.push(format!("X-Webhook-Id: {id}"));
    let mut last = String::new();
    for _ in 0..RETRIES {
        match connection.post_json("/webhooks/agent", &headers, webhook::BODY) {
            Ok(r) if r.status == 200 => return Ok(()),
            Ok(r) => last = format!("{}: {}", r.status, r.body),
            Err(err) => last = format!("{err:#}"),
        }
        thread::sleep(Duration::from_millis(250));
    }
    bail!("no 200 after {RETRIES} attempts; last: {last}")
}

/// The kinds of asynchronous job, each queued once per round in the jobs tenant.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Export,
    GuardTraining,
    AnomalyTraining,
    Clustering,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Export, Kind::GuardTraining, Kind::AnomalyTraining, Kind::Clustering];

    fn label(self) -> &'static str {
        match self {
            Kind::Export => "export",
            Kind::GuardTraining => "guard training",
            Kind::AnomalyTraining => "anomaly training",
            Kind::Clustering => "clustering",
        }
    }

    /// The path and body that queue it, and the field of its id in the answer.
    fn queue(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Kind::Export => ("/api/v1/audit/export/async", r#"{"format":"jsonl"}"#, "id"),
            Kind::GuardTraining => ("/api/v1/guard/detector/train", "{}", "task_id"),
            Kind::AnomalyTraining => ("/api/v1/anomalies/detector/train", "{}", "task_id"),
            Kind::Clustering => ("/api/v1/discovery/cluster", "", "id"),
        }
    }

    fn status_path(self, id: &str) -> String {
        match self {
            Kind::Export => format!("/api/v1/audit/export/status/{id}"),
            Kind::GuardTraining => format!("/api/v1/guard/detector/training/status?task_id={id}"),
            Kind::AnomalyTraining => format!("/api/v1/anomalies/detector/tasks/{id}"),
            Kind::Clustering => format!("/api/v1/discovery/cluster/{id}"),
        }
    }
}

struct Job {
    kind: Kind,
    id: String,
    before_kill: String,
}

impl Job {
    fn queue_all(server: &Server, auth: &str) -> anyhow::Result<Vec<Job>> {
        let mut connection = Connection::new(&server.base)?;
        Kind::ALL
            .into_iter()
            .map(|kind| {
                let (path, body, id_field) = kind.queue();
                let answer = connection.post_json(path, &[auth.to_owned()], body)?;
                if answer.status != 202 {
                    bail!("POST {path} answered {}: {}", answer.status, answer.body);
                }
                let job: Value = serde_json::from_str(&answer.body).with_context(|| format!("POST {path}"))?;
                let id = job[id_field].as_str().with_context(|| format!("POST {path}: no {id_field} in {job}"))?;
                Ok(Job { kind, id: id.to_owned(), before_kill: String::new() })
            })
            .collect()
    }

    /// The job's status and error, as the API reads it now.
    fn status(&self, server: &Server, auth: &str) -> anyhow::Result<(String, Option<String>)> {
        let (job, _) = server.get(&self.kind.status_path(&self.id), &[auth], Duration::from_secs(30))?;
        let status = job["status"].as_str().with_context(|| format!("a job without status: {job}"))?;
        Ok((status.to_owned(), job["error"].as_str().map(str::to_owned)))
    }

    /// Polls the job after the restart until it ends or `JOB_DEADLINE` passes.
    fn finish(self, server: &Server, auth: &str) -> anyhow::Result<JobOutcome> {
        let started = Instant::now();
        loop {
            let (status, error) = self.status(server, auth)?;
            let ended = matches!(status.as_str(), "completed" | "failed" | "cancelled");
            if ended || started.elapsed() > JOB_DEADLINE {
                let downloaded = match (self.kind, status.as_str()) {
                    (Kind::Export, "completed") => Some(download(server, auth, &self.id)?),
                    _ => None,
                };
                return Ok(JobOutcome {
                    kind: self.kind,
                    before_kill: self.before_kill,
                    status,
                    error,
                    downloaded,
                    after: started.elapsed(),
                });
            }
            thread::sleep(Duration::from_millis(500));
        }
    }
}

struct JobOutcome {
    kind: Kind,
    before_kill: String,
    status: String,
    error: Option<String>,
    /// An export's download: its size in bytes, or why it failed.
    downloaded: Option<Result<u64, String>>,
    /// From the restart until it ended.
    after: Duration,
}

impl JobOutcome {
    fn describe(&self) -> String {
        format!(
            "{} {} → {} ({:.0}s after the restart)",
            self.kind.label(),
            if self.before_kill.is_empty() { "?" } else { &self.before_kill },
            self.status,
            self.after.as_secs_f64()
        )
    }

    fn problem(&self) -> Option<String> {
        let label = self.kind.label();
        match (self.status.as_str(), &self.error, &self.downloaded) {
            ("completed", _, Some(Err(err))) => Some(format!("the completed {label} does not download: {err}")),
            ("completed", _, _) | ("cancelled", _, _) => None,
            ("failed", Some(error), _) if !error.trim().is_empty() => None,
            ("failed", _, _) => Some(format!("the {label} failed without a reason")),
            (other, _, _) => {
                Some(format!("the {label} is still {other} {}s after the restart", JOB_DEADLINE.as_secs()))
            }
        }
    }
}

/// Downloads a completed export; its size, or why it failed.
fn download(server: &Server, auth: &str, id: &str) -> anyhow::Result<Result<u64, String>> {
    let out = Command::new("curl")
        .args(["-sS", "--fail", "--max-time", "120", "-H", auth, "-o", "/dev/null", "-w", "%{size_download}"])
        .arg(format!("{}/api/v1/audit/export/download/{id}", server.base))
        .output()
        .context("starting curl")?;
    if !out.status.success() {
        return Ok(Err(String::from_utf8_lossy(&out.stderr).trim().to_owned()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().parse::<u64>().map_err(|e| e.to_string()))
}

/// How often each `X-Webhook-Id` is in the webhook tenant's log.
fn stored_deliveries(server: &Server, api_key: &str) -> anyhow::Result<HashMap<String, u32>> {
    let mut counts = HashMap::new();
    each_record(server, api_key, "agent.action", |record| {
        if let Some(id) = record["details"]["source"]["delivery_id"].as_str() {
            *counts.entry(id.to_owned()).or_insert(0) += 1;
        }
    })?;
    Ok(counts)
}

/// The ids of the tenant's records of `event_type`.
fn stored_ids(server: &Server, api_key: &str, event_type: &str) -> anyhow::Result<HashSet<String>> {
    let mut ids = HashSet::new();
    each_record(server, api_key, event_type, |record| {
        if let Some(id) = record["id"].as_str() {
            ids.insert(id.to_owned());
        }
    })?;
    Ok(ids)
}

/// Streams the tenant's JSONL export of `event_type` through `each`, a record at a time.
fn each_record(server: &Server, api_key: &str, event_type: &str, mut each: impl FnMut(&Value)) -> anyhow::Result<()> {
    let url = format!("{}/api/v1/audit/export?event_type={event_type}", server.base);
    let mut curl = Command::new("curl")
        .args(["-sS", "--fail", "--max-time", "600", "-H", &key_header(api_key)])
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting curl")?;
    let stdout = curl.stdout.take().context("curl has no stdout")?;
    for line in BufReader::new(stdout).lines() {
        let line = line.context("reading the export")?;
        if line.is_empty() {
            continue;
        }
        let record: Value = serde_json::from_str(&line).with_context(|| format!("an export line: {line}"))?;
        each(&record);
    }
    let out = curl.wait_with_output().context("waiting for curl")?;
    if !out.status.success() {
        bail!("GET {url} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

fn decision_id(body: &str) -> Option<String> {
    let answer: Value = serde_json::from_str(body).ok()?;
    answer["decision_id"].as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn options_default_and_parse() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = Options::parse(&[]).unwrap();
        assert_eq!((o.kills, o.seconds, o.events, o.skip_postgres), (3, 8, 200_000, false));
        let o = Options::parse(&args(&["--kills", "5", "--seconds=4", "--events", "1000", "--skip-postgres"])).unwrap();
        assert_eq!((o.kills, o.seconds, o.events, o.skip_postgres), (5, 4, 1000, true));
        assert!(Options::parse(&args(&["--seconds", "2"])).is_err(), "the jobs are queued 1.5 s before the kill");
    }

    #[test]
    fn a_job_that_ends_without_reason_or_never_ends_is_a_problem() {
        let outcome = |status: &str, error: Option<&str>, downloaded: Option<Result<u64, String>>| JobOutcome {
            kind: Kind::Export,
            before_kill: "running".into(),
            status: status.into(),
            error: error.map(str::to_owned),
            downloaded,
            after: Duration::from_secs(61),
        };
        assert!(outcome("completed", None, Some(Ok(10))).problem().is_none());
        assert!(outcome("failed", Some("the lease ran out 3 times"), None).problem().is_none());
        assert!(outcome("failed", Some(" "), None).problem().is_some());
        assert!(outcome("running", None, None).problem().is_some());
        assert!(outcome("completed", None, Some(Err("404".into()))).problem().is_some());
        assert_eq!(outcome("completed", None, None).describe(), "export running → completed (61s after the restart)");
    }

    #[test]
    fn the_decision_id_is_read_from_the_answer() {
        assert_eq!(decision_id(r#"{"allowed":true,"decision_id":"0193"}"#).as_deref(), Some("0193"));
        assert_eq!(decision_id(r#"{"decision_id":null}"#), None);
        assert_eq!(decision_id("not json"), None);
    }
}
