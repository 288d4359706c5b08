//! `cargo xtask fuzz [--seconds N] [--target NAME] [--asan]`: runs the cargo-fuzz targets of
//! `fuzz/` (the parsers that read untrusted input) for N seconds each (default 60) and prints,
//! per target, the runs executed, libFuzzer's coverage and features, and whether it crashed,
//! with the saved input. Fails if any target crashed.
//!
//! cargo-fuzz is not installed silently: without it this fails with the install command.
//! The stable toolchain runs it: libFuzzer's coverage instrumentation is stable `-C` flags
//! (`--sanitizer none`). `--asan` adds AddressSanitizer, whose `-Zsanitizer=address` the
//! stable compiler accepts under `RUSTC_BOOTSTRAP=1` (set for that build only; the runtime
//! ships in the stable toolchain's rustlib). Builds have debug assertions and overflow
//! checks on, and go to their own target directory (`AGENTGOV_FUZZ_TARGET_DIR`, default
//! /var/tmp/agentgov-fuzz-target; `asan/` inside it for --asan): an instrumented build must
//! not invalidate the main one, nor the two kinds each other. The targets are built once and
//! their binaries run directly, so all test the same build. Each run's corpus grows in
//! fuzz/corpus/<target> (ignored by git) from the committed seeds in fuzz/seeds/<target>;
//! crashes are saved in fuzz/artifacts/<target>; libFuzzer's whole output goes to
//! <target dir>/fuzz-logs/<target>.log.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::args::{self, Arg};
use crate::cmd;

/// Every target in fuzz/Cargo.toml, in the order they run.
const TARGETS: [&str; 7] = [
    "webhook_envelope",
    "webhook_signature",
    "rego_validate",
    "guard_normalize",
    "guard_decode",
    "guard_screen",
    "export_encode",
];

const DEFAULT_SECONDS: u64 = 60;
/// The triple cargo-fuzz builds for (its default, the host's).
const TRIPLE: &str = "x86_64-unknown-linux-gnu";
/// The Rego target's worker stack under ASan, whose frames are larger (2 MiB without).
const ASAN_STACK_KIB: &str = "6144";
const DEFAULT_TARGET_DIR: &str = "/var/tmp/agentgov-fuzz-target";
/// A single input running longer than this is reported as a hang (libFuzzer's `-timeout`).
const INPUT_TIMEOUT_SECONDS: u64 = 20;

/// What libFuzzer reported about one run.
#[derive(Debug, Default, PartialEq)]
struct Report {
    runs: Option<u64>,
    cov: Option<u64>,
    ft: Option<u64>,
    corpus: Option<String>,
    exec_per_sec: Option<u64>,
    /// The saved input of a crash, leak or timeout.
    artifact: Option<String>,
    /// libFuzzer's or the panic's first line about it.
    failure: Option<String>,
}

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let (target, rest) = take_target(args)?;
    let mut seconds = DEFAULT_SECONDS;
    let mut sanitizer = "none";
    for arg in args::parse(&rest, &["--asan"], &[("--seconds", 1)])? {
        match arg {
            Arg::Number { flag: "--seconds", value, .. } => seconds = value,
            Arg::Switch("--asan") => sanitizer = "address",
            other => bail!("unexpected argument {other:?}"),
        }
    }
    let targets: Vec<&str> = match target.as_deref() {
        None => TARGETS.to_vec(),
        Some(name) => match TARGETS.iter().find(|t| **t == name) {
            Some(t) => vec![*t],
            None => bail!("unknown fuzz target `{name}`; the targets are {}", TARGETS.join(", ")),
        },
    };
    if !cargo_fuzz_installed() {
        bail!(
            "cargo-fuzz is not installed; install it with `cargo install cargo-fuzz --locked` (a few minutes), then rerun"
        );
    }
    let root = cmd::root();
    let mut target_dir =
        std::env::var_os("AGENTGOV_FUZZ_TARGET_DIR").map_or_else(|| PathBuf::from(DEFAULT_TARGET_DIR), PathBuf::from);
    if sanitizer != "none" {
        target_dir.push("asan");
    }
    let logs = target_dir.join("fuzz-logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;

    cmd::step(&format!("building {} fuzz target(s) (sanitizer: {sanitizer})", targets.len()));
    let mut build = fuzz_command(&target_dir, sanitizer);
    build.args(["build", "--sanitizer", sanitizer, "--debug-assertions", "--target", TRIPLE]);
    if let [one] = targets.as_slice() {
        build.arg(one);
    }
    cmd::run(&mut build)?;

    let mut reports = Vec::new();
    for target in &targets {
        cmd::step(&format!("fuzzing {target} for {seconds} s"));
        let corpus = root.join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&corpus).with_context(|| format!("creating {}", corpus.display()))?;
        let seeds = root.join("fuzz/seeds").join(target);
        let artifacts = root.join("fuzz/artifacts").join(target);
        std::fs::create_dir_all(&artifacts).with_context(|| format!("creating {}", artifacts.display()))?;
        // The binary built above, run directly: `cargo fuzz run` would first rebuild whatever
        // changed in the workspace since, and the targets would not all test one build.
        let mut fuzz = Command::new(target_dir.join(TRIPLE).join("release").join(target));
        fuzz.current_dir(&root);
        if sanitizer != "none" {
            fuzz.env("ASAN_OPTIONS", "detect_odr_violation=0").env("AGENTGOV_FUZZ_STACK_KIB", ASAN_STACK_KIB);
        }
        fuzz.args([
            format!("-artifact_prefix={}/", artifacts.display()),
            format!("-max_total_time={seconds}"),
            format!("-timeout={INPUT_TIMEOUT_SECONDS}"),
            "-print_final_stats=1".to_owned(),
        ]);
        fuzz.arg(&corpus);
        if seeds.is_dir() {
            fuzz.arg(&seeds);
        }
        let log = logs.join(format!("{target}.log"));
        let (success, report) = run_logged(&mut fuzz, &log)?;
        let crashed = !success || report.artifact.is_some();
        print_report(target, &report, crashed, &log);
        reports.push((*target, report, crashed));
    }

    println!("\n{:<18} {:>12} {:>8} {:>8} {:>8}  result", "target", "runs", "cov", "ft", "exec/s");
    let show = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    for (target, r, crashed) in &reports {
        let result = match (crashed, &r.artifact) {
            (false, _) => "ok".to_owned(),
            (true, Some(artifact)) => format!("CRASH {artifact}"),
            (true, None) => "FAILED (see the log)".to_owned(),
        };
        println!(
            "{target:<18} {:>12} {:>8} {:>8} {:>8}  {result}",
            show(r.runs),
            show(r.cov),
            show(r.ft),
            show(r.exec_per_sec)
        );
    }
    let crashed: Vec<&str> = reports.iter().filter(|(_, _, c)| *c).map(|(t, _, _)| *t).collect();
    if !crashed.is_empty() {
        bail!(
            "{} fuzz target(s) crashed: {}; reproduce with `CARGO_TARGET_DIR={} cargo fuzz run --sanitizer {sanitizer} -a <target> <artifact>`",
            crashed.len(),
            crashed.join(", "),
            target_dir.display()
        );
    }
    Ok(())
}

/// Splits `--target NAME` (or `--target=NAME`) off the other arguments.
fn take_target(args: &[String]) -> anyhow::Result<(Option<String>, Vec<String>)> {
    let mut target = None;
    let mut rest = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--target" {
            target = Some(args.next().context("--target needs a target name")?.clone());
        } else if let Some(name) = arg.strip_prefix("--target=") {
            target = Some(name.to_owned());
        } else {
            rest.push(arg.clone());
        }
    }
    Ok((target, rest))
}

fn cargo_fuzz_installed() -> bool {
    cmd::cargo().args(["fuzz", "--version"]).output().is_ok_and(|out| out.status.success())
}

/// `cargo fuzz` from the workspace root with the fuzz build's environment.
fn fuzz_command(target_dir: &Path, sanitizer: &str) -> Command {
    let mut command = cmd::cargo();
    command.arg("fuzz").env("CARGO_TARGET_DIR", target_dir);
    if sanitizer != "none" {
        // `-Zsanitizer` on the stable compiler.
        command.env("RUSTC_BOOTSTRAP", "1");
    }
    command
}

/// Runs `command`, writing everything it prints to `log` and echoing libFuzzer's status
/// lines (not each new corpus entry); whether it succeeded, and what it reported.
fn run_logged(command: &mut Command, log: &Path) -> anyhow::Result<(bool, Report)> {
    let mut file = File::create(log).with_context(|| format!("creating {}", log.display()))?;
    // libFuzzer writes to stderr; cargo-fuzz's own messages go to both.
    let mut child =
        command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().context("starting `cargo fuzz run`")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let echo_stdout =
        std::thread::spawn(move || BufReader::new(stdout).lines().map_while(Result::ok).collect::<Vec<String>>());
    let stderr = child.stderr.take().context("no stderr")?;
    let mut report = Report::default();
    for line in BufReader::new(stderr).lines() {
        let line = line.context("reading libFuzzer's output")?;
        writeln!(file, "{line}").with_context(|| format!("writing {}", log.display()))?;
        read_line(&line, &mut report);
        if shown(&line) {
            println!("  {line}");
        }
    }
    let status = child.wait().context("waiting for the fuzz target")?;
    for line in echo_stdout.join().unwrap_or_default() {
        writeln!(file, "{line}").with_context(|| format!("writing {}", log.display()))?;
        read_line(&line, &mut report);
    }
    Ok((status.success(), report))
}

/// libFuzzer's status lines and everything about a failure; not the per-input `NEW`,
/// `REDUCE` and `pulse` lines, nor the start-up chatter.
fn shown(line: &str) -> bool {
    let progress = line.starts_with('#')
        && ["NEW", "REDUCE", "RELOAD", "pulse"].iter().any(|w| line.split_whitespace().nth(1) == Some(*w));
    let noise =
        ["MS: ", "0x", "\\x", "NEW_FUNC", "WARNING: Failed to find function", "INFO: Loaded", "INFO: Running with"];
    let trimmed = line.trim_start();
    // The entries of libFuzzer's closing "recommended dictionary".
    let dictionary = trimmed.starts_with('"') && trimmed.contains("# Uses: ");
    !progress && !dictionary && !trimmed.is_empty() && !noise.iter().any(|n| trimmed.starts_with(n))
}

/// Folds one output line into `report`.
fn read_line(line: &str, report: &mut Report) {
    // `#123456\tDONE   cov: 1234 ft: 5678 corp: 90/12Kb lim: 4096 exec/s: 2057 rss: 95Mb`
    let mut words = line.split_whitespace();
    if let Some(n) = words.next().and_then(|w| w.strip_prefix('#')).and_then(|n| n.parse().ok()) {
        report.runs = Some(n);
        let words: Vec<&str> = words.collect();
        let after = |key: &str| words.iter().position(|w| *w == key).and_then(|i| words.get(i + 1)).copied();
        if let Some(cov) = after("cov:").and_then(|v| v.parse().ok()) {
            report.cov = Some(cov);
        }
        if let Some(ft) = after("ft:").and_then(|v| v.parse().ok()) {
            report.ft = Some(ft);
        }
        if let Some(corp) = after("corp:") {
            report.corpus = Some(corp.to_owned());
        }
        if let Some(rate) = after("exec/s:").and_then(|v| v.parse().ok()) {
            report.exec_per_sec = Some(rate);
        }
    } else if let Some(n) = line.strip_prefix("stat::number_of_executed_units:").and_then(|n| n.trim().parse().ok()) {
        report.runs = Some(n);
    } else if let Some(rate) = line.strip_prefix("stat::average_exec_per_sec:").and_then(|n| n.trim().parse().ok()) {
        report.exec_per_sec = Some(rate);
    } else if let Some(at) = line.find("Test unit written to ") {
        report.artifact = Some(line[at + "Test unit written to ".len()..].trim().to_owned());
    } else if report.failure.is_none()
        && (line.contains("ERROR: libFuzzer")
            || line.contains("panicked at")
            || line.contains("has overflowed its stack"))
    {
        report.failure = Some(line.trim().to_owned());
    }
}

fn print_report(target: &str, r: &Report, crashed: bool, log: &Path) {
    let show = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    println!(
        "{target}: {} runs, cov {}, ft {}, corpus {}, {} exec/s",
        show(r.runs),
        show(r.cov),
        show(r.ft),
        r.corpus.as_deref().unwrap_or("?"),
        show(r.exec_per_sec)
    );
    if crashed {
        println!("{target}: CRASHED: {}", r.failure.as_deref().unwrap_or("see the log"));
        if let Some(artifact) = &r.artifact {
            println!("{target}: input saved to {artifact}");
        }
        println!("{target}: full output in {}", log.display());
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn libfuzzer_final_lines_are_read() {
        let mut r = Report::default();
        for line in [
            "INFO: Seed: 42",
            "#2\tINITED cov: 10 ft: 11 corp: 1/1b exec/s: 0 rss: 30Mb",
            "#1034\tNEW    cov: 120 ft: 300 corp: 40/2Kb lim: 4 exec/s: 0 rss: 31Mb L: 3/4 MS: 1 ChangeBit-",
            "#250000\tDONE   cov: 1234 ft: 5678 corp: 90/12Kb lim: 4096 exec/s: 2057 rss: 95Mb",
            "stat::number_of_executed_units: 250123",
            "stat::average_exec_per_sec:     2058",
        ] {
            read_line(line, &mut r);
        }
        assert_eq!(r.runs, Some(250_123));
        assert_eq!((r.cov, r.ft, r.exec_per_sec), (Some(1234), Some(5678), Some(2058)));
        assert_eq!(r.corpus.as_deref(), Some("90/12Kb"));
        assert_eq!(r.artifact, None);
    }

    #[test]
    fn only_status_and_failure_lines_are_echoed() {
        assert!(shown("#250000\tDONE   cov: 1234 ft: 5678 corp: 90/12Kb lim: 4096 exec/s: 2057 rss: 95Mb"));
        assert!(shown("==123== ERROR: libFuzzer: deadly signal"));
        assert!(shown("thread '<unnamed>' panicked at fuzz_targets/x.rs:3:5:"));
        assert!(!shown(
            "#1034\tNEW    cov: 120 ft: 300 corp: 40/2Kb lim: 4 exec/s: 0 rss: 31Mb L: 3/4 MS: 1 ChangeBit-"
        ));
        assert!(!shown("#65536\tpulse  cov: 120 ft: 300 corp: 40/2Kb lim: 4 exec/s: 0 rss: 31Mb"));
        assert!(!shown("\tNEW_FUNC[1/2]: 0x5564be802061"));
        assert!(!shown("WARNING: Failed to find function \"__sanitizer_print_stack_trace\"."));
        assert!(!shown("\"resource\" # Uses: 1300"));
        assert!(!shown(""));
    }

    #[test]
    fn a_crash_names_its_artifact() {
        let mut r = Report::default();
        for line in [
            "thread '<unnamed>' panicked at fuzz_targets/x.rs:3:5:",
            "==123== ERROR: libFuzzer: deadly signal",
            "artifact_prefix='/w/fuzz/artifacts/x/'; Test unit written to /w/fuzz/artifacts/x/crash-abc",
        ] {
            read_line(line, &mut r);
        }
        assert_eq!(r.artifact.as_deref(), Some("/w/fuzz/artifacts/x/crash-abc"));
        assert_eq!(r.failure.as_deref(), Some("thread '<unnamed>' panicked at fuzz_targets/x.rs:3:5:"));
    }

    #[test]
    fn every_target_of_the_fuzz_crate_is_run() {
        let manifest = std::fs::read_to_string(cmd::root().join("fuzz/Cargo.toml")).unwrap();
        let bins: Vec<&str> = manifest
            .lines()
            .filter_map(|l| l.strip_prefix("name = \""))
            .filter_map(|l| l.strip_suffix('"'))
            .filter(|name| *name != "agentgov-fuzz")
            .collect();
        assert_eq!(bins, TARGETS);
    }

    #[test]
    fn targets_are_taken_in_both_spellings() {
        let a = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let (t, rest) = take_target(&a(&["--seconds", "5", "--target", "rego_validate"])).unwrap();
        assert_eq!((t.as_deref(), rest), (Some("rego_validate"), a(&["--seconds", "5"])));
        let (t, rest) = take_target(&a(&["--target=guard_decode"])).unwrap();
        assert_eq!((t.as_deref(), rest.len()), (Some("guard_decode"), 0));
        assert!(take_target(&a(&["--target"])).is_err());
    }
}
