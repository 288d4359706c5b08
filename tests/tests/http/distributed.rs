//! Production mode (Postgres + Redis) end to end: the same behaviours as the embedded
//! default, over the real services. Skipped without the test URLs; required in CI.
use agentgov_tests::*;
use serde_json::{Value, json};

#[tokio::test]
async fn readiness_reports_postgres_and_redis() {
    let Some((app, _guard)) = spawn_distributed().await else { return };
    let body = expect(app.get("/health/ready"), 200).await;
    assert_eq!(body["components"][0]["backend"], "postgres");
    assert_eq!(body["components"][1]["backend"], "redis");
}

#[tokio::test]
async fn tenants_login_logout_and_revocation_work_on_postgres_and_redis() {
    let Some((app, _guard)) = spawn_distributed().await else { return };
    let t = app.create_tenant("acme").await;
    let status = expect(app.get("/status").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(status["mode"], "distributed");
    expect(app.get("/auth/me").bearer_auth(&t.token), 200).await;
    expect(app.post("/auth/logout").bearer_auth(&t.token), 204).await;
    expect_problem(app.get("/auth/me").bearer_auth(&t.token), 401).await;
    expect_problem(app.get("/stats").header("X-API-Key", &t.session_key), 401).await;
}

#[tokio::test]
async fn blocking_and_the_last_admin_rule_hold_on_postgres() {
    let Some((app, _guard)) = spawn_distributed().await else { return };
    let t = app.create_tenant("acme").await;
    let (id, bob) = app.user(&t, "bob@acme.test", "analyst").await;
    expect(app.post(&format!("/users/{id}/block")).bearer_auth(&t.token), 200).await;
    expect_problem(app.get("/auth/me").bearer_auth(&bob), 401).await;
    expect_problem(app.delete(&format!("/users/{}", t.admin_id)).bearer_auth(&t.token), 409).await;
    let other = app.create_tenant("globex").await;
    expect_problem(app.get(&format!("/users/{}", other.admin_id)).bearer_auth(&t.token), 404).await;
}

#[tokio::test]
async fn login_failures_are_rate_limited_through_redis() {
    let Some((app, _guard)) = spawn_distributed().await else { return };
    app.create_tenant("acme").await;
    for _ in 0..5 {
        let body = json!({"email": "admin@acme.test", "password": "wrong password!"});
        expect_problem(app.post("/auth/login").json(&body), 401).await;
    }
    let body = json!({"email": "admin@acme.test", "password": PASSWORD});
    let res = app.post("/auth/login").json(&body).send().await.unwrap();
    assert_eq!(res.status(), 429);
    assert!(res.headers().contains_key("retry-after"));
}

/// Agents written on one replica are found by search on another at once (the index
/// version in Postgres tells the other replica's in-process index to reload), and the
/// webhook stores a repeated delivery once across replicas.
#[tokio::test]
async fn agents_and_the_webhook_work_across_replicas() {
    let Some((apps, _guard)) = spawn_replicas(2, |_, _| {}).await else { return };
    let (a, b) = (&apps[0], &apps[1]);
    let t = a.create_tenant("acme").await;
    let key = &t.api_key;
    let register = |name: &str, description: &str| {
        a.post("/agents/register")
            .header("X-API-Key", key)
            .json(&json!({"name": name, "type": "llm", "description": description}))
    };
    let wiki = expect(register("Wiki Helper", "Answers questions from the engineering wiki"), 201).await;
    // Replica B builds its index now, before the next write.
    let found = expect(b.get("/agents/search?q=wiki").header("X-API-Key", key), 200).await;
    assert_eq!(found["items"][0]["name"], "Wiki Helper");
    let payer = expect(register("Payout Runner", "Sends money to sellers by wire transfer"), 201).await;
    let found = expect(b.get("/agents/search?q=move%20money&limit=1").header("X-API-Key", key), 200).await;
    assert_eq!(found["items"][0]["id"], payer["id"], "{found}");
    expect(a.delete(&format!("/agents/{}", payer["id"].as_str().unwrap())).header("X-API-Key", key), 204).await;
    let found = expect(b.get("/agents/search?q=move%20money").header("X-API-Key", key), 200).await;
    assert_eq!(
        found["items"].as_array().unwrap().iter().map(|h| h["id"].clone()).collect::<Vec<_>>(),
        vec![wiki["id"].clone()]
    );
    expect_problem(
        b.post("/agents/register").header("X-API-Key", key).json(&json!({"name": "Wiki Helper", "type": "x"})),
        409,
    )
    .await;

    // One delivery sent to both replicas is stored once.
    let body =
        serde_json::to_vec(&json!({"event": "agent.action", "payload": {"agent_id": wiki["id"], "action": "answer"}}))
            .unwrap();
    let signature = agentgov_tests::hooks::sign(&body);
    for app in [a, b, a] {
        let req = app
            .post("/webhooks/agent")
            .header("X-API-Key", key)
            .header("X-Webhook-Signature", &signature)
            .header("X-Webhook-Id", "once")
            .body(body.clone());
        expect(req, 200).await;
    }
    let page = expect(b.get("/audit?event_type=agent.action").header("X-API-Key", key), 200).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
}

/// A policy changed on one replica takes effect on another: the change is announced on the
/// Redis bus and the other replica drops its compiled copy (with a long cache TTL, so the
/// bus is what does it). Policies are stored in Postgres.
#[tokio::test]
async fn a_policy_change_reaches_every_replica_through_the_bus() {
    let Some((apps, _guard)) = spawn_replicas(2, |_, c| c.policy_cache_ttl_secs = 3600).await else { return };
    let (a, b) = (&apps[0], &apps[1]);
    let t = a.create_tenant("acme").await;
    let body = json!({"name": "Bot", "type": "llm", "capabilities": [], "permissions": {}});
    let agent = expect(a.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    let check = json!({"agent_id": agent["id"], "action": "delete", "resource": "tmp/x"});
    let rego = |action: &str| {
        format!("package gate\n\nimport rego.v1\n\ndeny contains \"no\" if input.action == \"{action}\"\n")
    };
    let p =
        expect(a.post("/policies").bearer_auth(&t.token).json(&json!({"name": "gate", "rego": rego("delete")})), 201)
            .await;
    // Replica B compiles version 1 now.
    let first = expect(b.post("/policies/check").header("X-API-Key", &t.api_key).json(&check), 200).await;
    assert_eq!(first["allowed"], false, "{first}");

    let id = p["id"].as_str().unwrap();
    let change = json!({"name": "gate", "rego": rego("drop")});
    expect(a.put(&format!("/policies/{id}")).bearer_auth(&t.token).json(&change), 200).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = expect(b.post("/policies/check").header("X-API-Key", &t.api_key).json(&check), 200).await;
        if now["allowed"] == true {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "replica B still decides with version 1: {now}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let decisions = expect(a.get("/audit?event_type=policy.decision").header("X-API-Key", &t.api_key), 200).await;
    assert!(decisions["items"].as_array().unwrap().len() >= 2);
}

/// A tenant's settings changed on one replica decide checks on another: the change is
/// announced on the Redis bus (with a long cache TTL, so the bus is what does it).
#[tokio::test]
async fn a_tenant_settings_change_reaches_every_replica_through_the_bus() {
    let Some((apps, _guard)) = spawn_replicas(2, |_, c| c.policy_cache_ttl_secs = 3600).await else { return };
    let (a, b) = (&apps[0], &apps[1]);
    let t = a.create_tenant("acme").await;
    let body = json!({"name": "Bot", "type": "llm", "capabilities": [], "permissions": {}});
    let agent = expect(a.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    let check = json!({"agent_id": agent["id"], "action": "update", "resource": "prod/reports"});
    // Replica B keeps the tenant's default settings now.
    let first = expect(b.post("/policies/check").header("X-API-Key", &t.api_key).json(&check), 200).await;
    assert_eq!(first["allowed"], true, "{first}");

    let threshold = first["risk_score"].as_f64().unwrap();
    let change = json!({"settings": {"approval_threshold": threshold}});
    expect(a.patch("/tenant").bearer_auth(&t.token).json(&change), 200).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now = expect(b.post("/policies/check").header("X-API-Key", &t.api_key).json(&check), 200).await;
        if now["required_approval"] == true {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "replica B still uses the old threshold: {now}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Issue 6's multi-replica case: two servers on one Postgres and one Redis. A WebSocket
/// client on replica A sees the request created on replica B, then its approval made on B;
/// a long-poll on A is answered by a decision on B; and every expiry is made by one replica
/// (the `hitl` lease holder), once per request.
#[tokio::test]
async fn hitl_events_cross_replicas_and_one_replica_expires_requests() {
    use std::time::Duration;
    let Some((apps, _guard)) = spawn_replicas(2, |_, c| c.hitl_poll_ms = 50).await else { return };
    let (a, b) = (&apps[0], &apps[1]);
    let t = a.create_tenant("acme").await;
    let other = b.create_tenant("globex").await;
    let mut socket = crate::ws::connect(a, &t.token).await;
    crate::ws::subscribe(&mut socket, &["hitl.*"]).await;
    let mut outsider = crate::ws::connect(a, &other.token).await;

    let body = json!({"name": "bot", "type": "llm", "capabilities": ["read"], "permissions": {}});
    let agent = expect(b.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    let ask = |timeout: u32| {
        json!({"agent_id": agent["id"], "action": "delete", "resource": "prod/db", "reason": "cleanup",
            "timeout_seconds": timeout})
    };
    let r = expect(b.post("/hitl/request").header("X-API-Key", &t.api_key).json(&ask(600)), 201).await;
    let event = crate::ws::next_event(&mut socket, "hitl.requested", Duration::from_secs(5)).await;
    assert_eq!((event["data"]["id"].clone(), event["tenant_id"].clone()), (r["id"].clone(), json!(t.id)));

    let id = r["id"].as_str().unwrap();
    let poll = {
        let (client, url, key) = (a.client.clone(), a.url(&format!("/hitl/status/{id}?wait=30")), t.api_key.clone());
        tokio::spawn(async move { read(client.get(url).header("X-API-Key", key).send().await.unwrap()).await.1 })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    expect(b.post(&format!("/hitl/approve/{id}")).bearer_auth(&t.token), 200).await;
    let event = crate::ws::next_event(&mut socket, "hitl.approved", Duration::from_secs(5)).await;
    assert_eq!(event["data"]["id"], r["id"]);
    let polled = tokio::time::timeout(Duration::from_secs(10), poll).await.unwrap().unwrap();
    assert_eq!(polled["status"], "approved", "the long-poll on A was woken by B's decision");
    assert!(crate::ws::next_json(&mut outsider, Duration::from_millis(300)).await.is_none(), "globex saw nothing");

    // Short requests opened on both replicas expire once each, all by one replica.
    let mut ids = Vec::new();
    for (i, app) in [a, b, a, b, a, b].into_iter().enumerate() {
        let r =
            expect(app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&ask(1 + (i as u32 % 2))), 201).await;
        ids.push(r["id"].as_str().unwrap().to_owned());
    }
    for id in &ids {
        let done = expect(a.get(&format!("/hitl/status/{id}?wait=15")).header("X-API-Key", &t.api_key), 200).await;
        assert_eq!(done["status"], "expired", "{done}");
    }
    let audit = expect(a.get("/audit?event_type=hitl.expired&limit=100").header("X-API-Key", &t.api_key), 200).await;
    let records = audit["items"].as_array().unwrap();
    let mut expired: Vec<&str> = records.iter().map(|r| r["details"]["hitl_request_id"].as_str().unwrap()).collect();
    expired.sort_unstable();
    let mut expected: Vec<&str> = ids.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(expired, expected, "one hitl.expired record per request");
    let replicas: std::collections::HashSet<&str> =
        records.iter().map(|r| r["details"]["replica"].as_str().unwrap()).collect();
    assert_eq!(replicas.len(), 1, "every expiry was made by the one lease holder: {replicas:?}");
}

/// Issue 32.9: the WebSocket and long-poll caps were per process, so a tenant could hold
/// `replicas × 10,000` of each. Now each tenant holds at most its share over every replica
/// (places in Redis): two replicas sharing one Redis share the cap, a socket's place is
/// given back when it closes, and another tenant has its own share.
#[tokio::test]
async fn sockets_and_long_polls_are_capped_per_tenant_over_every_replica() {
    let Some((apps, _guard)) = spawn_replicas(2, |_, c| {
        c.ws_max_connections_per_tenant = 2;
        c.hitl_max_long_polls_per_tenant = 1;
    })
    .await
    else {
        return;
    };
    let (a, b) = (&apps[0], &apps[1]);
    let t = a.create_tenant("acme").await;
    let other = a.create_tenant("globex").await;
    let ws =
        |app: &TestApp, token: &str| format!("{}/api/v1/ws?token={token}", app.base.replacen("http://", "ws://", 1));
    let refusal = |url: String| async move {
        match tokio_tungstenite::connect_async(url).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                let body: serde_json::Value =
                    serde_json::from_slice(response.body().as_deref().unwrap_or(b"{}")).unwrap();
                (response.status().as_u16(), body)
            }
            other => panic!("expected a refusal, got {:?}", other.map(|(_, r)| r.status())),
        }
    };

    let mut first = tokio_tungstenite::connect_async(ws(a, &t.token)).await.unwrap().0;
    let _second = tokio_tungstenite::connect_async(ws(b, &t.token)).await.unwrap().0;
    for app in [a, b] {
        let (status, body) = refusal(ws(app, &t.token)).await;
        assert_eq!(status, 429, "{body}");
        assert!(body["detail"].as_str().unwrap().contains("AGENTGOV_WS_MAX_CONNECTIONS_PER_TENANT"), "{body}");
    }
    let _theirs = tokio_tungstenite::connect_async(ws(b, &other.token)).await.expect("globex has its own share");

    // Closed on replica A, its place is given back: replica B admits a socket again.
    first.close(None).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let _third = loop {
        match tokio_tungstenite::connect_async(ws(b, &t.token)).await {
            Ok((socket, _)) => break socket,
            Err(e) => {
                assert!(std::time::Instant::now() < deadline, "the closed socket's place was not given back: {e}")
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };

    // One long-poll of the tenant at a time, whichever replica it waits on.
    let body = json!({"name": "Bot", "type": "llm", "capabilities": [], "permissions": {}});
    let agent = expect(a.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    let ask = json!({"agent_id": agent["id"], "action": "delete", "resource": "prod/db", "reason": "cleanup"});
    let r = expect(a.post("/hitl/request").header("X-API-Key", &t.api_key).json(&ask), 201).await;
    let status = format!("/hitl/status/{}", r["id"].as_str().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let (waiting, refused) = loop {
        let waiting = tokio::spawn(a.get(&format!("{status}?wait=30")).header("X-API-Key", &t.api_key).send());
        let res = b.get(&format!("{status}?wait=1")).header("X-API-Key", &t.api_key).send().await.unwrap();
        if res.status() == 429 {
            break (waiting, read(res).await.1);
        }
        // B's long-poll came first and held the place: A's was refused (or waited after it).
        assert_eq!(res.status(), 200);
        let _ = waiting.await.unwrap().unwrap();
        assert!(std::time::Instant::now() < deadline, "replica B never saw replica A's long-poll");
    };
    assert!(refused["detail"].as_str().unwrap().contains("AGENTGOV_HITL_MAX_LONG_POLLS_PER_TENANT"), "{refused}");
    expect(b.get(&status).header("X-API-Key", &t.api_key), 200).await;
    expect(a.post(&format!("/hitl/approve/{}", r["id"].as_str().unwrap())).bearer_auth(&t.token).json(&json!({})), 200)
        .await;
    assert_eq!(waiting.await.unwrap().unwrap().status(), 200);
    // The answered long-poll gave its place back.
    expect(b.get(&format!("{status}?wait=1")).header("X-API-Key", &t.api_key), 200).await;
}

/// Issue 32.9: ten asynchronous exports in a row were all accepted, each copying the whole
/// log for a day. Now a tenant has at most its share queued or running (429 past it).
#[tokio::test]
async fn asynchronous_exports_are_capped_per_tenant_on_postgres() {
    let Some((apps, _guard)) = spawn_replicas(1, |_, c| {
        c.max_queued_exports_per_tenant = 2;
        c.audit_export_worker = false;
    })
    .await
    else {
        return;
    };
    let app = &apps[0];
    let t = app.create_tenant("acme").await;
    let other = app.create_tenant("globex").await;
    let export = |key: &str| app.post("/audit/export/async").header("X-API-Key", key).json(&json!({"format": "jsonl"}));
    expect(export(&t.api_key), 202).await;
    expect(export(&t.api_key), 202).await;
    let body = expect_problem(export(&t.api_key), 429).await;
    assert!(body["detail"].as_str().unwrap().contains("AGENTGOV_MAX_QUEUED_EXPORTS_PER_TENANT"), "{body}");
    expect(export(&other.api_key), 202).await;
}

/// A session's labels raised on one replica decide a check on another: each replica marks
/// its records of the session in Redis, and the other reads the records from Postgres when
/// a mark is past its kept state (no bus message is needed).
#[tokio::test]
async fn session_labels_raised_on_one_replica_are_read_on_another() {
    use agentgov_domain::ports::{Cache, Maxima};
    let prefix = format!("agentgov-test-{}:", uuid::Uuid::now_v7().simple());
    let Some((apps, _guard)) = spawn_replicas(2, |_, c| c.redis_prefix = prefix.clone()).await else { return };
    let (a, b) = (&apps[0], &apps[1]);
    let t = a.create_tenant("acme").await;
    let body = json!({"name": "Bot", "type": "llm", "capabilities": [], "permissions": {}});
    let agent = expect(a.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    for (name, id) in [("labels", "label-sensitive-reads"), ("no send", "no-send-after-secret")] {
        let body = json!({"name": name, "template": {"id": id}});
        expect(a.post("/policies").bearer_auth(&t.token).json(&body), 201).await;
    }
    let check = |action: &str, resource: &str| json!({"agent_id": agent["id"], "action": action, "resource": resource, "session_id": "run-9"});
    // B knows the session before A adds to it, so B's kept state must catch up.
    let first = expect(b.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("list", "docs")), 200);
    assert_eq!(first.await["allowed"], true);
    let read =
        expect(a.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("read", "vault/token")), 200);
    assert_eq!(read.await["labels"], json!(["secret_read"]));
    let send =
        expect(b.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("send", "mail")), 200).await;
    assert_eq!(send["allowed"], false, "{send}");
    let state = expect(a.get("/sessions/run-9").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!((&state["checks"], &state["decisions"]["deny"]), (&json!(3), &json!(1)), "{state}");

    // Each replica's mark of what it wrote (`w:`) and of its reads from Postgres (`v:`).
    let redis = agentgov_store_conformance::service_url("AGENTGOV_TEST_REDIS_URL").unwrap();
    let cache = agentgov_cache_redis::RedisCache::connect(&redis, &prefix, 1).unwrap();
    let Maxima::Members(marks) = cache.maxima(&format!("session-marks:{}:run-9", t.id)).await.unwrap() else {
        panic!("too many marks")
    };
    let kinds: Vec<&str> = marks.iter().map(|(m, _)| &m[..2]).collect();
    assert_eq!((kinds.iter().filter(|k| **k == "w:").count(), kinds.len()), (2, 4), "{marks:?}");
    // B's kept state is current on the marks alone; A's next record moves it again.
    let again = expect(b.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("send", "mail")), 200);
    assert_eq!(again.await["allowed"], false);
    expect(a.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("list", "docs")), 200).await;
    let state = expect(b.get("/sessions/run-9").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!((&state["checks"], &state["decisions"]["deny"]), (&json!(5), &json!(2)), "{state}");
}

/// Issue 38, point 2: an approval granted on one replica binds the exact action on every
/// replica (real Rego, Postgres and Redis): the token is refused for other arguments,
/// honoured once for the approved ones whichever replica is asked (two racing replicas, one
/// wins), refused the second time; an edited approval is checked again (a denial wins) and
/// binds the edit; a token past its expiry is refused.
#[tokio::test]
async fn approval_tokens_bind_the_action_across_replicas() {
    let Some((apps, _guard)) = spawn_replicas(2, |_, c| c.hitl_approval_token_ttl_secs = 10).await else { return };
    let (a, b) = (&apps[0], &apps[1]);
    let t = a.create_tenant("acme").await;
    let body = json!({"name": "Payer", "type": "llm", "capabilities": [], "permissions": {}});
    let agent = expect(a.post("/agents/register").header("X-API-Key", &t.api_key).json(&body), 201).await;
    let rego = "package acme.payments\n\nimport rego.v1\n\n\
        require_approval contains \"transfers need a person\" if input.action == \"transfer\"\n\n\
        deny contains \"no transfers offshore\" if input.context.arguments.to == \"offshore\"\n";
    expect(a.post("/policies").bearer_auth(&t.token).json(&json!({"name": "payments", "rego": rego})), 201).await;
    let check = |to: &str, token: Option<&str>| {
        let mut body = json!({"agent_id": agent["id"], "action": "transfer", "resource": "payments/acct-1",
            "context": {"arguments": {"to": to, "amount": 100}}, "session_id": "run-1"});
        if let Some(token) = token {
            body["approval_token"] = json!(token);
        }
        body
    };
    let ask = async |to: &str| {
        let asked = expect(a.post("/policies/check").header("X-API-Key", &t.api_key).json(&check(to, None)), 200).await;
        assert_eq!(asked["required_approval"], true, "{asked}");
        asked["hitl_request_id"].as_str().unwrap().to_owned()
    };
    let token_of = async |id: &str| {
        let r = expect(b.get(&format!("/hitl/status/{id}")).header("X-API-Key", &t.api_key), 200).await;
        assert_eq!(r["status"], "approved", "{r}");
        r["approval_token"].as_str().unwrap().to_owned()
    };

    // Asked on A, approved on B, the token read on B.
    let id = ask("alice").await;
    let pending = expect(b.get(&format!("/hitl/status/{id}")).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(pending["action_digest"].as_str().unwrap().len(), 64);
    assert!(pending.get("approval_token").is_none(), "{pending}");
    expect(b.post(&format!("/hitl/approve/{id}")).bearer_auth(&t.token).json(&json!({"comment": "ok"})), 200).await;
    let token = token_of(&id).await;

    let other =
        expect(a.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("mallory", Some(&token))), 200);
    let other = other.await;
    assert_eq!((&other["allowed"], &other["required_approval"]), (&json!(false), &json!(false)), "{other}");
    assert!(other["reason"].as_str().unwrap().contains("different action"), "{other}");
    assert_eq!(other["hitl_request_id"], Value::Null);

    // The same token on both replicas at once: one runs, the other is refused.
    let run = |app: &TestApp| {
        let send = app.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("alice", Some(&token)));
        expect(send, 200)
    };
    let (on_a, on_b) = tokio::join!(run(a), run(b));
    let allowed: Vec<&Value> = [&on_a, &on_b].into_iter().filter(|r| r["allowed"] == true).collect();
    assert_eq!(allowed.len(), 1, "{on_a} {on_b}");
    assert_eq!(allowed[0]["approved_by_request"], json!(id));
    let loser = if on_a["allowed"] == true { &on_b } else { &on_a };
    assert!(loser["reason"].as_str().unwrap().contains("used already"), "{loser}");
    let again =
        expect(a.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("alice", Some(&token))), 200);
    assert!(again.await["reason"].as_str().unwrap().contains("used already"));
    let spent = expect(a.get(&format!("/hitl/status/{id}")).header("X-API-Key", &t.api_key), 200).await;
    assert!(spent.get("approval_token").is_none() && spent["grant"]["used_at"].is_string(), "{spent}");

    // An edit the policy denies is 409 and leaves it pending; an allowed edit binds the edit.
    let id = ask("bob").await;
    let offshore = json!({"context": {"arguments": {"to": "offshore", "amount": 100}}});
    let refused = expect(a.post(&format!("/hitl/approve/{id}")).bearer_auth(&t.token).json(&offshore), 409).await;
    assert!(refused["detail"].as_str().unwrap().contains("no transfers offshore"), "{refused}");
    let edit = json!({"comment": "to carol instead", "context": {"arguments": {"to": "carol", "amount": 100}}});
    let edited = expect(b.post(&format!("/hitl/approve/{id}")).bearer_auth(&t.token).json(&edit), 200).await;
    assert_eq!(edited["approved_context"]["arguments"]["to"], "carol");
    let token = token_of(&id).await;
    let as_asked =
        expect(a.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("bob", Some(&token))), 200);
    assert!(as_asked.await["reason"].as_str().unwrap().contains("different action"));
    let as_edited =
        expect(a.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("carol", Some(&token))), 200);
    assert_eq!(as_edited.await["allowed"], true);

    // Past its ten seconds the token is refused, and the status no longer serves it.
    let id = ask("dave").await;
    expect(a.post(&format!("/hitl/approve/{id}")).bearer_auth(&t.token), 200).await;
    let token = token_of(&id).await;
    tokio::time::sleep(std::time::Duration::from_secs(11)).await;
    let late =
        expect(b.post("/policies/check").header("X-API-Key", &t.api_key).json(&check("dave", Some(&token))), 200);
    let late = late.await;
    assert!(late["reason"].as_str().unwrap().contains("expired"), "{late}");
    let served = expect(a.get(&format!("/hitl/status/{id}")).header("X-API-Key", &t.api_key), 200).await;
    assert!(served.get("approval_token").is_none(), "{served}");

    // Bad input is 422, not a decision.
    let mut bad = check("erin", None);
    bad["approval_token"] = json!("not a token");
    let problem = expect(a.post("/policies/check").header("X-API-Key", &t.api_key).json(&bad), 422).await;
    assert_eq!(problem["errors"][0]["field"], "approval_token", "{problem}");
}
