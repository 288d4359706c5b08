//! `cargo xtask guard-eval [--train TRAIN.jsonl] --eval EVAL.jsonl`: trains the Prompt
//! Guard's detector through the same code path as `POST /guard/detector/train` (from the
//! shipped model, on the built-in corpus plus the given examples; without `--train`, the
//! shipped model itself), then screens every line of EVAL and prints per-class precision,
//! recall and F1, the benign false-positive rate and the screening latency.
//!
//! `--leave-source-out [--fpr 0.02] [--source NAME]…` trains once per attack source (or
//! only the named ones) without it and measures its recall (`guard_train::leave_source_out`); `--rules` reports what the rules alone find;
//! `--cost` times the shipped detector per prompt size and language (`cost`).

use std::path::Path;
use std::time::Instant;

use agentgov_detect::guard::{self, Detector, Example, Label, Screen};
use anyhow::{Context, bail};
use serde_json::Value;

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut train_file = None;
    let mut eval_file = None;
    let mut show_errors = 0usize;
    let mut leave_source_out = false;
    let mut only = Vec::new();
    let mut rules = false;
    let mut cost_only = false;
    let mut fpr = 0.02f32;
    let mut data = crate::guard_data::default_dir();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--train" => train_file = Some(args.next().context("--train needs a file")?.clone()),
            "--eval" => eval_file = Some(args.next().context("--eval needs a file")?.clone()),
            "--leave-source-out" => leave_source_out = true,
            "--source" => only.push(args.next().context("--source needs a source name")?.clone()),
            "--rules" => rules = true,
            "--cost" => cost_only = true,
            "--fpr" => fpr = args.next().and_then(|n| n.parse().ok()).context("--fpr needs a share, e.g. 0.02")?,
            "--data" => data = std::path::PathBuf::from(args.next().context("--data needs a directory")?),
            "--show-errors" => {
                show_errors = args.next().and_then(|n| n.parse().ok()).context("--show-errors needs a number")?
            }
            other => bail!("unexpected argument `{other}` (see `cargo xtask help`)"),
        }
    }
    if rules {
        return crate::guard_train::rules_report(&data);
    }
    if cost_only {
        return cost(&data);
    }
    if leave_source_out {
        return crate::guard_train::leave_source_out(&data, fpr, show_errors, &only);
    }
    let eval_file = eval_file.context("--eval EVAL.jsonl is required")?;
    let eval = read_jsonl(Path::new(&eval_file))?;
    if eval.is_empty() {
        bail!("{eval_file} holds no examples");
    }

    // The service loads both at start-up: the time below is the training's alone.
    let _ = (guard::default_detector(), guard::encoder::shared());
    let started = Instant::now();
    let (detector, trained_on) = match &train_file {
        Some(file) => {
            let extra = read_jsonl(Path::new(file))?;
            let n = extra.len();
            let (examples, added) = guard::training_set(extra);
            // As a tenant's training does.
            let trained = guard::train_tenant(&examples, added, &mut |_| true)?;
            print_metrics("held-out split of the training set", &trained.metrics);
            (trained.detector, format!("the shipped model, the built-in corpus and {n} examples of {file}"))
        }
        None => (guard::default_detector().clone(), "the built-in corpus (the shipped default model)".into()),
    };
    println!("trained on {trained_on} in {:.2}s; threshold {:.4}", started.elapsed().as_secs_f64(), detector.threshold);

    let mut errors = Vec::new();
    let mut pairs = Vec::with_capacity(eval.len());
    let mut scored = Vec::with_capacity(eval.len());
    let mut micros = Vec::with_capacity(eval.len());
    for e in &eval {
        let t = Instant::now();
        let verdict = detector.screen(&Screen { text: &e.text, ..Screen::default() });
        micros.push(t.elapsed().as_secs_f64() * 1e6);
        if (e.label == Label::Benign) != verdict.safe() {
            errors.push((e.label, verdict.score, verdict.reasons.join(" "), e.text.clone()));
        }
        pairs.push((e.label, verdict.label));
        scored.push((e.label, verdict.score));
    }
    let metrics = guard::train::metrics(&pairs, detector.threshold);
    print_metrics(&format!("{eval_file} at the model's threshold"), &metrics);
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| micros[((micros.len() as f64 * q) as usize).min(micros.len() - 1)];
    println!("latency per text: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs", at(0.5), at(0.99), at(1.0));
    for fpr in [0.01, 0.02] {
        let (threshold, recall, actual) = operating_point(&scored, fpr);
        println!(
            "for reference, on {eval_file} itself: at most {:.0}% benign flagged needs threshold {threshold:.4}: attack recall {recall:.4} (benign flagged {:.2}%)",
            fpr * 100.0,
            actual * 100.0
        );
    }
    print_2kb_latency(&detector);
    errors.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (label, score, reasons, text) in errors.iter().take(show_errors) {
        let text: String = text.chars().take(300).collect::<String>().replace('\n', " ");
        println!("\n[{} {score:.3} {reasons}] {text}", label.as_str());
    }
    Ok(())
}

fn read_jsonl(path: &Path) -> anyhow::Result<Vec<Example>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).with_context(|| format!("{}:{}: not JSON", path.display(), n + 1))?;
        let text = v["text"].as_str().with_context(|| format!("{}:{}: no text", path.display(), n + 1))?;
        let label = v["label"].as_str().and_then(Label::parse).with_context(|| {
            format!("{}:{}: label must be benign, injection, jailbreak or leakage", path.display(), n + 1)
        })?;
        out.push(Example::new(text, label));
    }
    Ok(out)
}

fn print_metrics(title: &str, m: &guard::Metrics) {
    println!("\n{title}: {} texts, threshold {:.4}", m.size, m.threshold);
    println!("  {:<10} {:>9} {:>7} {:>7} {:>8}", "class", "precision", "recall", "F1", "support");
    for c in &m.classes {
        println!("  {:<10} {:>9.4} {:>7.4} {:>7.4} {:>8}", c.label.as_str(), c.precision, c.recall, c.f1, c.support);
    }
    println!(
        "  attack recall (any kind flagged) {:.4}; benign false-positive rate {:.4} (as injection {:.4}, jailbreak {:.4}, leakage {:.4})",
        m.attack_recall,
        m.false_positive_rate,
        m.false_positive_rates[0],
        m.false_positive_rates[1],
        m.false_positive_rates[2]
    );
}

/// The lowest threshold flagging at most `fpr` of the benign texts, the attack recall there,
/// and the share of benign texts actually flagged.
fn operating_point(scored: &[(Label, f32)], fpr: f32) -> (f32, f32, f32) {
    let threshold = guard::train::calibrate(scored.iter().copied(), fpr);
    let share = |benign: bool| {
        let of: Vec<f32> = scored.iter().filter(|(l, _)| (*l == Label::Benign) == benign).map(|(_, s)| *s).collect();
        of.iter().filter(|s| **s >= threshold).count() as f32 / of.len().max(1) as f32
    };
    (threshold, share(false), share(true))
}

/// Screens a 2 KB prompt many times: the in-process latency the issue asks about.
const ENGLISH_PROSE: &str = "Please review the attached quarterly report and summarise the main risks for the \
                             finance team, including currency exposure, supplier delays and the open audit items. ";
const TURKISH_PROSE: &str = "Lütfen ekteki üç aylık raporu inceleyin ve finans ekibi için döviz riski, tedarikçi \
                             gecikmeleri ve açık denetim maddeleri dahil olmak üzere başlıca riskleri özetleyin. ";

/// `paragraph` repeated to `bytes` (cut at a character boundary).
fn sized(paragraph: &str, bytes: usize) -> String {
    let mut text = paragraph.repeat(bytes / paragraph.len() + 1);
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

/// p50 and p99 of screening `text` `runs` times, in µs.
fn percentiles(detector: &Detector, text: &str, runs: usize) -> (f64, f64) {
    let mut micros = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(detector.screen(&Screen { text, ..Screen::default() }));
        micros.push(t.elapsed().as_secs_f64() * 1e6);
    }
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| micros[((micros.len() as f64 * q) as usize).min(micros.len() - 1)];
    (at(0.5), at(0.99))
}

fn print_2kb_latency(detector: &Detector) {
    let (p50, p99) = percentiles(detector, &sized(ENGLISH_PROSE, 2048), 2000);
    println!(
        "2 KB prompt, 2,000 screens (dev build of xtask with the detector at opt-level 3): p50 {p50:.1} µs, p99 {p99:.1} µs"
    );
}

/// `guard-eval --cost`: the shipped detector's screening time per prompt size, in English
/// (rules and n-gram stage) and in Turkish (the encoder stage too), and the share of a
/// realistic mix of prompts (the public data's dev, benign hard negatives and multilingual
/// sets, and the hand-written system prompts) that reaches the encoder, with the mean time
/// over that mix.
pub fn cost(data: &Path) -> anyhow::Result<()> {
    let detector = guard::default_detector();
    let encoder = guard::encoder::shared();
    println!(
        "encoder stage: {}",
        match guard::encoder::shared_error() {
            None => "on".to_string(),
            Some(why) => format!("off ({why})"),
        }
    );
    // The encoder loads on first use; that is start-up, not screening.
    let _ = encoder.map(|e| e.embed("warm up", 8));
    println!("{:<10} {:>8} {:>9} {:>9} {:>8}", "language", "bytes", "p50 µs", "p99 µs", "runs");
    for (language, paragraph) in [("English", ENGLISH_PROSE), ("Turkish", TURKISH_PROSE)] {
        for bytes in [115, 2048, 32 * 1024] {
            let text = sized(paragraph, bytes);
            let runs = match (language, bytes) {
                ("English", b) if b <= 2048 => 2000,
                ("English", _) => 300,
                _ => 200,
            };
            let (p50, p99) = percentiles(detector, &text, runs);
            println!("{language:<10} {:>8} {p50:>9.1} {p99:>9.1} {runs:>8}", text.len());
        }
    }
    let rows = crate::guard_data::load(data)?;
    let mix: Vec<&crate::guard_data::Row> = rows
        .iter()
        .filter(|r| {
            r.file == "dev.jsonl"
                || r.file == "extra/benign_hard.jsonl"
                || r.file == "extra/multilingual_eval.jsonl"
                || r.file == crate::guard_data::HANDWRITTEN
        })
        .collect();
    let (mut encoded, mut total, mut micros) = (0usize, 0f64, Vec::with_capacity(mix.len()));
    for r in &mix {
        let t = Instant::now();
        let v = detector.screen(&Screen { text: &r.example.text, ..Screen::default() });
        let us = t.elapsed().as_secs_f64() * 1e6;
        total += us;
        micros.push(us);
        encoded += usize::from(v.encoded);
    }
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| micros[((micros.len() as f64 * q) as usize).min(micros.len() - 1)];
    println!(
        "mix of {} prompts (dev, benign_hard, multilingual_eval, hand-written system prompts): {} ({:.1}%) reached the encoder; mean {:.0} µs, p50 {:.0} µs, p99 {:.0} µs per prompt",
        mix.len(),
        encoded,
        100.0 * encoded as f64 / mix.len().max(1) as f64,
        total / mix.len().max(1) as f64,
        at(0.5),
        at(0.99)
    );
    Ok(())
}
