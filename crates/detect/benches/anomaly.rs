//! Anomaly scoring cost per policy check, in process:
//! `cargo bench -p agentgov-detect --bench anomaly`.
//!
//! A detector trained on the synthetic history `cargo xtask anomaly-eval` uses (40 agents,
//! 14 days) scores a usual check of a busy agent with warm windows, a check with a new
//! action, and one of an agent it has no baseline for. After criterion's figures, the
//! 50th, 99th and 99.9th percentiles of 200,000 timed scores of usual checks are printed
//! (the bound is 100 µs at the 99th).

#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::hint::black_box;
use std::time::Instant;

use agentgov_detect::anomaly::synth::{SynthConfig, generate};
use agentgov_detect::anomaly::{Observed, Recent, TrainOptions, train};
use criterion::{Criterion, criterion_group, criterion_main};

fn score(c: &mut Criterion) {
    let history = generate(&SynthConfig { test_days: 0, incidents_per_kind: 0, ..SynthConfig::default() });
    let events: Vec<_> = history.events.iter().map(|e| e.event()).collect();
    let detector = train(&events, &[], TrainOptions::default()).detector;
    let busiest = history.events.iter().rev().find(|e| !e.guard).unwrap();
    let (agent, at) = (busiest.agent, busiest.at);
    let usual = Observed::Check { action: &busiest.action, resource: &busiest.resource, denied: false, risk: 0.2 };
    let new = Observed::Check { action: "drop_everything", resource: &busiest.resource, denied: false, risk: 0.2 };
    let mut recent = Recent::default();
    for i in 0..30 {
        detector.score(&mut recent, agent, at + i, usual);
    }

    let mut group = c.benchmark_group("anomaly score");
    let mut t = at + 60;
    group.bench_function("usual check, warm windows", |b| {
        b.iter(|| {
            t += 1;
            detector.score(black_box(&mut recent), agent, t, black_box(usual))
        })
    });
    group.bench_function("new action", |b| {
        b.iter(|| {
            t += 1;
            detector.score(black_box(&mut recent), agent, t, black_box(new))
        })
    });
    let mut stranger = Recent::default();
    group.bench_function("agent without a baseline", |b| {
        b.iter(|| {
            t += 1;
            detector.score(black_box(&mut stranger), 7, t, black_box(usual))
        })
    });
    group.finish();

    let mut times: Vec<u128> = (0..200_000)
        .map(|_| {
            t += 1;
            let started = Instant::now();
            black_box(detector.score(&mut recent, agent, t, usual));
            started.elapsed().as_nanos()
        })
        .collect();
    times.sort_unstable();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!("anomaly score, usual check: p50 {} ns, p99 {} ns, p99.9 {} ns", at(0.5), at(0.99), at(0.999));
}

criterion_group!(benches, score);
criterion_main!(benches);
