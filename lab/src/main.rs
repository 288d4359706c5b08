//! The load and chaos lab, run as `cargo xtask <command>` (`cargo xtask help` describes each
//! command and its options): `bench` (throughput and latency into BENCHMARKS.md), `crash`
//! (`kill -9` under load), `faults` (Postgres and Redis stopped under load), `soak` (two
//! replicas for half an hour), `ws-bench` (the real-time feed's fan-out), `siem-bench` (SIEM
//! forwarding to rsyslog).

mod bench;
mod crash;
mod faults;
mod siem_bench;
mod soak;
mod ws_bench;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((command, rest)) => match command.as_str() {
            "bench" => bench::run(rest),
            "crash" => crash::run(rest),
            "faults" => faults::run(rest),
            "soak" => soak::run(rest),
            "ws-bench" => ws_bench::run(rest),
            "siem-bench" => siem_bench::run(rest),
            other => Err(anyhow::anyhow!("unknown lab command `{other}` (see `cargo xtask help`)")),
        },
        None => Err(anyhow::anyhow!("a lab command is needed (see `cargo xtask help`)")),
    };
    if let Err(err) = result {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}
