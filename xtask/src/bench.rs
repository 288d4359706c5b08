//! `cargo xtask bench`: HTTP load against a release build on loopback, with `oha`; rewrites the
//! results section of `BENCHMARKS.md`.

mod report;
mod server;

use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::cmd::{self, cargo, root, step};
use report::{Machine, Row};
use server::Server;

const CONCURRENCY: u32 = 64;
const WARM_UP: Duration = Duration::from_secs(2);
const MEASURE: Duration = Duration::from_secs(10);

pub fn run() -> anyhow::Result<()> {
    if !cmd::exists("oha") {
        bail!("`oha` is not on PATH; install it with `cargo install oha --locked` (a few minutes), then rerun");
    }
    if !cmd::exists("curl") {
        bail!("`curl` is not on PATH; install it (e.g. `apt-get install curl`), then rerun");
    }
    step("bench: cargo build --release -p agentgov-server");
    let binary = build_release()?;

    step("bench: starting the server on loopback");
    let mut server = Server::start(&binary)?;
    println!("    {} (data dir {})", server.base, server.data_dir().display());
    let token = server.sign_in()?;

    let targets =
        [("GET /api/v1/health", "/api/v1/health", None), ("GET /api/v1/auth/me", "/api/v1/auth/me", Some(token))];
    let mut rows = Vec::new();
    for (label, path, bearer) in &targets {
        let url = format!("{}{path}", server.base);
        step(&format!(
            "bench: {label}, {CONCURRENCY} connections, {}s warm-up + {}s",
            WARM_UP.as_secs(),
            MEASURE.as_secs()
        ));
        oha(&url, bearer.as_deref(), WARM_UP)?;
        let result = oha(&url, bearer.as_deref(), MEASURE)?;
        let row = Row::from_oha(label, CONCURRENCY, &result)?;
        println!(
            "    {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms, {:.2}% success",
            row.requests_per_sec, row.p50_ms, row.p99_ms, row.success_percent
        );
        rows.push(row);
    }
    server.check_still_running()?;
    drop(server);

    step("bench: rewriting BENCHMARKS.md");
    let machine = Machine::describe(&oha_version()?)?;
    report::write(&root().join("BENCHMARKS.md"), &machine, MEASURE, &rows)?;
    println!("    done");
    Ok(())
}

/// Builds the server in release mode and returns the path of the `agentgov` binary.
fn build_release() -> anyhow::Result<std::path::PathBuf> {
    let mut command = cargo();
    command
        .args(["build", "--release", "-p", "agentgov-server", "--message-format=json-render-diagnostics"])
        .stderr(Stdio::inherit());
    let messages = cmd::output(&mut command)?;
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "agentgov")
        .find_map(|msg| msg["executable"].as_str().map(std::path::PathBuf::from))
        .context("cargo build reported no `agentgov` executable")
}

/// One `oha` run; returns its JSON summary.
fn oha(url: &str, bearer: Option<&str>, duration: Duration) -> anyhow::Result<Value> {
    let mut command = Command::new("oha");
    command
        // `-w`: requests in flight at the deadline finish (and count) rather than being aborted.
        .args(["--no-tui", "--output-format", "json", "-w", "-c", &CONCURRENCY.to_string()])
        .args(["-z", &format!("{}s", duration.as_secs())]);
    if let Some(token) = bearer {
        command.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    command.arg(url);
    let out = cmd::output(&mut command)?;
    serde_json::from_str(&out).context("parsing oha's JSON output")
}

fn oha_version() -> anyhow::Result<String> {
    Ok(cmd::output(Command::new("oha").arg("--version"))?.trim().to_owned())
}
