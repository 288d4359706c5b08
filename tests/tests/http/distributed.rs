//! Production mode (Postgres + Redis) end to end: the same behaviours as the embedded
//! default, over the real services. Skipped without the test URLs; required in CI.
use agentgov_tests::*;
use serde_json::json;

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
