//! Policy evaluation cost: `cargo bench -p agentgov-policy-rego --bench evaluate`.
//!
//! The five typical policies are the built-in templates with their defaults, evaluated
//! against the input document a policy check builds.

#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;

use agentgov_domain::ports::{PolicyEngine, PolicyInput, PolicyModule};
use agentgov_domain::services::policies::templates;
use agentgov_policy_rego::{Backend, RegoEngine};
use criterion::{Criterion, criterion_group, criterion_main};

const TYPICAL: [&str; 5] = [
    "deny-destructive-production",
    "require-consent-personal-data",
    "approval-above-risk",
    "capability-scope",
    "business-hours",
];

fn typical() -> Vec<PolicyModule> {
    TYPICAL.iter().enumerate().map(|(i, id)| common::module(i, id, &templates::find(id).unwrap().rego())).collect()
}

fn evaluate(c: &mut Criterion) {
    // As in the server, one input value per agent snapshot: its `agent` is converted once.
    let input = PolicyInput::from(common::realistic_input());
    let modules = typical();
    let auto = RegoEngine::new().unwrap();
    let interpreter = RegoEngine::new().unwrap().with_backend(Backend::Interpreter);
    let separate = RegoEngine::new().unwrap().with_backend(Backend::Separate);
    let mut group = c.benchmark_group("evaluate");
    let cases = [
        ("input only (0 policies)", &auto, &modules[..0]),
        ("1 policy", &auto, &modules[..1]),
        ("5 policies", &auto, &modules[..]),
        ("5 policies, separate runs", &separate, &modules[..]),
        ("1 policy, interpreter", &interpreter, &modules[..1]),
        ("5 policies, interpreter", &interpreter, &modules[..]),
    ];
    for (name, engine, modules) in cases {
        let (compiled, counts) = engine.compile_counting(modules);
        eprintln!("{name}: {} of {} on the VM, {} in one run", counts.on_vm, modules.len(), counts.sharing);
        group.bench_function(name, |b| b.iter(|| black_box(compiled.evaluate(black_box(&input)).unwrap())));
    }
    let allowed = PolicyInput::from(common::allowed_input());
    for (name, engine) in [("5 policies, allowed", &auto), ("5 policies, allowed, separate runs", &separate)] {
        let compiled = engine.compile(&modules).unwrap();
        group.bench_function(name, |b| b.iter(|| black_box(compiled.evaluate(black_box(&allowed)).unwrap())));
    }
    for (i, m) in modules.iter().enumerate() {
        let compiled = auto.compile(std::slice::from_ref(m)).unwrap();
        for (case, input) in [("", &input), (", allowed", &allowed)] {
            group.bench_function(format!("policy {i} {}{case}", TYPICAL[i]), |b| {
                b.iter(|| black_box(compiled.evaluate(black_box(input)).unwrap()))
            });
        }
    }
    group.finish();
}

fn engine_clone(c: &mut Criterion) {
    let mut engine = regorus::Engine::new();
    engine.add_policy("p.rego".into(), templates::find("business-hours").unwrap().rego()).unwrap();
    engine.set_input(regorus::Value::new_object());
    engine.eval_rule("data.agentgov.templates.business_hours.deny".into()).unwrap();
    c.bench_function("regorus engine clone (prepared template)", |b| b.iter(|| black_box(engine.clone())));
}

fn compile(c: &mut Criterion) {
    let modules = typical();
    let auto = RegoEngine::new().unwrap();
    c.bench_function("compile 5 policies", |b| b.iter(|| black_box(auto.compile(black_box(&modules)).unwrap())));
    c.bench_function("validate 1 policy", |b| b.iter(|| auto.validate(black_box(&modules[0].rego)).unwrap()));
}

criterion_group!(benches, evaluate, engine_clone, compile);
criterion_main!(benches);
