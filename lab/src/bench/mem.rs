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
