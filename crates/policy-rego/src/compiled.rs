//! A tenant's compiled policies: one runner per module, evaluated in order.

use std::sync::{Arc, Mutex};

use agentgov_domain::Result;
use agentgov_domain::ids::PolicyId;
use agentgov_domain::ports::{CompiledPolicies, PolicyModule, PolicyOutcome};
use regorus::languages::rego::compiler::Compiler;
use regorus::rvm::program::Program;
use regorus::rvm::vm::RegoVM;
use regorus::{Engine, Value};

use crate::diagnostic;
use crate::input::to_value;
use crate::module::{self, Loaded};

/// Which regorus evaluator runs a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The bytecode VM where it is exact (no `with`, no value rule that may conflict),
    /// the interpreter otherwise. The default.
    #[default]
    Auto,
    /// The interpreter for every module (slower; for comparison and tests).
    Interpreter,
}

/// At most this many idle VMs are kept per module; more only under heavier concurrency.
const POOL_SIZE: usize = 8;
/// A VM stops after this many instructions (the evaluation fails; the check fails closed).
const MAX_INSTRUCTIONS: usize = 2_000_000;

pub(crate) struct CompiledSet {
    modules: Vec<CompiledModule>,
}

struct CompiledModule {
    id: PolicyId,
    name: String,
    /// For positions in error messages.
    rego: String,
    runner: Runner,
}

enum Runner {
    Vm {
        program: Arc<Program>,
        idle: Mutex<Vec<RegoVM>>,
    },
    /// A prepared engine, cloned per evaluation (cheap: its modules and analysis are shared).
    Interpreter {
        engine: Box<Engine>,
        entry: String,
    },
    /// The module did not compile; every evaluation reports it.
    Broken(String),
}

impl CompiledSet {
    pub(crate) fn new(modules: &[PolicyModule], backend: Backend) -> Self {
        let modules = modules
            .iter()
            .map(|m| CompiledModule {
                id: m.id,
                name: m.name.clone(),
                rego: m.rego.clone(),
                runner: Runner::new(m, backend),
            })
            .collect();
        Self { modules }
    }

    /// How many modules run on the VM (for tests and benches).
    pub(crate) fn on_vm(&self) -> usize {
        self.modules.iter().filter(|m| matches!(m.runner, Runner::Vm { .. })).count()
    }
}

impl CompiledPolicies for CompiledSet {
    fn evaluate(&self, input: &serde_json::Value) -> Result<Vec<PolicyOutcome>> {
        let input = to_value(input);
        Ok(self.modules.iter().map(|m| m.evaluate(&input)).collect())
    }
}

impl Runner {
    fn new(m: &PolicyModule, backend: Backend) -> Self {
        let broken = |message: String| {
            tracing::warn!(policy = %m.id, version = m.version, %message, "policy does not compile");
            Runner::Broken(format!("the policy does not compile: {message}"))
        };
        let Loaded { mut engine, entry, may_conflict } = match Loaded::new(&m.rego) {
            Ok(loaded) => loaded,
            Err(d) => return broken(format!("{} (line {}, column {})", d.message, d.line, d.column)),
        };
        // Analyses the modules once; clones of the engine share the result.
        let compiled = match engine.compile_with_entrypoint(&entry.as_str().into()) {
            Ok(compiled) => compiled,
            Err(e) => return broken(diagnostic::evaluation_error(&e, &m.rego)),
        };
        if backend == Backend::Auto && !may_conflict {
            match Compiler::compile_from_policy(&compiled, &[entry.as_str()]) {
                Ok(program) => return Runner::Vm { program, idle: Mutex::new(Vec::new()) },
                // e.g. `with`, which the VM compiler does not support yet.
                Err(e) => tracing::debug!(policy = %m.id, error = %e, "policy runs on the interpreter"),
            }
        }
        Runner::Interpreter { engine: Box::new(engine), entry }
    }

    fn run(&self, input: &Value, rego: &str) -> std::result::Result<Value, String> {
        match self {
            Runner::Vm { program, idle } => {
                let reused = idle.lock().ok().and_then(|mut idle| idle.pop());
                let mut vm = reused.unwrap_or_else(|| new_vm(program));
                vm.set_input(input.clone());
                let out = vm.execute().map_err(|e| diagnostic::evaluation_error(&e, rego))?;
                // A VM that failed is dropped rather than reused.
                if let Ok(mut idle) = idle.lock()
                    && idle.len() < POOL_SIZE
                {
                    idle.push(vm);
                }
                Ok(out)
            }
            Runner::Interpreter { engine, entry } => {
                let mut engine = Engine::clone(engine);
                engine.set_input(input.clone());
                engine.eval_rule(entry.clone()).map_err(|e| diagnostic::evaluation_error(&e, rego))
            }
            Runner::Broken(message) => Err(message.clone()),
        }
    }
}

fn new_vm(program: &Arc<Program>) -> RegoVM {
    let mut vm = RegoVM::new();
    vm.set_strict_builtin_errors(false);
    vm.set_max_instructions(MAX_INSTRUCTIONS);
    vm.set_execution_timer_config(Some(module::timer()));
    vm.load_program(program.clone());
    vm
}

impl CompiledModule {
    fn evaluate(&self, input: &Value) -> PolicyOutcome {
        let mut outcome = PolicyOutcome { policy: Some(self.id), ..PolicyOutcome::default() };
        match self.runner.run(input, &self.rego).and_then(|out| read_outcome(&out, &self.name, &mut outcome)) {
            Ok(()) => {}
            Err(error) => {
                tracing::debug!(policy = %self.id, %error, "policy evaluation failed");
                outcome = PolicyOutcome { policy: Some(self.id), error: Some(error), ..PolicyOutcome::default() };
            }
        }
        outcome
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
        let mut items = pair.as_array().map_err(|e| format!("internal: {e}"))?.iter();
        let (Some(Value::String(rule)), Some(value)) = (items.next(), items.next()) else {
            return Err(format!("internal: unexpected outcome member {pair}"));
        };
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
            _ => {}
        }
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
