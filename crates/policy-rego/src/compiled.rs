//! A tenant's compiled policies: one runner per module, evaluated in order.
//!
//! Modules that run on the VM and do not refer to `data` depend only on the input and their
//! own rules, so those with distinct packages (none inside another) are also compiled
//! together into one program with one outcome module tagging each module's rules by its
//! position: one VM run answers for all of them, which saves the per-run overhead of
//! each. If that run fails (a limit, an error), every module is run on its own instead, so
//! each failure is reported against its own policy exactly as without the shared run.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentgov_domain::Result;
use agentgov_domain::ids::PolicyId;
use agentgov_domain::ports::{CompiledPolicies, PolicyInput, PolicyModule, PolicyOutcome};
use regorus::languages::rego::compiler::Compiler;
use regorus::rvm::program::Program;
use regorus::rvm::vm::RegoVM;
use regorus::{Engine, Value};

use crate::diagnostic;
use crate::input::AgentValues;
use crate::module::{self, Loaded};

/// Which regorus evaluator runs a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The bytecode VM where it is exact (no `with`, no value rule that may conflict),
    /// the interpreter otherwise; modules that can share a VM run share one. The default.
    #[default]
    Auto,
    /// As `Auto`, but every module in a run of its own (for comparison and tests).
    Separate,
    /// The interpreter for every module (slower; for comparison and tests).
    Interpreter,
}

/// At most this many idle VMs are kept per program; more only under heavier concurrency.
const POOL_SIZE: usize = 8;
/// A VM stops after this many instructions (the evaluation fails; the check fails closed).
const MAX_INSTRUCTIONS: usize = 2_000_000;
/// Wall-clock budget of one evaluation of a set, every module together: a module that would
/// start past it is reported as not evaluated (each module also stops at its own
/// [`module::TIME_LIMIT`]).
pub(crate) const SET_BUDGET: Duration = Duration::from_millis(250);

pub(crate) struct CompiledSet {
    modules: Vec<CompiledModule>,
    /// The modules evaluated in one run, if at least two can be.
    shared: Option<Shared>,
    /// The engine's converted agents, shared by every set it compiles.
    agents: Arc<AgentValues>,
}

struct CompiledModule {
    id: PolicyId,
    name: String,
    /// For positions in error messages.
    rego: String,
    runner: Runner,
}

enum Runner {
    Vm(VmPool),
    /// A prepared engine, cloned per evaluation (cheap: its modules and analysis are shared).
    Interpreter {
        engine: Box<Engine>,
        entry: String,
    },
    /// The module did not compile; every evaluation reports it.
    Broken(String),
}

/// A compiled program and the idle VMs loaded with it.
struct VmPool {
    program: Arc<Program>,
    idle: Mutex<Vec<RegoVM>>,
}

/// Several modules compiled into one program whose outcome module tags each rule's value
/// with the module's position in `members`: `out contains [n, rule, v]`.
struct Shared {
    /// Indices into the set's modules.
    members: Vec<usize>,
    pool: VmPool,
    /// Set when a shared run failed: from then on the modules run apart.
    failed: AtomicBool,
}

/// A module's package and the contract rules it defines: what the outcome module reads.
struct Outline {
    package: Vec<String>,
    contract: Vec<&'static str>,
}

/// A module that could share a run: its position, source and outline.
struct Shareable<'a> {
    index: usize,
    rego: &'a str,
    outline: Outline,
}

impl CompiledSet {
    pub(crate) fn new(modules: &[PolicyModule], backend: Backend, agents: Arc<AgentValues>) -> Self {
        let mut shareable = Vec::new();
        let modules = modules
            .iter()
            .enumerate()
            .map(|(index, m)| {
                let (runner, outline) = Runner::new(m, backend);
                if let Some(outline) = outline {
                    shareable.push(Shareable { index, rego: &m.rego, outline });
                }
                CompiledModule { id: m.id, name: m.name.clone(), rego: m.rego.clone(), runner }
            })
            .collect();
        let shared = if backend == Backend::Auto { Shared::new(shareable) } else { None };
        Self { modules, shared, agents }
    }

    /// How many modules run on the VM (for tests and benches).
    pub(crate) fn on_vm(&self) -> usize {
        self.modules.iter().filter(|m| matches!(m.runner, Runner::Vm(_))).count()
    }

    /// How many modules share one VM run (for tests and benches).
    pub(crate) fn sharing(&self) -> usize {
        self.shared.as_ref().map_or(0, |s| s.members.len())
    }
}

impl CompiledPolicies for CompiledSet {
    fn evaluate(&self, input: &PolicyInput) -> Result<Vec<PolicyOutcome>> {
        let deadline = Instant::now() + SET_BUDGET;
        let input = self.agents.input(input);
        let mut outcomes: Vec<Option<PolicyOutcome>> = vec![None; self.modules.len()];
        if let Some(shared) = &self.shared
            && catch_unwind(AssertUnwindSafe(|| shared.evaluate(&input, &self.modules, &mut outcomes))).is_err()
        {
            // A panic inside regorus: the modules run apart from now on, each caught alone.
            shared.failed.store(true, Ordering::Relaxed);
            outcomes.iter_mut().for_each(|o| *o = None);
        }
        Ok(self
            .modules
            .iter()
            .zip(outcomes)
            .map(|(m, outcome)| match outcome {
                Some(outcome) => outcome,
                None if Instant::now() >= deadline => failed(
                    m.id,
                    format!(
                        "not evaluated: the policies before it spent the check's budget of {} ms",
                        SET_BUDGET.as_millis()
                    ),
                ),
                None => catch_unwind(AssertUnwindSafe(|| m.evaluate(&input)))
                    .unwrap_or_else(|_| failed(m.id, "the policy engine failed while evaluating this policy".into())),
            })
            .collect())
    }
}

impl Runner {
    /// The runner of `m` and, if it runs on the VM without referring to `data`, its outline.
    fn new(m: &PolicyModule, backend: Backend) -> (Self, Option<Outline>) {
        let broken = |message: String| {
            tracing::warn!(policy = %m.id, version = m.version, %message, "policy does not compile");
            (Runner::Broken(format!("the policy does not compile: {message}")), None)
        };
        let loaded = catch_unwind(|| Loaded::new(&m.rego))
            .unwrap_or_else(|_| Err(module::at_start("the policy engine failed on this module")));
        let Loaded { mut engine, entry, may_conflict, reads_data, package, contract } = match loaded {
            Ok(loaded) => loaded,
            Err(d) => return broken(format!("{} (line {}, column {})", d.message, d.line, d.column)),
        };
        // Analyses the modules once; clones of the engine share the result.
        let compiled = match catch_unwind(AssertUnwindSafe(|| engine.compile_with_entrypoint(&entry.as_str().into()))) {
            Ok(Ok(compiled)) => compiled,
            Ok(Err(e)) => return broken(diagnostic::evaluation_error(&e, &m.rego)),
            Err(_) => return broken("the policy engine failed on this module".into()),
        };
        if backend != Backend::Interpreter && !may_conflict {
            match Compiler::compile_from_policy(&compiled, &[entry.as_str()]) {
                Ok(program) => {
                    return (Runner::Vm(VmPool::new(program)), (!reads_data).then_some(Outline { package, contract }));
                }
                // e.g. `with`, which the VM compiler does not support yet.
                Err(e) => tracing::debug!(policy = %m.id, error = %e, "policy runs on the interpreter"),
            }
        }
        (Runner::Interpreter { engine: Box::new(engine), entry }, None)
    }

    fn run(&self, input: &Value, rego: &str) -> std::result::Result<Value, String> {
        match self {
            Runner::Vm(pool) => pool.run(input).map_err(|e| diagnostic::evaluation_error(&e, rego)),
            Runner::Interpreter { engine, entry } => {
                let mut engine = Engine::clone(engine);
                engine.set_input(input.clone());
                engine.eval_rule(entry.clone()).map_err(|e| diagnostic::evaluation_error(&e, rego))
            }
            Runner::Broken(message) => Err(message.clone()),
        }
    }
}

impl VmPool {
    fn new(program: Arc<Program>) -> Self {
        Self { program, idle: Mutex::new(Vec::new()) }
    }

    fn run(&self, input: &Value) -> regorus::rvm::vm::Result<Value> {
        let reused = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut vm = reused.unwrap_or_else(|| {
            let mut vm = RegoVM::new();
            vm.set_strict_builtin_errors(false);
            vm.set_max_instructions(MAX_INSTRUCTIONS);
            vm.set_execution_timer_config(Some(module::timer()));
            vm.load_program(self.program.clone());
            vm
        });
        vm.set_input(input.clone());
        let out = vm.execute()?;
        // A VM that failed is dropped rather than reused.
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < POOL_SIZE
        {
            idle.push(vm);
        }
        Ok(out)
    }
}

impl Shared {
    /// Greedily takes the candidates whose packages are distinct and none inside another;
    /// `None` unless at least two are taken and they compile together.
    fn new(candidates: Vec<Shareable<'_>>) -> Option<Self> {
        let mut taken: Vec<Shareable<'_>> = Vec::new();
        for c in candidates {
            let nested = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
            if !taken.iter().any(|t| nested(&t.outline.package, &c.outline.package)) {
                taken.push(c);
            }
        }
        if taken.len() < 2 {
            return None;
        }
        match compile_together(&taken) {
            Ok(program) => Some(Self {
                members: taken.iter().map(|t| t.index).collect(),
                pool: VmPool::new(program),
                failed: AtomicBool::new(false),
            }),
            Err(error) => {
                tracing::debug!(%error, "policies run apart");
                None
            }
        }
    }

    /// Fills in the members' outcomes, or leaves them to be evaluated apart if the run fails
    /// (now and from then on).
    fn evaluate(&self, input: &Value, modules: &[CompiledModule], outcomes: &mut [Option<PolicyOutcome>]) {
        if self.failed.load(Ordering::Relaxed) {
            return;
        }
        match self.run(input, modules) {
            Ok(read) => {
                for (&i, outcome) in self.members.iter().zip(read) {
                    outcomes[i] = Some(outcome);
                }
            }
            Err(error) => {
                tracing::debug!(%error, "a shared policy run failed; the policies run apart from now on");
                self.failed.store(true, Ordering::Relaxed);
            }
        }
    }

    /// One run: the members' outcomes, in the order of `members`.
    fn run(&self, input: &Value, modules: &[CompiledModule]) -> std::result::Result<Vec<PolicyOutcome>, String> {
        let out = self.pool.run(input).map_err(|e| e.to_string())?;
        let mut read: Vec<PolicyOutcome> = self
            .members
            .iter()
            .map(|&i| PolicyOutcome { policy: Some(modules[i].id), ..PolicyOutcome::default() })
            .collect();
        let members = match &out {
            Value::Undefined => return Ok(read),
            Value::Set(members) => members,
            other => return Err(format!("internal: unexpected outcome {other}")),
        };
        for member in members.iter() {
            let unexpected = || format!("internal: unexpected outcome member {member}");
            let Ok([Value::Number(n), rule, value]) = member.as_array().map(|a| a.as_slice()) else {
                return Err(unexpected());
            };
            let n =
                n.as_u64().and_then(|n| usize::try_from(n).ok()).filter(|n| *n < read.len()).ok_or_else(unexpected)?;
            let module = &modules[self.members[n]];
            if read[n].error.is_none()
                && let Err(error) = read_rule(rule, value, &module.name, &mut read[n])
            {
                read[n] = failed(module.id, error);
            }
        }
        Ok(read)
    }
}

/// Compiles the modules of a shared run, with their outcome module, into one program.
fn compile_together(taken: &[Shareable<'_>]) -> std::result::Result<Arc<Program>, String> {
    let mut engine = module::new_engine();
    for (n, t) in taken.iter().enumerate() {
        engine.add_policy(format!("policy-{n}.rego"), t.rego.to_owned()).map_err(|e| e.to_string())?;
    }
    let modules: Vec<(&[String], &[&str])> =
        taken.iter().map(|t| (t.outline.package.as_slice(), t.outline.contract.as_slice())).collect();
    let entry = module::add_outcome_module(&mut engine, &modules, |n, rule| format!("{n}, \"{rule}\""))?;
    let compiled = engine.compile_with_entrypoint(&entry.as_str().into()).map_err(|e| e.to_string())?;
    Compiler::compile_from_policy(&compiled, &[entry.as_str()]).map_err(|e| e.to_string())
}

/// The outcome of a policy whose evaluation failed: only the error (the check fails closed).
fn failed(policy: PolicyId, error: String) -> PolicyOutcome {
    tracing::debug!(%policy, %error, "policy evaluation failed");
    PolicyOutcome { policy: Some(policy), error: Some(error), ..PolicyOutcome::default() }
}

impl CompiledModule {
    fn evaluate(&self, input: &Value) -> PolicyOutcome {
        let mut outcome = PolicyOutcome { policy: Some(self.id), ..PolicyOutcome::default() };
        match self.runner.run(input, &self.rego).and_then(|out| read_outcome(&out, &self.name, &mut outcome)) {
            Ok(()) => outcome,
            Err(error) => failed(self.id, error),
        }
    }
}

/// Reads the outcome module's `out` set (`[rule, value]` pairs) into `outcome`.
pub(crate) fn read_outcome(out: &Value, policy: &str, outcome: &mut PolicyOutcome) -> std::result::Result<(), String> {
    let pairs = match out {
        Value::Undefined => return Ok(()),
        Value::Set(pairs) => pairs,
        other => return Err(format!("internal: unexpected outcome {other}")),
    };
    for pair in pairs.iter() {
        let Ok([rule, value]) = pair.as_array().map(|a| a.as_slice()) else {
            return Err(format!("internal: unexpected outcome member {pair}"));
        };
        read_rule(rule, value, policy, outcome)?;
    }
    Ok(())
}

/// Reads the value of one contract rule into `outcome`.
fn read_rule(
    rule: &Value,
    value: &Value,
    policy: &str,
    outcome: &mut PolicyOutcome,
) -> std::result::Result<(), String> {
    let Value::String(rule) = rule else { return Err(format!("internal: unexpected outcome rule {rule}")) };
    match rule.as_ref() {
        "deny" => outcome.deny = messages(value, "deny", || format!("denied by policy {policy}"))?,
        "require_approval" => {
            outcome.require_approval =
                messages(value, "require_approval", || format!("approval required by policy {policy}"))?;
        }
        "risk_adjustment" => match value {
            Value::Number(n) => outcome.risk_adjustment = n.as_f64(),
            other => return Err(format!("risk_adjustment must be a number, not {}", type_name(other))),
        },
        "labels" => match value {
            Value::Set(_) => outcome.labels = messages(value, "labels", String::new)?,
            other => return Err(format!("labels must be a set of strings, not {}", type_name(other))),
        },
        _ => {}
    }
    Ok(())
}

/// A set's members (strings as they are, other values as compact JSON), sorted and
/// deduplicated; `true` gives the generic message, `false` none.
fn messages(value: &Value, rule: &str, generic: impl FnOnce() -> String) -> std::result::Result<Vec<String>, String> {
    let mut out: Vec<String> = match value {
        Value::Bool(true) => vec![generic()],
        Value::Bool(false) => Vec::new(),
        Value::Set(members) => members
            .iter()
            .map(|m| match m {
                Value::String(s) => s.to_string(),
                other => other.to_string(),
            })
            .collect(),
        other => return Err(format!("{rule} must be a set of messages or a boolean, not {}", type_name(other))),
    };
    out.sort();
    out.dedup();
    Ok(out)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Set(_) => "a set",
        Value::Object(_) => "an object",
        Value::Undefined => "undefined",
    }
}
