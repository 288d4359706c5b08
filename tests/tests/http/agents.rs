//! Spec 4.4, the agent registry, over HTTP: registration, lists and filters, lookup,
//! details, full updates, deletion, heartbeats, semantic search, and every error.
use agentgov_server::config::SearchEmbedder;
use agentgov_tests::*;
use serde_json::{Value, json};

fn agent(name: &str, description: &str, capabilities: &[&str], permissions: Value) -> Value {
    json!({"name": name, "type": "llm", "description": description, "capabilities": capabilities, "permissions": permissions})
}

async fn register(app: &TestApp, key: &str, body: &Value) -> Value {
    expect(app.post("/agents/register").header("X-API-Key", key).json(body), 201).await
}

fn names(page: &Value) -> Vec<String> {
    page["items"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn register_get_list_update_delete() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let payer = register(
        &app,
        &t.api_key,
        &agent(
            "Payout Runner",
            "Sends vendor payments by wire transfer",
            &["transfer funds"],
            json!({"payments": "write"}),
        ),
    )
    .await;
    for field in [
        "id",
        "tenant_id",
        "name",
        "type",
        "description",
        "capabilities",
        "permissions",
        "status",
        "predicted_type",
        "risk",
        "risk_score",
        "metadata",
        "last_seen_at",
        "created_at",
        "updated_at",
    ] {
        assert!(payer.get(field).is_some(), "{field} missing from {payer}");
    }
    assert_eq!(payer["status"], "active");
    assert_eq!(payer["last_seen_at"], Value::Null);
    assert!(["medium", "high", "critical"].contains(&payer["risk"].as_str().unwrap()), "{payer}");
    let id = payer["id"].as_str().unwrap();

    // Lookup with either credential.
    assert_eq!(expect(app.get(&format!("/agents/{id}")).header("X-API-Key", &t.api_key), 200).await, payer);
    assert_eq!(expect(app.get(&format!("/agents/{id}")).bearer_auth(&t.token), 200).await, payer);

    let docs =
        register(&app, &t.api_key, &json!({"name": "Docs", "type": "rag", "capabilities": [], "permissions": {}}))
            .await;
    assert_eq!(docs["risk"], "low");
    assert_eq!(docs["description"], Value::Null);
    let page = expect(app.get("/agents").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(names(&page), vec!["Docs", "Payout Runner"]);
    assert!(page["items"][0].get("predicted_type").is_some() && page["items"][0].get("risk").is_some());
    let page = expect(app.get("/agents?limit=1").header("X-API-Key", &t.api_key), 200).await;
    let cursor = page["next_cursor"].as_str().unwrap();
    let next = expect(app.get(&format!("/agents?limit=1&cursor={cursor}")).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!((names(&next), &next["next_cursor"]), (vec!["Payout Runner".to_owned()], &Value::Null));

    // Filters.
    for (query, expected) in [
        ("type=rag", vec!["Docs"]),
        ("capability=transfer%20funds", vec!["Payout Runner"]),
        ("risk=low", vec!["Docs"]),
        ("status=active", vec!["Docs", "Payout Runner"]),
        ("status=suspended", vec![]),
    ] {
        let page = expect(app.get(&format!("/agents?{query}")).header("X-API-Key", &t.api_key), 200).await;
        assert_eq!(names(&page), expected, "{query}");
    }
    for query in ["status=sleeping", "risk=extreme", "colour=red", "limit=0"] {
        expect_problem(app.get(&format!("/agents?{query}")).header("X-API-Key", &t.api_key), 422).await;
    }

    // A full update: what is left out is reset, the status kept; derived fields recomputed.
    let body = json!({"name": "Payout Runner", "type": "workflow", "capabilities": ["read reports"], "permissions": {"reports": "read"}});
    let updated = expect(app.put(&format!("/agents/{id}")).header("X-API-Key", &t.api_key).json(&body), 200).await;
    assert_eq!(
        (updated["type"].as_str(), updated["description"].clone(), updated["risk"].as_str()),
        (Some("workflow"), Value::Null, Some("low"))
    );
    assert_eq!(updated["created_at"], payer["created_at"]);
    let clash = json!({"name": "Docs", "type": "x"});
    let p = expect_problem(app.put(&format!("/agents/{id}")).header("X-API-Key", &t.api_key).json(&clash), 409).await;
    assert_eq!(p["detail"], "agent name already taken");

    expect(app.delete(&format!("/agents/{id}")).header("X-API-Key", &t.api_key), 204).await;
    expect_problem(app.get(&format!("/agents/{id}")).header("X-API-Key", &t.api_key), 404).await;
    expect_problem(app.delete(&format!("/agents/{id}")).header("X-API-Key", &t.api_key), 404).await;

    // Register, update and delete are in the audit log.
    let audit = expect(app.get(&format!("/audit?agent_id={id}")).header("X-API-Key", &t.api_key), 200).await;
    let events: Vec<&str> =
        audit["items"].as_array().unwrap().iter().map(|r| r["event_type"].as_str().unwrap()).collect();
    assert_eq!(events, vec!["agent.deleted", "agent.updated", "agent.registered"]);
}

#[tokio::test]
async fn bad_registrations_are_clear_4xx() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let post = |body: Value| app.post("/agents/register").header("X-API-Key", &t.api_key).json(&body);
    register(&app, &t.api_key, &agent("taken", "x", &[], json!({}))).await;
    let p = expect_problem(post(agent("taken", "y", &[], json!({}))), 409).await;
    assert_eq!(p["detail"], "agent name already taken");
    for (body, field) in [
        (json!({"type": "llm"}), "name"),
        (json!({"name": "x"}), "type"),
        (json!({"name": "", "type": "llm"}), "name"),
        (json!({"name": "x", "type": "llm", "capabilities": "all"}), "capabilities"),
        (json!({"name": "x", "type": "llm", "capabilities": ["a", 3]}), "capabilities[1]"),
        (json!({"name": "x", "type": "llm", "capabilities": ["a", "a"]}), "capabilities[1]"),
        (json!({"name": "x", "type": "llm", "permissions": ["payments"]}), "permissions"),
        (json!({"name": "x", "type": "llm", "status": "sleeping"}), "status"),
        (json!({"name": "x", "type": "llm", "colour": "red"}), "colour"),
    ] {
        let p = expect_problem(post(body.clone()), 422).await;
        let got = p["errors"][0]["field"].as_str().unwrap_or_default().to_owned();
        assert_eq!(got, field, "{body}: {p}");
    }
    let raw = app.post("/agents/register").header("X-API-Key", &t.api_key).header("Content-Type", "application/json");
    expect_problem(raw.body("{\"name\": "), 400).await;
    expect_problem(app.post("/agents/register").json(&agent("anon", "x", &[], json!({}))), 401).await;
    expect_problem(app.get("/agents/not-a-uuid").header("X-API-Key", &t.api_key), 404).await;
    expect_problem(app.get("/agents/0193a4c2-0000-7000-8000-000000000001").header("X-API-Key", &t.api_key), 404).await;
    let huge = json!({"name": "x", "type": "llm", "metadata": {"blob": "x".repeat(20_000)}});
    expect_problem(post(huge), 422).await;
}

#[tokio::test]
async fn viewers_read_and_cannot_write() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let a = register(&app, &t.api_key, &agent("bot", "x", &[], json!({}))).await;
    let (_, viewer_token) = app.user(&t, "viewer@acme.test", "viewer").await;
    let id = a["id"].as_str().unwrap();
    expect(app.get(&format!("/agents/{id}")).bearer_auth(&viewer_token), 200).await;
    expect(app.get("/agents/search?q=bot").bearer_auth(&viewer_token), 200).await;
    expect_problem(app.post("/agents/register").bearer_auth(&viewer_token).json(&agent("v", "x", &[], json!({}))), 403)
        .await;
    expect_problem(app.delete(&format!("/agents/{id}")).bearer_auth(&viewer_token), 403).await;
    expect_problem(app.post(&format!("/agents/{id}/heartbeat")).bearer_auth(&viewer_token), 403).await;
}

#[tokio::test]
async fn other_tenants_agents_are_absent() {
    let app = spawn_app().await;
    let (a, b) = (app.create_tenant("alpha").await, app.create_tenant("beta").await);
    let agent_a = register(&app, &a.api_key, &agent("shared", "Moves money", &["transfer funds"], json!({}))).await;
    // The same name is free in another tenant.
    register(&app, &b.api_key, &agent("shared", "Reads the wiki", &[], json!({}))).await;
    let id = agent_a["id"].as_str().unwrap();
    let key = &b.api_key;
    expect_problem(app.get(&format!("/agents/{id}")).header("X-API-Key", key), 404).await;
    expect_problem(app.get(&format!("/agents/{id}/details")).header("X-API-Key", key), 404).await;
    expect_problem(
        app.put(&format!("/agents/{id}")).header("X-API-Key", key).json(&json!({"name": "n", "type": "t"})),
        404,
    )
    .await;
    expect_problem(app.post(&format!("/agents/{id}/heartbeat")).header("X-API-Key", key), 404).await;
    expect_problem(app.delete(&format!("/agents/{id}")).header("X-API-Key", key), 404).await;
    let page = expect(app.get("/agents").header("X-API-Key", key), 200).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert_ne!(page["items"][0]["id"], agent_a["id"]);
    let found = expect(app.get("/agents/search?q=move%20money").header("X-API-Key", key), 200).await;
    assert!(found["items"].as_array().unwrap().iter().all(|h| h["id"] != agent_a["id"]));
    expect(app.get(&format!("/agents/{id}")).header("X-API-Key", &a.api_key), 200).await;
}

#[tokio::test]
async fn heartbeats_mark_agents_seen_and_stale_ones_are_inactive() {
    let app = spawn_with(|c| c.agent_stale_after_secs = 1).await;
    let t = app.create_tenant("acme").await;
    let a = register(&app, &t.api_key, &agent("beating", "x", &[], json!({}))).await;
    let id = a["id"].as_str().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let stale = expect(app.get(&format!("/agents/{id}")).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(stale["status"], "inactive");
    let page = expect(app.get("/agents?status=inactive").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(names(&page), vec!["beating"]);

    // An empty body is a plain heartbeat.
    let beat = expect(app.post(&format!("/agents/{id}/heartbeat")).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(beat["status"], "active");
    assert!(beat["last_seen_at"].is_string());
    let body = json!({"status": "inactive", "metadata": {"version": "2.1"}});
    let beat =
        expect(app.post(&format!("/agents/{id}/heartbeat")).header("X-API-Key", &t.api_key).json(&body), 200).await;
    assert_eq!((beat["status"].as_str(), &beat["metadata"]), (Some("inactive"), &json!({"version": "2.1"})));
    let details = expect(app.get(&format!("/agents/{id}/details")).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(details["embedding"]["refreshed_at"], beat["updated_at"]);

    let post = |body: &str| {
        app.post(&format!("/agents/{id}/heartbeat"))
            .header("X-API-Key", &t.api_key)
            .header("Content-Type", "application/json")
            .body(body.to_owned())
    };
    expect_problem(post("{\"status\": "), 400).await;
    expect_problem(post("{\"status\": \"asleep\"}"), 422).await;
    expect_problem(post("{\"mood\": \"happy\"}"), 422).await;

    // A suspended agent cannot reinstate itself.
    let body = json!({"name": "beating", "type": "llm", "status": "suspended"});
    expect(app.put(&format!("/agents/{id}")).header("X-API-Key", &t.api_key).json(&body), 200).await;
    expect_problem(post("{\"status\": \"active\"}"), 409).await;
    let beat = expect(post("{}"), 200).await;
    assert_eq!(beat["status"], "suspended");
}

#[tokio::test]
async fn details_show_the_embedding_and_risk_factors() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let payer = register(
        &app,
        &t.api_key,
        &agent("Payout Runner", "Pays vendors by bank transfer", &["transfer funds"], json!({"payments": "write"})),
    )
    .await;
    register(
        &app,
        &t.api_key,
        &agent("Refund Bot", "Issues refunds to customers' cards", &["refund payments"], json!({"payments": "write"})),
    )
    .await;
    register(
        &app,
        &t.api_key,
        &agent("Wiki Helper", "Answers questions from the wiki", &["search documents"], json!({"wiki": "read"})),
    )
    .await;
    let id = payer["id"].as_str().unwrap();
    let d = expect(app.get(&format!("/agents/{id}/details")).header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(d["id"], payer["id"]);
    let e = &d["embedding"];
    // The default model: fused with the encoder (installed in CI), else the hashing one.
    let model = (e["model"].as_str().unwrap(), e["dimensions"].as_u64().unwrap());
    let fallback = model == ("agentgov-hashing", 512) && std::env::var_os("CI").is_none();
    assert!(model == ("agentgov-hashing+use-multilingual-v3", 1024) || fallback, "{model:?}");
    assert!(e["text"].as_str().unwrap().contains("Pays vendors by bank transfer"));
    let neighbours = e["neighbours"].as_array().unwrap();
    assert_eq!(neighbours.len(), 2, "the others, not itself");
    assert_eq!(neighbours[0]["name"], "Refund Bot", "{neighbours:?}");
    let factors = d["risk_factors"].as_array().unwrap();
    assert!(factors.iter().any(|f| f["code"] == "payments"), "{factors:?}");
    assert!(factors.iter().all(|f| f["reason"].is_string() && f["evidence"].is_string() && f["weight"].is_number()));
}

/// Under each built-in embedder: the hashing one alone, and the default, fused with the
/// Prompt Guard's multilingual encoder (required in CI; elsewhere, without its weights, the
/// server falls back to the hashing embedder and says so in `model`).
#[tokio::test]
async fn search_ranks_agents_by_meaning() {
    for embedder in [SearchEmbedder::Hashing, SearchEmbedder::Fused] {
        let app = spawn_with(|c| c.search_embedder = embedder).await;
        search_ranks_agents_by_meaning_under(&app, embedder).await;
    }
}

async fn search_ranks_agents_by_meaning_under(app: &TestApp, embedder: SearchEmbedder) {
    let t = app.create_tenant("acme").await;
    for (name, description, caps, perms) in [
        (
            "Payout Runner",
            "Disburses seller earnings to bank accounts",
            vec!["initiate payouts"],
            json!({"payments": "write"}),
        ),
        ("Inbox Triage", "Reads customer emails and drafts replies", vec!["read email"], json!({"mailbox": "read"})),
        (
            "Wiki Helper",
            "Answers questions from the engineering wiki",
            vec!["search documents"],
            json!({"wiki": "read"}),
        ),
    ] {
        register(app, &t.api_key, &agent(name, description, &caps, perms)).await;
    }
    let found = expect(
        app.get("/agents/search?q=agents%20that%20can%20move%20money&limit=2").header("X-API-Key", &t.api_key),
        200,
    )
    .await;
    let items = found["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["name"], "Payout Runner", "{found}");
    assert!(items[0]["score"].as_f64().unwrap() >= items[1]["score"].as_f64().unwrap());
    assert!(items[0].get("predicted_type").is_some());
    let fused = "agentgov-hashing+use-multilingual-v3";
    match (embedder, found["model"]["name"].as_str().unwrap()) {
        (SearchEmbedder::Hashing, name) => assert_eq!(name, "agentgov-hashing"),
        (SearchEmbedder::Fused, name) if name == fused => {
            assert_eq!(found["model"]["dimensions"], 1024);
            // The encoder half meets a question in another language: "who can transfer
            // money?" in German and in Spanish.
            for q in ["Wer%20kann%20Geld%20%C3%BCberweisen%3F", "%C2%BFQui%C3%A9n%20puede%20enviar%20dinero%3F"] {
                let found =
                    expect(app.get(&format!("/agents/search?q={q}")).header("X-API-Key", &t.api_key), 200).await;
                assert_eq!(found["items"][0]["name"], "Payout Runner", "{found}");
            }
        }
        (SearchEmbedder::Fused, name) => {
            assert!(std::env::var_os("CI").is_none(), "the encoder must be installed in CI (cargo xtask guard-models)");
            assert_eq!(name, "agentgov-hashing", "without the encoder, the hashing embedder ranks");
        }
    }
    let found =
        expect(app.get("/agents/search?q=who%20can%20read%20customer%20emails").header("X-API-Key", &t.api_key), 200)
            .await;
    assert_eq!(found["items"][0]["name"], "Inbox Triage", "{found}");
    for query in ["", "?q=", "?q=x&limit=0", "?q=x&limit=101", "?q=x&sort=asc"] {
        expect_problem(app.get(&format!("/agents/search{query}")).header("X-API-Key", &t.api_key), 422).await;
    }
    expect_problem(app.get("/agents/search?q=x"), 401).await;
}

/// A stand-in OpenAI-compatible embeddings service on 127.0.0.1: each text's vector counts
/// a few letters, so texts sharing words point the same way.
async fn embeddings_stub() -> String {
    use actix_web::{App, HttpResponse, HttpServer, web};
    async fn embed(body: web::Json<Value>) -> HttpResponse {
        let inputs = body["input"].as_array().cloned().unwrap_or_default();
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let text = text.as_str().unwrap_or_default().to_lowercase();
                let v: Vec<f32> = ['a', 'e', 'i', 'o', 'u', 'm', 'n', 'w']
                    .iter()
                    .map(|c| text.matches(*c).count() as f32 + 0.5)
                    .collect();
                json!({"index": i, "embedding": v})
            })
            .collect();
        HttpResponse::Ok().json(json!({"data": data, "model": body["model"]}))
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = HttpServer::new(|| App::new().route("/v1/embeddings", web::post().to(embed)))
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
    tokio::spawn(server);
    format!("http://{addr}")
}

#[tokio::test]
async fn an_external_embedding_service_can_replace_the_built_in_one() {
    let url = embeddings_stub().await;
    let app = spawn_with(|c| {
        c.embedding_url = Some(url);
        c.embedding_model = Some("stub-embed".into());
        c.embedding_dimensions = Some(8);
    })
    .await;
    let t = app.create_tenant("acme").await;
    let a = register(&app, &t.api_key, &agent("Wiki", "wiki wiki wiki", &[], json!({}))).await;
    let d =
        expect(app.get(&format!("/agents/{}/details", a["id"].as_str().unwrap())).header("X-API-Key", &t.api_key), 200)
            .await;
    assert_eq!(
        (d["embedding"]["model"].as_str(), d["embedding"]["dimensions"].as_u64()),
        (Some("stub-embed"), Some(8))
    );
    let found = expect(app.get("/agents/search?q=wiki").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(
        (found["model"]["name"].as_str(), found["items"][0]["name"].as_str()),
        (Some("stub-embed"), Some("Wiki"))
    );

    // The service unreachable: 503, and nothing half-written.
    let down = spawn_with(|c| {
        c.embedding_url = Some("http://127.0.0.1:1".into());
        c.embedding_model = Some("stub-embed".into());
        c.embedding_dimensions = Some(8);
    })
    .await;
    let t = down.create_tenant("acme").await;
    let p = expect_problem(
        down.post("/agents/register").header("X-API-Key", &t.api_key).json(&agent("x", "y", &[], json!({}))),
        503,
    )
    .await;
    assert!(!p["detail"].as_str().unwrap().contains("127.0.0.1"), "{p}");
    let page = expect(down.get("/agents").header("X-API-Key", &t.api_key), 200).await;
    assert!(page["items"].as_array().unwrap().is_empty());
}
