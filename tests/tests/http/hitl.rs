//! Spec 4.9: human-in-the-loop approval requests over HTTP — every transition, the 409 and
//! expiry cases, long-poll, signed callbacks, and the policy check that opens a request.
use std::time::{Duration, Instant};

use agentgov_tests::hooks::{Receiver, sign, sign_with, timestamped_matches, unix_now};
use agentgov_tests::*;
use serde_json::{Value, json};

async fn register(app: &TestApp, t: &Tenant, name: &str) -> String {
    let body = json!({"name": name, "type": "llm", "capabilities": ["read"], "permissions": {}});
    let agent = expect(app.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    agent["id"].as_str().unwrap().to_owned()
}

fn ask(agent: &str, extra: Value) -> Value {
    let mut body = json!({
        "agent_id": agent, "action": "delete", "resource": "prod/db/customers",
        "context": {"environment": "production", "record_count": 5000},
        "reason": "bulk delete in production",
    });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    body
}

async fn open(app: &TestApp, t: &Tenant, body: Value) -> Value {
    let res = app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&body).send().await.unwrap();
    let location = res.headers().get("location").map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = read(res).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(location, Some(format!("/api/v1/hitl/status/{}", body["id"].as_str().unwrap())));
    body
}

fn id(r: &Value) -> &str {
    r["id"].as_str().unwrap()
}

async fn status(app: &TestApp, t: &Tenant, id: &str) -> Value {
    expect(app.get(&format!("/hitl/status/{id}")).header("X-API-Key", &t.api_key), 200).await
}

async fn audit_types(app: &TestApp, t: &Tenant) -> Vec<String> {
    let page = expect(app.get("/audit?limit=500").header("X-API-Key", &t.api_key), 200).await;
    let mut types: Vec<String> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["event_type"].as_str().unwrap().to_owned())
        .filter(|t| t.starts_with("hitl."))
        .collect();
    types.reverse();
    types
}

#[tokio::test]
async fn request_approve_and_every_later_decision_conflicts() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let r = open(&app, &t, ask(&bot, json!({"timeout_seconds": 600}))).await;
    assert_eq!(r["status"], "pending");
    assert_eq!(r["agent_name"], "bot");
    assert!(r["risk_score"].as_f64().unwrap() > 0.0);
    assert!(r["decided_by"].is_null() && r["decision_id"].is_null(), "{r}");
    assert_eq!(status(&app, &t, id(&r)).await, r);

    let (_, analyst) = app.user(&t, "ann@acme.test", "analyst").await;
    let approved = expect(
        app.post(&format!("/hitl/approve/{}", id(&r))).bearer_auth(&analyst).json(&json!({"comment": "fine"})),
        200,
    )
    .await;
    assert_eq!((approved["status"].clone(), approved["comment"].clone()), (json!("approved"), json!("fine")));
    assert_eq!(approved["decided_by"]["type"], "user");
    assert!(approved["decided_at"].is_string());
    assert_eq!(status(&app, &t, id(&r)).await["status"], "approved");

    for path in ["approve", "reject"] {
        let body = expect_problem(app.post(&format!("/hitl/{path}/{}", id(&r))).bearer_auth(&analyst), 409).await;
        assert!(body["detail"].as_str().unwrap().ends_with("is already approved"), "{body}");
    }
    expect_problem(app.post(&format!("/hitl/cancel/{}", id(&r))).header("X-API-Key", &t.api_key), 409).await;
    assert_eq!(audit_types(&app, &t).await, ["hitl.requested", "hitl.approved"]);
}

#[tokio::test]
async fn reject_and_cancel_and_their_bodies() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let r = open(&app, &t, ask(&bot, json!({}))).await;
    // No body at all is fine; so is an empty object.
    let rejected = expect(app.post(&format!("/hitl/reject/{}", id(&r))).bearer_auth(&t.token), 200).await;
    assert_eq!((rejected["status"].clone(), rejected["comment"].clone()), (json!("rejected"), Value::Null));
    let c = open(&app, &t, ask(&bot, json!({}))).await;
    let cancelled =
        expect(app.post(&format!("/hitl/cancel/{}", id(&c))).header("X-API-Key", &t.api_key).json(&json!({})), 200)
            .await;
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["decided_by"]["type"], "api_key");
    let o = open(&app, &t, ask(&bot, json!({}))).await;
    let bad = app.post(&format!("/hitl/approve/{}", id(&o))).bearer_auth(&t.token);
    expect_problem(bad.header("content-type", "application/json").body("{not json"), 400).await;
    let unknown = app.post(&format!("/hitl/approve/{}", id(&o))).bearer_auth(&t.token).json(&json!({"note": "x"}));
    expect_problem(unknown, 422).await;
    assert_eq!(status(&app, &t, id(&o)).await["status"], "pending", "nothing was decided by a bad body");
}

#[tokio::test]
async fn credentials_and_roles_are_enforced() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let r = open(&app, &t, ask(&bot, json!({}))).await;
    let approve = format!("/hitl/approve/{}", id(&r));
    // Deciding is for people: an API key is refused, and so is a viewer.
    expect_problem(app.post(&approve).header("X-API-Key", &t.api_key), 401).await;
    let (_, viewer) = app.user(&t, "vic@acme.test", "viewer").await;
    expect_problem(app.post(&approve).bearer_auth(&viewer), 403).await;
    expect_problem(app.get("/hitl/pending").bearer_auth(&viewer), 403).await;
    expect_problem(app.get("/hitl/pending").header("X-API-Key", &t.api_key), 401).await;
    expect_problem(app.post("/hitl/request").bearer_auth(&viewer).json(&ask(&bot, json!({}))), 403).await;
    expect_problem(app.post(&approve), 401).await;
    expect_problem(app.get(&format!("/hitl/status/{}", id(&r))), 401).await;
    assert_eq!(expect(app.get(&format!("/hitl/status/{}", id(&r))).bearer_auth(&viewer), 200).await["id"], r["id"]);
}

#[tokio::test]
async fn validation_and_not_found() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let bad = json!({"agent_id": "x", "action": "", "resource": "r", "reason": "",
        "timeout_seconds": -5, "callback_url": "file:///etc/passwd"});
    let body = expect_problem(app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&bad), 422).await;
    let fields: Vec<&str> = body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["agent_id", "action", "reason", "timeout_seconds", "callback_url"]);
    let missing = json!({"agent_id": bot, "action": "a", "resource": "r"});
    expect_problem(app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&missing), 422).await;
    let ghost = ask("0193a4c2-0000-7000-8000-00000000abcd", json!({}));
    expect_problem(app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&ghost), 404).await;
    let nobody = "0193a4c2-0000-7000-8000-00000000abcd";
    expect_problem(app.get(&format!("/hitl/status/{nobody}")).header("X-API-Key", &t.api_key), 404).await;
    expect_problem(app.post(&format!("/hitl/approve/{nobody}")).bearer_auth(&t.token), 404).await;
    expect_problem(app.get("/hitl/status/not-a-uuid").header("X-API-Key", &t.api_key), 404).await;
    let r = open(&app, &t, ask(&bot, json!({}))).await;
    for wait in ["61", "-1", "x"] {
        let req = app.get(&format!("/hitl/status/{}?wait={wait}", id(&r))).header("X-API-Key", &t.api_key);
        expect_problem(req, 422).await;
    }
}

#[tokio::test]
async fn another_tenant_gets_404_for_every_operation() {
    let app = spawn_app().await;
    let a = app.create_tenant("acme").await;
    let b = app.create_tenant("globex").await;
    let bot = register(&app, &a, "bot").await;
    let r = open(&app, &a, ask(&bot, json!({}))).await;
    expect_problem(app.get(&format!("/hitl/status/{}", id(&r))).header("X-API-Key", &b.api_key), 404).await;
    expect_problem(app.get(&format!("/hitl/status/{}?wait=1", id(&r))).header("X-API-Key", &b.api_key), 404).await;
    for path in ["approve", "reject"] {
        expect_problem(app.post(&format!("/hitl/{path}/{}", id(&r))).bearer_auth(&b.token), 404).await;
    }
    expect_problem(app.post(&format!("/hitl/cancel/{}", id(&r))).header("X-API-Key", &b.api_key), 404).await;
    let pending = expect(app.get("/hitl/pending").bearer_auth(&b.token), 200).await;
    assert_eq!(pending["items"], json!([]));
    // B cannot open a request for A's agent either.
    expect_problem(app.post("/hitl/request").header("X-API-Key", &b.api_key).json(&ask(&bot, json!({}))), 404).await;
    assert_eq!(status(&app, &a, id(&r)).await["status"], "pending");
}

#[tokio::test]
async fn the_pending_queue_is_oldest_first_and_paginated() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(id(&open(&app, &t, ask(&bot, json!({}))).await).to_owned());
    }
    expect(app.post(&format!("/hitl/reject/{}", ids[0])).bearer_auth(&t.token), 200).await;
    let first = expect(app.get("/hitl/pending?limit=2").bearer_auth(&t.token), 200).await;
    let page: Vec<&str> = first["items"].as_array().unwrap().iter().map(id).collect();
    assert_eq!(page, [ids[1].as_str(), ids[2].as_str()]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let rest = expect(app.get(&format!("/hitl/pending?limit=2&cursor={cursor}")).bearer_auth(&t.token), 200).await;
    assert_eq!(rest["items"].as_array().unwrap().iter().map(id).collect::<Vec<_>>(), [ids[3].as_str()]);
    assert!(rest["next_cursor"].is_null());
    expect_problem(app.get("/hitl/pending?limit=501").bearer_auth(&t.token), 422).await;
}

#[tokio::test]
async fn a_long_poll_answers_when_the_request_is_decided_or_when_it_times_out() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let r = open(&app, &t, ask(&bot, json!({}))).await;

    let started = Instant::now();
    let timed_out = status_after(&app, &t, id(&r), 1).await;
    assert_eq!(timed_out["status"], "pending");
    assert!(started.elapsed() >= Duration::from_secs(1), "it waited");

    let poll = {
        let (client, url, key) =
            (app.client.clone(), app.url(&format!("/hitl/status/{}?wait=30", id(&r))), t.api_key.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            let body = read(client.get(url).header("X-API-Key", key).send().await.unwrap()).await.1;
            (body, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    expect(app.post(&format!("/hitl/approve/{}", id(&r))).bearer_auth(&t.token), 200).await;
    let (body, waited) = poll.await.unwrap();
    assert_eq!(body["status"], "approved");
    assert!(waited < Duration::from_secs(10), "answered on the decision, not at the end of the wait: {waited:?}");
    // Decided already: no wait at all.
    assert_eq!(status_after(&app, &t, id(&r), 30).await["status"], "approved");
}

async fn status_after(app: &TestApp, t: &Tenant, id: &str, wait: u32) -> Value {
    expect(app.get(&format!("/hitl/status/{id}?wait={wait}")).header("X-API-Key", &t.api_key), 200).await
}

#[tokio::test]
async fn requests_expire_and_a_late_approval_conflicts() {
    let app = spawn_with(|c| c.hitl_poll_ms = 50).await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let r = open(&app, &t, ask(&bot, json!({"timeout_seconds": 1}))).await;
    let keeps = open(&app, &t, ask(&bot, json!({"timeout_seconds": 600}))).await;
    // A long-poll is answered by the expiry.
    let expired = status_after(&app, &t, id(&r), 10).await;
    assert_eq!(expired["status"], "expired", "{expired}");
    assert_eq!(expired["decided_by"], json!({"type": "system", "id": "hitl_expiry"}));
    let body = expect_problem(app.post(&format!("/hitl/approve/{}", id(&r))).bearer_auth(&t.token), 409).await;
    assert!(body["detail"].as_str().unwrap().contains("expired"), "{body}");
    assert_eq!(status(&app, &t, id(&keeps)).await["status"], "pending");
    assert_eq!(audit_types(&app, &t).await, ["hitl.requested", "hitl.requested", "hitl.expired"]);
}

#[tokio::test]
async fn the_outcome_is_posted_signed_to_the_callback_and_retried() {
    let app = spawn_with(|c| {
        c.hitl_poll_ms = 50;
        c.hitl_callback_backoff_ms = 100;
    })
    .await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let receiver = Receiver::start(&[503]).await;
    let r = open(&app, &t, ask(&bot, json!({"callback_url": receiver.url}))).await;
    assert_eq!(r["callback"]["status"], "waiting");
    expect(app.post(&format!("/hitl/reject/{}", id(&r))).bearer_auth(&t.token).json(&json!({"comment": "no"})), 200)
        .await;

    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 2, "one failure (503), then delivered");
    let last = &got[1];
    assert_eq!((last.method.as_str(), last.path.as_str()), ("POST", "/hooks/hitl"));
    let own = t.callback_secret.as_bytes();
    assert_eq!(last.header("x-webhook-signature"), Some(sign_with(own, &last.body).as_str()), "the tenant's key");
    assert_ne!(last.header("x-webhook-signature"), Some(sign(&last.body).as_str()), "not the shared WEBHOOK_SECRET");
    let (ts, count, matched) =
        timestamped_matches(last.header("x-webhook-timestamp-signature").unwrap(), own, &last.body);
    assert!(matched && count == 1 && (unix_now() - ts).abs() <= 60, "t={ts}, {count} v1");
    assert_eq!(last.header("x-webhook-id"), Some(id(&r)));
    assert_eq!(last.header("x-webhook-event"), Some("hitl.rejected"));
    assert_eq!(last.header("content-type"), Some("application/json"));
    assert_eq!(got[0].body, last.body, "a retry sends the same bytes");
    let body = last.json();
    assert_eq!(
        (body["type"].clone(), body["id"].clone(), body["tenant_id"].clone()),
        (json!("hitl.rejected"), r["id"].clone(), json!(t.id))
    );
    assert_eq!((body["data"]["status"].clone(), body["data"]["comment"].clone()), (json!("rejected"), json!("no")));

    let deadline = Instant::now() + Duration::from_secs(5);
    let callback = loop {
        let cb = status(&app, &t, id(&r)).await["callback"].clone();
        if cb["status"] == "delivered" || Instant::now() > deadline {
            break cb;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        (callback["status"].clone(), callback["attempts"].clone()),
        (json!("delivered"), json!(2)),
        "{callback}"
    );
    assert_eq!(callback["last_error"], Value::Null);
}

#[tokio::test]
async fn a_check_that_needs_approval_opens_a_request_the_agent_can_follow() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let policy = json!({"name": "consent", "template": {"id": "require-consent-personal-data", "parameters": {"effect": "approval"}}});
    expect(app.post("/policies").bearer_auth(&t.token).json(&policy), 201).await;
    let check = json!({"agent_id": bot, "action": "read", "resource": "crm/contacts",
        "context": {"personal_data": true, "consent": false}});
    let decision = expect(app.post("/policies/check").header("X-API-Key", &t.api_key).json(&check), 200).await;
    assert_eq!(decision["required_approval"], true, "{decision}");
    let hitl_id = decision["hitl_request_id"].as_str().unwrap();
    let r = status(&app, &t, hitl_id).await;
    assert_eq!(r["status"], "pending");
    assert_eq!(r["decision_id"], decision["decision_id"]);
    assert_eq!((r["action"].clone(), r["resource"].clone()), (json!("read"), json!("crm/contacts")));
    assert_eq!(r["reason"], decision["reason"]);
    let pending = expect(app.get("/hitl/pending").bearer_auth(&t.token), 200).await;
    assert_eq!(pending["items"][0]["id"], hitl_id);
    let dry = json!({"agent_id": bot, "action": "read", "resource": "crm/contacts", "dry_run": true,
        "context": {"personal_data": true, "consent": false}});
    let dry = expect(app.post("/policies/check").header("X-API-Key", &t.api_key).json(&dry), 200).await;
    assert!(dry["required_approval"] == true && dry["hitl_request_id"].is_null(), "{dry}");
}

/// Polls a request until its callback is `status` (or 10 s pass); answers the callback.
async fn callback_when(app: &TestApp, t: &Tenant, id: &str, status_is: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let cb = status(app, t, id).await["callback"].clone();
        if cb["status"] == status_is || Instant::now() > deadline {
            return cb;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Issue 32.3: with the default configuration (no private range allowed), a callback URL
/// inside the service's network is refused when the request is opened, field named.
#[tokio::test]
async fn callback_urls_inside_the_network_are_refused_by_default() {
    let app = spawn_with(|c| c.hitl_callback_allow_private = String::new()).await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let receiver = Receiver::start(&[]).await;
    let port = receiver.url.rsplit(':').next().unwrap().split('/').next().unwrap().to_owned();
    for url in [
        format!("http://localhost:{port}/hooks/hitl"),
        format!("http://127.0.0.1:{port}/hooks/hitl"),
        format!("http://127.1:{port}/hooks/hitl"),
        format!("http://[::1]:{port}/hooks/hitl"),
        format!("http://[::ffff:127.0.0.1]:{port}/hooks/hitl"),
        "http://metadata.google.internal/computeMetadata/v1/".to_owned(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://[fd00:ec2::254]/latest/meta-data/".to_owned(),
        "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/".to_owned(),
        "http://10.0.0.1/".to_owned(),
        "http://100.64.0.1/".to_owned(),
        "http://intranet/".to_owned(),
    ] {
        let req =
            app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&ask(&bot, json!({"callback_url": url})));
        let body = expect_problem(req, 422).await;
        assert_eq!(body["errors"][0]["field"], "callback_url", "{url}: {body}");
        assert_eq!(body["errors"].as_array().unwrap().len(), 1, "{body}");
    }
    assert!(receiver.received().is_empty());
    // A public receiver is still accepted.
    open(&app, &t, ask(&bot, json!({"callback_url": "https://hooks.example.com/hitl"}))).await;
}

/// Issue 32.3: the operator's allow-list lets a loopback receiver have its callback, and a
/// cancel's callback is delivered.
#[tokio::test]
async fn with_the_operator_allow_list_a_loopback_receiver_gets_its_callback() {
    let app = spawn_with(|c| {
        c.hitl_callback_allow_private = "127.0.0.1/32".into();
        c.hitl_poll_ms = 50;
    })
    .await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let receiver = Receiver::start(&[]).await;
    let r = open(&app, &t, ask(&bot, json!({"callback_url": receiver.url}))).await;
    expect(app.post(&format!("/hitl/cancel/{}", id(&r))).header("X-API-Key", &t.api_key), 200).await;
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].header("x-webhook-event"), Some("hitl.cancelled"));
    assert_eq!(callback_when(&app, &t, id(&r), "delivered").await["status"], "delivered");
    // Only the range allowed: the rest of loopback is still refused.
    let other = ask(&bot, json!({"callback_url": "http://127.0.0.2:9/x"}));
    expect_problem(app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&other), 422).await;
}

/// Issue 32.3: a name is judged by what it resolves to when the callback is sent (here
/// `localhost`, accepted when opened because the operator allows a private range, through
/// the system's resolver): refused, never connected to, given up at once, and the tenant
/// is told only that policy refused it.
#[tokio::test]
async fn a_name_resolving_to_a_refused_address_is_refused_when_sending() {
    let app = spawn_with(|c| {
        c.hitl_callback_allow_private = "10.0.0.0/8".into();
        c.hitl_poll_ms = 50;
    })
    .await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let receiver = Receiver::start(&[]).await;
    let url = receiver.url.replace("127.0.0.1", "localhost");
    let r = open(&app, &t, ask(&bot, json!({"callback_url": url}))).await;
    expect(app.post(&format!("/hitl/cancel/{}", id(&r))).header("X-API-Key", &t.api_key), 200).await;
    let cb = callback_when(&app, &t, id(&r), "failed").await;
    assert_eq!(
        (cb["status"].clone(), cb["attempts"].clone(), cb["last_error"].clone()),
        (json!("failed"), json!(1), json!("receiver refused by policy")),
        "{cb}"
    );
    assert!(receiver.received().is_empty(), "never connected");
}

/// Issue 32.3: `last_error` is coarse: neither the status a receiver answered nor why a
/// connection failed, so callbacks cannot tell one listener (or closed port) from another.
#[tokio::test]
async fn the_tenant_sees_only_a_coarse_callback_error() {
    let app = spawn_with(|c| {
        c.hitl_poll_ms = 50;
        c.hitl_callback_max_attempts = 1;
    })
    .await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let answers_404 = Receiver::start(&[404]).await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        format!("http://{addr}/closed")
    };
    let mut ids = Vec::new();
    for url in [answers_404.url.clone(), closed] {
        let r = open(&app, &t, ask(&bot, json!({"callback_url": url}))).await;
        expect(app.post(&format!("/hitl/cancel/{}", id(&r))).header("X-API-Key", &t.api_key), 200).await;
        ids.push(id(&r).to_owned());
    }
    let not_2xx = callback_when(&app, &t, &ids[0], "failed").await;
    assert_eq!(not_2xx["last_error"], "receiver answered an error status", "{not_2xx}");
    let refused = callback_when(&app, &t, &ids[1], "failed").await;
    assert_eq!(refused["last_error"], "delivery failed", "{refused}");
    let page = expect(app.get("/audit?limit=500").header("X-API-Key", &t.api_key), 200).await;
    for record in page["items"].as_array().unwrap() {
        if record["event_type"] == "hitl.callback_failed" {
            let error = record["details"]["last_error"].as_str().unwrap();
            assert!(!error.contains("404") && !error.to_lowercase().contains("connect"), "{record}");
        }
    }
}

/// Issue 32.3: a tenant's callbacks are rate-limited (`AGENTGOV_HITL_CALLBACKS_PER_MINUTE`):
/// past the rate, a callback waits for the next minute without losing an attempt.
#[tokio::test]
async fn callbacks_are_rate_limited_per_tenant() {
    let app = spawn_with(|c| {
        c.hitl_poll_ms = 50;
        c.hitl_callbacks_per_minute = 1;
    })
    .await;
    let t = app.create_tenant("acme").await;
    let bot = register(&app, &t, "bot").await;
    let receiver = Receiver::start(&[]).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let r = open(&app, &t, ask(&bot, json!({"callback_url": receiver.url}))).await;
        expect(app.post(&format!("/hitl/cancel/{}", id(&r))).header("X-API-Key", &t.api_key), 200).await;
        ids.push(id(&r).to_owned());
    }
    // Wait until one is delivered and the other postponed (its next attempt moved on).
    let deadline = Instant::now() + Duration::from_secs(10);
    let (delivered, postponed) = loop {
        let mut delivered = Vec::new();
        let mut postponed = Vec::new();
        for id in &ids {
            let r = status(&app, &t, id).await;
            let cb = r["callback"].clone();
            if cb["status"] == "delivered" {
                delivered.push(cb);
            } else if cb["status"] == "scheduled" && cb["next_attempt_at"] != r["decided_at"] {
                postponed.push(cb);
            }
        }
        if delivered.len() + postponed.len() == 2 || Instant::now() > deadline {
            break (delivered, postponed);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!((delivered.len(), postponed.len()), (1, 1), "{delivered:?} {postponed:?}");
    assert_eq!(postponed[0]["attempts"], 0, "a postponement is not an attempt: {}", postponed[0]);
    assert_eq!(receiver.received().len(), 1);
}

/// Issue 32, point 4: tenant A knows the shared `WEBHOOK_SECRET` but not B's callback key, so
/// it cannot forge B's `hitl.approved`; B's admin rotates the key and, for a day, both keys
/// sign.
#[tokio::test]
async fn callbacks_carry_the_tenants_own_key_and_rotation_signs_with_both_for_a_day() {
    let app = spawn_with(|c| c.hitl_poll_ms = 50).await;
    let (a, b) = (app.create_tenant("acme").await, app.create_tenant("bravo").await);
    assert_ne!(a.callback_secret, b.callback_secret);
    assert!(b.callback_secret.starts_with("whsec_"), "{}", b.callback_secret);
    let bot = register(&app, &b, "bot").await;
    let receiver = Receiver::start(&[]).await;

    let r = open(&app, &b, ask(&bot, json!({"callback_url": receiver.url}))).await;
    expect(app.post(&format!("/hitl/approve/{}", id(&r))).bearer_auth(&b.token).json(&json!({})), 200).await;
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    let first = &got[0];
    let plain = first.header("x-webhook-signature").unwrap();
    assert_eq!(plain, sign_with(b.callback_secret.as_bytes(), &first.body));
    assert_ne!(plain, sign_with(a.callback_secret.as_bytes(), &first.body));
    assert_ne!(plain, sign(&first.body), "what tenant A could compute");

    // Rotation: an admin only, the value shown once, the old key signing beside it.
    expect_problem(app.post("/tenant/callback-secret").header("X-API-Key", &b.api_key), 401).await;
    let (_, analyst) = app.user(&b, "analyst@bravo.test", "analyst").await;
    expect_problem(app.post("/tenant/callback-secret").bearer_auth(&analyst), 403).await;
    let issued = expect(app.post("/tenant/callback-secret").bearer_auth(&b.token), 200).await;
    let new_secret = issued["secret"].as_str().unwrap().to_owned();
    assert_ne!(new_secret, b.callback_secret);
    assert_eq!(issued["purpose"], "callback");
    assert!(issued["previous_valid_until"].is_string(), "{issued}");
    let listed = expect(app.get("/tenant/secrets").bearer_auth(&b.token), 200).await;
    assert!(!listed.to_string().contains("whsec_"), "values are never listed: {listed}");
    assert_eq!(listed["callback"]["previous_valid_until"], issued["previous_valid_until"]);
    assert_eq!(listed["webhook"], Value::Null);

    let r = open(&app, &b, ask(&bot, json!({"callback_url": receiver.url}))).await;
    expect(app.post(&format!("/hitl/reject/{}", id(&r))).bearer_auth(&b.token).json(&json!({})), 200).await;
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    let second = &got[1];
    assert_eq!(second.header("x-webhook-signature").unwrap(), sign_with(new_secret.as_bytes(), &second.body));
    let stamped = second.header("x-webhook-timestamp-signature").unwrap();
    let (_, count, new_ok) = timestamped_matches(stamped, new_secret.as_bytes(), &second.body);
    let (_, _, old_ok) = timestamped_matches(stamped, b.callback_secret.as_bytes(), &second.body);
    assert!(count == 2 && new_ok && old_ok, "{stamped}");
    let audit = expect(app.get("/audit?event_type=tenant.secret_rotated").bearer_auth(&b.token), 200).await;
    assert_eq!(audit["items"].as_array().unwrap().len(), 1);
    assert!(!audit.to_string().contains(&new_secret), "the audit log never holds the value");
}
