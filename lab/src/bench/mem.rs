//! The server process's memory, read from `/proc/<pid>/status` (Linux).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// `VmRSS` (resident now) or `VmHWM` (the lifetime peak of resident) in KiB.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_status_kib(&status, field)
}

fn parse_status_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| *key == field)
        .and_then(|(_, value)| value.split_whitespace().next()?.parse().ok())
}

/// CPU time (user + system) a process has used, in seconds, from `/proc/<pid>/stat`
/// (`pid` may be `self`), at Linux's fixed 100 ticks per second.
pub fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_cpu_seconds(&stat)
}

fn parse_cpu_seconds(stat: &str) -> Option<f64> {
    Some(parse_process_ticks(stat)? as f64 / 100.0)
}

/// utime + stime, in ticks, of a `/proc/<pid>/stat` line.
pub(crate) fn parse_process_ticks(stat: &str) -> Option<u64> {
    // After the command name in parentheses (which may hold spaces): state is field 3, utime
    // and stime fields 14 and 15.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Samples `VmRSS` on a thread until [`RssSampler::finish`]; keeps the highest value.
pub struct RssSampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<u64>,
}

impl RssSampler {
    pub fn start(pid: u32, every: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut peak = 0;
            loop {
                if let Some(kib) = status_kib(pid, "VmRSS") {
                    peak = peak.max(kib);
                }
                if flag.load(Ordering::Relaxed) {
                    return peak;
                }
                std::thread::sleep(every);
            }
        });
        RssSampler { stop, thread }
    }

    /// Stops sampling (after one last sample) and returns the peak in KiB.
    pub fn finish(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_user_plus_system_ticks() {
        let stat = "4242 (agent gov) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 0 0";
        assert_eq!(parse_cpu_seconds(stat), Some(3.0));
        assert!(cpu_seconds("self").is_some());
    }

    #[test]
    fn status_fields_are_parsed() {
        let status = "Name:\tagentgov\nVmHWM:\t  81234 kB\nVmRSS:\t   40960 kB\n";
        assert_eq!(parse_status_kib(status, "VmRSS"), Some(40960));
        assert_eq!(parse_status_kib(status, "VmHWM"), Some(81234));
        assert_eq!(parse_status_kib(status, "VmSwap"), None);
    }

    #[test]
    fn sampler_reads_our_own_process() {
        let sampler = RssSampler::start(std::process::id(), Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(5));
        assert!(sampler.finish() > 0);
    }
}
