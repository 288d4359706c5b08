//! `POST /policies`: an arbitrary module source through the checks the policy service makes
//! (at most 64 KiB, not blank) and the regorus adapter's `validate`; a module it accepts is
//! then compiled into a set and evaluated against a realistic check input.
//!
//! The work runs on a thread with a 2 MiB stack, the default of a spawned Rust thread and so
//! of the actix-web workers that serve `POST /policies` (`AGENTGOV_FUZZ_STACK_KIB` overrides
//! it): a recursion that would overflow a worker's stack crashes here too.
//!
//! Invariants:
//! - never panics, never overflows the stack;
//! - a diagnostic is at line >= 1, column >= 1, within the source (a line that exists, or
//!   the one just past the end; a column at most one past the line's last character), with
//!   a one-line, non-empty message that does not leak the internal file name;
//! - a module that validates compiles, and evaluates to exactly one outcome.
#![no_main]

use std::sync::LazyLock;

use agentgov_domain::ids::PolicyId;
use agentgov_domain::ports::{PolicyEngine, PolicyModule, RegoDiagnostic};
use agentgov_domain::services::policies::MAX_REGO_BYTES;
use agentgov_policy_rego::RegoEngine;
use libfuzzer_sys::fuzz_target;

/// The policy-rego tests' fixtures: the input is the one their evaluation tests use.
#[path = "../../crates/policy-rego/tests/common/mod.rs"]
mod common;

static ENGINE: LazyLock<RegoEngine> = LazyLock::new(|| match RegoEngine::new() {
    Ok(engine) => engine,
    Err(e) => panic!("regorus engine: {e}"),
});

static STACK: LazyLock<usize> = LazyLock::new(|| {
    std::env::var("AGENTGOV_FUZZ_STACK_KIB").ok().and_then(|k| k.parse::<usize>().ok()).unwrap_or(2048) * 1024
});

static INPUT: LazyLock<serde_json::Value> = LazyLock::new(common::realistic_input);

fuzz_target!(|data: &[u8]| {
    // The API takes the source as a JSON string: always UTF-8.
    let Ok(source) = std::str::from_utf8(data) else { return };
    if source.len() > MAX_REGO_BYTES || source.trim().is_empty() {
        return;
    }
    let source = source.to_owned();
    let engine = ENGINE.clone();
    let input = INPUT.clone();
    let worker = std::thread::Builder::new().stack_size(*STACK).spawn(move || check(&engine, &source, &input));
    match worker.map(std::thread::JoinHandle::join) {
        Ok(Ok(())) => {}
        // The thread's panic message is already printed: abort so libFuzzer keeps the input.
        Ok(Err(_)) => std::process::abort(),
        Err(e) => panic!("spawning the worker thread: {e}"),
    }
});

fn check(engine: &RegoEngine, source: &str, input: &serde_json::Value) {
    match engine.validate(source) {
        Err(d) => check_diagnostic(source, &d),
        Ok(()) => {
            let id: PolicyId = match "00000000-0000-7000-8000-000000000001".parse() {
                Ok(id) => id,
                Err(_) => unreachable!("a UUID"),
            };
            let module = PolicyModule { id, version: 1, name: "fuzz".into(), rego: source.to_owned() };
            let compiled = match engine.compile(std::slice::from_ref(&module)) {
                Ok(c) => c,
                Err(e) => panic!("a module that validated does not compile: {e:?}"),
            };
            match compiled.evaluate_json(input) {
                Ok(outcomes) => assert_eq!(outcomes.len(), 1, "{outcomes:?}"),
                Err(e) => panic!("evaluating a validated module failed as a whole: {e:?}"),
            }
        }
    }
}

fn check_diagnostic(source: &str, d: &RegoDiagnostic) {
    let lines: Vec<&str> = source.lines().collect();
    assert!(d.line >= 1 && d.column >= 1, "{d:?}");
    let line = d.line as usize;
    assert!(line <= lines.len() + 1, "line past the end of a {}-line source: {d:?}", lines.len());
    if let Some(text) = lines.get(line - 1) {
        assert!(d.column as usize <= text.chars().count() + 1, "column past the end of {text:?}: {d:?}");
    }
    assert!(!d.message.trim().is_empty(), "{d:?}");
    assert!(!d.message.contains('\n'), "{d:?}");
    assert!(!d.message.contains("policy.rego:"), "{d:?}");
}
