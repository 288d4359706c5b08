//! `cargo xtask anomaly-eval`: how well the anomaly detector finds injected anomalies.
//!
//! For each seed, a seeded generator (`agentgov_detect::anomaly::synth`) makes a history of
//! `--agents` agents' policy checks and guard blocks over `--train-days` then
//! `--test-days`, with `--incidents` anomalies of each kind injected into the test period
//! (and a quarter as many, unlabelled, into the training period). The detector the server
//! uses is trained on the training period as `POST /anomalies/detector/train` trains it
//! (default options, no labels), then scores the test period check by check, as policy
//! checks do. Printed per kind and overall: reports and how many were right, precision,
//! recall, F1 and AUC (see `agentgov_detect::anomaly::eval` for their definitions).
//! Runs in process, in release.

use agentgov_detect::anomaly::synth::{SynthConfig, generate};
use agentgov_detect::anomaly::{TrainOptions, evaluate};

use crate::args::{self, Arg};
use crate::cmd::step;

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut cfg = SynthConfig::default();
    let mut seeds = 3u64;
    let numbers =
        [("--agents", 1), ("--seed", 0), ("--seeds", 1), ("--train-days", 1), ("--test-days", 1), ("--incidents", 1)];
    for arg in args::parse(args, &[], &numbers)? {
        if let Arg::Number { flag, value, .. } = arg {
            match flag {
                "--agents" => cfg.agents = value as usize,
                "--seed" => cfg.seed = value,
                "--seeds" => seeds = value,
                "--train-days" => cfg.train_days = value as i64,
                "--test-days" => cfg.test_days = value as i64,
                _ => {
                    cfg.incidents_per_kind = value as usize;
                    cfg.train_incidents_per_kind = (value as usize).div_ceil(4);
                }
            }
        }
    }
    let options = TrainOptions::default();
    step(&format!(
        "anomaly-eval: {} agents, {} days of training then {} of test, {} incidents of each kind in the test period ({} in training), contamination {}, seeds {}..{}",
        cfg.agents,
        cfg.train_days,
        cfg.test_days,
        cfg.incidents_per_kind,
        cfg.train_incidents_per_kind,
        options.contamination,
        cfg.seed,
        cfg.seed + seeds - 1
    ));
    for seed in cfg.seed..cfg.seed + seeds {
        let history = generate(&SynthConfig { seed, ..cfg });
        println!("\nseed {seed}: {} events\n", history.events.len());
        println!("{}", evaluate(&history, options));
    }
    Ok(())
}
