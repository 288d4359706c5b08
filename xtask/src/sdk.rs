//! `cargo xtask sdk [generate|check|test]`: the Python SDK in `sdk/python`.
//!
//! - `generate` rewrites the generated client (`src/agentgov/api`) from docs/openapi.json
//!   with the pinned openapi-python-client (and mends its one fault, `patch_optional_bodies`).
//! - `check` fails when the committed client differs from what the document gives (drift),
//!   then runs ruff (lint and format) and `mypy --strict`.
//! - `test` builds the server and runs `sdk/python/tests` against it: in one virtual
//!   environment with LangChain, the OpenAI Agents SDK, FastMCP and claude-agent-sdk, and the
//!   CrewAI tests in a second one (CrewAI pins `openai<3`, the Agents SDK `openai>=3`), and
//!   Microsoft's agent governance toolkit asking agentgov over AuthZEN in a third (the
//!   toolkit pins its own cryptography and pydantic), and the LiteLLM proxy with agentgov as its
//!   guardrail in a fourth.
//! - Without a subcommand: `check`, then `test`.
//!
//! The environments live outside the clone (`$AGENTGOV_SDK_VENVS`, default `/var/tmp`) and are
//! (re)made from `sdk/python/requirements/{ci,crewai,agt,litellm}.txt`, which pin every package, whenever
//! those files change. Without Python 3.10 or later the command prints why and skips, except
//! in CI (`CI` set), where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::cmd::{self, step};

/// The generator, pinned in requirements/ci.txt: 0.28.4 is the last release whose output
/// targets Python 3.10.
const GENERATOR: &str = "openapi-python-client";

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let what = match args {
        [] => "all",
        [one] if ["generate", "check", "test"].contains(&one.as_str()) => one.as_str(),
        _ => bail!("usage: cargo xtask sdk [generate|check|test]"),
    };
    let Some(python) = python()? else { return Ok(()) };
    let sdk = cmd::root().join("sdk").join("python");
    let main = venv(&python, "agentgov-sdk-venv", &sdk.join("requirements").join("ci.txt"), &sdk)?;
    match what {
        "generate" => generate(&main, &sdk, &sdk.join("src").join("agentgov").join("api")),
        "check" => check(&main, &sdk),
        "test" => test(&python, &main, &sdk),
        _ => {
            check(&main, &sdk)?;
            test(&python, &main, &sdk)
        }
    }
}

/// A Python 3.10 or later, or `None` (after saying so) when there is none outside CI.
pub fn python() -> anyhow::Result<Option<String>> {
    for candidate in ["python3", "python"] {
        let version = Command::new(candidate)
            .args(["-c", "import sys; print('%d %d' % sys.version_info[:2])"])
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
        let Some(version) = version else { continue };
        let mut parts = version.split(' ').filter_map(|p| p.parse::<u32>().ok());
        if let (Some(3), Some(minor)) = (parts.next(), parts.next())
            && minor >= 10
        {
            return Ok(Some(candidate.to_owned()));
        }
    }
    let why = "the Python SDK's tests need Python 3.10 or later (python3 on PATH)";
    if std::env::var_os("CI").is_some() {
        bail!("{why}; CI never skips them");
    }
    step(&format!("sdk: SKIPPED: {why}; install it to run them"));
    Ok(None)
}

/// The virtual environment `name` with `requirements` installed and the SDK itself
/// (editable), made again when `requirements` changed.
pub fn venv(python: &str, name: &str, requirements: &Path, sdk: &Path) -> anyhow::Result<PathBuf> {
    let root = std::env::var_os("AGENTGOV_SDK_VENVS").map_or_else(|| PathBuf::from("/var/tmp"), PathBuf::from);
    let dir = root.join(name);
    let wanted =
        std::fs::read_to_string(requirements).with_context(|| format!("reading {}", requirements.display()))?;
    let stamp = dir.join("agentgov-requirements.txt");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
        step(&format!("making {} from {}", dir.display(), requirements.display()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        cmd::run(Command::new(python).args(["-m", "venv"]).arg(&dir))?;
        let pip = dir.join("bin").join("pip");
        cmd::run(
            Command::new(&pip).args(["install", "--quiet", "--disable-pip-version-check", "-r"]).arg(requirements),
        )?;
        std::fs::write(&stamp, wanted)?;
    }
    // The SDK itself, editable, without touching the pinned packages.
    let pip = dir.join("bin").join("pip");
    cmd::run(
        Command::new(&pip).args(["install", "--quiet", "--disable-pip-version-check", "--no-deps", "-e"]).arg(sdk),
    )?;
    Ok(dir)
}

pub(crate) fn bin(venv: &Path, program: &str) -> Command {
    let mut command = Command::new(venv.join("bin").join(program));
    // The generator's post-hooks run `ruff` from PATH: the pinned one.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![venv.join("bin")];
    paths.extend(std::env::split_paths(&path));
    command.env("PATH", std::env::join_paths(paths).unwrap_or(path));
    command
}

/// Writes the generated client into `out` (under `sdk`, so that its pyproject's ruff
/// settings format it).
fn generate(venv: &Path, sdk: &Path, out: &Path) -> anyhow::Result<()> {
    step(&format!("sdk: {GENERATOR} generate → {}", out.display()));
    let spec = cmd::root().join("docs").join("openapi.json");
    let mut command = bin(venv, GENERATOR);
    command
        .current_dir(sdk)
        .args([
            "generate",
            "--meta",
            "none",
            "--overwrite",
            "--fail-on-warning",
            "--config",
            "openapi-python-client.yaml",
        ])
        .arg("--path")
        .arg(&spec)
        .arg("--output-path")
        .arg(out);
    cmd::run(&mut command)?;
    patch_optional_bodies(out)
}

/// The generator's one known fault here: an optional body that may also be `null`
/// (`oneOf: [$ref, null]`, e.g. `POST /hitl/approve/{id}`) is sent as `UNSET` when left out,
/// which httpx cannot encode. The body is then left out, as the server allows.
const UNSET_BODY: (&str, &str) = (
    "    else:\n        _kwargs[\"json\"] = body\n",
    "    elif not isinstance(body, Unset):\n        _kwargs[\"json\"] = body\n",
);

fn patch_optional_bodies(out: &Path) -> anyhow::Result<()> {
    let operations = out.join("api");
    for path in files(&operations)? {
        let path = operations.join(path);
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        if text.contains(UNSET_BODY.0) {
            std::fs::write(&path, text.replace(UNSET_BODY.0, UNSET_BODY.1))?;
        }
    }
    Ok(())
}

fn check(venv: &Path, sdk: &Path) -> anyhow::Result<()> {
    let fresh = sdk.join("build").join("api-drift-check");
    std::fs::create_dir_all(sdk.join("build"))?;
    generate(venv, sdk, &fresh)?;
    let committed = sdk.join("src").join("agentgov").join("api");
    let differences = compare(&committed, &fresh)?;
    std::fs::remove_dir_all(&fresh).ok();
    if !differences.is_empty() {
        bail!(
            "sdk/python/src/agentgov/api is not what docs/openapi.json gives ({}); run `cargo xtask sdk generate`",
            differences.join(", ")
        );
    }
    println!("    the generated client matches docs/openapi.json");
    step("sdk: ruff check, ruff format --check, mypy --strict");
    cmd::run(bin(venv, "ruff").current_dir(sdk).args(["check", "src", "tests"]))?;
    cmd::run(bin(venv, "ruff").current_dir(sdk).args(["format", "--check", "src", "tests"]))?;
    cmd::run(bin(venv, "mypy").current_dir(sdk).arg("src/agentgov"))
}

/// The relative paths whose files differ between two trees (`__pycache__` aside).
fn compare(a: &Path, b: &Path) -> anyhow::Result<Vec<String>> {
    let (left, right) = (files(a)?, files(b)?);
    let mut out = Vec::new();
    for path in left.iter().chain(right.iter().filter(|p| !left.contains(p))) {
        let (x, y) = (std::fs::read(a.join(path)).ok(), std::fs::read(b.join(path)).ok());
        if x != y {
            out.push(path.display().to_string());
        }
    }
    Ok(out)
}

fn files(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.file_name().is_some_and(|n| n == "__pycache__") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(root)?.to_path_buf());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The server binary (debug build), built now.
pub(crate) fn server_binary() -> anyhow::Result<PathBuf> {
    step("cargo build -p agentgov-server");
    crate::server::build_server(&[])
}

/// The tests that need an environment of their own (requirements/<name>.txt, whose
/// packages pin versions the main one cannot hold), and what each proves.
const OWN_ENVIRONMENTS: [(&str, &str, &str); 4] = [
    ("crewai", "tests/test_crewai.py", "CrewAI (it pins `openai<3`)"),
    ("agt", "tests/test_authzen_agt.py", "the agent governance toolkit over AuthZEN"),
    ("litellm", "tests/test_litellm.py", "the LiteLLM proxy with agentgov as its guardrail"),
    ("otel", "tests/test_otlp.py", "OTLP export to a receiver, from an agent traced by OpenTelemetry's SDK"),
];

fn test(python: &str, main: &Path, sdk: &Path) -> anyhow::Result<()> {
    let binary = server_binary()?;
    step("sdk: pytest (LangChain, OpenAI Agents, FastMCP, Claude Code)");
    let ignored: Vec<String> = OWN_ENVIRONMENTS.iter().map(|(_, file, _)| format!("--ignore={file}")).collect();
    cmd::run(
        bin(main, "python")
            .current_dir(sdk)
            .env("AGENTGOV_BIN", &binary)
            .args(["-m", "pytest", "-q", "-rs"])
            .args(&ignored),
    )?;
    for (name, file, what) in OWN_ENVIRONMENTS {
        let requirements = sdk.join("requirements").join(format!("{name}.txt"));
        let env = venv(python, &format!("agentgov-sdk-{name}-venv"), &requirements, sdk)?;
        step(&format!("sdk: pytest {file} ({what}, its own environment)"));
        cmd::run(bin(&env, "python").current_dir(sdk).env("AGENTGOV_BIN", &binary).args([
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:warnings",
            file,
        ]))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    /// `cargo test --workspace` runs the SDK's checks and tests: a skip line without Python
    /// 3.10 or later, a failure in CI.
    #[test]
    fn the_python_sdk_passes_its_drift_check_lints_and_tests() {
        super::run(&[]).unwrap();
    }
}
