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

use std::path::Path;
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
    let Some(python) = sdk::python()? else { return Ok(()) };
    if !(Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists()) {
        let why = "the console's browser tests need Debian's chromium and chromium-driver";
        if std::env::var_os("CI").is_some() {
            bail!("{why}; CI never skips them");
        }
        step(&format!("console: SKIPPED: {why} (apt-get install chromium chromium-driver)"));
        return Ok(());
    }
    let root = cmd::root();
    let tests = root.join("tests");
    let console = tests.join("console");
    if !console.join("node_modules").join("axe-core").join("axe.min.js").exists() {
        step("console: npm ci --prefix tests/console (axe-core)");
        cmd::run(Command::new("npm").args(["ci", "--no-audit", "--no-fund", "--prefix"]).arg(&console))?;
    }
    let sdk_dir = root.join("sdk").join("python");
    let venv = sdk::venv(&python, "agentgov-console-venv", &console.join("requirements.txt"), &sdk_dir)?;
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// `cargo test --workspace` runs the console's browser tests: a skip line without
    /// Chromium or Python, a failure in CI.
    #[test]
    fn the_console_passes_its_browser_tests() {
        super::run(&[]).unwrap();
    }
}
