//! Several policies in one compiled set: each evaluated as if alone.
#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

mod common;

use std::sync::Arc;

use agentgov_domain::ports::PolicyEngine;
use agentgov_domain::services::policies::templates::TEMPLATES;
use agentgov_policy_rego::{Backend, RegoEngine};
use serde_json::json;

use common::{module, policy_id, realistic_input};

fn instance(allowed: &str) -> String {
    format!(
        "package agentgov.templates.allow_list\n\nparams := {{\"allowed\": [\"{allowed}\"]}}\n\n\
         deny contains sprintf(\"%s is not %s\", [input.action, params.allowed[0]]) if not input.action in params.allowed\n"
    )
}

#[test]
fn policies_sharing_a_package_are_evaluated_apart() {
    let engine = RegoEngine::new().unwrap();
    let compiled = engine.compile(&[module(1, "a", &instance("read")), module(2, "b", &instance("delete"))]).unwrap();
    let outcomes = compiled.evaluate_json(&json!({"action": "delete"})).unwrap();
    assert_eq!(outcomes.len(), 2);
    assert_eq!(outcomes[0].policy, Some(policy_id(1)));
    assert_eq!(outcomes[0].deny, ["delete is not read"]);
    assert_eq!(outcomes[1].policy, Some(policy_id(2)));
    assert!(outcomes[1].deny.is_empty() && outcomes[1].error.is_none(), "{:?}", outcomes[1]);
}

#[test]
fn one_failing_policy_does_not_affect_the_others() {
    let conflict = "package shared\nrisk_adjustment := 1 if input.a\nrisk_adjustment := 2 if input.a\n";
    let deny = "package shared\ndeny contains \"denied\" if input.a\n";
    let broken = "package shared\ndeny contains \"x\" if {\n";
    let engine = RegoEngine::new().unwrap();
    let compiled = engine
        .compile(&[module(1, "conflict", conflict), module(2, "deny", deny), module(3, "broken", broken)])
        .unwrap();
    let outcomes = compiled.evaluate_json(&json!({"a": true})).unwrap();
    let ids: Vec<_> = outcomes.iter().map(|o| o.policy).collect();
    assert_eq!(ids, [Some(policy_id(1)), Some(policy_id(2)), Some(policy_id(3))]);
    let error = outcomes[0].error.as_deref().unwrap();
    assert!(error.contains("conflict") && error.contains("line 3"), "{error}");
    assert!(!error.contains("policy.rego") && !error.contains('\n'), "{error}");
    assert_eq!(outcomes[1].deny, ["denied"]);
    assert!(outcomes[1].error.is_none());
    assert!(outcomes[2].error.as_deref().unwrap().starts_with("the policy does not compile"), "{:?}", outcomes[2]);
}

#[test]
fn a_runaway_policy_fails_instead_of_hanging() {
    let engine = RegoEngine::new().unwrap();
    let slow = "package t\nxs := numbers.range(1, 5000)\ndeny contains \"never\" if { some a in xs; some b in xs; a == b + 10000 }\n";
    // The same on the interpreter (`with` keeps it off the VM).
    let interpreted = format!("{slow}require_approval if deny with input.x as 1\n");
    let compiled = engine.compile(&[module(1, "vm", slow), module(2, "interpreter", &interpreted)]).unwrap();
    let started = std::time::Instant::now();
    for outcome in compiled.evaluate_json(&json!({})).unwrap() {
        assert!(outcome.error.as_deref().is_some_and(|e| e.contains("limit")), "{outcome:?}");
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn compiled_sets_are_shared_across_threads_and_reused() {
    let engine = RegoEngine::new().unwrap();
    let rego = "package t\ndeny contains sprintf(\"%s on %s\", [input.action, input.resource]) if startswith(input.resource, \"prod/\")\n";
    let compiled = engine.compile(&[module(1, "p", rego)]).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let compiled = Arc::clone(&compiled);
            std::thread::spawn(move || {
                for i in 0..200 {
                    let prod = (i + t) % 2 == 0;
                    let resource = if prod { format!("prod/{i}") } else { format!("dev/{i}") };
                    let outcome =
                        compiled.evaluate_json(&json!({"action": "read", "resource": resource})).unwrap().remove(0);
                    let expected = if prod { vec![format!("read on {resource}")] } else { vec![] };
                    assert_eq!(outcome.deny, expected);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn every_template_validates_and_evaluates() {
    let engine = RegoEngine::new().unwrap();
    let input = realistic_input();
    for (i, t) in TEMPLATES.iter().enumerate() {
        let rego = t.rego();
        engine.validate(&rego).unwrap_or_else(|d| panic!("{}: {d:?}", t.id));
        let (compiled, counts) = engine.compile_counting(&[module(i, t.id, &rego)]);
        let outcome = compiled.evaluate_json(&input).unwrap().remove(0);
        assert!(outcome.error.is_none(), "{}: {outcome:?}", t.id);
        println!("{}: vm={} {outcome:?}", t.id, counts.on_vm);
    }
}

/// Every template with its defaults, in one shared run, decides as the templates run apart,
/// on a check they allow and on one they deny.
#[test]
fn templates_in_one_shared_run_decide_as_apart() {
    let modules: Vec<_> = TEMPLATES.iter().enumerate().map(|(i, t)| module(i, t.id, &t.rego())).collect();
    let (shared, counts) = RegoEngine::new().unwrap().compile_counting(&modules);
    assert_eq!(counts.sharing, TEMPLATES.len(), "{counts:?}");
    let apart = RegoEngine::new().unwrap().with_backend(Backend::Separate).compile(&modules).unwrap();
    for input in [realistic_input(), common::allowed_input()] {
        let (a, b) = (shared.evaluate_json(&input).unwrap(), apart.evaluate_json(&input).unwrap());
        assert_eq!(a, b);
        assert!(a.iter().all(|o| o.error.is_none()), "{a:?}");
    }
    assert!(shared.evaluate_json(&realistic_input()).unwrap().iter().any(|o| !o.deny.is_empty()));
}

/// Modules that refer to `data`, or whose package is another's or inside it, run apart.
#[test]
fn only_modules_blind_to_each_other_share_a_run() {
    let engine = RegoEngine::new().unwrap();
    let sharing = |regos: &[&str]| {
        let modules: Vec<_> = regos.iter().enumerate().map(|(i, r)| module(i, "p", r)).collect();
        engine.compile_counting(&modules).1.sharing
    };
    let a = "package a\ndeny contains \"a\" if input.a\n";
    let b = "package b\ndeny contains \"b\" if input.b\n";
    assert_eq!(sharing(&[a, b]), 2);
    assert_eq!(sharing(&[a, b, "package c\nx := data.a.deny\ndeny contains \"c\" if x\n"]), 2);
    assert_eq!(sharing(&[a, b, "package c\nimport data.b\ndeny contains \"c\" if b.deny\n"]), 2);
    assert_eq!(sharing(&[a, b, "package c\ndeny contains \"c\" if data.c.x\nx := true\n"]), 2);
    assert_eq!(sharing(&[a, a]), 0);
    assert_eq!(sharing(&[a, "package a.b\ndeny contains \"ab\" if true\n", b]), 2);
    assert_eq!(sharing(&[a]), 0);
}

/// A shared run that fails (here a runaway module) falls back to separate runs: each module
/// reports its own outcome, the fault against its own policy only.
#[test]
fn a_failing_shared_run_falls_back_to_separate_runs() {
    let engine = RegoEngine::new().unwrap();
    let slow = "package slow\nxs := numbers.range(1, 5000)\ndeny contains \"never\" if { some a in xs; some b in xs; a == b + 10000 }\n";
    let deny = "package fine\ndeny contains \"denied\" if input.a\n";
    let (compiled, counts) = engine.compile_counting(&[module(1, "slow", slow), module(2, "fine", deny)]);
    assert_eq!(counts.sharing, 2);
    for _ in 0..2 {
        let outcomes = compiled.evaluate_json(&json!({"a": true})).unwrap();
        assert!(outcomes[0].error.as_deref().is_some_and(|e| e.contains("limit")), "{outcomes:?}");
        assert_eq!(
            (outcomes[1].deny.as_slice(), outcomes[1].error.as_deref()),
            (["denied".to_owned()].as_slice(), None)
        );
    }
}
