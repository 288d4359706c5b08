//! `cargo xtask fuzz-api`: the OpenAPI document against the running service, with
//! [Schemathesis](https://schemathesis.readthedocs.io) (from PyPI, in a virtual environment
//! this task makes once under the system's temp dir).
//!
//! For each mode (embedded, then Postgres unless `--skip-postgres`), a release server on a
//! free loopback port with a tenant whose admin is signed in: Schemathesis generates valid
//! and invalid requests for every operation of `docs/openapi.json` (examples, coverage,
//! fuzzing and stateful phases) with a credential for each of the document's security
//! schemes (`api_key`, `bearer`, `admin_key`) and runs every check it has on every response:
//!
//! - `not_a_server_error`: no 5xx;
//! - `status_code_conformance`, `content_type_conformance`, `response_headers_conformance`
//!   and `response_schema_conformance`: the status, content type, headers and body are the
//!   ones the document gives for that operation;
//! - `positive_data_acceptance` and `negative_data_rejection`: a request valid by the
//!   document is accepted, one that violates it refused (off for the first only on the
//!   operations of [`NOT_STATABLE`], each with its reason);
//! - `ignored_auth`, `missing_required_header`, `unsupported_method`,
//!   `use_after_free`, `ensure_resource_availability` and the rest.
//!
//! Two operations are left out, each for a reason: `POST /auth/logout` revokes the run's own
//! token (everything after it would answer 401), and `GET /ws` is a WebSocket upgrade, not
//! a request/response operation (its own tests cover it).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::args::{self, Arg};
use crate::cmd::{self, root, step};
use crate::server::build_release;
use crate::server::{Backend, Server};

/// The Schemathesis release the figures in BENCHMARKS.md were made with.
const SCHEMATHESIS: &str = "4.32.5";

/// Operations the run leaves out (see the module's documentation).
const EXCLUDED_PATHS: [&str; 2] = ["/api/v1/auth/logout", "/api/v1/ws"];

// The checks: none is named, so Schemathesis runs every one it has (no server errors, the
// documented contract of each response, schema-valid requests accepted and schema-violating
// ones refused, missing credentials refused, methods and resources as documented). Naming
// them on the command line (`--checks all`) would also override the per-operation
// exceptions below.

/// Operations where `positive_data_acceptance` is off, each with the rule the service keeps
/// that no JSON Schema can state. Every other check still runs on them.
const NOT_STATABLE: [(&str, &str); 10] = [
    ("POST /api/v1/api-keys", "`expires_at` must be in the future, a bound relative to the request's own time"),
    (
        "POST /api/v1/policies",
        "`rego` must be a Rego module that compiles, and a template's parameters fit that template",
    ),
    (
        "PUT /api/v1/policies/{id}",
        "`rego` must be a Rego module that compiles, and a template's parameters fit that template",
    ),
    ("POST /api/v1/hitl/request", "`callback_url` must reach an allowed, non-internal address (SSRF guard)"),
    ("PATCH /api/v1/tenant", "`settings.risk_levels` must rise (medium < high < critical), a relation between members"),
    (
        "PATCH /api/v1/tenants/{id}",
        "`settings.risk_levels` must rise (medium < high < critical), a relation between members",
    ),
    ("GET /api/v1/anomalies/stats", "the window from `from` to `to` is at most 90 days, a relation between parameters"),
    (
        "POST /api/v1/discovery/ingest",
        "`timestamp` is at most 5 minutes ahead of the server's clock; a fingerprint that looks like a secret is refused",
    ),
    ("POST /api/v1/discovery/ingest/batch", "as `/discovery/ingest`, for each event"),
    (
        "POST /api/v1/users/me/change-password",
        "`current_password` must be the caller's password: a credential, not a shape",
    ),
];

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
        format!(
            "[auth.openapi.api_key]\napi_key = \"${{AGENTGOV_FUZZ_API_KEY}}\"\n\n\
             [auth.openapi.bearer]\nbearer = \"${{AGENTGOV_FUZZ_TOKEN}}\"\n\n\
             [auth.openapi.admin_key]\napi_key = \"${{AGENTGOV_FUZZ_ADMIN_KEY}}\"\n{}",
            not_statable_config()
        ),
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
        .args(["--url", &server.base])
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

/// The `[[operations]]` tables that turn `positive_data_acceptance` off where
/// [`NOT_STATABLE`] says why.
fn not_statable_config() -> String {
    NOT_STATABLE
        .iter()
        .map(|(name, why)| {
            format!("\n# {why}\n[[operations]]\ninclude-name = \"{name}\"\nchecks.positive_data_acceptance.enabled = false\n")
        })
        .collect()
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
