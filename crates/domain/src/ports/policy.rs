//! Policy engine port: compiles tenant policies (Rego modules) and evaluates them against a
//! policy check's input document. The contract a module follows is in `docs/policies.md`:
//! it may define `deny` and `require_approval` (sets of messages, or `true`) and
//! `risk_adjustment` (a number added to the computed risk score), under any package.

use std::sync::Arc;

use crate::error::Result;
use crate::ids::PolicyId;
use crate::model::Policy;

/// One policy as the engine compiles it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyModule {
    pub id: PolicyId,
    pub version: i64,
    pub name: String,
    pub rego: String,
    /// In `shadow` mode: its outcomes are recorded, never acted on (the engine ignores it).
    pub shadow: bool,
}

impl From<Policy> for PolicyModule {
    fn from(p: Policy) -> Self {
        let shadow = p.mode == crate::model::PolicyMode::Shadow;
        Self { id: p.id, version: p.version, name: p.name, rego: p.rego, shadow }
    }
}

/// Why a module does not compile, at a 1-based position of its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegoDiagnostic {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// What one policy decided about one input.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PolicyOutcome {
    pub policy: Option<PolicyId>,
    /// Messages of the module's `deny` rule, sorted; `deny = true` gives one generic message.
    pub deny: Vec<String>,
    /// Messages of its `require_approval` rule, sorted, likewise.
    pub require_approval: Vec<String>,
    /// Its `risk_adjustment`, if defined (a number, clamped by the caller).
    pub risk_adjustment: Option<f64>,
    /// Members of its `labels` rule, sorted: facts about the action the agent's session
    /// keeps (e.g. `secret_read`), which later checks of the session read.
    pub labels: Vec<String>,
    /// The module failed at evaluation (a conflict between rule values, a builtin error,
    /// a rule of the wrong type); the check fails closed on it (denied).
    pub error: Option<String>,
}

/// A check's input document (`docs/policies.md`) in two parts: `input.agent`, and the other
/// members. The domain hands the same `agent` allocation to every check of one agent
/// snapshot, so an engine may keep its own form of it, keyed by the `Arc`.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyInput {
    pub agent: Arc<serde_json::Value>,
    /// Every member but `agent`.
    pub rest: serde_json::Map<String, serde_json::Value>,
}

impl PolicyInput {
    /// `agent` with the other members, given as one JSON object (anything else counts as an
    /// empty one).
    pub fn new(agent: Arc<serde_json::Value>, rest: serde_json::Value) -> Self {
        let rest = match rest {
            serde_json::Value::Object(members) => members,
            _ => serde_json::Map::new(),
        };
        Self { agent, rest }
    }

    /// The whole document as one JSON value.
    pub fn to_json(&self) -> serde_json::Value {
        let mut document = self.rest.clone();
        document.insert("agent".to_owned(), (*self.agent).clone());
        serde_json::Value::Object(document)
    }
}

impl From<serde_json::Value> for PolicyInput {
    /// Splits a document (an object; anything else is taken as an empty one) into its parts.
    fn from(document: serde_json::Value) -> Self {
        let mut input = Self::new(Arc::default(), document);
        if let Some(agent) = input.rest.remove("agent") {
            input.agent = Arc::new(agent);
        }
        input
    }
}

/// A tenant's compiled policies, shared by every check until a policy changes.
pub trait CompiledPolicies: Send + Sync {
    /// Evaluates every module against `input`: one outcome per module, in the order they
    /// were compiled.
    fn evaluate(&self, input: &PolicyInput) -> Result<Vec<PolicyOutcome>>;

    /// Several checks' inputs, each with the instant its caller stops waiting: one answer
    /// per input, in order; `None` for an input whose instant passed before it started (its
    /// caller is gone, or answers it as past its budget). By default one by one.
    fn evaluate_many(&self, inputs: &[(PolicyInput, std::time::Instant)]) -> Vec<Option<Result<Vec<PolicyOutcome>>>> {
        inputs
            .iter()
            .map(|(input, deadline)| (std::time::Instant::now() < *deadline).then(|| self.evaluate(input)))
            .collect()
    }

    /// [`evaluate`](Self::evaluate) on a whole JSON document (for tests and tools).
    fn evaluate_json(&self, document: &serde_json::Value) -> Result<Vec<PolicyOutcome>> {
        self.evaluate(&PolicyInput::from(document.clone()))
    }
}

pub trait PolicyEngine: Send + Sync {
    /// Compiles and evaluates a tiny built-in module; `Unavailable` if the engine fails.
    fn self_test(&self) -> Result<()>;
    /// The engine's name, for `/status`.
    fn name(&self) -> &'static str;
    /// Compiles one module on its own: its first error, if any.
    fn validate(&self, rego: &str) -> std::result::Result<(), RegoDiagnostic>;
    /// Compiles `modules` (each valid on its own) into one evaluable set. Modules may
    /// share a package name: each is evaluated as if it were alone.
    fn compile(&self, modules: &[PolicyModule]) -> Result<Arc<dyn CompiledPolicies>>;
}
