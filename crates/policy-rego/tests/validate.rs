//! `validate`: the first error of a module alone, at its 1-based line and column.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use agentgov_domain::ports::{PolicyEngine, RegoDiagnostic};
use agentgov_policy_rego::RegoEngine;

fn error(rego: &str) -> RegoDiagnostic {
    RegoEngine::new().unwrap().validate(rego).unwrap_err()
}

fn at(rego: &str, line: u32, column: u32, message: &str) {
    let d = error(rego);
    assert_eq!((d.line, d.column), (line, column), "{d:?}");
    assert!(d.message.contains(message), "{d:?} should say {message:?}");
    assert!(!d.message.contains('\n') && !d.message.contains("policy.rego"), "{d:?}");
}

#[test]
fn valid_modules_pass_including_ones_without_contract_rules() {
    let engine = RegoEngine::new().unwrap();
    engine.validate("package t\n\ndeny contains \"x\" if input.action == \"delete\"\n").unwrap();
    engine.validate("package t\nimport rego.v1\nhelper := 1\n").unwrap();
    engine.validate("# leading comment\n\npackage a.b.c\nrequire_approval if input.risk.score > 0.5\n").unwrap();
    engine.validate("package t\nimport future.keywords.if\nimport future.keywords.in\ndeny if 1 in [1]\n").unwrap();
}

#[test]
fn parse_errors() {
    at("package t\n\ndeny contains \"x\" if {\n  input.a ==\n}\n", 5, 1, "expecting expression");
    at("package t\ndeny contains \"x\" if input.a == \n", 3, 1, "");
}

#[test]
fn rego_v1_requires_if_and_contains() {
    at("package t\ndeny contains \"x\" { input.a == 1 }\n", 2, 19, "`if` keyword is required");
    at("package t\ndeny[msg] { msg := \"x\" }\n", 2, 11, "");
}

#[test]
fn empty_sources_and_missing_packages() {
    at("", 1, 1, "package");
    at("  \n\n", 1, 1, "package");
    at("deny := true\n", 1, 1, "package");
}

#[test]
fn unknown_functions_even_where_evaluation_would_not_reach_them() {
    at("package t\ndeny contains \"x\" if foo(input.a)\n", 2, 22, "unknown function `foo`");
    at(
        "package t\ndeny contains \"x\" if {\n\tinput.a == 1\n\tstrings.nope(input.a)\n}\n",
        4,
        2,
        "unknown function `strings.nope`",
    );
    // Functions of the module, by plain name or full path, are known.
    RegoEngine::new().unwrap().validate("package t\nf(x) := x\ndeny contains data.t.f(1) if f(2) == 2\n").unwrap();
}

#[test]
fn builtin_arity() {
    at("package t\ndeny contains \"x\" if startswith(input.a)\n", 2, 22, "`startswith` takes 2 arguments, not 1");
    at("package t\nn := count(input.a, 2)\n", 2, 6, "`count` takes 1 argument, not 2");
}

#[test]
fn unsafe_variables() {
    at("package t\ndeny contains \"x\" if input.a == y\n", 2, 33, "undefined variable `y`");
}

#[test]
fn conflicts_that_show_without_input() {
    at("package t\nx := 1\nx := 2\ndeny contains x if true\n", 3, 1, "conflicts");
    // Tab-indented lines: columns count characters.
    at("package t\ndeny contains \"x\" if {\n\tinput.a == y\n}\n", 3, 13, "undefined variable `y`");
}

#[test]
fn contract_rules_of_the_wrong_type() {
    at("package t\n\ndeny := 5\n", 3, 1, "deny must be a set of messages or a boolean");
    at("package t\nrisk_adjustment := \"high\"\n", 2, 1, "risk_adjustment must be a number");
}
