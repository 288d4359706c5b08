use agentgov_tests::*;

#[tokio::test]
async fn health_is_open_and_ok() {
    let app = spawn_app().await;
    let body = expect(app.get("/health"), 200).await;
    assert_eq!(body["status"], "ok");
}

#[tokio::test]
async fn readiness_checks_database_cache_and_policy_engine() {
    let app = spawn_app().await;
    let body = expect(app.get("/health/ready"), 200).await;
    assert_eq!(body["ready"], true);
    let names: Vec<_> = body["components"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["database", "cache", "policy_engine"]);
    assert_eq!(body["components"][0]["backend"], "sqlite");
    assert_eq!(body["components"][2]["backend"], "regorus");
}

#[tokio::test]
async fn a_dead_cache_makes_readiness_503_and_login_503_but_sessions_still_work() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    // The same database, but a Redis that is not there (nothing listens on port 1).
    let dir = app.dir.path().to_path_buf();
    let broken = spawn_with(|c| {
        c.data_dir = dir;
        c.redis_url = Some("redis://127.0.0.1:1".into());
    })
    .await;
    let body = expect_problem(broken.get("/health/ready"), 503).await;
    assert!(body["detail"].as_str().unwrap().contains("cache"), "{body}");
    let cache = body["components"].as_array().unwrap().iter().find(|c| c["name"] == "cache").unwrap().clone();
    assert_eq!(cache["up"], false);
    assert_eq!(cache["backend"], "redis");
    let db = body["components"].as_array().unwrap().iter().find(|c| c["name"] == "database").unwrap().clone();
    assert_eq!(db["up"], true);
    // Login needs the rate-limit counters: 503, never a 500.
    let login = serde_json::json!({"email": t.admin_email, "password": PASSWORD});
    expect_problem(broken.post("/auth/login").json(&login), 503).await;
    // Sessions are checked against the database, so existing tokens keep working.
    expect(broken.get("/auth/me").bearer_auth(&t.token), 200).await;
}

#[tokio::test]
async fn status_needs_credentials_and_describes_the_platform() {
    let app = spawn_app().await;
    expect_problem(app.get("/status"), 401).await;
    let t = app.create_tenant("acme").await;
    for req in [app.get("/status").header("X-API-Key", &t.api_key), app.get("/status").bearer_auth(&t.token)] {
        let body = expect(req, 200).await;
        assert_eq!(body["status"], "ok");
        assert_eq!(body["mode"], "embedded");
        assert_eq!(body["tenant"]["name"], "acme");
        assert_eq!(body["components"].as_array().unwrap().len(), 3);
    }
}

#[tokio::test]
async fn stats_count_only_the_callers_tenant() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let other = app.create_tenant("globex").await;
    app.user(&other, "x@globex.test", "viewer").await;
    app.user(&t, "v@acme.test", "viewer").await;
    let body = expect(app.get("/stats").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(body["tenant_id"], t.id.as_str());
    assert_eq!(body["counts"]["users"], 2);
    assert_eq!(body["counts"]["active_users"], 2);
    // tenant.created, the admin's login, user.created and the viewer's login.
    assert_eq!(body["audit_records"], 4);
    expect_problem(
        app.get("/stats").header("X-API-Key", "agk_nothere_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        401,
    )
    .await;
}

#[tokio::test]
async fn metrics_are_prometheus_text_by_route() {
    let app = spawn_app().await;
    expect(app.get("/health"), 200).await;
    let res = app.get("/metrics").send().await.unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    assert!(text.contains("http_requests_total"), "{text}");
    assert!(text.contains("route=\"/api/v1/health\""), "{text}");
}

#[tokio::test]
async fn made_up_methods_add_no_series_beyond_one_other_set() {
    let app = spawn_app().await;
    for i in 0..100 {
        let method = reqwest::Method::from_bytes(format!("MADEUP{i}").as_bytes()).unwrap();
        let status = app.req(method, "/api/v1/health").send().await.unwrap().status();
        assert!(status.is_client_error(), "{status}");
    }
    let text = expect_text(app.get("/metrics"), 200).await;
    assert!(!text.contains("MADEUP"), "a made-up method became a label value");
    // The recorder is shared by every server of this test process: look at this route only.
    let sets: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| l.starts_with("http_requests_total{"))
        .filter(|l| l.contains("method=\"OTHER\"") && l.contains("route=\"/api/v1/health\""))
        .map(|l| l.rsplit_once(' ').unwrap().0)
        .collect();
    assert_eq!(sets.len(), 1, "one OTHER series for the route and status: {sets:?}");
}

#[tokio::test]
async fn a_metrics_token_guards_metrics() {
    let app = spawn_with(|c| c.metrics_token = Some("scrape-token-0123456789".into())).await;
    let body = expect_problem(app.get("/metrics"), 401).await;
    assert!(!body.to_string().contains("scrape-token"), "{body}");
    expect_problem(app.get("/metrics").bearer_auth("scrape-token-012345678X"), 401).await;
    expect_problem(app.get("/metrics").header("Authorization", "scrape-token-0123456789"), 401).await;
    let text = expect_text(app.get("/metrics").bearer_auth("scrape-token-0123456789"), 200).await;
    assert!(text.contains("http_requests_total"), "{text}");
    // The rest of the API does not ask for it.
    expect(app.get("/health"), 200).await;
}

async fn expect_text(req: reqwest::RequestBuilder, status: u16) -> String {
    let res = req.send().await.unwrap();
    assert_eq!(res.status().as_u16(), status);
    res.text().await.unwrap()
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = spawn_app().await;
    let res = app.get("/health").send().await.unwrap();
    assert!(res.headers().get("x-request-id").is_some());
}

#[tokio::test]
async fn status_stats_and_own_tenant_need_stats_read() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let without = serde_json::json!({"name": "no stats", "permissions": ["agents:read"]});
    let key = expect(app.post("/api-keys").bearer_auth(&t.token).json(&without), 201).await;
    let key = key["api_key"].as_str().unwrap().to_owned();
    let with = serde_json::json!({"name": "stats", "permissions": ["stats:read"]});
    let stats_key = expect(app.post("/api-keys").bearer_auth(&t.token).json(&with), 201).await;
    let stats_key = stats_key["api_key"].as_str().unwrap().to_owned();
    for path in ["/status", "/stats", "/tenant"] {
        let err = expect_problem(app.get(path).header("X-API-Key", &key), 403).await;
        assert!(err["detail"].as_str().unwrap().contains("stats:read"), "{path}: {err}");
        expect(app.get(path).header("X-API-Key", &stats_key), 200).await;
        expect(app.get(path).bearer_auth(&t.token), 200).await;
    }
}
