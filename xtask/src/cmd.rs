//! Small helpers around `std::process::Command`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The workspace root (the parent of this crate's directory).
pub fn root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}

/// `cargo`, as the one running us (so `+toolchain` overrides carry over).
pub fn cargo() -> Command {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(program);
    command.current_dir(root());
    command
}

/// Prints the step banner.
pub fn step(name: &str) {
    println!("==> {name}");
}

/// Runs `command` with inherited output; fails unless it exits successfully.
pub fn run(command: &mut Command) -> anyhow::Result<()> {
    let shown = describe(command);
    let status = command.status().with_context(|| format!("starting `{shown}`"))?;
    if !status.success() {
        bail!("`{shown}` failed ({status})");
    }
    Ok(())
}

/// Runs `command` and returns its standard output; fails unless it exits successfully.
pub fn output(command: &mut Command) -> anyhow::Result<String> {
    let shown = describe(command);
    let out = command.output().with_context(|| format!("starting `{shown}`"))?;
    if !out.status.success() {
        bail!("`{shown}` failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr).trim_end());
    }
    String::from_utf8(out.stdout).with_context(|| format!("`{shown}` printed invalid UTF-8"))
}

/// Whether `program` can be started at all.
pub fn exists(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|out| out.status.success())
}

fn describe(command: &Command) -> String {
    let mut shown = command.get_program().to_string_lossy().into_owned();
    for arg in command.get_args() {
        shown.push(' ');
        shown.push_str(&arg.to_string_lossy());
    }
    shown
}
