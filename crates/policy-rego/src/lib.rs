//! The policy engine adapter: Rego evaluated in-process by regorus (the OPA language).
//!
//! For now it proves the engine works (`self_test`, used by `/health/ready`); the policy
//! issue adds validation and evaluation of tenant policies.

use agentgov_domain::ports::PolicyEngine;
use agentgov_domain::{DomainError, Result};

const SELF_TEST_MODULE: &str = r#"
package agentgov.selftest

import rego.v1

default allow := false

allow if input.probe == "ok"
"#;

/// Rego through regorus. Holds a compiled engine and clones it per evaluation (cheap), never
/// recompiling on the request path.
#[derive(Clone)]
pub struct RegoEngine {
    self_test: regorus::Engine,
}

impl RegoEngine {
    /// Compiles the built-in self-test module; fails if the engine cannot.
    pub fn new() -> Result<Self> {
        let mut engine = regorus::Engine::new();
        engine
            .add_policy("agentgov/selftest.rego".into(), SELF_TEST_MODULE.into())
            .map_err(|e| DomainError::internal(format!("rego self-test module: {e}")))?;
        Ok(Self { self_test: engine })
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
