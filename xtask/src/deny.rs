//! `cargo xtask deny`: the dependency policy of `deny.toml`, checked with
//! [cargo-deny](https://embarkstudios.github.io/cargo-deny/) (pinned; installed with
//! `cargo install --locked` on first use).
//!
//! - **licenses, bans, sources:** always; they need only the crate graph. A failure fails
//!   the command.
//! - **advisories:** needs the RustSec database, a git repository on GitHub. The command
//!   fetches it (`cargo deny fetch db`); where GitHub is not reachable and no earlier copy is
//!   at hand, it says so and checks the rest (a machine that cannot fetch the database
//!   cannot check against it). With `--require-advisories`, that case fails too.

use std::process::Command;

use anyhow::bail;

use crate::cmd::{self, cargo, step};

/// The cargo-deny release `deny.toml` is written for.
const CARGO_DENY: &str = "0.20.2";

pub fn run(require_advisories: bool) -> anyhow::Result<()> {
    install()?;
    step("deny: cargo deny check licenses bans sources");
    cmd::run(cargo().args(["deny", "check", "licenses", "bans", "sources"]))?;

    step("deny: cargo deny fetch db (the RustSec advisory database)");
    let fetched = cargo().args(["deny", "fetch", "db"]).status().is_ok_and(|status| status.success());
    if !fetched && !database_at_hand() {
        let why = "the RustSec advisory database could not be fetched (github.com is not reachable from \
                   here) and no earlier copy is in $CARGO_HOME/advisory-dbs";
        if require_advisories {
            bail!("{why}");
        }
        println!("    advisories NOT checked: {why}");
        return Ok(());
    }
    step("deny: cargo deny check advisories");
    // Offline: the database is the one just fetched, or the copy at hand.
    cmd::run(cargo().args(["deny", "--offline", "check", "advisories"]))
}

/// `cargo deny` at the pinned version, installed if missing or another version.
fn install() -> anyhow::Result<()> {
    let version = Command::new("cargo-deny").arg("--version").output();
    let installed = version.is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains(CARGO_DENY));
    if !installed {
        step(&format!("deny: cargo install cargo-deny@{CARGO_DENY} --locked (a few minutes, once)"));
        cmd::run(cargo().args(["install", "--locked", "cargo-deny", "--version", CARGO_DENY]))?;
    }
    Ok(())
}

/// Whether an advisory database was fetched before (cargo-deny keeps each under
/// `$CARGO_HOME/advisory-dbs/<name>-<hash>`).
fn database_at_hand() -> bool {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".cargo")));
    let Some(dbs) = home.map(|home| home.join("advisory-dbs")) else { return false };
    std::fs::read_dir(dbs).into_iter().flatten().flatten().any(|entry| entry.path().join("crates").is_dir())
}
