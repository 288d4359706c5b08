//! The policy engine adapter: Rego evaluated in-process by regorus (the OPA language).
//!
//! Each tenant module is loaded alone into its own engine (so modules sharing a package
//! never see each other) with a generated outcome module that gathers `deny`,
//! `require_approval` and `risk_adjustment` in one evaluation (`module.rs`). Modules run on
//! regorus's bytecode VM where that is exact, on its interpreter otherwise; VM modules that
//! never refer to `data` and have distinct packages also share one program and one run per
//! check (`compiled.rs`). `validate` parses, checks calls statically, and evaluates once
//! with an empty input.

mod analysis;
mod compiled;
mod diagnostic;
mod input;
mod module;
pub mod worker;

use std::sync::Arc;

use agentgov_domain::ports::{CompiledPolicies, PolicyEngine, PolicyModule, PolicyOutcome, RegoDiagnostic};
use agentgov_domain::{DomainError, Result};

pub use compiled::Backend;
use compiled::CompiledSet;
use input::AgentValues;
use module::Loaded;
pub use worker::{IsolatedEngine, WorkerCommand};

const SELF_TEST_MODULE: &str = r#"
package agentgov.selftest

import rego.v1

default allow := false

allow if input.probe == "ok"
"#;

/// How a compiled set runs its modules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Modules on the bytecode VM (the rest on the interpreter, or broken).
    pub on_vm: usize,
    /// Modules evaluated together in one VM run (0, or at least 2).
    pub sharing: usize,
}

/// Rego through regorus. Holds a compiled engine and clones it per evaluation (cheap), never
/// recompiling on the request path.
#[derive(Clone)]
pub struct RegoEngine {
    self_test: regorus::Engine,
    backend: Backend,
    /// Agents converted for checks, shared by every compiled set (bounded).
    agents: Arc<AgentValues>,
}

impl RegoEngine {
    /// Compiles the built-in self-test module; fails if the engine cannot.
    pub fn new() -> Result<Self> {
        let mut engine = regorus::Engine::new();
        engine
            .add_policy("agentgov/selftest.rego".into(), SELF_TEST_MODULE.into())
            .map_err(|e| DomainError::internal(format!("rego self-test module: {e}")))?;
        Ok(Self { self_test: engine, backend: Backend::Auto, agents: Arc::default() })
    }

    /// The same engine with modules run on `backend` (the default is [`Backend::Auto`]).
    pub fn with_backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Compiles `modules` and tells how they run (for tests and benches).
    pub fn compile_counting(&self, modules: &[PolicyModule]) -> (Arc<dyn CompiledPolicies>, Counts) {
        let set = CompiledSet::new(modules, self.backend, self.agents.clone());
        let counts = Counts { on_vm: set.on_vm(), sharing: set.sharing() };
        (Arc::new(set), counts)
    }
}

impl PolicyEngine for RegoEngine {
    fn self_test(&self) -> Result<()> {
        let unavailable = |e: &dyn std::fmt::Display| {
            tracing::error!(error = %e, "policy engine self-test failed");
            DomainError::Unavailable("policy engine".into())
        };
        let mut engine = self.self_test.clone();
        let input = regorus::Value::from_json_str(r#"{"probe":"ok"}"#).map_err(|e| unavailable(&e))?;
        engine.set_input(input);
        let allowed = engine.eval_rule("data.agentgov.selftest.allow".into()).map_err(|e| unavailable(&e))?;
        if allowed == regorus::Value::from(true) {
            Ok(())
        } else {
            Err(unavailable(&"self-test policy did not allow its probe"))
        }
    }

    fn name(&self) -> &'static str {
        "regorus"
    }

    fn validate(&self, rego: &str) -> std::result::Result<(), RegoDiagnostic> {
        // A panic inside regorus is the module's fault here, and answered as such.
        std::panic::catch_unwind(|| validate(rego))
            .unwrap_or_else(|_| Err(module::at_start("the policy engine failed on this module; simplify it")))
    }

    fn compile(&self, modules: &[PolicyModule]) -> Result<Arc<dyn CompiledPolicies>> {
        Ok(Arc::new(CompiledSet::new(modules, self.backend, self.agents.clone())))
    }
}

/// [`PolicyEngine::validate`], panics not caught.
fn validate(rego: &str) -> std::result::Result<(), RegoDiagnostic> {
    // Before regorus parses it: deep nesting makes its parser exponential.
    module::check_nesting(rego)?;
    let Loaded { mut engine, entry, .. } = Loaded::new(rego)?;
    // regorus analyses lazily and reports conflicts only when evaluating: evaluate once.
    engine.set_input(regorus::Value::new_object());
    let out = engine.eval_rule(entry).map_err(|e| diagnostic::diagnostic(&e, rego))?;
    let mut outcome = PolicyOutcome::default();
    compiled::read_outcome(&out, "", &mut outcome).map_err(|message| {
        let (line, column) = rule_position(rego, &message);
        RegoDiagnostic { line, column, message }
    })
}

/// Where the rule a type error names (its first word) is first defined; else the start.
fn rule_position(rego: &str, message: &str) -> (u32, u32) {
    let rule = message.split_whitespace().next().unwrap_or_default();
    let defines = |line: &str| {
        line.strip_prefix(rule).is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
    };
    rego.lines().position(defines).and_then(|i| u32::try_from(i + 1).ok()).map_or((1, 1), |line| (line, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_test_compiles_and_evaluates() {
        let engine = RegoEngine::new().unwrap();
        engine.self_test().unwrap();
        engine.self_test().unwrap();
        assert_eq!(engine.name(), "regorus");
    }
}
