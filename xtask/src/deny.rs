//! `cargo xtask deny`: the dependency policy of `deny.toml`, checked with
//! [cargo-deny](https://embarkstudios.github.io/cargo-deny/) (pinned; installed with
//! `cargo install --locked` on first use).
//!
//! - **licenses, bans, sources:** always; they need only the crate graph. A failure fails
//!   the command.
//! - **advisories:** against the RustSec advisory database snapshot kept beside the
//!   repository, `../shared/advisory-db` (its commit and date in
//!   `../shared/advisory-db.SNAPSHOT.md`), never fetched: the check runs offline. cargo-deny
//!   opens a database only as a git checkout in the directory it derives from the database's
//!   URL, so the snapshot is copied to `target/advisory-dbs/` (deny.toml's `db-path`) and
//!   committed there once per run; nothing of it is committed to this repository. Without
//!   the snapshot the command fails when `CI` is set or with `--require-advisories`, and
//!   elsewhere says in its output that advisories were not checked.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::cmd::{self, cargo, root, step};

/// The cargo-deny release `deny.toml` is written for.
const CARGO_DENY: &str = "0.20.2";

/// deny.toml's `[advisories] db-path`, relative to the workspace root (where cargo-deny runs).
const DB_ROOT: &str = "target/advisory-dbs";

/// The directory cargo-deny (at [`CARGO_DENY`]) opens under `db-path` for its default
/// database URL, `https://github.com/RustSec/advisory-db`: the URL's last segment and a hash
/// of the URL. Another cargo-deny release may derive another name: the check then fails
/// with "failed to open advisory database", never passes unchecked.
const DB_DIR: &str = "advisory-db-3157b0e258782691";

/// Where the snapshot is read from instead of `../shared/advisory-db`, if set.
const DB_ENV: &str = "AGENTGOV_ADVISORY_DB";

pub fn run(require_advisories: bool) -> anyhow::Result<()> {
    install()?;
    step("deny: cargo deny check licenses bans sources");
    cmd::run(cargo().args(["deny", "check", "licenses", "bans", "sources"]))?;

    let snapshot = snapshot_dir(&root(), std::env::var_os(DB_ENV).map(PathBuf::from));
    if !is_database(&snapshot) {
        let why = format!(
            "no RustSec advisory database snapshot at {} (a copy of it sits beside the repository as \
             ../shared/advisory-db; set {DB_ENV} to use another directory)",
            snapshot.display()
        );
        if must_check(require_advisories, std::env::var_os("CI").as_deref()) {
            bail!("{why}");
        }
        println!("    advisories NOT checked: {why}");
        return Ok(());
    }
    step(&format!("deny: advisory database snapshot {} → {DB_ROOT}/{DB_DIR}", snapshot.display()));
    lay_out(&snapshot, &root().join(DB_ROOT).join(DB_DIR))?;
    step("deny: cargo deny --offline check advisories");
    cmd::run(cargo().args(["deny", "--offline", "check", "advisories"]))
}

/// Whether a missing snapshot fails the command: in CI (`CI` set and not empty) or when asked.
fn must_check(require_advisories: bool, ci: Option<&std::ffi::OsStr>) -> bool {
    require_advisories || ci.is_some_and(|ci| !ci.is_empty())
}

/// The snapshot: `override_dir` if given, else `shared/advisory-db` beside the workspace.
fn snapshot_dir(workspace: &Path, override_dir: Option<PathBuf>) -> PathBuf {
    override_dir.unwrap_or_else(|| workspace.parent().unwrap_or(workspace).join("shared").join("advisory-db"))
}

/// An advisory database has its advisories under `crates/`.
fn is_database(dir: &Path) -> bool {
    dir.join("crates").is_dir()
}

/// Copies the database at `from` (without any `.git`) to `to` and commits it there, so
/// cargo-deny can open it as the checkout it expects. `to` is replaced whole each run: a
/// database removed from the snapshot leaves nothing behind.
fn lay_out(from: &Path, to: &Path) -> anyhow::Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to).with_context(|| format!("removing {}", to.display()))?;
    }
    copy_tree(from, to)?;
    let git = |args: &[&str]| {
        let mut command = Command::new("git");
        // The commit is local to target/ and made by this command, not by whoever runs it;
        // hooks and signing of the caller's configuration do not apply.
        command
            .current_dir(to)
            .args(["-c", "user.name=cargo xtask deny", "-c", "user.email=xtask@localhost"])
            .args(["-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", "-c", "core.autocrlf=false"])
            .args(args);
        cmd::output(&mut command).map(drop)
    };
    git(&["init", "--quiet"])?;
    git(&["add", "--all"])?;
    git(&["commit", "--quiet", "--no-verify", "--message", "RustSec advisory database snapshot"])
        .context("committing the advisory database snapshot (cargo-deny opens it as a git checkout)")
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        if entry.file_type()?.is_dir() {
            copy_tree(&source, &target)?;
        } else {
            // Read-only in CI (shared/ is laid without write bits): copy the bytes, not the mode.
            let bytes = std::fs::read(&source).with_context(|| format!("reading {}", source.display()))?;
            std::fs::write(&target, bytes).with_context(|| format!("writing {}", target.display()))?;
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    #[test]
    fn ci_or_the_flag_makes_a_missing_snapshot_fail() {
        assert!(must_check(false, Some(OsStr::new("true"))));
        assert!(must_check(false, Some(OsStr::new("1"))));
        assert!(must_check(true, None));
        assert!(!must_check(false, None));
        assert!(!must_check(false, Some(OsStr::new(""))));
    }

    #[test]
    fn the_snapshot_is_found_beside_the_workspace() {
        let dir = snapshot_dir(Path::new("/w/agentgov"), None);
        assert_eq!(dir, Path::new("/w/shared/advisory-db"));
        assert_eq!(snapshot_dir(Path::new("/w/agentgov"), Some("/x".into())), Path::new("/x"));
    }

    #[test]
    fn deny_toml_points_cargo_deny_where_the_snapshot_is_laid_out() {
        let config = std::fs::read_to_string(root().join("deny.toml")).unwrap();
        assert!(config.contains(&format!("db-path = \"{DB_ROOT}\"")), "deny.toml's [advisories] db-path");
        assert!(!config.contains("db-urls"), "{DB_DIR} is derived from the default URL");
    }

    #[test]
    fn a_laid_out_snapshot_is_a_committed_checkout_without_the_source_git() {
        let base = std::env::temp_dir().join(format!("xtask-deny-{}", std::process::id()));
        let (from, to) = (base.join("from"), base.join("to"));
        std::fs::create_dir_all(from.join("crates/foo")).unwrap();
        std::fs::create_dir_all(from.join(".git")).unwrap();
        std::fs::write(from.join("crates/foo/RUSTSEC-0000-0000.md"), "x").unwrap();
        std::fs::write(from.join(".git/HEAD"), "junk").unwrap();
        std::fs::create_dir_all(to.join("stale")).unwrap();
        lay_out(&from, &to).unwrap();
        assert!(is_database(&to));
        assert!(!to.join("stale").exists());
        let tracked = cmd::output(Command::new("git").current_dir(&to).args(["ls-files"])).unwrap();
        assert_eq!(tracked.trim(), "crates/foo/RUSTSEC-0000-0000.md");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
