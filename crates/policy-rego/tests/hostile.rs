//! Tenant Rego written to hurt the process: builtins whose cost an argument sets are refused
//! at upload unless that argument is a small literal (with the position), and stored
//! modules that slipped in earlier are refused at compile time the same way, so no check
//! ever runs them. Every module here aborted, hung or panicked the process before.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use agentgov_domain::ids::PolicyId;
use agentgov_domain::ports::{PolicyEngine, PolicyModule};
use agentgov_policy_rego::RegoEngine;
use serde_json::json;

fn refused(rego: &str, line: u32, column: u32, says: &str) {
    let d = RegoEngine::new().unwrap().validate(rego).expect_err(rego);
    assert_eq!((d.line, d.column), (line, column), "{d:?} for {rego}");
    assert!(d.message.contains(says), "{d:?} should say {says:?}");
}

fn module(rego: &str) -> PolicyModule {
    let id: PolicyId = "00000000-0000-7000-8000-000000000001".parse().unwrap();
    PolicyModule { id, name: "hostile".into(), version: 1, rego: rego.into(), shadow: false }
}

#[test]
fn sized_builtins_need_small_literal_arguments() {
    // The filed payload, and the ways to hide its argument.
    refused(
        "package t\ndeny contains \"x\" if { count(numbers.range(0, input.context.n)) < 0 }\n",
        2,
        30,
        "must be a literal number",
    );
    refused("package t\nf(n) := numbers.range(1, n)\ndeny contains \"x\" if count(f(3)) > 1\n", 2, 9, "literal number");
    refused("package t\nn := 5\ndeny contains \"x\" if count(numbers.range(1, n)) > 1\n", 3, 28, "literal number");
    refused("package t\ndeny contains \"x\" if count(numbers.range(0, 1000000000000000)) < 0\n", 2, 28, "at most");
    refused("package t\ndeny contains \"x\" if count(numbers.range(1, 10000000)) < 0\n", 2, 28, "at most");
    refused("package t\ndeny contains \"x\" if count(numbers.range(-1e15, 0)) < 0\n", 2, 28, "at most");
    refused(
        "package t\ndeny contains \"x\" if count(numbers.range_step(0, input.context.n, 1)) < 0\n",
        2,
        28,
        "literal number",
    );
    refused("package t\ndeny contains \"x\" if count(numbers.range_step(0, 1e12, 1)) < 0\n", 2, 28, "at most");
    refused("package t\ndeny contains \"x\" if count(numbers.range_step(0, 100, 0)) < 0\n", 2, 28, "step");
    refused("package t\ndeny contains \"x\" if count(net.cidr_expand(\"::/0\")) < 0\n", 2, 28, "at most 65536");
    refused("package t\ndeny contains \"x\" if count(net.cidr_expand(input.context.c)) < 0\n", 2, 28, "literal string");
    refused("package t\ndeny contains msg if msg := sprintf(\"%04000000000d\", [1])\n", 2, 29, "widths");
    refused("package t\ndeny contains msg if msg := sprintf(\"%²d\", [1])\n", 2, 29, "not a flag");
    refused("package t\ndeny contains msg if msg := sprintf(input.context.f, [1])\n", 2, 29, "literal string");
    refused("package t\ndeny contains msg if msg := sprintf(\"%*d\", [1000000000, 1])\n", 2, 29, "`*`");
    refused("package t\ndeny contains msg if msg := replace(input.action, \"\", \"x\")\n", 2, 29, "non-empty");
    refused(
        "package t\ndeny contains msg if msg := replace(input.action, \"a\", input.context.r)\n",
        2,
        29,
        "literal string",
    );
    refused(
        "package t\ndeny contains msg if msg := concat(input.context.sep, [\"a\", \"b\"])\n",
        2,
        29,
        "literal string",
    );
    refused(
        "package t\ndeny contains msg if msg := strings.replace_n(input.context.p, \"abc\")\n",
        2,
        29,
        "literal object",
    );
    refused("package t\ndeny contains x if x := bits.lsh(1, 4000000000)\n", 2, 25, "at most");
    refused(
        "package t\ndeny contains x if x := graph.reachable_paths(input.context.g, [\"a\"])\n",
        2,
        25,
        "not available",
    );
    // A guarded builtin cannot stand in for another through `with`.
    refused(
        "package t\nf(a, b) := a\ndeny contains \"x\" if { f(0, input.context.n) with f as numbers.range }\n",
        3,
        56,
        "cannot replace",
    );
}

#[test]
fn bounded_uses_still_pass() {
    let engine = RegoEngine::new().unwrap();
    for rego in [
        "package t\ndeny contains \"x\" if {\n some i in numbers.range(1, 100)\n i == input.context.n\n}\n",
        "package t\ndeny contains \"x\" if count(numbers.range_step(0, 1000, 10)) > 1000\n",
        "package t\ndeny contains \"x\" if \"10.0.0.1\" in net.cidr_expand(\"10.0.0.0/24\")\n",
        "package t\ndeny contains msg if msg := sprintf(\"%s used %.2f%% (%-8v)\", [input.action, 1.5, 2])\n",
        "package t\ndeny contains msg if msg := replace(input.action, \"_\", \" \")\n",
        "package t\ndeny contains msg if msg := concat(\", \", [input.action, input.resource])\n",
        "package t\ndeny contains msg if msg := strings.replace_n({\"a\": \"b\"}, input.action)\n",
        "package t\ndeny contains msg if msg := regex.replace(input.action, \"[0-9]+\", \"#\")\n",
    ] {
        engine.validate(rego).unwrap_or_else(|d| panic!("{rego}: {d:?}"));
    }
}

/// A module stored before these checks existed never runs: it is reported as not compiling,
/// so the check that meets it is denied, and the other modules of the set still answer.
#[test]
fn a_stored_hostile_module_is_broken_not_run() {
    let engine = RegoEngine::new().unwrap();
    let hostile = module("package h\ndeny contains \"x\" if { count(numbers.range(0, input.context.n)) < 0 }\n");
    let honest = module("package ok\ndeny contains \"honest\" if input.action == \"delete\"\n");
    let set = engine.compile(&[hostile, honest]).unwrap();
    let outcomes = set.evaluate_json(&json!({"action": "delete", "context": {"n": 1_000_000_000_000_000u64}})).unwrap();
    assert!(outcomes[0].error.as_deref().unwrap().contains("does not compile"), "{:?}", outcomes[0]);
    assert_eq!(outcomes[1].deny, ["honest"]);
}

/// Check input cannot reach a guarded builtin's cost: whatever the context holds, bounded
/// modules answer.
#[test]
fn hostile_check_input_against_bounded_modules() {
    let engine = RegoEngine::new().unwrap();
    let set = engine
        .compile(&[module(
            "package t\n\
             deny contains msg if msg := sprintf(\"%v %v\", [input.context.n, input.context.f])\n\
             deny contains \"in range\" if {\n some i in numbers.range(1, 10)\n i == input.context.n\n}\n",
        )])
        .unwrap();
    for context in [
        json!({"n": 1_000_000_000_000_000u64, "f": "%04000000000d"}),
        json!({"n": 1e308, "f": "%²d"}),
        json!({"n": -1, "f": "::/0"}),
    ] {
        let outcomes = set.evaluate_json(&json!({"action": "a", "context": context})).unwrap();
        assert!(outcomes[0].error.is_none(), "{:?}", outcomes[0]);
        assert_eq!(outcomes[0].deny.len(), 1, "{:?}", outcomes[0]);
    }
}
