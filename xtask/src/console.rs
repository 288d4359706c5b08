//! `cargo xtask console`: the analyst console's browser tests (`tests/console`): Debian's
//! Chromium driven by Selenium through Debian's chromedriver (nothing downloaded), axe-core
//! from npm injected into each view, against the server built from the workspace.
//!
//! `--screenshots` also writes each view to `docs/console/*.png`, which docs/console.md
//! shows.
//!
//! The Python environment (`agentgov-console-venv` under `$AGENTGOV_SDK_VENVS`, default
//! /var/tmp) is made from `tests/console/requirements.txt`, which pins every package, with the
//! SDK installed from `sdk/python` (the tests drive the API through it). Without Python 3.10+,
//! Chromium or chromedriver the command prints why and skips, except in CI (`CI` set).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::bail;

use crate::cmd::{self, step};
use crate::sdk;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let screenshots = match args {
        [] => false,
        [flag] if flag == "--screenshots" => true,
        _ => bail!("usage: cargo xtask console [--screenshots]"),
    };
    let Some(venv) = browser_venv()? else { return Ok(()) };
    let root = cmd::root();
    let tests = root.join("tests");
    let console = tests.join("console");
    if !console.join("node_modules").join("axe-core").join("axe.min.js").exists() {
        step("console: npm ci --prefix tests/console (axe-core)");
        cmd::run(Command::new("npm").args(["ci", "--no-audit", "--no-fund", "--prefix"]).arg(&console))?;
    }
    let binary = sdk::server_binary()?;
    step("console: pytest tests/console (headless Chromium)");
    let mut pytest = sdk::bin(&venv, "python");
    if screenshots {
        // Each view as the tests leave it, for docs/console.md.
        pytest.env("CONSOLE_SCREENSHOTS", root.join("docs").join("console"));
    }
    cmd::run(pytest.current_dir(&tests).env("AGENTGOV_BIN", &binary).args([
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-p",
        "no:cacheprovider",
        "console",
    ]))
}

/// The console tests' Python environment, or `None` (after saying why) when Python,
/// Chromium or chromedriver is missing outside CI.
fn browser_venv() -> anyhow::Result<Option<PathBuf>> {
    let Some(python) = sdk::python()? else { return Ok(None) };
    if !(Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists()) {
        let why = "the console's browser tests need Debian's chromium and chromium-driver";
        if std::env::var_os("CI").is_some() {
            bail!("{why}; CI never skips them");
        }
        step(&format!("console: SKIPPED: {why} (apt-get install chromium chromium-driver)"));
        return Ok(None);
    }
    let root = cmd::root();
    let requirements = root.join("tests").join("console").join("requirements.txt");
    Ok(Some(sdk::venv(&python, "agentgov-console-venv", &requirements, &root.join("sdk").join("python"))?))
}

/// For `cargo xtask bench`: full page loads of the audit view at `base` (signed in as
/// `email`), each until its first page and chain badge are shown, in milliseconds
/// (`tests/console/first_page.py`); `None` when there is no browser to run them in.
pub fn audit_first_page(base: &str, email: &str, password: &str, runs: u32) -> anyhow::Result<Option<Vec<f64>>> {
    let Some(venv) = browser_venv()? else { return Ok(None) };
    let script = cmd::root().join("tests").join("console").join("first_page.py");
    let out = sdk::bin(&venv, "python")
        .arg(script)
        .args(["--url", base, "--email", email, "--password", password, "--runs", &runs.to_string()])
        .output()?;
    if !out.status.success() {
        bail!("first_page.py failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let runs = report["runs_ms"].as_array().map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect());
    let badge = report["badge"].as_str().unwrap_or_default();
    if !badge.starts_with("Chain verified") {
        bail!("the audit view's badge says {badge:?}");
    }
    runs.map(Some).ok_or_else(|| anyhow::anyhow!("first_page.py printed {report}"))
}

#[cfg(test)]
mod tests {

    /// `cargo test --workspace` runs the console's browser tests: a skip line without
    /// Chromium or Python, a failure in CI.
    #[test]
    fn the_console_passes_its_browser_tests() {
        super::run(&[]).unwrap();
    }
}
