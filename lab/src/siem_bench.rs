//! `cargo xtask siem-bench`: how fast the server forwards a backlog of audit records to a
//! syslog receiver over TCP (`syslog-tcp`, CEF), embedded and (unless `--skip-postgres`) on
//! Postgres.
//!
//! Per mode:
//! 1. A release server on loopback with one `syslog-tcp` sink to a free loopback port where
//!    nothing listens yet, `AGENTGOV_SIEM_BATCH_SIZE` = `--batch` and
//!    `AGENTGOV_SIEM_MAX_BACKOFF_SECS` = 1 (so a receiver that comes up is found within a
//!    second).
//! 2. A tenant appends `--records` records (`POST /audit/log` with `oha`, no warm-up) while
//!    the receiver is down, so they queue; `/siem/status` must show them queued.
//! 3. rsyslog (foreground, its own configuration, `omfile` to a temp dir) starts on that
//!    port (on Postgres after a `CHECKPOINT`, as `cargo xtask bench` does before a measured
//!    phase). `/siem/status` is polled every 100 ms; the clock runs from the first answer
//!    with `forwarded_total` > 0 to the first with `queue_depth` 0, and the rate is the
//!    records forwarded in between over that time. The wall time from starting rsyslog to
//!    drained, and the CPU the server, rsyslog and Postgres used meanwhile, are printed too.
//! 4. Once rsyslog's file has as many lines as `forwarded_total` (up to 60 s), every line's
//!    MSG must be CEF (`CEF:0|agentgov|`) and the tenant's distinct `cn2` (seq) values must
//!    cover 1..=head (`head_seq` of `GET /audit/verify`); duplicates are counted (delivery is
//!    at least once).
//!
//! `--rsyslog-async` gives rsyslog's `omfile` `asyncWriting="on" ioBufferSize="1m"
//! flushOnTXEnd="off"`, to tell the receiver's file writing apart from the forwarding.
//! `--analyze` runs `ANALYZE audit_records` on Postgres before rsyslog starts, as
//! autovacuum would within a minute or so. Right after a burst of appends to a fresh table
//! the planner has no statistics of it; a batch read of `seq > cursor ORDER BY seq LIMIT
//! batch` alone was then planned as a bitmap scan of the whole remaining backlog plus a
//! sort. The Postgres store now also bounds such a scan to the window it can return
//! (`seq` has no gaps), so each read touches `batch` rows whatever the plan; the flag shows
//! it no longer matters.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::bench::audit;
use crate::bench::mem::parse_process_ticks;
use xtask::args::{self, Arg};
use xtask::cmd::{self, step};
use xtask::server::build_release;
use xtask::server::{Backend, Server, free_port, nonce};

const DEFAULT_RECORDS: u64 = 200_000;
/// The server's own default `siem_batch_size`.
const DEFAULT_BATCH: u32 = 500;
/// The server's bounds of `siem_batch_size`.
const MAX_BATCH: u32 = 10_000;
const SINK: &str = "bench";
const STATUS_PATH: &str = "/api/v1/siem/status";
const POLL: Duration = Duration::from_millis(100);
/// Longest wait for the forwarder to send anything once rsyslog listens, and longest time
/// without progress while draining.
const STALL: Duration = Duration::from_secs(60);
/// Longest wait for rsyslog's file to catch up with `forwarded_total`.
const FILE_CATCH_UP: Duration = Duration::from_secs(60);
/// What every forwarded line's MSG starts with.
const CEF_PREFIX: &str = "CEF:0|agentgov|";

#[derive(Debug, PartialEq, Eq)]
struct Options {
    records: u64,
    batch: u32,
    skip_postgres: bool,
    rsyslog_async: bool,
    analyze: bool,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Self> {
        let mut options = Options {
            records: DEFAULT_RECORDS,
            batch: DEFAULT_BATCH,
            skip_postgres: false,
            rsyslog_async: false,
            analyze: false,
        };
        let switches = ["--skip-postgres", "--rsyslog-async", "--analyze"];
        for arg in args::parse(args, &switches, &[("--records", 1), ("--batch", 1)])? {
            match arg {
                Arg::Switch("--skip-postgres") => options.skip_postgres = true,
                Arg::Switch("--rsyslog-async") => options.rsyslog_async = true,
                Arg::Switch(_) => options.analyze = true,
                Arg::Number { flag: "--records", value, .. } => options.records = value,
                Arg::Number { value, raw, .. } => {
                    options.batch = u32::try_from(value)
                        .ok()
                        .filter(|n| *n <= MAX_BATCH)
                        .with_context(|| format!("--batch must be between 1 and {MAX_BATCH}, got `{raw}`"))?;
                }
            }
        }
        Ok(options)
    }
}

/// One mode's figures.
struct Summary {
    mode: &'static str,
    records: u64,
    batch: u32,
    /// Records forwarded between the first status with `forwarded_total` > 0 and drained.
    timed_records: u64,
    /// That window in seconds.
    drain_seconds: f64,
    /// From starting rsyslog to drained.
    wall_seconds: f64,
    lines: u64,
    duplicates: u64,
    /// Whether every line was CEF and the tenant's seqs covered 1..=head.
    complete: bool,
}

impl Summary {
    fn rate(&self) -> f64 {
        self.timed_records as f64 / self.drain_seconds
    }

    fn line(&self) -> String {
        format!(
            "{}, {} records, batch {}, {:.0} records/s, drained in {:.2}s ({:.2}s from rsyslog start), {} lines, {} \
             duplicates{}",
            self.mode,
            self.records,
            self.batch,
            self.rate(),
            self.drain_seconds,
            self.wall_seconds,
            self.lines,
            self.duplicates,
            if self.complete { "" } else { ", INCOMPLETE" }
        )
    }
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let o = Options::parse(args)?;
    for (program, install) in [
        ("oha", "`cargo install oha --locked`"),
        ("curl", "`apt-get install curl`"),
        ("rsyslogd", "`apt-get install rsyslog`"),
    ] {
        // `rsyslogd --version` is not an option it knows; `-v` is.
        let found = match program {
            "rsyslogd" => Command::new(program).arg("-v").output().is_ok_and(|out| out.status.success()),
            _ => cmd::exists(program),
        };
        if !found {
            bail!("`{program}` is not on PATH; install it with {install}, then rerun");
        }
    }
    step("siem-bench: cargo build --release -p agentgov-server");
    let binary = build_release()?;
    let backends = Backend::every(o.skip_postgres);
    let mut summaries = Vec::new();
    for backend in &backends {
        summaries.push(bench_mode(&binary, backend, &o)?);
    }
    step(&format!(
        "siem-bench: summary (syslog-tcp, CEF, rsyslog omfile{}{})",
        if o.rsyslog_async { " asyncWriting" } else { "" },
        if o.analyze && !o.skip_postgres { "; Postgres ANALYZEd before draining" } else { "" }
    ));
    for summary in &summaries {
        println!("    {}", summary.line());
    }
    let incomplete: Vec<&str> = summaries.iter().filter(|s| !s.complete).map(|s| s.mode).collect();
    if !incomplete.is_empty() {
        bail!("rsyslog did not receive every record as CEF in: {}", incomplete.join(", "));
    }
    Ok(())
}

fn bench_mode(binary: &Path, backend: &Backend, o: &Options) -> anyhow::Result<Summary> {
    let mode = backend.label();
    let port = free_port()?;
    let rsyslog = Rsyslog::configure(port, o.rsyslog_async)?;
    step(&format!(
        "siem-bench [{mode}]: starting the server with a syslog-tcp sink to 127.0.0.1:{port} (no receiver yet), batch \
         {}",
        o.batch
    ));
    let sinks = format!(r#"[{{name="{SINK}", kind="syslog-tcp", address="127.0.0.1:{port}"}}]"#);
    let env = [
        ("AGENTGOV_SIEM_SINKS", sinks),
        ("AGENTGOV_SIEM_BATCH_SIZE", o.batch.to_string()),
        ("AGENTGOV_SIEM_MAX_BACKOFF_SECS", "1".to_owned()),
    ];
    let mut server = Server::start_with(binary, backend, &env)?;
    match server.database_name() {
        Some(db) => println!("    {} (database {db}, log in {})", server.base, server.data_dir().display()),
        None => println!("    {} (data dir {})", server.base, server.data_dir().display()),
    }
    let (status, _) = server.get(STATUS_PATH, &[&server.admin_header()], Duration::from_secs(10))?;
    if status["enabled"] != true || sink_state(&status).is_err() {
        bail!("GET {STATUS_PATH} does not show the sink `{SINK}`: {status}");
    }
    let credentials = server.sign_in()?;
    let key_header = format!("X-API-Key: {}", credentials.api_key);

    step(&format!("siem-bench [{mode}]: {} x {}, the receiver down", audit::APPEND_ENDPOINT, o.records));
    let row = audit::append_load(&server, mode, &credentials.api_key, Duration::ZERO, o.records)?;
    println!(
        "    {} requests in {:.1}s: {:.0} req/s, {:.2}% success",
        row.requests, row.seconds, row.requests_per_sec, row.success_percent
    );
    server.check_still_running()?;
    let head = audit::head_seq(&server, &credentials.api_key)?;
    let queued = sink_state(&server.get(STATUS_PATH, &[&server.admin_header()], Duration::from_secs(30))?.0)?;
    println!(
        "    tenant head seq {head}; sink: queue_depth {}, forwarded_total {}, failed_total {} (retries), last_error {}",
        queued.queue_depth,
        queued.forwarded,
        queued.failed,
        queued.last_error.as_deref().unwrap_or("-")
    );
    if queued.forwarded != 0 {
        bail!("the sink forwarded {} records with no receiver listening", queued.forwarded);
    }
    if queued.queue_depth < o.records {
        bail!("queue_depth is {}, fewer than the {} records appended", queued.queue_depth, o.records);
    }

    server.settle()?;
    if let Some(url) = server.database_url() {
        if o.analyze {
            psql_at(url, "ANALYZE audit_records").context("ANALYZE audit_records")?;
        }
        let stats = "SELECT n_live_tup, COALESCE(last_analyze::text, 'never'), COALESCE(last_autoanalyze::text, 'never') \
                     FROM pg_stat_user_tables WHERE relname = 'audit_records'";
        let stats = psql_at(url, stats).context("reading audit_records' statistics")?;
        let fields: Vec<&str> = stats.trim().split('|').collect();
        if let [live, analyzed, auto] = fields[..] {
            println!(
                "    audit_records: {live} live rows in the statistics; last ANALYZE {analyzed}, last autoanalyze {auto}{}",
                if o.analyze { "" } else { " (--analyze runs one here)" }
            );
        }
    }
    step(&format!(
        "siem-bench [{mode}]: starting rsyslog; GET {STATUS_PATH} every {} ms until drained",
        POLL.as_millis()
    ));
    let drained = drain(&server, rsyslog)?;
    let Drained { mut rsyslog, started, first, last, first_at, last_at, cpu } = drained;
    let timed_records = last.forwarded.saturating_sub(first.forwarded);
    let drain_seconds = last_at.duration_since(first_at).as_secs_f64();
    let wall_seconds = last_at.duration_since(started).as_secs_f64();
    println!(
        "    first forwarded after {:.2}s (forwarded_total {}); drained after {:.2}s: {} records in {:.2}s, {:.0} records/s",
        first_at.duration_since(started).as_secs_f64(),
        first.forwarded,
        wall_seconds,
        timed_records,
        drain_seconds,
        timed_records as f64 / drain_seconds
    );
    println!("    {cpu}");
    if first.queue_depth == 0 {
        eprintln!("    warning: drained before the second status; time more records (--records)");
    }
    server.check_still_running()?;

    step(&format!("siem-bench [{mode}]: checking rsyslog's file against the audit log"));
    let (verify, _) = server.get("/api/v1/audit/verify", &[&key_header], Duration::from_secs(1800))?;
    let head = verify["head_seq"].as_u64().with_context(|| format!("verify answered no head_seq: {verify}"))?;
    let bearer = format!("Authorization: Bearer {}", credentials.access_token);
    let (me, _) = server.get("/api/v1/auth/me", &[&bearer], Duration::from_secs(10))?;
    let tenant = me["tenant_id"]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("GET /auth/me answered no tenant_id: {me}"))?;
    let written = rsyslog.wait_for_lines(last.forwarded, FILE_CATCH_UP)?;
    if written < last.forwarded {
        eprintln!(
            "    warning: after {}s rsyslog's file has {written} lines, forwarded_total is {}",
            FILE_CATCH_UP.as_secs(),
            last.forwarded
        );
    }
    let check = check_lines(&rsyslog.out, &tenant, head)?;
    println!(
        "    {} lines (forwarded_total {}), {} not CEF; the tenant's: {} lines, {} distinct seqs of 1..={head}, {} \
         duplicates, {} outside; {} lines of other tenants; chain valid: {}",
        check.lines,
        last.forwarded,
        check.not_cef,
        check.tenant_lines,
        check.distinct,
        check.duplicates,
        check.out_of_range,
        check.other_tenants,
        verify["valid"]
    );
    if let Some(example) = &check.first_bad {
        eprintln!("    warning: a line that is not CEF: {example}");
    }
    let complete = check.not_cef == 0 && check.out_of_range == 0 && check.distinct == head;
    drop(rsyslog);
    drop(server);
    Ok(Summary {
        mode,
        records: o.records,
        batch: o.batch,
        timed_records,
        drain_seconds,
        wall_seconds,
        lines: check.lines,
        duplicates: check.duplicates,
        complete,
    })
}

/// One SQL statement through `psql`, unaligned and tuples only.
fn psql_at(url: &str, sql: &str) -> anyhow::Result<String> {
    cmd::output(Command::new("psql").args(["-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql]))
}

/// The bench sink's figures in a `/siem/status` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SinkState {
    queue_depth: u64,
    forwarded: u64,
    failed: u64,
    last_error: Option<String>,
}

fn sink_state(status: &Value) -> anyhow::Result<SinkState> {
    let sink = status["sinks"]
        .as_array()
        .and_then(|sinks| sinks.iter().find(|s| s["name"] == SINK))
        .with_context(|| format!("no sink `{SINK}` in {status}"))?;
    let number = |field: &str| sink[field].as_u64().with_context(|| format!("the sink has no {field}: {sink}"));
    Ok(SinkState {
        queue_depth: number("queue_depth")?,
        forwarded: number("forwarded_total")?,
        failed: number("failed_total")?,
        last_error: sink["last_error"].as_str().map(str::to_owned),
    })
}

/// What [`drain`] saw.
struct Drained {
    rsyslog: Rsyslog,
    /// When rsyslog was started.
    started: Instant,
    /// The first status with `forwarded_total` > 0, and when it was read.
    first: SinkState,
    first_at: Instant,
    /// The first status with `queue_depth` 0.
    last: SinkState,
    last_at: Instant,
    cpu: CpuUse,
}

/// Starts rsyslog and polls the status until the queue is empty.
fn drain(server: &Server, mut rsyslog: Rsyslog) -> anyhow::Result<Drained> {
    let admin = server.admin_header();
    let status = || -> anyhow::Result<SinkState> { sink_state(&server.get(STATUS_PATH, &[&admin], POLL * 100)?.0) };
    let started = Instant::now();
    rsyslog.start()?;
    let rsyslog_pid = rsyslog.pid()?;
    let (first, first_at, cpu_at_first) = loop {
        let state = status()?;
        let at = Instant::now();
        if state.forwarded > 0 {
            break (state, at, CpuSample::take(server.pid(), rsyslog_pid));
        }
        if started.elapsed() > STALL {
            bail!("nothing forwarded {}s after rsyslog started listening: {state:?}", STALL.as_secs());
        }
        sleep(POLL);
    };
    let (mut progress, mut progress_at) = (first.forwarded, first_at);
    let mut reported_at = first_at;
    let (last, last_at) = loop {
        sleep(POLL);
        let state = status()?;
        let at = Instant::now();
        if state.queue_depth == 0 {
            break (state, at);
        }
        if state.forwarded > progress {
            (progress, progress_at) = (state.forwarded, at);
        } else if at.duration_since(progress_at) > STALL {
            bail!("no progress for {}s: {state:?}", STALL.as_secs());
        }
        if at.duration_since(reported_at) >= Duration::from_secs(10) {
            println!(
                "    {:>4.0}s: forwarded_total {}, queue_depth {}",
                at.duration_since(started).as_secs_f64(),
                state.forwarded,
                state.queue_depth
            );
            reported_at = at;
        }
    };
    let cpu = CpuSample::take(server.pid(), rsyslog_pid)?.since(&cpu_at_first?);
    Ok(Drained { rsyslog, started, first, first_at, last, last_at, cpu })
}

/// CPU time (clock ticks) of the server, rsyslog, Postgres and the whole machine at one
/// moment.
struct CpuSample {
    server: u64,
    rsyslog: u64,
    /// Every `postgres` process by pid (none in embedded mode's window but idle ones).
    postgres: HashMap<u32, u64>,
    /// Busy and all ticks of every CPU (`/proc/stat`).
    machine_busy: u64,
    machine_total: u64,
    at: Instant,
}

impl CpuSample {
    fn take(server_pid: u32, rsyslog_pid: u32) -> anyhow::Result<Self> {
        let stat = std::fs::read_to_string("/proc/stat").context("reading /proc/stat")?;
        let (machine_busy, machine_total) = machine_ticks(&stat).context("no cpu line in /proc/stat")?;
        Ok(CpuSample {
            server: process_ticks(server_pid)?,
            rsyslog: process_ticks(rsyslog_pid)?,
            postgres: postgres_ticks(),
            machine_busy,
            machine_total,
            at: Instant::now(),
        })
    }

    fn since(&self, earlier: &CpuSample) -> CpuUse {
        let hz = clock_ticks_per_second();
        let seconds = self.at.duration_since(earlier.at).as_secs_f64();
        let share = |ticks: u64| 100.0 * ticks as f64 / hz / seconds;
        let total = self.machine_total.saturating_sub(earlier.machine_total);
        CpuUse {
            server: share(self.server.saturating_sub(earlier.server)),
            rsyslog: share(self.rsyslog.saturating_sub(earlier.rsyslog)),
            // A backend that started in the window counts whole; one that ended is missed.
            postgres: share(
                self.postgres
                    .iter()
                    .map(|(pid, ticks)| ticks.saturating_sub(earlier.postgres.get(pid).copied().unwrap_or(0)))
                    .sum(),
            ),
            machine: if total == 0 {
                0.0
            } else {
                100.0 * self.machine_busy.saturating_sub(earlier.machine_busy) as f64 / total as f64
            },
            cores: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

/// CPU use over the timed window, in % of one core (machine: % of all cores).
struct CpuUse {
    server: f64,
    rsyslog: f64,
    postgres: f64,
    machine: f64,
    cores: usize,
}

impl std::fmt::Display for CpuUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CPU while draining: server {:.0}%, rsyslog {:.0}%, postgres processes {:.0}% (of one core); machine \
             {:.0}% busy of {} cores",
            self.server, self.rsyslog, self.postgres, self.machine, self.cores
        )
    }
}

/// utime + stime of a process, every thread (`/proc/<pid>/stat`).
pub(crate) fn process_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat =
        std::fs::read_to_string(format!("/proc/{pid}/stat")).with_context(|| format!("reading /proc/{pid}/stat"))?;
    parse_process_ticks(&stat).with_context(|| format!("unexpected /proc/{pid}/stat: {stat}"))
}

/// utime + stime of every process called `postgres`, by pid.
fn postgres_ticks() -> HashMap<u32, u64> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return HashMap::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            stat.contains("(postgres)").then(|| Some((pid, parse_process_ticks(&stat)?)))?
        })
        .collect()
}

/// Busy and total ticks of the `cpu` line of `/proc/stat` (idle and iowait are not busy).
fn machine_ticks(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|line| line.starts_with("cpu "))?;
    let ticks: Vec<u64> = line.split_whitespace().skip(1).filter_map(|t| t.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice, counted in user].
    let total: u64 = ticks.iter().take(8).sum();
    let idle = ticks.get(3)? + ticks.get(4).unwrap_or(&0);
    Some((total - idle, total))
}

pub(crate) fn clock_ticks_per_second() -> f64 {
    cmd::output(Command::new("getconf").arg("CLK_TCK")).ok().and_then(|out| out.trim().parse().ok()).unwrap_or(100.0)
}

/// What rsyslog's file holds.
#[derive(Debug, Default, PartialEq, Eq)]
struct LineCheck {
    lines: u64,
    /// Lines whose MSG does not start with `CEF:0|agentgov|`.
    not_cef: u64,
    first_bad: Option<String>,
    /// Lines of the bench tenant (`cs1`).
    tenant_lines: u64,
    other_tenants: u64,
    /// Distinct seqs (`cn2`) of the tenant in 1..=head.
    distinct: u64,
    /// The tenant's lines beyond the first of each seq.
    duplicates: u64,
    /// The tenant's lines with no seq or one outside 1..=head.
    out_of_range: u64,
}

/// Reads rsyslog's file (`APP-NAME MSGID MSG` per line) and checks it against the tenant's
/// log of `head` records.
fn check_lines(path: &Path, tenant: &str, head: u64) -> anyhow::Result<LineCheck> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut check = LineCheck::default();
    let mut seen = vec![false; usize::try_from(head).context("head seq")? + 1];
    for line in BufReader::new(file).lines() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        check.lines += 1;
        let msg = line.splitn(3, ' ').nth(2).unwrap_or_default();
        if !msg.starts_with(CEF_PREFIX) {
            check.not_cef += 1;
            check.first_bad.get_or_insert_with(|| line.chars().take(200).collect());
            continue;
        }
        if extension(msg, "cs1") != Some(tenant) {
            check.other_tenants += 1;
            continue;
        }
        check.tenant_lines += 1;
        let seq = extension(msg, "cn2").and_then(|s| s.parse::<usize>().ok()).filter(|s| (1..seen.len()).contains(s));
        match seq {
            None => check.out_of_range += 1,
            Some(seq) if seen[seq] => check.duplicates += 1,
            Some(seq) => {
                seen[seq] = true;
                check.distinct += 1;
            }
        }
    }
    Ok(check)
}

/// The value of a CEF extension `key` (one without spaces: ids, numbers), from the first
/// ` key=` in the line (the extensions come before `msg`, which is last).
fn extension<'a>(msg: &'a str, key: &str) -> Option<&'a str> {
    let at = msg.find(&format!(" {key}="))? + key.len() + 2;
    msg[at..].split(' ').next()
}

/// rsyslog in the foreground with its own configuration: TCP on a loopback port (RFC 6587
/// framing, octet counting included), every message to one file as `APP-NAME MSGID MSG`.
/// Killed, and its directory removed, when dropped.
struct Rsyslog {
    dir: PathBuf,
    conf: PathBuf,
    port: u16,
    out: PathBuf,
    child: Option<Child>,
    /// Counts the file's lines as it grows.
    counted: u64,
    reader: Option<File>,
}

impl Rsyslog {
    /// Writes the configuration; nothing listens yet.
    fn configure(port: u16, async_writing: bool) -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("agentgov-siem-bench-{}", nonce()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let out = dir.join("received.log");
        let conf = dir.join("rsyslog.conf");
        let rsyslog = Rsyslog { dir, conf, port, out, child: None, counted: 0, reader: None };
        std::fs::write(&rsyslog.conf, config(&rsyslog.dir, &rsyslog.out, port, async_writing))
            .context("writing rsyslog's configuration")?;
        Ok(rsyslog)
    }

    /// Starts rsyslogd and waits until it accepts connections.
    fn start(&mut self) -> anyhow::Result<()> {
        let stderr = File::create(self.dir.join("rsyslogd.stderr")).context("creating rsyslog's stderr file")?;
        let child = Command::new("rsyslogd")
            .args(["-n", "-f"])
            .arg(&self.conf)
            .arg("-i")
            .arg(self.dir.join("rsyslogd.pid"))
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .context("starting rsyslogd")?;
        let child = self.child.insert(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = child.try_wait()? {
                bail!("rsyslogd exited at start-up ({status}): {}", self.stderr());
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("rsyslogd did not listen on 127.0.0.1:{} within 10s: {}", self.port, self.stderr());
            }
            sleep(Duration::from_millis(20));
        }
    }

    fn pid(&self) -> anyhow::Result<u32> {
        self.child.as_ref().map(Child::id).context("rsyslogd is not running")
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("rsyslogd.stderr")).unwrap_or_default()
    }

    /// Waits until the file has at least `lines` lines, at most `timeout`; returns how many
    /// it has.
    fn wait_for_lines(&mut self, lines: u64, timeout: Duration) -> anyhow::Result<u64> {
        let deadline = Instant::now() + timeout;
        loop {
            let counted = self.count_lines()?;
            if counted >= lines || Instant::now() > deadline {
                return Ok(counted);
            }
            sleep(Duration::from_millis(250));
        }
    }

    /// The lines in the file so far, reading only what was added since the last call.
    fn count_lines(&mut self) -> anyhow::Result<u64> {
        if self.reader.is_none() {
            match File::open(&self.out) {
                Ok(file) => self.reader = Some(file),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(0),
                Err(err) => return Err(err).with_context(|| format!("opening {}", self.out.display())),
            }
        }
        let Some(file) = self.reader.as_mut() else { return Ok(0) };
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buf).with_context(|| format!("reading {}", self.out.display()))?;
            if n == 0 {
                return Ok(self.counted);
            }
            self.counted += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        }
    }
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// rsyslog's configuration: imtcp on `port` into a ruleset that writes each message to `out`.
fn config(dir: &Path, out: &Path, port: u16, async_writing: bool) -> String {
    let omfile = if async_writing { r#" asyncWriting="on" ioBufferSize="1m" flushOnTXEnd="off""# } else { "" };
    format!(
        r#"global(workDirectory="{dir}" maxMessageSize="64k" net.enableDNS="off")
module(load="imtcp")
template(name="line" type="string" string="%app-name% %msgid% %msg%\n")
ruleset(name="received") {{ action(type="omfile" file="{out}" template="line"{omfile}) }}
input(type="imtcp" port="{port}" address="127.0.0.1" ruleset="received")
"#,
        dir = dir.display(),
        out = out.display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> anyhow::Result<Options> {
        Options::parse(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options_are_parsed() {
        let defaults =
            Options { records: 200_000, batch: 500, skip_postgres: false, rsyslog_async: false, analyze: false };
        assert_eq!(parse(&[]).unwrap(), defaults);
        assert_eq!(
            parse(&["--records", "1_000", "--batch=2000", "--skip-postgres", "--rsyslog-async", "--analyze"]).unwrap(),
            Options { records: 1000, batch: 2000, skip_postgres: true, rsyslog_async: true, analyze: true }
        );
        assert_eq!(parse(&["--records=5", "--records", "6"]).unwrap().records, 6);
        assert_eq!(parse(&["--batch", "10000"]).unwrap().batch, 10_000);
        assert_eq!(parse(&["--batch", "1"]).unwrap().batch, 1);
    }

    #[test]
    fn bad_options_are_refused() {
        for args in [
            &["--records"][..],
            &["--records", "0"],
            &["--records", "-1"],
            &["--records=many"],
            &["--batch"],
            &["--batch", "0"],
            &["--batch", "10001"],
            &["--batch=99999999999"],
            &["--skip-postgres=1"],
            &["--analyze=yes"],
            &["--record", "5"],
            &["5"],
        ] {
            assert!(parse(args).is_err(), "{args:?}");
        }
    }

    #[test]
    fn sink_state_is_read_from_the_status() {
        let status = serde_json::json!({"enabled": true, "sinks": [
            {"name": "other", "queue_depth": 9, "forwarded_total": 9, "failed_total": 9, "last_error": null},
            {"name": "bench", "queue_depth": 3, "forwarded_total": 2, "failed_total": 1, "last_error": "down"},
        ]});
        assert_eq!(
            sink_state(&status).unwrap(),
            SinkState { queue_depth: 3, forwarded: 2, failed: 1, last_error: Some("down".into()) }
        );
        assert!(sink_state(&serde_json::json!({"enabled": false, "sinks": []})).is_err());
    }

    #[test]
    fn cef_extensions_and_proc_stat_are_read() {
        let msg = "CEF:0|agentgov|agentgov|0.1.0|agent.action|agent.action read db|2|rt=1 externalId=x \
                   cs1Label=tenantId cs1=t-1 cn2Label=seq cn2=42 msg={\"cn2\\=\":1}";
        assert_eq!(extension(msg, "cn2"), Some("42"));
        assert_eq!(extension(msg, "cs1"), Some("t-1"));
        assert_eq!(extension(msg, "cs9"), None);
        let stat = "123 (rs:main Q:Reg) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 4 0";
        assert_eq!(parse_process_ticks(stat), Some(300));
        assert_eq!(machine_ticks("cpu  10 0 5 80 5 0 0 0 0 0\ncpu0 1 2 3 4\n"), Some((15, 100)));
    }

    #[test]
    fn lines_are_checked_against_the_head() {
        let dir = std::env::temp_dir().join(format!("siem-bench-test-{}", nonce()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("received.log");
        let line = |tenant: &str, seq: u64| {
            format!(
                "agentgov agent.action CEF:0|agentgov|agentgov|1|a|a|2|rt=1 cs1={tenant} cn2Label=seq cn2={seq} msg=x\n"
            )
        };
        let text =
            [line("t", 1), line("t", 2), line("t", 2), line("u", 1), line("t", 9), "x y not-cef\n".into()].concat();
        std::fs::write(&path, text).unwrap();
        let check = check_lines(&path, "t", 3).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            check,
            LineCheck {
                lines: 6,
                not_cef: 1,
                first_bad: Some("x y not-cef".into()),
                tenant_lines: 4,
                other_tenants: 1,
                distinct: 2,
                duplicates: 1,
                out_of_range: 1,
            }
        );
        let conf = config(Path::new("/d"), Path::new("/d/out"), 5514, true);
        assert!(conf.contains(r#"port="5514""#) && conf.contains(r#"asyncWriting="on""#));
        assert!(!config(Path::new("/d"), Path::new("/d/out"), 5514, false).contains("asyncWriting"));
    }
}
