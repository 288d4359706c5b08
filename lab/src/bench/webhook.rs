//! Webhook ingest: signed `agent.action` deliveries to `POST /webhooks/agent` at
//! `CONCURRENCY` connections, in a tenant of their own, and the proof that every delivery the
//! server acknowledged (200) is in the tenant's audit log afterwards.

use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::audit;
use super::oha::{CONCURRENCY, Load, Stop, status_count};
use super::report::{Row, Success, WebhookRow};
use xtask::http::Connection;
use xtask::server::Server;

pub const ENDPOINT: &str = "POST /webhooks/agent";

/// A realistic delivery: an agent's refund, with its input, output and reasoning. No
/// `X-Webhook-Id` is sent, so every delivery is a new audit record.
pub const BODY: &str = r#"{"event":"agent.action","payload":{"agent_id":"0193a4c2-0000-7000-8000-0000000000aa","action":"refund","resource":"orders/42","input":{"order_id":42,"amount":"19.99","currency":"EUR","reason":"item arrived damaged"},"output":{"refund_id":"rf_0042","status":"approved"},"reasoning":["the customer reported a damaged item with a photo","the amount is under the auto-approval limit of 50 EUR"],"risk_score":0.4}}"#;

/// The filtered export that counts the tenant's stored `agent.action` records.
const STORED_EVENTS: (&str, &str, u64) = ("JSONL", "/api/v1/audit/export?event_type=agent.action", 0);

/// `X-Webhook-Signature` of `body`: `sha256=` and the hex HMAC-SHA256 of its exact bytes.
pub fn signature(secret: &str, body: &[u8]) -> anyhow::Result<String> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).map_err(|err| anyhow!("HMAC key: {err}"))?;
    mac.update(body);
    Ok(format!("sha256={}", hex::encode(mac.finalize().into_bytes())))
}

/// The headers of a delivery of [`BODY`] to the tenant of `api_key`: the key and the body's
/// signature with the server's `WEBHOOK_SECRET`.
pub fn headers(server: &Server, api_key: &str) -> anyhow::Result<Vec<String>> {
    Ok(vec![
        audit::key_header(api_key),
        format!("X-Webhook-Signature: {}", signature(&server.webhook_secret, BODY.as_bytes())?),
    ])
}

/// One signed delivery checked by hand (so a refused signature or key fails clearly), a
/// warm-up, then exactly `events` deliveries; the tenant's `agent.action` records are counted
/// just before and after the measured run.
pub fn ingest(server: &Server, mode: &str, warm_up: Duration, events: u64) -> anyhow::Result<WebhookRow> {
    let api_key = server.tenant_api_key("bench-webhook")?;
    let headers = headers(server, &api_key)?;
    let probe = Connection::new(&server.base)?.post_json("/webhooks/agent", &headers, BODY)?;
    if probe.status != 200 {
        bail!("{ENDPOINT} answered {}, expected 200: {}", probe.status, probe.body);
    }

    let url = format!("{}/webhooks/agent", server.base);
    Load::post_json(url.clone(), headers.clone(), BODY.to_owned(), Stop::After(warm_up)).run()?;
    let before = stored_events(server, mode, &api_key)?;
    let json = Load::post_json(url, headers, BODY.to_owned(), Stop::Requests(events)).run()?;
    let after = stored_events(server, mode, &api_key)?;

    let load = Row::from_oha(mode, ENDPOINT, CONCURRENCY, Success::Status(200), &json)?;
    load.warn_unless_all_succeeded("delivery", 200, &json);
    Ok(WebhookRow { load, acknowledged: status_count(&json, "200"), stored: after.saturating_sub(before) })
}

/// How many `agent.action` records the tenant's log holds: the lines of its filtered export.
fn stored_events(server: &Server, mode: &str, api_key: &str) -> anyhow::Result<u64> {
    let export = audit::export(server, mode, api_key, STORED_EVENTS).context("counting the stored webhook events")?;
    Ok(export.rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_in_hex() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?").unwrap(),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn the_body_is_an_agent_action_envelope() {
        let body: serde_json::Value = serde_json::from_str(BODY).unwrap();
        assert_eq!(body["event"], "agent.action");
        assert!(body["payload"]["agent_id"].as_str().is_some_and(|id| id.len() == 36));
        assert!(body["payload"]["reasoning"].is_array());
    }

    #[test]
    fn statuses_are_counted_from_oha_json() {
        let json = serde_json::json!({"statusCodeDistribution": {"200": 9990, "503": 10}});
        assert_eq!((status_count(&json, "200"), status_count(&json, "401")), (9990, 0));
    }
}
