//! The audit-log part of a mode's run: sustained durable appends (`POST /audit/log`), chain
//! verification over the whole log, and the streamed JSONL and CSV exports with the server's
//! memory sampled during each download.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::mem::{self, RssSampler};
use super::oha::{CONCURRENCY, Load, Stop};
use super::report::{ExportRow, Row, Success, VerifyRow};
use xtask::server::Server;

/// A realistic entry: an agent's read, with its input, output and reasoning in `details`.
pub const ENTRY: &str = r#"{"event_type":"app.action","agent_id":"0193a4c2-0000-7000-8000-000000000001","action":"read","resource":"db/customers/42","decision":"allow","risk_score":0.2,"details":{"input":{"query":"SELECT name FROM customers WHERE id = 42"},"output":{"rows":1},"reasoning":["user asked for a customer name","read-only query"]}}"#;

pub const APPEND_ENDPOINT: &str = "POST /api/v1/audit/log";
const PROGRESS_EVERY: Duration = Duration::from_secs(10);
/// How often the server's RSS is sampled during an export.
const RSS_SAMPLE_EVERY: Duration = Duration::from_millis(20);
/// Generous: a slow machine still finishes a million-record verification or export.
const LONG_REQUEST: Duration = Duration::from_secs(1800);

/// The `X-API-Key` header line of `api_key`.
pub(crate) fn key_header(api_key: &str) -> String {
    format!("X-API-Key: {api_key}")
}

/// A short warm-up with the same body (its records stay in the log; none when `warm_up` is
/// zero), then exactly `requests` appends, printing progress every few seconds. Returns the
/// row of the measured run.
pub fn append_load(
    server: &Server,
    mode: &str,
    api_key: &str,
    warm_up: Duration,
    requests: u64,
) -> anyhow::Result<Row> {
    let url = format!("{}/api/v1/audit/log", server.base);
    let headers = vec![key_header(api_key)];
    if !warm_up.is_zero() {
        Load::post_json(url.clone(), headers.clone(), ENTRY.to_owned(), Stop::After(warm_up)).run()?;
    }

    let start_seq = head_seq(server, api_key)?;
    let started = Instant::now();
    let running = Load::post_json(url, headers, ENTRY.to_owned(), Stop::Requests(requests)).spawn();
    let (mut last_seq, mut last_at) = (start_seq, started);
    while !running.is_finished() {
        std::thread::sleep(Duration::from_millis(200));
        if last_at.elapsed() < PROGRESS_EVERY || running.is_finished() {
            continue;
        }
        // A cheap read of the newest record; a failure here only loses a progress line.
        let Ok(seq) = head_seq(server, api_key) else { continue };
        let now = Instant::now();
        let done = seq.saturating_sub(start_seq);
        let recent = (seq.saturating_sub(last_seq)) as f64 / now.duration_since(last_at).as_secs_f64();
        let overall = done as f64 / now.duration_since(started).as_secs_f64();
        let eta = if overall > 0.0 { requests.saturating_sub(done) as f64 / overall } else { f64::NAN };
        println!(
            "    {:>4.0}s: {done}/{requests} appended ({:.1}%), {recent:.0}/s lately, {overall:.0}/s overall, ~{eta:.0}s left",
            now.duration_since(started).as_secs_f64(),
            100.0 * done as f64 / requests as f64,
        );
        (last_seq, last_at) = (seq, now);
    }
    let json = running.join()?;
    let row = Row::from_oha(mode, APPEND_ENDPOINT, CONCURRENCY, Success::Status(201), &json)?;
    row.warn_unless_all_succeeded("append", 201, &json);
    Ok(row)
}

/// The `seq` of the newest record (0 for an empty log).
pub fn head_seq(server: &Server, api_key: &str) -> anyhow::Result<u64> {
    let (page, _) = server.get("/api/v1/audit?limit=1", &[&key_header(api_key)], Duration::from_secs(10))?;
    match page["items"].as_array().and_then(|items| items.first()) {
        None => Ok(0),
        Some(record) => record["seq"].as_u64().with_context(|| format!("a record without seq: {record}")),
    }
}

/// `GET /audit/verify` over the whole log. Returns the row and the head's `seq`.
pub fn verify(server: &Server, mode: &str, api_key: &str) -> anyhow::Result<(VerifyRow, u64)> {
    let (json, seconds) = server.get("/api/v1/audit/verify", &[&key_header(api_key)], LONG_REQUEST)?;
    let number = |field: &str| json[field].as_u64().with_context(|| format!("verify answered no {field}: {json}"));
    let row = VerifyRow {
        mode: mode.to_owned(),
        records: number("checked")?,
        seconds,
        valid: json["valid"].as_bool().with_context(|| format!("verify answered no valid: {json}"))?,
    };
    if !row.valid {
        eprintln!("    warning: the chain did not verify: {json}");
    }
    Ok((row, number("head_seq")?))
}

/// The formats exported: label, path, header lines before the first record.
pub const EXPORTS: [(&str, &str, u64); 2] =
    [("JSONL", "/api/v1/audit/export", 0), ("CSV", "/api/v1/audit/export/csv", 1)];

/// Downloads one streamed export whole (through curl, counting bytes and lines here) while a
/// thread samples the server's RSS.
pub fn export(
    server: &Server,
    mode: &str,
    api_key: &str,
    (format, path, header_lines): (&str, &str, u64),
) -> anyhow::Result<ExportRow> {
    let pid = server.pid();
    let rss_before_kib = mem::status_kib(pid, "VmRSS").context("reading the server's VmRSS")?;
    let sampler = RssSampler::start(pid, RSS_SAMPLE_EVERY);
    let started = Instant::now();
    let mut curl = Command::new("curl")
        // --fail: an error status fails; a response cut off midway (no final chunk) fails too.
        .args(["-sS", "--fail", "--max-time", &LONG_REQUEST.as_secs().to_string(), "-H", &key_header(api_key)])
        .args(["-o", "-", "-w", "%{stderr}%{http_code} %{time_total}\n"])
        .arg(format!("{}{path}", server.base))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting curl")?;
    let mut body = curl.stdout.take().context("curl has no stdout")?;
    let (mut bytes, mut newlines, mut last) = (0u64, 0u64, b'\n');
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = body.read(&mut buf).context("reading the export")?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        newlines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[n - 1];
    }
    let wall = started.elapsed().as_secs_f64();
    let out = curl.wait_with_output().context("waiting for curl")?;
    let rss_peak_kib = sampler.finish();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("GET {path} failed ({}): {}", out.status, stderr.trim());
    }
    let seconds = stderr
        .lines()
        .last()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(wall);
    let lines = newlines + u64::from(bytes > 0 && last != b'\n');
    Ok(ExportRow {
        mode: mode.to_owned(),
        format: format.to_owned(),
        rows: lines.saturating_sub(header_lines),
        bytes,
        seconds,
        rss_before_kib,
        rss_peak_kib,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_entry_is_valid_json_with_a_non_reserved_event_type() {
        let entry: Value = serde_json::from_str(ENTRY).unwrap();
        assert_eq!(entry["event_type"], "app.action");
        assert!(entry["details"].is_object());
    }
}
