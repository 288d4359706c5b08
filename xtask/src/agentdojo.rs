//! `cargo xtask agentdojo`: the AgentDojo policy benchmark (issue 38). AgentDojo (pinned in
//! `lab/agentdojo/requirements.txt`) is installed into a virtual environment, a release
//! server is started on loopback in embedded mode with the Prompt Guard's encoder (when
//! `cargo xtask guard-models` installed it), and `lab/agentdojo/bench.py` replays
//! AgentDojo's ground-truth calls against it: benign sequences per user task, attacked
//! sequences per (user task, injection task) pair and attack. It prints per suite and
//! overall the utility retained and the attacks intercepted, and writes the whole report
//! to `$CARGO_TARGET_DIR/agentdojo.json`. No language model is in the loop.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};

use crate::cmd::{self, step};
use crate::sdk;
use crate::server::{Backend, Server, build_release};

/// The attacks run unless `--attack` names some: AgentDojo's own, from its strongest
/// (`important_instructions`) to its plainest (`direct`).
const ATTACKS: [&str; 6] =
    ["important_instructions", "tool_knowledge", "ignore_previous", "injecagent", "system_message", "direct"];

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut passthrough: Vec<String> = Vec::new();
    let mut attacks = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--suite" | "--attack" => {
                let value = it.next().with_context(|| format!("{flag} needs a value"))?;
                attacks |= flag == "--attack";
                passthrough.extend([flag.clone(), value.clone()]);
            }
            other => bail!("unknown argument `{other}`: cargo xtask agentdojo [--suite NAME]... [--attack NAME]..."),
        }
    }
    if !attacks {
        passthrough.extend(ATTACKS.iter().flat_map(|a| ["--attack".to_owned(), (*a).to_owned()]));
    }
    let Some(python) = sdk::python()? else { return Ok(()) };
    let main = cmd::root();
    let lab = main.join("lab").join("agentdojo");
    let venv =
        sdk::venv(&python, "agentgov-agentdojo-venv", &lab.join("requirements.txt"), &main.join("sdk").join("python"))?;
    step("agentdojo: cargo build --release -p agentgov-server");
    let binary = build_release()?;
    let models = main.join("models");
    let server =
        Server::start_with(&binary, &Backend::Embedded, &[("AGENTGOV_GUARD_MODELS", models.display().to_string())])?;
    let out = target_dir(&main).join("agentdojo.json");
    step(&format!("agentdojo: {} against {}", lab.join("bench.py").display(), server.base));
    cmd::run(
        Command::new(venv.join("bin").join("python"))
            .arg(lab.join("bench.py"))
            .args(["--url", &server.base, "--admin-key", server.admin_key(), "--out"])
            .arg(&out)
            .args(&passthrough),
    )?;
    step(&format!("agentdojo: the whole report is in {}", out.display()));
    Ok(())
}

fn target_dir(main: &std::path::Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| main.join("target"), PathBuf::from)
}
