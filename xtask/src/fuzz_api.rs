//! `cargo xtask fuzz-api`: the OpenAPI document against the running service, with
//! [Schemathesis](https://schemathesis.readthedocs.io) (from PyPI, in a virtual environment
//! this task makes once under the system's temp dir).
//!
//! For each mode (embedded, then Postgres unless `--skip-postgres`), a release server on a
//! free loopback port with a tenant whose admin is signed in: Schemathesis generates valid
//! and invalid requests for every operation of `docs/openapi.json` (examples, coverage,
//! fuzzing and stateful phases) with a credential for each of the document's security
//! schemes (`api_key`, `bearer`, `admin_key`) and checks every response:
//!
//! - `not_a_server_error`: no 5xx;
//! - `status_code_conformance`, `content_type_conformance`, `response_headers_conformance`
//!   and `response_schema_conformance`: the status, content type, headers and body are the
//!   ones the document gives for that operation.
//!
//! Two operations are left out, each for a reason: `POST /auth/logout` revokes the run's own
//! token (everything after it would answer 401), and `GET /ws` is a WebSocket upgrade, not
//! a request/response operation (its own tests cover it).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::args::{self, Arg};
use crate::bench::build_release;
use crate::bench::server::{Backend, Server};
use crate::cmd::{self, root, step};

/// The Schemathesis release the figures in BENCHMARKS.md were made with.
const SCHEMATHESIS: &str = "4.32.5";

/// Operations the run leaves out (see the module's documentation).
const EXCLUDED_PATHS: [&str; 2] = ["/api/v1/auth/logout", "/api/v1/ws"];

/// The response checks: the documented contract, and no server errors.
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
response_headers_conformance,response_schema_conformance";

struct Options {
    examples: u64,
    seed: u64,
    skip_postgres: bool,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Self> {
        let mut options = Options { examples: 50, seed: 1, skip_postgres: false };
        for arg in args::parse(args, &["--skip-postgres"], &[("--examples", 1), ("--seed", 0)])? {
            match arg {
                Arg::Switch(_) => options.skip_postgres = true,
                Arg::Number { flag: "--examples", value, .. } => options.examples = value,
                Arg::Number { value, .. } => options.seed = value,
            }
        }
        Ok(options)
    }
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let options = Options::parse(args)?;
    if !cmd::exists("curl") {
        bail!("`curl` is not on PATH; install it (e.g. `apt-get install curl`), then rerun");
    }
    let schemathesis = install_schemathesis()?;

    step("fuzz-api: cargo build --release -p agentgov-server");
    let binary = build_release()?;

    let backends = Backend::every(options.skip_postgres);
    let mut summaries = Vec::new();
    let mut failed = Vec::new();
    for backend in &backends {
        let (ok, summary) = fuzz_mode(&binary, backend, &schemathesis, &options)?;
        if !ok {
            failed.push(backend.label());
        }
        summaries.push(format!("{}: {summary}", backend.label()));
    }
    step("fuzz-api: summary");
    for summary in &summaries {
        println!("    {summary}");
    }
    if !failed.is_empty() {
        bail!("Schemathesis found failures in {}", failed.join(" and "));
    }
    Ok(())
}

/// One server in `backend` mode under Schemathesis; whether every check passed, and the
/// run's summary line.
fn fuzz_mode(
    binary: &Path,
    backend: &Backend,
    schemathesis: &Path,
    options: &Options,
) -> anyhow::Result<(bool, String)> {
    step(&format!("fuzz-api: {}", backend.label()));
    let server = Server::start(binary, backend)?;
    let credentials = server.sign_in()?;
    let report_dir = server.data_dir().join("schemathesis");
    let config = server.data_dir().join("schemathesis.toml");
    // The credentials stay in the environment; the file only names them.
    std::fs::write(
        &config,
        "[auth.openapi.api_key]\napi_key = \"${AGENTGOV_FUZZ_API_KEY}\"\n\n\
         [auth.openapi.bearer]\nbearer = \"${AGENTGOV_FUZZ_TOKEN}\"\n\n\
         [auth.openapi.admin_key]\napi_key = \"${AGENTGOV_FUZZ_ADMIN_KEY}\"\n",
    )
    .context("writing schemathesis.toml")?;

    let mut command = Command::new(schemathesis);
    command
        .current_dir(server.data_dir())
        .env("AGENTGOV_FUZZ_API_KEY", &credentials.api_key)
        .env("AGENTGOV_FUZZ_TOKEN", &credentials.access_token)
        .env("AGENTGOV_FUZZ_ADMIN_KEY", server.admin_key())
        .arg("--config-file")
        .arg(&config)
        .arg("run")
        .arg(root().join("docs/openapi.json"))
        .args(["--url", &server.base, "--checks", CHECKS])
        .args(["--max-examples", &options.examples.to_string(), "--seed", &options.seed.to_string()])
        .args(["--request-timeout", "30", "--no-color", "--report", "junit", "--report-dir"])
        .arg(&report_dir);
    for path in EXCLUDED_PATHS {
        command.args(["--exclude-path", path]);
    }
    let out = command.output().with_context(|| format!("starting {}", schemathesis.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let summary = summary_line(&stdout).unwrap_or_else(|| "no summary printed".into());
    Ok((out.status.success(), summary))
}

/// Schemathesis's closing counts: `N generated, M found K unique failures, S skipped` (or
/// `N generated, N passed`), with the final `=== … in Ns ===` line.
fn summary_line(stdout: &str) -> Option<String> {
    let lines: Vec<&str> = stdout.lines().map(str::trim).collect();
    let cases = lines.iter().rev().find(|line| line.contains(" generated"))?;
    let last = lines.iter().rev().find(|line| line.starts_with('=') && line.ends_with('='));
    let last = last.map(|line| line.trim_matches('=').trim()).unwrap_or_default();
    Some(format!("{cases}; {last}"))
}

/// A virtual environment with the pinned Schemathesis, made on the first run; its
/// `schemathesis` executable.
fn install_schemathesis() -> anyhow::Result<PathBuf> {
    let venv = std::env::temp_dir().join(format!("agentgov-schemathesis-{SCHEMATHESIS}"));
    let executable = venv.join("bin").join("schemathesis");
    let installed = Command::new(&executable)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success() && String::from_utf8_lossy(&out.stdout).contains(SCHEMATHESIS));
    if installed {
        return Ok(executable);
    }
    if !cmd::exists("python3") {
        bail!("`python3` is not on PATH; Schemathesis runs on Python 3.10 or later");
    }
    step(&format!("fuzz-api: installing Schemathesis {SCHEMATHESIS} into {}", venv.display()));
    cmd::run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
    cmd::run(
        Command::new(venv.join("bin").join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .arg(format!("schemathesis=={SCHEMATHESIS}")),
    )?;
    Ok(executable)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_summary_is_read_from_the_closing_lines() {
        let out = "Test cases:\n  3881 generated, 42 found 42 unique failures, 40 skipped\n\nReports:\n\n\
                   ================= 42 failures, 20 errors, 3 warnings in 87.73s =================\n";
        assert_eq!(
            summary_line(out).unwrap(),
            "3881 generated, 42 found 42 unique failures, 40 skipped; 42 failures, 20 errors, 3 warnings in 87.73s"
        );
        assert_eq!(summary_line("nothing"), None);
    }

    #[test]
    fn options_default_and_parse() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = Options::parse(&[]).unwrap();
        assert_eq!((o.examples, o.seed, o.skip_postgres), (50, 1, false));
        let o = Options::parse(&args(&["--examples", "20", "--seed=7", "--skip-postgres"])).unwrap();
        assert_eq!((o.examples, o.seed, o.skip_postgres), (20, 7, true));
        assert!(Options::parse(&args(&["--examples", "0"])).is_err());
    }
}
