//! `--peer agt`: a peer measured beside the check in one run. The agent governance toolkit
//! (PyPI `agent-governance-toolkit-core`, its `[server]` extra) as the HTTP policy sidecar a
//! team would deploy in agentgov's place (`agentmesh.server.sidecar` under uvicorn, one
//! worker process per core), with the bench's five templates written in its rule language
//! (lab/peers/agt/agentgov-five.yaml; how faithful that is: lab/peers/agt/NOTES.md), asked
//! the same decision with the same load generator, connections and duration, in turns with
//! agentgov's check.
//!
//! What the peer does not do is stated beside its figures: it writes no audit record at all
//! (agentgov's answered checks are each a durable record, counted), authenticates nobody,
//! keeps no registry and computes no risk (the caller would send `risk_score`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use super::oha::{CONCURRENCY, Load, Stop, status_count};
use super::report::{PolicyRow, Row, Success};
use super::{mem, policy};
use xtask::cmd::{root, step};
use xtask::http::Connection;
use xtask::server::free_port;

/// The peers `--peer` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// The agent governance toolkit's policy sidecar.
    Agt,
}

impl Peer {
    pub fn parse(name: &str) -> anyhow::Result<Self> {
        match name {
            "agt" => Ok(Peer::Agt),
            _ => bail!("--peer knows `agt` (the agent governance toolkit's policy sidecar), got `{name}`"),
        }
    }
}

/// The peer's row label.
pub const AGT_IN_TURNS: &str =
    "agt sidecar: POST /api/v1/policy/evaluate (in turns with agentgov's check, median of 5 rounds)";
/// agentgov's row label in the same comparison.
pub const CHECK_BESIDE_AGT: &str = "POST /api/v1/policies/check (in turns with the agt sidecar, median of 5 rounds)";

/// The toolkit's package, as pinned in the requirements file.
pub const AGT_PACKAGE: &str = "agent-governance-toolkit-core 5.0.0";
/// How long the sidecar may take to load its policies (its imports are heavy).
const READY_WITHIN: Duration = Duration::from_secs(60);

/// The toolkit's sidecar running on a loopback port of its own; stopped when dropped.
pub struct Sidecar {
    child: Child,
    pub base: String,
    pub workers: usize,
    policies: PathBuf,
    /// The decision asked of it ([`evaluation`]).
    body: String,
}

/// The path of the sidecar's decision endpoint.
const EVALUATE: &str = "/api/v1/policy/evaluate";

/// The bench's check ([`policy::check_body`]) as the sidecar's evaluation: the same action,
/// resource and context; the agent as a DID, which the sidecar takes on trust.
fn evaluation() -> anyhow::Result<String> {
    let mut body: Value = serde_json::from_str(&policy::check_body(AGENT_DID)).context("the check's body")?;
    let object = body.as_object_mut().context("the check's body is an object")?;
    let agent = object.remove("agent_id").context("the check names its agent")?;
    object.insert("agent_did".into(), agent);
    Ok(body.to_string())
}

/// The agent's identity as the sidecar is told it.
const AGENT_DID: &str = "did:agentgov:support-refunds";

impl Sidecar {
    /// Makes (or reuses) the pinned virtual environment, starts the sidecar with one worker
    /// process per core and the five templates' policy file, and waits until it says the
    /// policy is loaded.
    pub fn start() -> anyhow::Result<Self> {
        let peers = root().join("lab").join("peers").join("agt");
        let Some(python) = xtask::sdk::python()? else {
            bail!("--peer agt needs Python 3.10 or later (python3 on PATH)");
        };
        // The SDK goes in too (no dependencies of its own), as in every environment `venv` makes.
        let sdk = root().join("sdk").join("python");
        let venv = xtask::sdk::venv(&python, "agentgov-bench-agt-venv", &peers.join("requirements.txt"), &sdk)?;
        // Only the policy file: the sidecar loads every YAML and JSON file of its directory.
        let policies = std::env::temp_dir().join(format!("agentgov-bench-agt-{}", std::process::id()));
        std::fs::create_dir_all(&policies).with_context(|| format!("creating {}", policies.display()))?;
        std::fs::copy(peers.join("agentgov-five.yaml"), policies.join("agentgov-five.yaml"))
            .context("copying the peer's policy file")?;
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let port = free_port()?;
        let log = std::fs::File::create(policies.join("sidecar.log")).context("creating the sidecar's log")?;
        let child = Command::new(venv.join("bin").join("uvicorn"))
            .args(["agentmesh.server.sidecar:app", "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--workers", &workers.to_string(), "--no-access-log", "--log-level", "warning"])
            .env("AGT_POLICY_DIR", &policies)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("starting the agt sidecar (uvicorn)")?;
        let body = evaluation()?;
        let sidecar = Sidecar { child, base: format!("http://127.0.0.1:{port}"), workers, policies, body };
        sidecar.wait_ready()?;
        Ok(sidecar)
    }

    fn wait_ready(&self) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            let ready = Connection::new(&self.base)
                .and_then(|mut c| c.get("/ready", &[]))
                .ok()
                .filter(|r| r.status == 200)
                .and_then(|r| serde_json::from_str::<Value>(&r.body).ok());
            if let Some(ready) = ready {
                if ready["policies_loaded"].as_u64() == Some(1) {
                    return Ok(());
                }
                bail!("the agt sidecar loaded {} policies, expected 1 (log: {})", ready["policies_loaded"], self.log());
            }
            if started.elapsed() > READY_WITHIN {
                bail!("the agt sidecar was not ready within {}s (log: {})", READY_WITHIN.as_secs(), self.log());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn log(&self) -> String {
        self.policies.join("sidecar.log").display().to_string()
    }

    fn url(&self) -> String {
        format!("{}{EVALUATE}", self.base)
    }

    /// One request by hand: the decision must be `allow`, as agentgov's is; then a warm-up.
    pub fn prepare(&self, warm_up: Duration) -> anyhow::Result<()> {
        let mut connection = Connection::new(&self.base)?;
        let answer = connection.post_json(EVALUATE, &[], &self.body)?;
        let decision: Value = serde_json::from_str(&answer.body).unwrap_or(Value::Null);
        if answer.status != 200 || decision["decision"] != "allow" {
            bail!("the agt sidecar answered {} {}, expected 200 and allow", answer.status, answer.body);
        }
        Load::post_json(self.url(), Vec::new(), self.body.clone(), Stop::After(warm_up)).run()?;
        Ok(())
    }

    /// The same load as agentgov's side of the comparison, labelled `label`. The sidecar
    /// keeps no record: `audited` is 0.
    pub fn measure(&self, mode: &str, label: &str, stop: Stop) -> anyhow::Result<PolicyRow> {
        let json = Load::post_json(self.url(), Vec::new(), self.body.clone(), stop).run()?;
        let load = Row::from_oha(mode, label, CONCURRENCY, Success::Status(200), &json)?;
        load.warn_unless_all_succeeded("decision", 200, &json);
        Ok(PolicyRow { load, answered: status_count(&json, "200"), audited: 0 })
    }

    /// CPU seconds of the sidecar's processes so far: uvicorn's and its workers'.
    pub fn cpu_seconds(&self) -> Option<f64> {
        let pid = self.child.id();
        let mut total = mem::cpu_seconds(&pid.to_string())?;
        for child in children(pid) {
            total += mem::cpu_seconds(&child.to_string()).unwrap_or(0.0);
        }
        Some(total)
    }

    pub fn check_still_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("the agt sidecar exited ({status}); its log: {}", self.log());
        }
        Ok(())
    }
}

/// The child processes of `pid` (Linux's `/proc/<pid>/task/<tid>/children`).
fn children(pid: u32) -> Vec<u32> {
    let tasks = Path::new("/proc").join(pid.to_string()).join("task");
    let Ok(entries) = std::fs::read_dir(tasks) else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| list.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<u32>>())
        .collect()
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        // SIGTERM first, so that uvicorn stops its workers.
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        step(&format!("agt sidecar stopped (its policy file and log in {})", self.policies.display()));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_sidecar_is_asked_the_benchs_check_with_the_agent_as_a_did() {
        let asked: Value = serde_json::from_str(&evaluation().unwrap()).unwrap();
        assert_eq!(
            asked,
            json!({
                "agent_did": "did:agentgov:support-refunds",
                "action": "lookup order",
                "resource": "orders/42",
                "context": {"consent": true, "environment": "production", "ticket": "T-1042", "channel": "chat"},
            })
        );
    }
}
