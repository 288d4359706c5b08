//! `cargo xtask bench`: HTTP load against a release build on loopback, with `oha`, in embedded
//! mode (SQLite) and on Postgres; rewrites the results section of `BENCHMARKS.md`.
//!
//! For each mode: the GET endpoints for a fixed time, then `--audit-records` durable appends
//! (`POST /audit/log`), a verification of the whole chain, and the streamed JSONL and CSV
//! exports of everything appended, with the server's memory sampled meanwhile; then
//! `--webhook-events` signed webhook deliveries (each acknowledged one checked to be stored),
//! agent search over `--agents` registered agents, and `--policy-checks` policy checks under
//! five enabled templates (each answered one checked to be audited), `/health` at a steady
//! rate idle and while another tenant floods checks under budget-burning policies (the noisy
//! neighbour), and Prompt Guard screening of a short and a 2 KB prompt.

mod agents;
pub(crate) mod audit;
mod guard;
pub(crate) mod mem;
mod neighbour;
mod oha;
mod otlp;
mod peer;
pub(crate) mod policy;
mod report;
pub(crate) mod webhook;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};

use oha::{CONCURRENCY, Load, Stop};
use peer::{Peer, Sidecar};
use policy::ROUNDS;
use report::{ConsoleRow, Machine, MemoryRow, Results, Row, Settings, Success};
use xtask::args::{self, Arg};
use xtask::cmd::{self, root, step};
use xtask::server::{Backend, DEFAULT_POSTGRES_URL, Server, build_release};

const WARM_UP: Duration = Duration::from_secs(2);
const MEASURE: Duration = Duration::from_secs(10);
/// The acceptance figure of the audit log: appends, then exported.
const DEFAULT_AUDIT_RECORDS: u64 = 1_000_000;
/// Signed `agent.action` deliveries to `POST /webhooks/agent`, after the warm-up.
const DEFAULT_WEBHOOK_EVENTS: u64 = 200_000;
/// Agents registered in one tenant before its search is measured.
const DEFAULT_AGENTS: u64 = 10_000;
/// `POST /policies/check` requests under five enabled templates, after the warm-up.
const DEFAULT_POLICY_CHECKS: u64 = 200_000;
/// Full page loads of the console's audit view, each measured to its first page.
const CONSOLE_RUNS: u32 = 10;

#[derive(Debug, PartialEq, Eq)]
struct Options {
    skip_postgres: bool,
    audit_records: u64,
    webhook_events: u64,
    agents: u64,
    policy_checks: u64,
    peer: Option<Peer>,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Self> {
        let mut options = Options {
            skip_postgres: false,
            audit_records: DEFAULT_AUDIT_RECORDS,
            webhook_events: DEFAULT_WEBHOOK_EVENTS,
            agents: DEFAULT_AGENTS,
            policy_checks: DEFAULT_POLICY_CHECKS,
            peer: None,
        };
        // `--peer NAME` / `--peer=NAME` takes a word, which `args::parse` does not know.
        let mut rest = Vec::new();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let name = match arg.strip_prefix("--peer") {
                Some("") => Some(args.next().context("--peer needs a name (agt)")?.as_str()),
                Some(value) => value.strip_prefix('='),
                None => None,
            };
            match name {
                Some(name) => options.peer = Some(Peer::parse(name)?),
                None => rest.push(arg.clone()),
            }
        }
        let numbers = [("--audit-records", 1), ("--webhook-events", 1), ("--agents", 1), ("--policy-checks", 1)];
        for arg in args::parse(&rest, &["--skip-postgres"], &numbers)? {
            match arg {
                Arg::Number { flag: "--audit-records", value, .. } => options.audit_records = value,
                Arg::Number { flag: "--webhook-events", value, .. } => options.webhook_events = value,
                Arg::Number { flag: "--policy-checks", value, .. } => options.policy_checks = value,
                Arg::Number { value, .. } => options.agents = value,
                Arg::Switch(_) => options.skip_postgres = true,
            }
        }
        Ok(options)
    }
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let options = Options::parse(args)?;
    let load_at_start = report::load_average();
    if !cmd::exists("oha") {
        bail!("`oha` is not on PATH; install it with `cargo install oha --locked` (a few minutes), then rerun");
    }
    if !cmd::exists("curl") {
        bail!("`curl` is not on PATH; install it (e.g. `apt-get install curl`), then rerun");
    }
    let postgres = if options.skip_postgres {
        None
    } else {
        let url = std::env::var("AGENTGOV_BENCH_DATABASE_URL").unwrap_or_else(|_| DEFAULT_POSTGRES_URL.into());
        Some((postgres_description(&url)?, url))
    };

    step("bench: cargo build --release -p agentgov-server");
    let binary = build_release()?;

    let settings = Settings {
        measure: MEASURE,
        audit_records: options.audit_records,
        webhook_events: options.webhook_events,
        agents: options.agents,
        policy_checks: options.policy_checks,
        peer: options.peer,
    };
    let mut results = Results::default();
    bench_mode(&binary, &Backend::Embedded, settings, &mut results)?;
    otlp_off_and_on(&binary, settings, &mut results)?;
    match &postgres {
        Some((_, admin_url)) => {
            bench_mode(&binary, &Backend::Postgres { admin_url: admin_url.clone() }, settings, &mut results)?
        }
        None => results.notes.push("Postgres mode not run (`--skip-postgres`)".into()),
    }

    step("bench: rewriting BENCHMARKS.md");
    let machine = Machine::describe(&oha::version()?, postgres.map(|(description, _)| description), load_at_start)?;
    report::write(&root().join("BENCHMARKS.md"), &machine, settings, &results)?;
    let lost: Vec<String> = results
        .webhooks
        .iter()
        .filter(|w| !w.every_acknowledged_stored())
        .map(|w| format!("{}: {} acknowledged, {} stored", w.load.mode, w.acknowledged, w.stored))
        .collect();
    let unaudited: Vec<String> = results
        .policy_checks
        .iter()
        .chain(results.peers.iter().map(|p| &p.ours))
        .filter(|c| !c.every_check_audited())
        .map(|c| format!("{}: {} answered, {} audited", c.load.mode, c.answered, c.audited))
        .collect();
    let mut missing = Vec::new();
    if !lost.is_empty() {
        missing.push(format!("acknowledged webhook events are missing from the audit log ({})", lost.join("; ")));
    }
    if !unaudited.is_empty() {
        missing.push(format!("answered policy checks are missing from the audit log ({})", unaudited.join("; ")));
    }
    if !missing.is_empty() {
        bail!("{}", missing.join("; "));
    }
    println!("    done");
    Ok(())
}

/// One side of a comparison measured in turns: its label and whom it asks.
struct Side<'a> {
    label: &'static str,
    asked: Asked<'a>,
}

/// Whom a side of a comparison asks for its decisions.
enum Asked<'a> {
    /// agentgov, its decisions prepared in a tenant of their own.
    Agentgov { server: &'a Server, prepared: policy::Decisions },
    /// A peer's sidecar: it keeps no record, so nothing is counted as audited.
    Peer(&'a Sidecar),
}

impl<'a> Side<'a> {
    fn on(label: &'static str, server: &'a Server, prepared: policy::Decisions) -> Self {
        Side { label, asked: Asked::Agentgov { server, prepared } }
    }

    /// CPU seconds of the side's server processes so far.
    fn server_cpu(&self) -> Option<f64> {
        match &self.asked {
            Asked::Agentgov { server, .. } => mem::cpu_seconds(&server.pid().to_string()),
            Asked::Peer(sidecar) => sidecar.cpu_seconds(),
        }
    }

    /// One round: settled first ([`Server::settle`]), then the load `stop` says.
    fn measure(&self, mode: &str, stop: Stop) -> anyhow::Result<report::PolicyRow> {
        match &self.asked {
            Asked::Agentgov { server, prepared } => {
                server.settle()?;
                prepared.measure(server, mode, self.label, stop)
            }
            Asked::Peer(sidecar) => sidecar.measure(mode, self.label, stop),
        }
    }
}

/// What [`in_turns`] measured of one side.
struct Turns {
    /// Every round's row, in order.
    rows: Vec<report::PolicyRow>,
    /// The side's server process's CPU seconds over its rounds.
    server_cpu: f64,
    /// This process's CPU seconds over the side's rounds.
    own_cpu: f64,
}

impl Turns {
    /// The side's server process's CPU per decision over its rounds, in µs.
    fn server_cpu_per_decision_us(&self) -> f64 {
        let decisions: u64 = self.rows.iter().map(|r| r.load.requests).sum();
        self.server_cpu / decisions.max(1) as f64 * 1e6
    }

    /// The round of median throughput.
    fn median(mut self) -> report::PolicyRow {
        self.rows.sort_by(|a, b| a.load.requests_per_sec.total_cmp(&b.load.requests_per_sec));
        self.rows.swap_remove(self.rows.len() / 2)
    }
}

/// Measures `sides` in turns, [`ROUNDS`] rounds of `n` decisions on each, one side after
/// the other, the order reversed every other round (A B, B A, A B…), so that a drift of the
/// machine over the run, and what one side leaves behind for the next (a checkpoint of its
/// writes), fall on every side alike. The caller checks afterwards that its servers still
/// run.
fn in_turns(sides: &[Side<'_>], mode: &str, stop: Stop) -> anyhow::Result<Vec<Turns>> {
    let mut turns: Vec<Turns> =
        sides.iter().map(|_| Turns { rows: Vec::new(), server_cpu: 0.0, own_cpu: 0.0 }).collect();
    for round in 0..ROUNDS {
        let mut order: Vec<(&Side<'_>, &mut Turns)> = sides.iter().zip(turns.iter_mut()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for (side, turn) in order {
            let started = (side.server_cpu(), mem::cpu_seconds("self"));
            let row = side.measure(mode, stop)?;
            let ended = (side.server_cpu(), mem::cpu_seconds("self"));
            turn.server_cpu += ended.0.zip(started.0).map_or(0.0, |(e, s)| e - s);
            turn.own_cpu += ended.1.zip(started.1).map_or(0.0, |(e, s)| e - s);
            print_row(&row.load);
            turn.rows.push(row);
        }
    }
    Ok(turns)
}

/// OpenTelemetry export's cost: two fresh embedded servers, one exporting nothing, the
/// other a span per decision over OTLP/HTTP to a collector stand-in on loopback (which
/// decodes every export and counts its spans), measured in turns ([`in_turns`]), rounds of
/// `policy_checks / 2` checks each; the median round of each is reported.
fn otlp_off_and_on(binary: &Path, settings: Settings, results: &mut Results) -> anyhow::Result<()> {
    let mode = Backend::Embedded.label();
    let sink = otlp::Sink::start()?;
    let on = [("AGENTGOV_OTLP_ENDPOINT", sink.endpoint.clone()), ("AGENTGOV_OTLP_PROTOCOL", "http/protobuf".into())];
    step(&format!(
        "bench [{mode}]: {} and {}: two fresh servers, {CONCURRENCY} connections, {}s warm-up, then {ROUNDS} rounds of \
         {} checks on each in turn",
        policy::OTLP_OFF,
        policy::OTLP_ON,
        WARM_UP.as_secs(),
        settings.policy_checks / 2
    ));
    let mut off_server = Server::start_with(binary, &Backend::Embedded, &[])?;
    let mut on_server = Server::start_with(binary, &Backend::Embedded, &on)?;
    let mut sides = Vec::new();
    for (label, server) in [(policy::OTLP_OFF, &off_server), (policy::OTLP_ON, &on_server)] {
        let prepared = policy::Decisions::prepare(server, "bench-otlp", policy::Ask::Check, WARM_UP)?;
        sides.push(Side::on(label, server, prepared));
    }
    let before = sink.spans();
    // Server CPU per side, and this process's (the stand-in's) during the rounds with export
    // on: a cost the two cores' contention does not blur.
    let [off, on]: [Turns; 2] = in_turns(&sides, mode, Stop::Requests(settings.policy_checks / 2))?
        .try_into()
        .map_err(|_| anyhow::anyhow!("two sides"))?;
    drop(sides);
    off_server.check_still_running()?;
    on_server.check_still_running()?;
    let per_check = [off.server_cpu_per_decision_us(), on.server_cpu_per_decision_us()];
    let sink_cpu = on.own_cpu;
    println!(
        "    server process CPU per check (its Rego workers not counted): {:.0} µs off, {:.0} µs on ({:+.0}%); the collector stand-in used {sink_cpu:.1} s of CPU \
         during the rounds with export on",
        per_check[0],
        per_check[1],
        (per_check[1] / per_check[0] - 1.0) * 100.0
    );
    results.otlp_cpu = Some((per_check[0], per_check[1], sink_cpu));
    // The batch queue is sent when a batch is full and every 5 s: wait until the count stays
    // put for longer than that.
    let mut seen = (sink.spans(), std::time::Instant::now());
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    while seen.1.elapsed() < Duration::from_secs(6) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        if sink.spans() != seen.0 {
            seen = (sink.spans(), std::time::Instant::now());
        }
    }
    let exported = sink.spans() - before;
    let measured: u64 = on.rows.iter().map(|r| r.answered).sum();
    println!(
        "    {exported} spans reached the collector for {measured} checks measured, {} exports refused",
        sink.rejected()
    );
    results.otlp_spans = Some((exported, measured, sink.rejected()));
    results.policy_checks.push(off.median());
    results.policy_checks.push(on.median());
    Ok(())
}

/// One server in `backend` mode through every measurement; appends its rows to `results`.
fn bench_mode(binary: &Path, backend: &Backend, settings: Settings, results: &mut Results) -> anyhow::Result<()> {
    let mode = backend.label();
    step(&format!("bench [{mode}]: starting the server on loopback"));
    let mut server = Server::start(binary, backend)?;
    match server.database_name() {
        Some(db) => println!("    {} (database {db}, log in {})", server.base, server.data_dir().display()),
        None => println!("    {} (data dir {})", server.base, server.data_dir().display()),
    }
    let credentials = server.sign_in()?;
    let pid = server.pid();
    let idle_kib = mem::status_kib(pid, "VmRSS").context("reading the server's VmRSS")?;

    let bearer = vec![format!("Authorization: Bearer {}", credentials.access_token)];
    let targets = [("GET /api/v1/health", "/api/v1/health", vec![]), (report::AUTH_ME, "/api/v1/auth/me", bearer)];
    for (label, path, headers) in targets {
        step(&format!(
            "bench [{mode}]: {label}, {CONCURRENCY} connections, {}s warm-up + {}s",
            WARM_UP.as_secs(),
            settings.measure.as_secs()
        ));
        let url = format!("{}{path}", server.base);
        Load::get(url.clone(), headers.clone(), Stop::After(WARM_UP)).run()?;
        let json = Load::get(url, headers, Stop::After(settings.measure)).run()?;
        let row = Row::from_oha(mode, label, CONCURRENCY, Success::AnyOk, &json)?;
        print_row(&row);
        results.gets.push(row);
    }

    step(&format!(
        "bench [{mode}]: {}, {CONCURRENCY} connections, {}s warm-up + {} requests",
        audit::APPEND_ENDPOINT,
        WARM_UP.as_secs(),
        settings.audit_records
    ));
    server.settle()?;
    let row = audit::append_load(&server, mode, &credentials.api_key, WARM_UP, settings.audit_records)?;
    print_row(&row);
    results.appends.push(row);
    server.check_still_running()?;
    let after_appends_kib = mem::status_kib(pid, "VmRSS").context("reading the server's VmRSS")?;

    step(&format!("bench [{mode}]: GET /api/v1/audit/verify over the whole log"));
    let (verified, head_seq) = audit::verify(&server, mode, &credentials.api_key)?;
    println!(
        "    {} records in {:.2}s ({:.0}/s), valid: {}",
        verified.records,
        verified.seconds,
        verified.records as f64 / verified.seconds,
        verified.valid
    );
    results.verifies.push(verified);

    for format in audit::EXPORTS {
        step(&format!("bench [{mode}]: GET {} ({} rows expected)", format.1, head_seq));
        // A failed export is a finding, not a reason to lose the run's other figures.
        let row = match audit::export(&server, mode, &credentials.api_key, format) {
            Ok(row) => row,
            Err(err) => {
                eprintln!("    error: {err:#}");
                results.notes.push(format!("{mode}: the {} export failed: {err:#}", format.0));
                continue;
            }
        };
        println!(
            "    {} rows, {:.0} MB in {:.2}s: {:.0} rows/s, {:.0} MB/s; server RSS {:.1} MiB before, peak {:.1} MiB",
            row.rows,
            row.bytes as f64 / 1e6,
            row.seconds,
            row.rows as f64 / row.seconds,
            row.bytes as f64 / 1e6 / row.seconds,
            row.rss_before_kib as f64 / 1024.0,
            row.rss_peak_kib as f64 / 1024.0
        );
        if row.rows != head_seq {
            let warning =
                format!("{mode}: the {} export has {} rows, the log {head_seq} records", row.format, row.rows);
            eprintln!("    warning: {warning}");
            results.notes.push(warning);
        }
        results.exports.push(row);
    }

    // After the exports: signing in to the console adds an `auth.login` record.
    step(&format!("bench [{mode}]: the console's audit view, first page over {head_seq} records (headless Chromium)"));
    let (email, password) = server.admin_login();
    match xtask::console::audit_first_page(&server.base, email, password, CONSOLE_RUNS) {
        Ok(Some(runs)) => {
            let row = ConsoleRow::new(mode, head_seq, runs);
            println!(
                "    {} loads: median {:.0} ms, slowest {:.0} ms",
                row.runs_ms.len(),
                row.median_ms(),
                row.max_ms()
            );
            results.console.push(row);
        }
        Ok(None) => results.notes.push(format!("{mode}: the console's audit view was not measured (no Chromium)")),
        Err(err) => {
            eprintln!("    error: {err:#}");
            results.notes.push(format!("{mode}: measuring the console's audit view failed: {err:#}"));
        }
    }

    server.check_still_running()?;

    step(&format!(
        "bench [{mode}]: {}, {CONCURRENCY} connections, {}s warm-up + {} requests, in a tenant of its own",
        webhook::ENDPOINT,
        WARM_UP.as_secs(),
        settings.webhook_events
    ));
    server.settle()?;
    let ingested = webhook::ingest(&server, mode, WARM_UP, settings.webhook_events)?;
    print_row(&ingested.load);
    println!(
        "    {} acknowledged (200), {} stored: every acknowledged event stored: {}",
        ingested.acknowledged,
        ingested.stored,
        if ingested.every_acknowledged_stored() { "yes" } else { "NO" }
    );
    if !ingested.every_acknowledged_stored() {
        eprintln!("    error: {} acknowledged events are not in the log", ingested.acknowledged - ingested.stored);
    }
    results.webhooks.push(ingested);
    server.check_still_running()?;

    step(&format!(
        "bench [{mode}]: registering {} agents in a tenant of their own, {} connections",
        settings.agents,
        agents::REGISTER_CONNECTIONS
    ));
    let agents_key = server.tenant_api_key("bench-agents")?;
    let registered = agents::register(&server, mode, &agents_key, settings.agents)?;
    println!(
        "    {} agents in {:.1}s ({:.0}/s)",
        registered.agents,
        registered.seconds,
        registered.agents as f64 / registered.seconds
    );
    results.registrations.push(registered);
    step(&format!(
        "bench [{mode}]: {} over {} agents, {} queries: {} requests at 1 connection, {}s at {} (after a {}s warm-up)",
        agents::SEARCH_ENDPOINT,
        settings.agents,
        agents::QUERIES.len(),
        agents::SINGLE_USER_REQUESTS,
        settings.measure.as_secs(),
        agents::LOADED_CONNECTIONS,
        WARM_UP.as_secs()
    ));
    let searches = agents::search(&server, mode, &agents_key, settings.agents, WARM_UP, settings.measure)?;
    results.searches.extend(searches);
    server.check_still_running()?;

    step(&format!(
        "bench [{mode}]: {}, {CONCURRENCY} connections, {}s warm-up + {} requests, in a tenant of its own with {} \
         enabled templates",
        policy::ENDPOINT,
        WARM_UP.as_secs(),
        settings.policy_checks,
        policy::POLICIES.len()
    ));
    server.settle()?;
    let checked = policy::checks(&server, mode, WARM_UP, settings.policy_checks)?;
    print_row(&checked.load);
    println!(
        "    {} answered (200), {} audited: every check audited: {}",
        checked.answered,
        checked.audited,
        if checked.every_check_audited() { "yes" } else { "NO" }
    );
    if !checked.every_check_audited() {
        eprintln!("    error: {} answered checks are not in the log", checked.answered - checked.audited);
    }
    results.policy_checks.push(checked);
    server.check_still_running()?;

    step(&format!(
        "bench [{mode}]: {}, {}, {} and {}: the same decision through AuthZEN, the check, the check naming one \
         session and the check naming one of many, each in a tenant of its own, {CONCURRENCY} connections, {}s \
         warm-up, then {ROUNDS} rounds of {} requests on each in turn",
        policy::AUTHZEN_IN_TURNS,
        policy::CHECK_IN_TURNS,
        policy::SESSION_IN_TURNS,
        policy::SESSIONS_IN_TURNS,
        WARM_UP.as_secs(),
        settings.policy_checks / 2
    ));
    let asked = [
        (policy::AUTHZEN_IN_TURNS, "bench-authzen", policy::Ask::AuthZen),
        (policy::CHECK_IN_TURNS, "bench-check-turns", policy::Ask::Check),
        (policy::SESSION_IN_TURNS, "bench-session-turns", policy::Ask::CheckInSession),
        (policy::SESSIONS_IN_TURNS, "bench-sessions-turns", policy::Ask::CheckInSessions),
    ];
    let mut sides = Vec::new();
    for (label, tenant, ask) in asked {
        sides.push(Side::on(label, &server, policy::Decisions::prepare(&server, tenant, ask, WARM_UP)?));
    }
    let measured = in_turns(&sides, mode, Stop::Requests(settings.policy_checks / 2))?;
    let labels: Vec<&str> = sides.iter().map(|side| side.label).collect();
    drop(sides);
    server.check_still_running()?;
    for (turns, label) in measured.into_iter().zip(labels) {
        println!("    {label}: server process CPU per decision {:.0} µs", turns.server_cpu_per_decision_us());
        let median = turns.median();
        println!("    median round: {} answered (200), {} audited", median.answered, median.audited);
        results.policy_checks.push(median);
    }

    if let Some(Peer::Agt) = settings.peer {
        beside_agt(&server, mode, settings, results)?;
        server.check_still_running()?;
    }

    step(&format!(
        "bench [{mode}]: noisy neighbour: {} at {}/s over {} connections, {}s idle, then {}s while another tenant \
         floods checks under budget-burning policies",
        neighbour::HEALTH_ENDPOINT,
        neighbour::HEALTH_RATE,
        neighbour::HEALTH_CONNECTIONS,
        settings.measure.as_secs(),
        settings.measure.as_secs()
    ));
    let neighbours = neighbour::run(&server, mode, settings.measure)?;
    for r in [&neighbours.idle, &neighbours.loaded, &neighbours.hostile] {
        print_row(r);
    }
    println!(
        "    health p99 flooded / idle: {:.2} (target ≤ 2); flood statuses {}",
        neighbours.p99_ratio(),
        neighbours.hostile_statuses
    );
    results.neighbours.push(neighbours);
    server.check_still_running()?;

    step(&format!(
        "bench [{mode}]: {}, {CONCURRENCY} connections, {}s warm-up + {}s, a short and a 2 KB benign prompt",
        guard::ENDPOINT,
        WARM_UP.as_secs(),
        settings.measure.as_secs()
    ));
    let screened = match guard::validate(&server, mode, WARM_UP, settings.measure) {
        Ok(rows) => rows,
        Err(e) => {
            // A server that died says why in its log.
            server.check_still_running()?;
            return Err(e);
        }
    };
    screened.iter().for_each(print_row);
    results.guard.extend(screened);

    server.check_still_running()?;
    let end_kib = mem::status_kib(pid, "VmRSS").context("reading the server's VmRSS")?;
    let hwm_kib = mem::status_kib(pid, "VmHWM").context("reading the server's VmHWM")?;
    let now = |field| mem::status_kib(pid, field).map_or("?".into(), |kib| format!("{:.1}", kib as f64 / 1024.0));
    println!(
        "    server memory: {:.1} MiB idle, {:.1} MiB after the appends, {:.1} MiB at the end, lifetime peak \
         {:.1} MiB; now RssAnon {} MiB, RssFile {} MiB",
        idle_kib as f64 / 1024.0,
        after_appends_kib as f64 / 1024.0,
        end_kib as f64 / 1024.0,
        hwm_kib as f64 / 1024.0,
        now("RssAnon"),
        now("RssFile")
    );
    results.memory.push(MemoryRow { mode: mode.to_owned(), idle_kib, after_appends_kib, end_kib, hwm_kib });
    drop(server);
    Ok(())
}

/// `--peer agt`: agentgov's check and the agent governance toolkit's sidecar asked the same
/// decision in turns ([`in_turns`]), each round [`Settings::measure`] long at the same
/// connections after a warm-up; both servers on this machine's cores.
fn beside_agt(server: &Server, mode: &str, settings: Settings, results: &mut Results) -> anyhow::Result<()> {
    step(&format!(
        "bench [{mode}]: {} and {}: {CONCURRENCY} connections, {}s warm-up, then {ROUNDS} rounds of {}s on each in turn",
        peer::CHECK_BESIDE_AGT,
        peer::AGT_IN_TURNS,
        WARM_UP.as_secs(),
        settings.measure.as_secs()
    ));
    let mut sidecar = Sidecar::start()?;
    println!("    {} at {} ({} worker processes)", peer::AGT_PACKAGE, sidecar.base, sidecar.workers);
    sidecar.prepare(WARM_UP)?;
    let ours = policy::Decisions::prepare(server, "bench-beside-agt", policy::Ask::Check, WARM_UP)?;
    let sides = [
        Side::on(peer::CHECK_BESIDE_AGT, server, ours),
        Side { label: peer::AGT_IN_TURNS, asked: Asked::Peer(&sidecar) },
    ];
    let [ours, theirs]: [Turns; 2] =
        in_turns(&sides, mode, Stop::After(settings.measure))?.try_into().map_err(|_| anyhow::anyhow!("two sides"))?;
    drop(sides);
    sidecar.check_still_running()?;
    let row = report::PeerRow {
        ours_cpu_us: ours.server_cpu_per_decision_us(),
        theirs_cpu_us: theirs.server_cpu_per_decision_us(),
        ours: ours.median(),
        theirs: theirs.median(),
        workers: sidecar.workers,
    };
    println!(
        "    agentgov ÷ agt throughput {:.2}; server CPU per decision {:.0} µs (agentgov) and {:.0} µs (agt); median \
         round: {} answered (200), {} audited",
        row.ratio(),
        row.ours_cpu_us,
        row.theirs_cpu_us,
        row.ours.answered,
        row.ours.audited
    );
    results.peers.push(row);
    Ok(())
}

fn print_row(row: &Row) {
    println!(
        "    {} requests in {:.1}s: {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms, {:.2}% success",
        row.requests, row.seconds, row.requests_per_sec, row.p50_ms, row.p99_ms, row.success_percent
    );
}

/// Checks that Postgres answers at `url` (before any long run) and describes it.
fn postgres_description(url: &str) -> anyhow::Result<String> {
    if !cmd::exists("psql") {
        bail!("`psql` is not on PATH; install the Postgres client, or pass --skip-postgres");
    }
    let sql = "SELECT split_part(version(), ' ', 2), current_setting('synchronous_commit'), current_setting('fsync')";
    let out = cmd::output(std::process::Command::new("psql").args(["-X", "-At", "-F", " ", "-d", url, "-c", sql]))
        .with_context(|| {
            format!("Postgres does not answer at {url} (set AGENTGOV_BENCH_DATABASE_URL, or pass --skip-postgres)")
        })?;
    let fields: Vec<&str> = out.split_whitespace().collect();
    match fields[..] {
        [version, synchronous_commit, fsync] => Ok(format!(
            "PostgreSQL {version} on the same machine, synchronous_commit={synchronous_commit}, fsync={fsync}"
        )),
        _ => bail!("unexpected answer from Postgres: {out:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> anyhow::Result<Options> {
        Options::parse(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options_are_parsed() {
        assert_eq!(
            parse(&[]).unwrap(),
            Options {
                skip_postgres: false,
                audit_records: 1_000_000,
                webhook_events: 200_000,
                agents: 10_000,
                policy_checks: 200_000,
                peer: None
            }
        );
        assert_eq!(
            parse(&["--skip-postgres", "--audit-records", "5000"]).unwrap(),
            Options {
                skip_postgres: true,
                audit_records: 5000,
                webhook_events: 200_000,
                agents: 10_000,
                policy_checks: 200_000,
                peer: None
            }
        );
        assert_eq!(parse(&["--audit-records=1_000"]).unwrap().audit_records, 1000);
        assert!(parse(&["--audit-records"]).is_err());
        assert!(parse(&["--audit-records", "0"]).is_err());
        assert!(parse(&["--audit-records", "x"]).is_err());
        assert!(parse(&["--fast"]).is_err());
    }

    #[test]
    fn a_peer_is_named_in_either_spelling() {
        assert_eq!(parse(&["--peer", "agt"]).unwrap().peer, Some(Peer::Agt));
        let options = parse(&["--skip-postgres", "--peer=agt", "--policy-checks", "10"]).unwrap();
        assert_eq!((options.peer, options.skip_postgres, options.policy_checks), (Some(Peer::Agt), true, 10));
        for (args, reason) in [
            (&["--peer"][..], "--peer needs a name"),
            (&["--peer", "opa"], "--peer knows `agt`"),
            (&["--peer="], "--peer knows `agt`"),
            (&["--peers", "agt"], "unexpected argument `--peers`"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.starts_with(reason), "{args:?}: {err}");
        }
    }

    #[test]
    fn webhook_and_agent_counts_are_parsed() {
        assert_eq!(
            parse(&["--webhook-events", "20_000", "--agents=2000", "--audit-records", "7"]).unwrap(),
            Options {
                skip_postgres: false,
                audit_records: 7,
                webhook_events: 20_000,
                agents: 2000,
                policy_checks: 200_000,
                peer: None
            }
        );
        assert_eq!(parse(&["--agents", "5", "--agents", "6"]).unwrap().agents, 6);
        assert!(parse(&["--webhook-events"]).is_err());
        assert!(parse(&["--webhook-events=0"]).is_err());
        assert!(parse(&["--agents", "-3"]).is_err());
        assert!(parse(&["--agents=many"]).is_err());
        assert!(parse(&["--skip-postgres=1"]).is_err());
        assert!(parse(&["--agent", "5"]).is_err());
    }

    #[test]
    fn policy_check_count_is_parsed() {
        assert_eq!(parse(&["--policy-checks", "20_000"]).unwrap().policy_checks, 20_000);
        assert_eq!(
            parse(&["--policy-checks=5", "--agents", "3"]).unwrap(),
            Options {
                skip_postgres: false,
                audit_records: 1_000_000,
                webhook_events: 200_000,
                agents: 3,
                policy_checks: 5,
                peer: None
            }
        );
        assert!(parse(&["--policy-checks"]).is_err());
        assert!(parse(&["--policy-checks=0"]).is_err());
        assert!(parse(&["--policy-checks", "-1"]).is_err());
        assert!(parse(&["--policy-checks", "all"]).is_err());
        assert!(parse(&["--policy-check", "5"]).is_err());
    }
}
