//! `cargo xtask guard-train [--data DIR] [--check]`: fits the Prompt Guard's shipped model
//! from the public data in `../shared/data/guard` (see `guard_data` for the splits) with
//! the multilingual encoder installed (`cargo xtask guard-models`), and writes it to
//! `crates/detect/models/guard-builtin.bin` with its description (`guard-builtin.json`:
//! data files and their sha256, calibration set, thresholds, held-out metrics). The same
//! data and weights give the same bytes. `--check` fails when the committed files differ
//! from a fresh fit instead of writing them.

use std::path::PathBuf;
use std::time::Instant;

use agentgov_detect::guard::encoder::{self, Encoder};
use agentgov_detect::guard::{self, Example, Label, TrainFrom, TrainOptions};
use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

use crate::guard_data::{self, EmbeddingCache, Row};

/// Share of benign calibration texts the shipped thresholds may flag.
pub const TARGET_FPR: f32 = 0.02;

pub fn options() -> TrainOptions {
    TrainOptions { holdout: 0.1, target_fpr: TARGET_FPR, ..TrainOptions::default() }
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut dir = guard_data::default_dir();
    let mut check = false;
    let mut dump = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--data" => dir = PathBuf::from(args.next().context("--data needs a directory")?),
            "--check" => check = true,
            "--dump" => dump = Some(PathBuf::from(args.next().context("--dump needs a file")?)),
            other => bail!("unexpected argument `{other}` (see `cargo xtask help`)"),
        }
    }
    let rows = guard_data::load(&dir)?;
    let encoder = load_encoder()?;
    let mut cache = EmbeddingCache::open(&encoder);
    let started = Instant::now();
    let fit: Vec<&Row> = rows.iter().filter(|r| r.is_fit()).collect();
    let calibration: Vec<Example> = rows.iter().filter(|r| r.is_calibration()).map(|r| r.example.clone()).collect();
    let trained = fit_with_cache(&fit, &calibration, &options(), &mut cache)?;
    cache.save()?;
    println!(
        "fitted on {} examples ({} held out) in {:.1}s; thresholds: {:.4}, encoder path {:.4} (mapped onto it)",
        trained.fitted,
        trained.metrics.size,
        started.elapsed().as_secs_f64(),
        trained.detector.threshold,
        trained.detector.cascade.as_ref().map_or(f32::NAN, |c| c.threshold),
    );
    let bytes = trained.detector.to_bytes();
    let mut files = Vec::new();
    for file in guard_data::FILES {
        let data = std::fs::read(dir.join(file))?;
        files.push(serde_json::json!({"file": file, "sha256": hex::encode(Sha256::digest(&data))}));
    }
    let m = &trained.metrics;
    let description = serde_json::json!({
        "model": guard::BUILTIN_MODEL,
        "encoder": encoder::NAME,
        "data": files,
        "fitted": trained.fitted,
        "calibration": {
            "set": "held-out half of extra/benign_hard.jsonl (system prompts, role prompts, NotInject), never fitted",
            "size": calibration.len(),
            "target_false_positive_rate": round4(TARGET_FPR),
        },
        "thresholds": {
            "threshold": round4(trained.detector.threshold),
            "encoder_path": trained.detector.cascade.as_ref().map(|c| round4(c.threshold)),
        },
        "held_out": {
            "size": m.size,
            "threshold": round4(m.threshold),
            "attack_recall": round4(m.attack_recall),
            "false_positive_rate": round4(m.false_positive_rate),
            "false_positive_rates": m.false_positive_rates.map(round4),
            "classes": m.classes.iter().map(|c| serde_json::json!({
                "label": c.label.as_str(), "precision": round4(c.precision), "recall": round4(c.recall),
                "f1": round4(c.f1), "support": c.support,
            })).collect::<Vec<_>>(),
        },
    });
    let json = format!("{}\n", serde_json::to_string_pretty(&description)?);
    let models = crate::cmd::root().join("crates/detect/models");
    let (bin_path, json_path) = (models.join("guard-builtin.bin"), models.join("guard-builtin.json"));
    if check {
        if std::fs::read(&bin_path).ok().as_deref() != Some(&bytes[..])
            || std::fs::read_to_string(&json_path).ok().as_deref() != Some(&json[..])
        {
            bail!("the committed model differs from a fresh fit: run `cargo xtask guard-train`");
        }
        println!("the committed model is what the data gives");
        return Ok(());
    }
    std::fs::create_dir_all(&models)?;
    std::fs::write(&bin_path, &bytes)?;
    std::fs::write(&json_path, json)?;
    println!("wrote {} ({} bytes) and {}", bin_path.display(), bytes.len(), json_path.display());
    report(&trained.detector, &rows, &mut cache);
    if let Some(path) = dump {
        dump_stages(&trained.detector, &rows, &mut cache, &path)?;
    }
    cache.save()?;
    Ok(())
}

fn round4(v: f32) -> f64 {
    (f64::from(v) * 10_000.0).round() / 10_000.0
}

pub fn load_encoder() -> anyhow::Result<Encoder> {
    let dir = encoder::default_dir();
    let dir = if dir.is_relative() { crate::cmd::root().join(dir) } else { dir };
    Encoder::load(&dir).with_context(|| format!("the encoder is needed (cargo xtask guard-models); {}", dir.display()))
}

/// `train_from` with the cache as the encoder, its likely windows embedded beforehand on
/// both cores.
pub fn fit_with_cache(
    fit: &[&Row],
    calibration: &[Example],
    options: &TrainOptions,
    cache: &mut EmbeddingCache<'_>,
) -> anyhow::Result<guard::Trained> {
    let firsts: Vec<&str> = fit
        .iter()
        .map(|r| &r.example)
        .chain(calibration)
        .map(|e| guard::detector::encoder_window(&e.text, 0))
        .collect();
    cache.warm(&firsts);
    // The project's own system prompts teach the n-gram stage only (`TrainFrom::ngram_only`).
    let (generated, fit): (Vec<&Row>, Vec<&Row>) = fit.iter().partition(|r| r.file == guard_data::GENERATED);
    let examples: Vec<Example> = fit.iter().map(|r| r.example.clone()).collect();
    let ngram_only: Vec<Example> = generated.iter().map(|r| r.example.clone()).collect();
    let mut embed = |text: &str| Some(cache.embed(text));
    let from = TrainFrom {
        start: None,
        calibration,
        embed: Some(&mut embed),
        ngram_only: &ngram_only,
        ..TrainFrom::default()
    };
    Ok(guard::train_from(&examples, options, from, &mut |_| true)?)
}

/// Dev and multilingual figures of a detector at its thresholds.
pub fn report(detector: &guard::Detector, rows: &[Row], cache: &mut EmbeddingCache<'_>) {
    let texts: Vec<&str> =
        rows.iter().filter(|r| !r.is_fit()).map(|r| guard::detector::encoder_window(&r.example.text, 0)).collect();
    cache.warm(&texts);
    for (name, with_encoder) in [("n-gram stage and rules", false), ("with the encoder", true)] {
        let mut embed = |text: &str| Some(cache.embed(text));
        let mut off = |_: &str| None;
        let threshold = detector.threshold;
        let embed: &mut dyn FnMut(&str) -> Option<[f32; encoder::DIM]> =
            if with_encoder { &mut embed } else { &mut off };
        let mut flagged = |pick: &dyn Fn(&Row) -> bool| {
            let chosen: Vec<&Row> = rows.iter().filter(|r| pick(r)).collect();
            let hit = chosen
                .iter()
                .filter(|r| {
                    !detector
                        .screen_with(
                            &guard::Screen { text: &r.example.text, ..guard::Screen::default() },
                            threshold,
                            embed,
                        )
                        .safe()
                })
                .count();
            (hit, chosen.len())
        };
        let share = |(a, b): (usize, usize)| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let dev_attacks = flagged(&|r| r.file == "dev.jsonl" && r.example.label != Label::Benign);
        let dev_benign = flagged(&|r| r.file == "dev.jsonl" && r.example.label == Label::Benign);
        let calibration = flagged(&|r| r.is_calibration());
        let multi = flagged(&|r| r.file == "extra/multilingual_eval.jsonl");
        let handwritten = flagged(&|r| r.file == guard_data::HANDWRITTEN);
        if with_encoder {
            let mut languages: Vec<(String, usize, usize, usize)> = Vec::new();
            for r in rows.iter().filter(|r| r.file == "extra/multilingual_eval.jsonl") {
                let v = detector.screen_with(
                    &guard::Screen { text: &r.example.text, ..guard::Screen::default() },
                    threshold,
                    embed,
                );
                let language = r.language.clone().unwrap_or_else(|| "?".into());
                let at = match languages.iter().position(|l| l.0 == language) {
                    Some(at) => at,
                    None => {
                        languages.push((language, 0, 0, 0));
                        languages.len() - 1
                    }
                };
                languages[at].1 += 1;
                languages[at].2 += usize::from(!v.safe());
                languages[at].3 += usize::from(v.encoded);
            }
            let shown: Vec<String> =
                languages.iter().map(|(l, n, hit, enc)| format!("{l} {hit}/{n} (encoder read {enc})")).collect();
            println!("multilingual recall per language: {}", shown.join(", "));
        }
        println!(
            "{name} (threshold {threshold:.4}): dev attack recall {:.4} ({}/{}), dev benign flagged {:.4} ({}/{}), calibration benign flagged {:.4}, hand-written system prompts flagged {}/{}, multilingual recall {:.4} ({}/{})",
            share(dev_attacks),
            dev_attacks.0,
            dev_attacks.1,
            share(dev_benign),
            dev_benign.0,
            dev_benign.1,
            share(calibration),
            handwritten.0,
            handwritten.1,
            share(multi),
            multi.0,
            multi.1
        );
    }
}

/// Each row's stage outputs as JSON lines (to study how the stages combine).
fn dump_stages(
    detector: &guard::Detector,
    rows: &[Row],
    cache: &mut EmbeddingCache<'_>,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    let mut out = String::new();
    for r in rows {
        let mut embed = |text: &str| Some(cache.embed(text));
        let screen = guard::Screen { text: &r.example.text, ..guard::Screen::default() };
        let s = detector.stages(&screen, &mut embed);
        let all = detector.screen_with(&screen, 0.5, &mut embed).score;
        let first = detector.screen_with(&screen, 0.5, &mut |_: &str| None).score;
        out.push_str(
            &serde_json::json!({
                "file": r.file, "source": r.source, "label": r.example.label.as_str(), "language": r.language,
                "fit": r.is_fit(), "calibration": r.is_calibration(), "ngram": s.ngram, "ngram_attack": s.ngram_attack,
                "rules": s.rules, "encoder": s.encoder, "first": first, "all": all,
            })
            .to_string(),
        );
        out.push('\n');
    }
    std::fs::write(path, out)?;
    Ok(())
}

/// `guard-eval --leave-source-out`: for each attack source with at least `MIN_ROWS` rows,
/// fits the shipped recipe on every fit and dev row except that source's, calibrates at
/// `fpr` of the held-out benign hard negatives, and measures the source's recall.
pub fn leave_source_out(dir: &std::path::Path, fpr: f32, show_errors: usize, only: &[String]) -> anyhow::Result<()> {
    const MIN_ROWS: usize = 10;
    let rows = guard_data::load(dir)?;
    let encoder = load_encoder()?;
    let mut cache = EmbeddingCache::open(&encoder);
    let calibration: Vec<Example> = rows.iter().filter(|r| r.is_calibration()).map(|r| r.example.clone()).collect();
    let pool: Vec<&Row> = rows.iter().filter(|r| r.is_fit() || r.file == "dev.jsonl").collect();
    let mut sources: Vec<(String, usize)> = Vec::new();
    for r in pool.iter().filter(|r| r.example.label != Label::Benign) {
        match sources.iter_mut().find(|(s, _)| *s == r.source) {
            Some((_, n)) => *n += 1,
            None => sources.push((r.source.clone(), 1)),
        }
    }
    sources.retain(|(_, n)| *n >= MIN_ROWS);
    if let Some(unknown) = only.iter().find(|o| !sources.iter().any(|(s, _)| s == *o)) {
        let known: Vec<&str> = sources.iter().map(|(s, _)| s.as_str()).collect();
        anyhow::bail!("no attack source `{unknown}` of at least {MIN_ROWS} rows; the sources: {}", known.join(", "));
    }
    sources.retain(|(s, _)| only.is_empty() || only.contains(s));
    sources.sort();
    let options = TrainOptions { target_fpr: fpr, ..options() };
    println!(
        "leave-source-out: {} attack sources of at least {MIN_ROWS} rows; thresholds flag at most {:.0}% of the {} held-out benign hard negatives",
        sources.len(),
        fpr * 100.0,
        calibration.len()
    );
    println!("{:<28} {:>6} {:>10} {:>10} {:>10}", "held-out source", "rows", "n-gram", "encoder", "threshold");
    let mut recalls = [Vec::new(), Vec::new()];
    for (source, _) in &sources {
        let fit: Vec<&Row> = pool.iter().copied().filter(|r| &r.source != source).collect();
        let trained = fit_with_cache(&fit, &calibration, &options, &mut cache)?;
        let held: Vec<&Row> =
            pool.iter().copied().filter(|r| &r.source == source && r.example.label != Label::Benign).collect();
        let d = &trained.detector;
        let mut share = |with_encoder: bool| {
            let threshold = d.threshold;
            let hit = held
                .iter()
                .filter(|r| {
                    let screen = guard::Screen { text: &r.example.text, ..guard::Screen::default() };
                    let v = if with_encoder {
                        d.screen_with(&screen, threshold, &mut |t: &str| Some(cache.embed(t)))
                    } else {
                        d.screen_with(&screen, threshold, &mut |_: &str| None)
                    };
                    !v.safe()
                })
                .count();
            hit as f32 / held.len().max(1) as f32
        };
        let (a, b) = (share(false), share(true));
        recalls[0].push(a);
        recalls[1].push(b);
        println!("{source:<28} {:>6} {a:>10.3} {b:>10.3} {:>10.4}", held.len(), d.threshold);
        for r in held.iter().take(show_errors * 4) {
            let screen = guard::Screen { text: &r.example.text, ..guard::Screen::default() };
            let v = d.screen_with(&screen, d.threshold, &mut |t: &str| Some(cache.embed(t)));
            if v.safe() {
                // The whole text when one source is looked at, its start otherwise.
                let text: String =
                    r.example.text.chars().take(if only.is_empty() { 300 } else { usize::MAX }).collect();
                println!("    missed {:.3} [{}] {text:?}", v.score, v.reasons.join(" "));
            }
        }
        cache.save()?;
    }
    for (name, r) in ["n-gram stage and rules", "with the encoder"].iter().zip(&recalls) {
        let avg = r.iter().sum::<f32>() / r.len().max(1) as f32;
        let min = r.iter().copied().fold(1.0f32, f32::min);
        let ok = r.iter().filter(|v| **v >= 0.8).count();
        println!("{name}: average recall {avg:.3}, lowest {min:.3}, {ok} of {} sources at 0.80 or more", r.len());
    }
    Ok(())
}

/// `guard-eval --rules`: how often each curated rule matches benign and attack rows of the
/// data (a rule's weight should be above the threshold only when it spares benign text).
pub fn rules_report(dir: &std::path::Path) -> anyhow::Result<()> {
    let rows = guard_data::load(dir)?;
    let mut hits: Vec<(&str, usize, usize)> = guard::rules::RULES.iter().map(|r| (r.name, 0, 0)).collect();
    let benign = rows.iter().filter(|r| r.example.label == Label::Benign).count();
    for r in &rows {
        let text = guard::normalize::normalize(&r.example.text).text;
        for rule in guard::rules::matches(&text) {
            if let Some(h) = hits.iter_mut().find(|h| h.0 == rule.name) {
                if r.example.label == Label::Benign {
                    h.1 += 1;
                } else {
                    h.2 += 1;
                }
            }
        }
    }
    println!("{:<30} {:>6} {:>8} {:>8}", "rule", "weight", "benign", "attacks");
    for (name, b, a) in hits {
        let weight = guard::rules::RULES.iter().find(|r| r.name == name).map_or(0.0, |r| r.weight);
        println!("{name:<30} {weight:>6.2} {b:>8} {a:>8}");
    }
    println!("({benign} benign rows, {} attack rows)", rows.len() - benign);
    Ok(())
}
