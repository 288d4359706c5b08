//! Spec 4.15, 5 (rules 4-6) and 6: the signed inbound webhook. Bodies are signed here with
//! the `hmac` and `sha2` crates, independently of the server's implementation (ring).
use agentgov_tests::hooks::{sign, sign_timestamped, sign_with, unix_now};
use agentgov_tests::*;
use reqwest::RequestBuilder;
use serde_json::{Value, json};

const PATH: &str = "/webhooks/agent";
const AGENT: &str = "0193a4c2-0000-7000-8000-00000000abcd";

fn action(n: usize) -> Value {
    json!({"event": "agent.action", "payload": {
        "agent_id": AGENT, "action": "refund", "resource": format!("orders/{n}"),
        "input": {"order": n, "amount": 12.5}, "output": {"ok": true},
        "reasoning": ["customer asked", "within policy"], "risk_score": 0.4
    }})
}

/// A webhook request with `body` as bytes, signed unless `signature` overrides it.
fn send(app: &TestApp, key: &str, body: &[u8], signature: Option<&str>) -> RequestBuilder {
    let signature = signature.map(str::to_owned).unwrap_or_else(|| sign(body));
    app.post(PATH)
        .header("X-API-Key", key)
        .header("X-Webhook-Signature", signature)
        .header("Content-Type", "application/json")
        .body(body.to_vec())
}

async fn actions(app: &TestApp, key: &str) -> Vec<Value> {
    let page = expect(app.get("/audit?event_type=agent.action").header("X-API-Key", key), 200).await;
    page["items"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_signed_action_is_acknowledged_after_it_is_in_the_audit_log() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = serde_json::to_vec(&action(1)).unwrap();
    let ack = expect(send(&app, &t.api_key, &body, None), 200).await;
    assert_eq!(ack, json!({"status": "ok", "event": "agent.action"}));
    let records = actions(&app, &t.api_key).await;
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(
        (r["agent_id"].as_str(), r["action"].as_str(), r["resource"].as_str()),
        (Some(AGENT), Some("refund"), Some("orders/1"))
    );
    assert_eq!(r["risk_score"], 0.4);
    assert_eq!(r["actor"], json!({"type": "agent", "id": AGENT}));
    assert_eq!(r["decision"], Value::Null, "no policy check is made");
    assert_eq!(r["details"]["input"], json!({"order": 1, "amount": 12.5}));
    assert_eq!(r["details"]["output"], json!({"ok": true}));
    assert_eq!(r["details"]["reasoning"], json!(["customer asked", "within policy"]));
    assert_eq!(r["details"]["source"]["channel"], "webhook");
}

#[tokio::test]
async fn signatures_are_checked_exactly() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = serde_json::to_vec(&action(1)).unwrap();
    let good = sign(&body);
    let invalid = |p: Value| assert_eq!(p["detail"], "Invalid webhook signature", "{p}");

    // One flipped body byte.
    let mut flipped = body.clone();
    flipped[10] ^= 0x01;
    invalid(expect_problem(send(&app, &t.api_key, &flipped, Some(&good)), 401).await);
    // A missing header.
    let unsigned =
        app.post(PATH).header("X-API-Key", &t.api_key).header("Content-Type", "application/json").body(body.clone());
    invalid(expect_problem(unsigned, 401).await);
    // A wrong prefix (the algorithm name is case-sensitive), or none.
    let digest = good.trim_start_matches("sha256=").to_owned();
    for wrong in
        [format!("sha1={digest}"), format!("SHA256={digest}"), digest.clone(), format!("sha256={}", &digest[..63])]
    {
        invalid(expect_problem(send(&app, &t.api_key, &body, Some(&wrong)), 401).await);
    }
    // Another secret.
    let other = agentgov_tests::hooks::sign_with(b"some-other-secret-0123456789abcdef", &body);
    invalid(expect_problem(send(&app, &t.api_key, &body, Some(&other)), 401).await);
    assert!(actions(&app, &t.api_key).await.is_empty(), "nothing refused was stored");

    // An upper-case hex digest names the same bytes: accepted.
    let upper = format!("sha256={}", digest.to_uppercase());
    expect(send(&app, &t.api_key, &body, Some(&upper)), 200).await;
    assert_eq!(actions(&app, &t.api_key).await.len(), 1);
}

#[tokio::test]
async fn the_api_key_is_checked_after_the_signature() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = serde_json::to_vec(&action(1)).unwrap();
    let p = expect_problem(send(&app, "agk_bogus123_nope", &body, None), 401).await;
    assert_ne!(p["detail"], "Invalid webhook signature");
    let no_key = app.post(PATH).header("X-Webhook-Signature", sign(&body)).body(body.clone());
    let p = expect_problem(no_key, 401).await;
    assert_ne!(p["detail"], "Invalid webhook signature");
    // A bad signature is reported as such even with a bad key.
    let p = expect_problem(send(&app, "agk_bogus123_nope", &body, Some("sha256=00")), 401).await;
    assert_eq!(p["detail"], "Invalid webhook signature");
    // The webhook lives outside /api/v1.
    let p = app
        .client
        .post(format!("{}/api/v1/webhooks/agent", app.base))
        .header("X-API-Key", &t.api_key)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(p.status(), 404);
}

#[tokio::test]
async fn bad_envelopes_are_clear_4xx() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (serde_json::to_vec(&json!({"event": "agent.deleted", "payload": {"agent_id": AGENT}})).unwrap(), 400, "event"),
        (b"{\"event\": \"agent.action\", ".to_vec(), 400, "json"),
        (serde_json::to_vec(&json!({"event": "agent.action", "payload": {"action": "x"}})).unwrap(), 422, "payload.agent_id"),
        (serde_json::to_vec(&json!({"event": "agent.heartbeat", "payload": {"status": "active"}})).unwrap(), 422, "payload.agent_id"),
        (serde_json::to_vec(&json!({"event": "agent.action", "payload": {"agent_id": "nope", "action": "x"}})).unwrap(), 422, "payload.agent_id"),
        (serde_json::to_vec(&json!({"event": "agent.action", "payload": {"agent_id": AGENT}})).unwrap(), 422, "payload.action"),
        (serde_json::to_vec(&json!({"event": "agent.action", "payload": {"agent_id": AGENT, "action": "x", "risk_score": 7}})).unwrap(), 422, "payload.risk_score"),
        (serde_json::to_vec(&json!({"event": "agent.action", "payload": {"agent_id": AGENT, "action": "x", "reasoning": "because"}})).unwrap(), 422, "payload.reasoning"),
        (serde_json::to_vec(&json!({"payload": {}})).unwrap(), 422, "event"),
        (serde_json::to_vec(&json!({"event": "agent.action", "payload": []})).unwrap(), 422, "payload"),
        (serde_json::to_vec(&json!([1, 2])).unwrap(), 422, "body"),
    ];
    for (body, status, field) in cases {
        let p = expect_problem(send(&app, &t.api_key, &body, None), status).await;
        if status == 422 {
            assert_eq!(p["errors"][0]["field"], field, "{}: {p}", String::from_utf8_lossy(&body));
        }
    }
    assert!(actions(&app, &t.api_key).await.is_empty());
}

#[tokio::test]
async fn a_repeated_delivery_id_is_acknowledged_and_stored_once() {
    let app = spawn_app().await;
    let (t, other) = (app.create_tenant("acme").await, app.create_tenant("other").await);
    let body = serde_json::to_vec(&action(7)).unwrap();
    for _ in 0..3 {
        let ack = expect(send(&app, &t.api_key, &body, None).header("X-Webhook-Id", "delivery-42"), 200).await;
        assert_eq!(ack["status"], "ok");
    }
    assert_eq!(actions(&app, &t.api_key).await.len(), 1);
    // Concurrent repeats, too.
    let body2 = serde_json::to_vec(&action(8)).unwrap();
    let sends = (0..8).map(|_| send(&app, &t.api_key, &body2, None).header("X-Webhook-Id", "delivery-43").send());
    for res in futures::future::join_all(sends).await {
        assert_eq!(res.unwrap().status(), 200);
    }
    assert_eq!(actions(&app, &t.api_key).await.len(), 2);
    // Ids are per tenant; without an id every delivery is stored.
    expect(send(&app, &other.api_key, &body, None).header("X-Webhook-Id", "delivery-42"), 200).await;
    assert_eq!(actions(&app, &other.api_key).await.len(), 1);
    expect(send(&app, &t.api_key, &body, None), 200).await;
    expect(send(&app, &t.api_key, &body, None), 200).await;
    assert_eq!(actions(&app, &t.api_key).await.len(), 4);
    expect_problem(send(&app, &t.api_key, &body, None).header("X-Webhook-Id", "x".repeat(201)), 400).await;
}

#[tokio::test]
async fn a_heartbeat_event_acts_as_the_heartbeat_endpoint() {
    let app = spawn_app().await;
    let (t, other) = (app.create_tenant("acme").await, app.create_tenant("other").await);
    let a = expect(
        app.post("/agents/register").header("X-API-Key", &t.api_key).json(&json!({"name": "bot", "type": "llm"})),
        201,
    )
    .await;
    let id = a["id"].as_str().unwrap();
    let body =
        serde_json::to_vec(&json!({"event": "agent.heartbeat", "payload": {"agent_id": id, "status": "active"}}))
            .unwrap();
    assert_eq!(
        expect(send(&app, &t.api_key, &body, None), 200).await,
        json!({"status": "ok", "event": "agent.heartbeat"})
    );
    let seen = expect(app.get(&format!("/agents/{id}")).header("X-API-Key", &t.api_key), 200).await;
    assert!(seen["last_seen_at"].is_string());
    // Another tenant's agent, or an unknown one: 404.
    expect_problem(send(&app, &other.api_key, &body, None), 404).await;
    let unknown = serde_json::to_vec(&json!({"event": "agent.heartbeat", "payload": {"agent_id": AGENT}})).unwrap();
    expect_problem(send(&app, &t.api_key, &unknown, None), 404).await;
    let bad = serde_json::to_vec(&json!({"event": "agent.heartbeat", "payload": {"agent_id": id, "status": "asleep"}}))
        .unwrap();
    expect_problem(send(&app, &t.api_key, &bad, None), 422).await;
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let app = spawn_with(|c| c.body_limit_bytes = 4096).await;
    let t = app.create_tenant("acme").await;
    let mut event = action(1);
    event["payload"]["input"]["blob"] = json!("x".repeat(8192));
    let body = serde_json::to_vec(&event).unwrap();
    expect_problem(send(&app, &t.api_key, &body, None), 413).await;
}

/// Issue 32, point 4: the timestamped form, its tolerance, and replays stored once.
#[tokio::test]
async fn timestamped_signatures_are_refused_when_stale_and_a_replay_is_stored_once() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let secret = WEBHOOK_SECRET.as_bytes();
    let body = serde_json::to_vec(&action(1)).unwrap();
    let now = unix_now();
    let fresh = sign_timestamped(secret, now, &body);
    for _ in 0..3 {
        expect(send(&app, &t.api_key, &body, Some(&fresh)), 200).await;
    }
    assert_eq!(actions(&app, &t.api_key).await.len(), 1, "a replayed delivery is answered, stored once");
    let stored = &actions(&app, &t.api_key).await[0];
    assert!(stored["details"]["source"]["delivery_id"].as_str().unwrap().starts_with("sig-"), "{stored}");

    // Outside five minutes either way: stale, whatever the signature.
    for t_off in [-301, 301, -86_400] {
        let stale = sign_timestamped(secret, now + t_off, &body);
        let p = expect_problem(send(&app, &t.api_key, &body, Some(&stale)), 401).await;
        assert!(p["detail"].as_str().unwrap().starts_with("Stale webhook signature"), "{p}");
    }
    // The time is signed: moving t breaks the signature.
    let moved = fresh.replacen(&format!("t={now}"), &format!("t={}", now + 1), 1);
    let p = expect_problem(send(&app, &t.api_key, &body, Some(&moved)), 401).await;
    assert_eq!(p["detail"], "Invalid webhook signature");
    // Malformed forms are the same 401.
    let digest = fresh.split_once(",v1=").unwrap().1;
    for bad in [
        format!("v1={digest}"),
        format!("t={now}"),
        format!("t={now},t={now},v1={digest}"),
        format!("t=-{now},v1={digest}"),
        format!("t={now},v1={}", &digest[1..]),
        format!("t=1e9,v1={digest}"),
    ] {
        let p = expect_problem(send(&app, &t.api_key, &body, Some(&bad)), 401).await;
        assert_eq!(p["detail"], "Invalid webhook signature", "{bad}");
    }
    // A second v1 (a sender mid-rotation) and unknown schemes are fine.
    let two = format!("t={now},v1={},v1={digest},v0=abc", "0".repeat(64));
    let other = serde_json::to_vec(&action(2)).unwrap();
    let two = two.replace(digest, sign_timestamped(secret, now, &other).split_once(",v1=").unwrap().1);
    expect(send(&app, &t.api_key, &other, Some(&two)), 200).await;
    assert_eq!(actions(&app, &t.api_key).await.len(), 2);
}

/// Issue 32, point 4: a tenant's own inbound key replaces the shared one for its keys only.
#[tokio::test]
async fn a_tenants_own_webhook_secret_replaces_the_shared_one_for_it_alone() {
    let app = spawn_app().await;
    let (a, b) = (app.create_tenant("acme").await, app.create_tenant("bravo").await);
    let body = serde_json::to_vec(&action(1)).unwrap();
    // Validation and roles.
    let (_, analyst) = app.user(&a, "analyst@acme.test", "analyst").await;
    expect_problem(app.post("/tenant/webhook-secret").bearer_auth(&analyst).json(&json!({})), 403).await;
    let p = expect_problem(app.post("/tenant/webhook-secret").bearer_auth(&a.token).json(&json!({"x": 1})), 422).await;
    assert!(p.to_string().contains('x'), "{p}");
    expect_problem(app.delete("/tenant/webhook-secret").bearer_auth(&a.token), 404).await;

    let issued = expect(app.post("/tenant/webhook-secret").bearer_auth(&a.token).json(&json!({})), 200).await;
    let own = issued["secret"].as_str().unwrap().to_owned();
    assert_eq!((issued["purpose"].clone(), issued["require_timestamp"].clone()), (json!("webhook"), json!(true)));
    assert_eq!(issued["previous_valid_until"], Value::Null);
    let now = unix_now();

    // A's keys: the shared secret no longer works, in either form.
    let p = expect_problem(send(&app, &a.api_key, &body, None), 401).await;
    assert_eq!(p["detail"], "Invalid webhook signature");
    let shared_stamped = sign_timestamped(WEBHOOK_SECRET.as_bytes(), now, &body);
    expect_problem(send(&app, &a.api_key, &body, Some(&shared_stamped)), 401).await;
    // Its own key, timestamped: accepted. `sha256=` with it: refused, timestamps required.
    expect(send(&app, &a.api_key, &body, Some(&sign_timestamped(own.as_bytes(), now, &body))), 200).await;
    let p = expect_problem(send(&app, &a.api_key, &body, Some(&sign_with(own.as_bytes(), &body))), 401).await;
    assert!(p["detail"].as_str().unwrap().contains("only timestamped"), "{p}");
    assert!(!p.to_string().contains(&own), "no secret in an error");

    // B is untouched, and A's key signs nothing for B.
    expect(send(&app, &b.api_key, &body, None), 200).await;
    let forged = sign_timestamped(own.as_bytes(), now + 1, &body);
    let p = expect_problem(send(&app, &b.api_key, &body, Some(&forged)), 401).await;
    assert_eq!(p["detail"], "Invalid webhook signature");

    // Rotation without the timestamp requirement: the replaced key stays accepted a day.
    let rotated = expect(
        app.post("/tenant/webhook-secret").bearer_auth(&a.token).json(&json!({"require_timestamp": false})),
        200,
    )
    .await;
    let newer = rotated["secret"].as_str().unwrap().to_owned();
    assert!(rotated["previous_valid_until"].is_string());
    let other = serde_json::to_vec(&action(2)).unwrap();
    expect(send(&app, &a.api_key, &other, Some(&sign_with(newer.as_bytes(), &other))), 200).await;
    let third = serde_json::to_vec(&action(3)).unwrap();
    expect(send(&app, &a.api_key, &third, Some(&sign_timestamped(own.as_bytes(), now + 2, &third))), 200).await;
    let listed = expect(app.get("/tenant/secrets").bearer_auth(&a.token), 200).await;
    assert_eq!(listed["webhook"]["require_timestamp"], false);
    assert!(!listed.to_string().contains("whsec_"), "{listed}");

    // Removed: the shared secret works for A again; audited both ways, without values.
    expect(app.delete("/tenant/webhook-secret").bearer_auth(&a.token), 204).await;
    let fourth = serde_json::to_vec(&action(4)).unwrap();
    expect(send(&app, &a.api_key, &fourth, None), 200).await;
    let log = expect(app.get("/audit?event_type=tenant.secret_rotated").bearer_auth(&a.token), 200).await;
    assert_eq!(log["items"].as_array().unwrap().len(), 2);
    let log = expect(app.get("/audit?event_type=tenant.secret_removed").bearer_auth(&a.token), 200).await;
    assert_eq!(log["items"].as_array().unwrap().len(), 1);
    assert!(!log.to_string().contains("whsec_"));
}
