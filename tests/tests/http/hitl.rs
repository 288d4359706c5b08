//! Spec 4.9: human-in-the-loop approval requests over HTTP — every transition, the 409 and
//! expiry cases, long-poll, signed callbacks, and the policy check that opens a request.
use std::time::{Duration, Instant};

use agentgov_tests::hooks::{Receiver, sign};
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
    assert_eq!(last.header("x-webhook-signature"), Some(sign(&last.body).as_str()), "signed like the inbound webhook");
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
