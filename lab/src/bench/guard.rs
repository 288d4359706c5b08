//! Prompt Guard screening: `POST /api/v1/guard/validate` at `CONCURRENCY` connections, in a
//! tenant of its own with the built-in detector, for a short prompt and a 2 KB one (both
//! benign, so nothing is written: only blocked texts are audited).

use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::oha::{CONCURRENCY, Load, Stop};
use super::report::{Row, Success};
use xtask::http::Connection;
use xtask::server::Server;

pub const ENDPOINT: &str = "POST /api/v1/guard/validate";

const SHORT: &str = "Book a table for two at an Italian restaurant near the office tomorrow at 7pm and send \
                     the confirmation to my calendar.";
const PARAGRAPH: &str = "Please review the attached quarterly report and summarise the main risks for the \
                         finance team, including currency exposure, supplier delays and the open audit items \
                         that were raised by the external auditors last spring. ";

/// The prompts screened: a label and the text.
fn prompts() -> [(&'static str, String); 2] {
    let mut long = PARAGRAPH.repeat(2048 / PARAGRAPH.len() + 1);
    long.truncate(2048);
    [("115-byte prompt", SHORT.to_owned()), ("2 KB prompt", long)]
}

/// Each prompt: checked once by hand (200, safe), warmed up, then loaded for `measure`.
pub fn validate(server: &Server, mode: &str, warm_up: Duration, measure: Duration) -> anyhow::Result<Vec<Row>> {
    let api_key = server.tenant_api_key("bench-guard")?;
    let key = vec![format!("X-API-Key: {api_key}")];
    let mut connection = Connection::new(&server.base)?;
    let url = format!("{}/api/v1/guard/validate", server.base);
    let mut rows = Vec::new();
    for (label, prompt) in prompts() {
        let body = json!({"prompt": prompt}).to_string();
        // Once, right after the policy phase, the first request on a new connection was
        // closed unanswered (the server alive, nothing in its log); a fresh connection then
        // answered. Under load oha saw no such failure. Retried once, with the first error shown.
        let probe = match connection.post_json("/api/v1/guard/validate", &key, &body) {
            Ok(probe) => probe,
            Err(e) => {
                eprintln!("    warning: {e:#}; retrying on a new connection");
                connection = Connection::new(&server.base)?;
                connection.post_json("/api/v1/guard/validate", &key, &body)?
            }
        };
        if probe.status != 200 {
            bail!("{ENDPOINT} answered {}, expected 200: {}", probe.status, probe.body);
        }
        let verdict: Value =
            serde_json::from_str(&probe.body).with_context(|| format!("{ENDPOINT}: {}", probe.body))?;
        if verdict["safe"] != true {
            bail!("{ENDPOINT} flagged the benchmark's benign {label}: {verdict}");
        }
        Load::post_json(url.clone(), key.clone(), body.clone(), Stop::After(warm_up)).run()?;
        let json = Load::post_json(url.clone(), key.clone(), body, Stop::After(measure)).run()?;
        rows.push(Row::from_oha(mode, &format!("{ENDPOINT} ({label})"), CONCURRENCY, Success::Status(200), &json)?);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_long_prompt_is_two_kilobytes_and_both_are_benign_requests() {
        let [(_, short), (_, long)] = prompts();
        assert_eq!(long.len(), 2048);
        assert!(short.len() < 200);
        assert!(!long.to_lowercase().contains("ignore"));
    }
}
