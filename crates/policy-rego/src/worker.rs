//! Tenant policies evaluated in supervised worker processes.
//!
//! Bounds inside the process (literal arguments for sized builtins, timers, instruction
//! limits, caught panics) cannot bound everything a policy can make regorus do: memory built
//! up over many instructions, a multiplication of numbers of arbitrary precision, or one
//! allocation too large to satisfy (which aborts a Rust process). So each policy thread
//! talks to a worker process of its own, started from the server's binary with an
//! address-space limit. A worker that runs past its deadline is killed; one that dies (an
//! abort, the limit) is started again on the next use; in both cases the set that did it is
//! answered with an error per policy and refused for [`QUARANTINE`], so a tenant cannot keep
//! the workers restarting. The server process itself never runs tenant Rego here.
//!
//! The protocol is JSON lines over the worker's standard input and output: one request, one
//! answer. A worker keeps the sets it has compiled (by the supervisor's id) and answers
//! `unknown` for one it does not have; the supervisor then sends the modules with the
//! inputs. An `evaluate` carries a batch: one or more inputs of checks of one tenant.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentgov_domain::ids::PolicyId;
use agentgov_domain::ports::{
    CompiledPolicies, PolicyEngine, PolicyInput, PolicyModule, PolicyOutcome, RegoDiagnostic,
};
use agentgov_domain::{DomainError, Result};
use serde::{Deserialize, Serialize};

use crate::RegoEngine;
use crate::compiled::SET_BUDGET;

/// How long a set that stopped a worker is answered with errors without being run again.
pub const QUARANTINE: Duration = Duration::from_secs(60);
/// A worker evaluating a set it has compiled is killed this long after the request was
/// sent (one that must compile the set first gets [`VALIDATE_DEADLINE`]).
const EVALUATE_DEADLINE: Duration = SET_BUDGET.saturating_add(Duration::from_millis(150));
/// A worker checking one module is killed this long after the request was sent.
const VALIDATE_DEADLINE: Duration = Duration::from_secs(5);
/// A new set is compiled in the free workers ([`Pool::preload`]) until this much time has
/// passed; the others compile it on first use.
const PRELOAD_FOR: Duration = Duration::from_secs(1);
/// Most compiled sets a worker keeps; past that it starts over.
const SETS_PER_WORKER: usize = 1024;
/// A worker's niceness: tenant Rego gets the CPU after the server's own threads (and, on
/// the same machine, the database), so policies that burn their budget slow their own
/// tenant's checks rather than everyone's requests.
pub const WORKER_NICE: i32 = 10;
/// The argument that makes the server's binary a worker.
pub const WORKER_ARG: &str = "policy-worker";

#[derive(Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Request {
    Validate {
        rego: String,
    },
    /// Inputs of one batch, each with the milliseconds its caller still waits.
    Evaluate {
        set: u64,
        modules: Option<Vec<WireModule>>,
        inputs: Vec<(serde_json::Value, u64)>,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
enum Answer {
    Valid,
    Invalid {
        line: u32,
        column: u32,
        message: String,
    },
    /// Per input, its outcomes, or nothing if its time had passed before it started.
    Outcomes {
        outcomes: Vec<Option<Vec<WireOutcome>>>,
    },
    Unknown,
    Failed {
        message: String,
    },
}

#[derive(Clone, Serialize, Deserialize)]
struct WireModule {
    id: PolicyId,
    version: i64,
    name: String,
    rego: String,
}

#[derive(Serialize, Deserialize)]
struct WireOutcome {
    deny: Vec<String>,
    require_approval: Vec<String>,
    risk_adjustment: Option<f64>,
    #[serde(default)]
    labels: Vec<String>,
    error: Option<String>,
}

/// The worker's side: answers requests on standard input until it closes. `memory_limit`
/// (bytes) caps the process's address space first, and the process lowers its priority to
/// [`WORKER_NICE`].
pub fn serve(memory_limit: Option<u64>) -> std::io::Result<()> {
    if let Some(limit) = memory_limit {
        let rlimit = rustix::process::Rlimit { current: Some(limit), maximum: Some(limit) };
        rustix::process::setrlimit(rustix::process::Resource::As, rlimit)?;
    }
    // Only ever lowers the priority, which needs no privilege.
    rustix::process::setpriority_process(None, WORKER_NICE)?;
    let engine = RegoEngine::new().map_err(std::io::Error::other)?;
    let mut sets: HashMap<u64, Arc<dyn CompiledPolicies>> = HashMap::new();
    let mut agents = Agents::default();
    let (stdin, stdout) = (std::io::stdin().lock(), std::io::stdout());
    let mut out = stdout.lock();
    for line in stdin.lines() {
        let answer = match serde_json::from_str::<Request>(&line?) {
            Ok(request) => answer(&engine, &mut sets, &mut agents, request),
            Err(e) => Answer::Failed { message: format!("malformed request: {e}") },
        };
        serde_json::to_writer(&mut out, &answer).map_err(std::io::Error::other)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}

/// [`serve`] for a binary's `main`: `policy-worker [--memory-mib N]` after the program name.
pub fn main_from_args() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let memory = args
        .iter()
        .position(|a| a == "--memory-mib")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse::<u64>().ok())
        .map(|mib| mib.saturating_mul(1024 * 1024));
    match serve(memory) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agentgov policy worker: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The agents of recent requests, one allocation per agent while it is unchanged: each
/// request brings its agent as fresh JSON, and the engine converts an agent once per
/// allocation (`input.rs`), so handing it the same one again saves that conversion.
#[derive(Default)]
struct Agents(HashMap<String, Arc<serde_json::Value>>);

impl Agents {
    fn same(&mut self, agent: Arc<serde_json::Value>) -> Arc<serde_json::Value> {
        let Some(id) = agent.get("id").and_then(|id| id.as_str()) else { return agent };
        if let Some(kept) = self.0.get(id)
            && **kept == *agent
        {
            return kept.clone();
        }
        if self.0.len() >= SETS_PER_WORKER * 4 {
            self.0.clear();
        }
        self.0.insert(id.to_owned(), agent.clone());
        agent
    }
}

fn answer(
    engine: &RegoEngine,
    sets: &mut HashMap<u64, Arc<dyn CompiledPolicies>>,
    agents: &mut Agents,
    request: Request,
) -> Answer {
    match request {
        Request::Validate { rego } => match engine.validate(&rego) {
            Ok(()) => Answer::Valid,
            Err(d) => Answer::Invalid { line: d.line, column: d.column, message: d.message },
        },
        Request::Evaluate { set, modules, inputs } => {
            let compiled = match (sets.get(&set), modules) {
                (Some(compiled), _) => compiled.clone(),
                (None, None) => return Answer::Unknown,
                (None, Some(modules)) => {
                    let modules: Vec<PolicyModule> = modules
                        .into_iter()
                        .map(|m| PolicyModule {
                            id: m.id,
                            version: m.version,
                            name: m.name,
                            rego: m.rego,
                            shadow: false,
                        })
                        .collect();
                    let compiled = match engine.compile(&modules) {
                        Ok(compiled) => compiled,
                        Err(e) => return Answer::Failed { message: e.to_string() },
                    };
                    if sets.len() >= SETS_PER_WORKER {
                        sets.clear();
                    }
                    sets.insert(set, compiled.clone());
                    compiled
                }
            };
            let received = Instant::now();
            let mut answers = Vec::with_capacity(inputs.len());
            for (input, left_ms) in inputs {
                if received.elapsed() >= Duration::from_millis(left_ms) {
                    answers.push(None);
                    continue;
                }
                let mut input = PolicyInput::from(input);
                input.agent = agents.same(input.agent);
                match compiled.evaluate(&input) {
                    Ok(outcomes) => answers.push(Some(
                        outcomes
                            .into_iter()
                            .map(|o| WireOutcome {
                                deny: o.deny,
                                require_approval: o.require_approval,
                                risk_adjustment: o.risk_adjustment,
                                labels: o.labels,
                                error: o.error,
                            })
                            .collect(),
                    )),
                    Err(e) => return Answer::Failed { message: e.to_string() },
                }
            }
            Answer::Outcomes { outcomes: answers }
        }
    }
}

/// How to start a worker: the program (the server's own binary, normally) and its memory cap.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    pub program: PathBuf,
    /// Arguments before the worker's own (`policy-worker --memory-mib N` follow).
    pub args: Vec<String>,
    pub memory_mib: u64,
}

/// Why a round trip with a worker gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    /// Past its deadline: killed.
    TimedOut,
    /// It died (an abort, the memory limit), or could not be started.
    Died,
}

/// The supervisor: a worker per policy thread, started on first use.
pub struct IsolatedEngine {
    pool: Arc<Pool>,
    /// For `self_test` and `name`, which need no tenant code.
    local: RegoEngine,
}

struct Pool {
    command: WorkerCommand,
    workers: Vec<Mutex<Worker>>,
    next: AtomicUsize,
    next_set: AtomicU64,
    quarantined: Mutex<HashMap<u64, Instant>>,
}

#[derive(Default)]
struct Worker {
    running: Option<Running>,
    /// The sets this worker has compiled.
    loaded: HashSet<u64>,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    /// Bytes read past the last answer's newline (normally none: one answer per request).
    unread: Vec<u8>,
}

/// Why no answer line was read.
enum Unanswered {
    TimedOut,
    /// The worker's output closed (it died or was killed), or could not be read.
    Closed,
}

impl Running {
    /// The worker's next answer line, waiting until `deadline` at most. Read on the calling
    /// thread (no reader thread to hand the line over): the pipe is polled with the time
    /// left, and each read takes only what is there, so a worker that stops mid-line cannot
    /// hold the caller past the deadline.
    fn answer(&mut self, deadline: Instant) -> std::result::Result<String, Unanswered> {
        let mut chunk = [0u8; 8192];
        loop {
            if let Some(end) = self.unread.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.unread.drain(..=end).collect();
                return String::from_utf8(line).map_err(|_| Unanswered::Closed);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Unanswered::TimedOut);
            }
            let timeout = rustix::event::Timespec::try_from(left).map_err(|_| Unanswered::Closed)?;
            let mut fds = [rustix::event::PollFd::new(&self.stdout, rustix::event::PollFlags::IN)];
            match rustix::event::poll(&mut fds, Some(&timeout)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => {}
                Err(_) => return Err(Unanswered::Closed),
            }
            match self.stdout.read(&mut chunk) {
                Ok(0) | Err(_) => return Err(Unanswered::Closed),
                Ok(n) => self.unread.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Killed and reaped, so no zombie is left behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl IsolatedEngine {
    /// `workers` worker processes at most (one per policy thread), started with `command`.
    pub fn new(command: WorkerCommand, workers: usize) -> Result<Self> {
        let workers = (0..workers.max(1)).map(|_| Mutex::new(Worker::default())).collect();
        let pool = Pool {
            command,
            workers,
            next: AtomicUsize::new(0),
            next_set: AtomicU64::new(1),
            quarantined: Mutex::new(HashMap::new()),
        };
        Ok(Self { pool: Arc::new(pool), local: RegoEngine::new()? })
    }
}

impl PolicyEngine for IsolatedEngine {
    fn self_test(&self) -> Result<()> {
        self.local.self_test()?;
        // A worker can be started and answers.
        match self.pool.call(&Request::Validate { rego: "package agentgov.ping\n".into() }, VALIDATE_DEADLINE, None) {
            Ok(Answer::Valid) => Ok(()),
            _ => {
                tracing::error!("a policy worker could not be started or did not answer");
                Err(DomainError::Unavailable("policy engine".into()))
            }
        }
    }

    fn name(&self) -> &'static str {
        "regorus"
    }

    fn validate(&self, rego: &str) -> std::result::Result<(), RegoDiagnostic> {
        let at_start = |message: &str| RegoDiagnostic { line: 1, column: 1, message: message.to_owned() };
        match self.pool.call(&Request::Validate { rego: rego.to_owned() }, VALIDATE_DEADLINE, None) {
            Ok(Answer::Valid) => Ok(()),
            Ok(Answer::Invalid { line, column, message }) => Err(RegoDiagnostic { line, column, message }),
            Ok(_) => Err(at_start("the policy engine could not check this module")),
            Err(Stopped::TimedOut) => Err(at_start(&format!(
                "could not be checked within {} s; simplify the module",
                VALIDATE_DEADLINE.as_secs()
            ))),
            Err(Stopped::Died) => {
                Err(at_start("stopped the policy engine (more memory or time than a policy may use); simplify it"))
            }
        }
    }

    fn compile(&self, modules: &[PolicyModule]) -> Result<Arc<dyn CompiledPolicies>> {
        let modules = modules
            .iter()
            .map(|m| WireModule { id: m.id, version: m.version, name: m.name.clone(), rego: m.rego.clone() })
            .collect();
        let id = self.pool.next_set.fetch_add(1, Ordering::Relaxed);
        let modules = Arc::new(modules);
        self.pool.preload(id, &modules);
        Ok(Arc::new(IsolatedSet { pool: self.pool.clone(), id, modules }))
    }
}

/// A set compiled in the workers that are free when it is made ([`Pool::preload`]), and
/// lazily in each other worker that evaluates it.
struct IsolatedSet {
    pool: Arc<Pool>,
    id: u64,
    modules: Arc<Vec<WireModule>>,
}

impl IsolatedSet {
    fn failed(&self, error: &str) -> Vec<PolicyOutcome> {
        self.modules
            .iter()
            .map(|m| PolicyOutcome { policy: Some(m.id), error: Some(error.to_owned()), ..PolicyOutcome::default() })
            .collect()
    }
}

impl CompiledPolicies for IsolatedSet {
    fn evaluate(&self, input: &PolicyInput) -> Result<Vec<PolicyOutcome>> {
        let deadline = Instant::now() + SET_BUDGET;
        let mut answers = self.evaluate_many(&[(input.clone(), deadline)]);
        answers.pop().flatten().unwrap_or_else(|| Ok(self.failed("not evaluated within the check's budget")))
    }

    /// One round trip for the whole batch: the worker skips an input whose caller stopped
    /// waiting before it started, and is killed [`EVALUATE_DEADLINE`] after the last
    /// caller's instant.
    fn evaluate_many(&self, inputs: &[(PolicyInput, Instant)]) -> Vec<Option<Result<Vec<PolicyOutcome>>>> {
        let all = |error: &str| inputs.iter().map(|_| Some(Ok(self.failed(error)))).collect();
        if self.pool.is_quarantined(self.id) {
            return all(&format!(
                "not evaluated: these policies stopped the policy engine less than {} s ago",
                QUARANTINE.as_secs()
            ));
        }
        let now = Instant::now();
        let latest = inputs.iter().map(|(_, deadline)| *deadline).max().unwrap_or(now);
        let wire = inputs
            .iter()
            .map(|(input, deadline)| {
                let left = deadline.saturating_duration_since(now);
                (input.to_json(), u64::try_from(left.as_millis()).unwrap_or(u64::MAX))
            })
            .collect();
        let request = Request::Evaluate { set: self.id, modules: None, inputs: wire };
        let deadline = latest.saturating_duration_since(now) + EVALUATE_DEADLINE;
        let answer = self.pool.call(&request, deadline, Some((self.id, &self.modules)));
        let error = match answer {
            Ok(Answer::Outcomes { outcomes })
                if outcomes.len() == inputs.len()
                    && outcomes.iter().flatten().all(|o| o.len() == self.modules.len()) =>
            {
                return outcomes
                    .into_iter()
                    .map(|outcomes| {
                        outcomes.map(|outcomes| {
                            Ok(outcomes
                                .into_iter()
                                .zip(self.modules.iter())
                                .map(|(o, m)| PolicyOutcome {
                                    policy: Some(m.id),
                                    deny: o.deny,
                                    require_approval: o.require_approval,
                                    risk_adjustment: o.risk_adjustment,
                                    labels: o.labels,
                                    error: o.error,
                                })
                                .collect())
                        })
                    })
                    .collect();
            }
            Ok(Answer::Failed { message }) => message,
            Ok(_) => "the policy engine answered out of turn".to_owned(),
            Err(stopped) => {
                self.pool.quarantine(self.id);
                match stopped {
                    Stopped::TimedOut => format!(
                        "the policies ran past the check's budget of {} ms and were stopped",
                        SET_BUDGET.as_millis()
                    ),
                    Stopped::Died => {
                        "the policies stopped the policy engine (more memory or time than policies may use)".to_owned()
                    }
                }
            }
        };
        tracing::warn!(set = self.id, %error, "a policy set was not evaluated");
        all(&error)
    }
}

impl Pool {
    /// Compiles `set` in every worker that is free now (starting it if need be), so that the
    /// first checks after a policy change do not spend their evaluation budget on the
    /// compilation (on a loaded machine a worker's start and compilation can take longer
    /// than the whole budget, and the check would be denied as not evaluated). A busy
    /// worker compiles it on first use, as before. Stops at the first failure, or when
    /// [`PRELOAD_FOR`] has passed (so that making the set stays well within its budget);
    /// what failed here fails again, and is quarantined, when a check evaluates the set.
    fn preload(&self, set: u64, modules: &Arc<Vec<WireModule>>) {
        let started = Instant::now();
        let request = encode(&Request::Evaluate { set, modules: Some(modules.to_vec()), inputs: Vec::new() });
        for worker in &self.workers {
            let left = PRELOAD_FOR.saturating_sub(started.elapsed());
            if left.is_zero() {
                return;
            }
            let Ok(mut worker) = worker.try_lock() else { continue };
            if worker.loaded.contains(&set) {
                continue;
            }
            // A worker still compiling when the time is up is stopped (and started again on
            // its next use, which compiles the set with the full time a compilation may take).
            match worker.round_trip(&self.command, &request, left) {
                Ok(Answer::Outcomes { .. }) => {
                    worker.loaded.insert(set);
                }
                _ => return,
            }
        }
    }

    fn is_quarantined(&self, set: u64) -> bool {
        let mut quarantined = self.quarantined.lock().unwrap_or_else(|p| p.into_inner());
        quarantined.retain(|_, since| since.elapsed() < QUARANTINE);
        quarantined.contains_key(&set)
    }

    fn quarantine(&self, set: u64) {
        self.quarantined.lock().unwrap_or_else(|p| p.into_inner()).insert(set, Instant::now());
    }

    /// One round trip on a free worker (else the next in turn). `set` names the set an
    /// `evaluate` needs and its modules, sent along when the worker lacks it.
    fn call(
        &self,
        request: &Request,
        deadline: Duration,
        set: Option<(u64, &Arc<Vec<WireModule>>)>,
    ) -> std::result::Result<Answer, Stopped> {
        let mut worker = self.workers.iter().find_map(|w| w.try_lock().ok()).unwrap_or_else(|| {
            let n = self.next.fetch_add(1, Ordering::Relaxed) % self.workers.len();
            self.workers[n].lock().unwrap_or_else(|p| p.into_inner())
        });
        let started = Instant::now();
        let with_modules = |modules: &Arc<Vec<WireModule>>| match request {
            Request::Evaluate { set, inputs, .. } => {
                Request::Evaluate { set: *set, modules: Some(modules.to_vec()), inputs: inputs.clone() }
            }
            Request::Validate { rego } => Request::Validate { rego: rego.clone() },
        };
        // A worker that must compile the set first gets the time a compilation may take: a
        // large set of honest policies must not look like a runaway one.
        let compiling = deadline.max(VALIDATE_DEADLINE);
        let mut answer = match set {
            Some((id, modules)) if !worker.loaded.contains(&id) => {
                worker.round_trip(&self.command, &encode(&with_modules(modules)), compiling)?
            }
            _ => worker.round_trip(&self.command, &encode(request), deadline)?,
        };
        if let (Answer::Unknown, Some((_, modules))) = (&answer, set) {
            let left = compiling.saturating_sub(started.elapsed());
            answer = worker.round_trip(&self.command, &encode(&with_modules(modules)), left)?;
        }
        if let (Answer::Outcomes { .. }, Some((id, _))) = (&answer, set) {
            worker.loaded.insert(id);
        }
        Ok(answer)
    }
}

fn encode(request: &Request) -> String {
    // Serialising these types cannot fail (string keys, no maps of other keys).
    let mut line = serde_json::to_string(request).unwrap_or_default();
    line.push('\n');
    line
}

impl Worker {
    fn round_trip(
        &mut self,
        command: &WorkerCommand,
        line: &str,
        deadline: Duration,
    ) -> std::result::Result<Answer, Stopped> {
        if self.running.is_none() {
            self.loaded.clear();
            self.running = Some(start(command).map_err(|e| {
                tracing::error!(error = %e, program = %command.program.display(), "could not start a policy worker");
                Stopped::Died
            })?);
        }
        let Some(running) = self.running.as_mut() else { return Err(Stopped::Died) };
        let sent = running.stdin.write_all(line.as_bytes()).and_then(|()| running.stdin.flush());
        let received = match sent {
            Ok(()) => running.answer(Instant::now() + deadline),
            Err(_) => Err(Unanswered::Closed),
        };
        match received {
            Ok(answer) => serde_json::from_str(&answer).map_err(|e| {
                tracing::error!(error = %e, "a policy worker answered something unreadable; it is restarted");
                self.running = None;
                Stopped::Died
            }),
            Err(Unanswered::TimedOut) => {
                tracing::warn!("a policy worker ran past its deadline and was killed");
                self.running = None;
                Err(Stopped::TimedOut)
            }
            Err(Unanswered::Closed) => {
                tracing::warn!("a policy worker died; it is started again on the next use");
                self.running = None;
                Err(Stopped::Died)
            }
        }
    }
}

fn start(command: &WorkerCommand) -> std::io::Result<Running> {
    let mut child = Command::new(&command.program)
        .args(&command.args)
        .args([WORKER_ARG, "--memory-mib", &command.memory_mib.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        return Err(std::io::Error::other("the worker's pipes were not opened"));
    };
    Ok(Running { child, stdin, stdout, unread: Vec::new() })
}
