use agentgov_tests::*;
use serde_json::json;

#[tokio::test]
async fn tenants_need_the_admin_key() {
    let app = spawn_app().await;
    let body = json!({"name": "acme", "admin_email": "a@acme.test", "admin_password": PASSWORD});
    let res = app.post("/tenants").json(&body).send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert!(res.headers().get("www-authenticate").is_some());
    expect_problem(app.post("/tenants").header("X-Admin-Key", "wrong-key-wrong-key").json(&body), 401).await;
    expect_problem(app.get("/tenants").header("X-Admin-Key", "wrong-key-wrong-key"), 401).await;
    let t = app.create_tenant("acme").await;
    // Tenant credentials are not the operator's.
    expect_problem(app.get("/tenants").header("X-Admin-Key", &t.api_key), 401).await;
    expect_problem(app.get("/tenants").bearer_auth(&t.token), 401).await;
}

#[tokio::test]
async fn without_a_configured_admin_key_tenant_endpoints_are_closed() {
    let app = spawn_with(|c| c.admin_key = None).await;
    let body = expect_problem(app.get("/tenants").header("X-Admin-Key", ADMIN_KEY), 401).await;
    assert!(body["detail"].as_str().unwrap().contains("no admin key"));
}

#[tokio::test]
async fn creating_a_tenant_returns_its_admin_and_a_key_shown_once() {
    let app = spawn_app().await;
    let body = json!({"name": "  Acme Corp ", "admin_email": "Boss@Acme.test", "admin_password": PASSWORD});
    let created = expect(app.post("/tenants").header("X-Admin-Key", ADMIN_KEY).json(&body), 201).await;
    assert_eq!(created["tenant"]["name"], "Acme Corp");
    assert_eq!(created["admin_user"]["email"], "boss@acme.test");
    assert_eq!(created["admin_user"]["role"], "admin");
    assert_eq!(created["admin_user"]["tenant_id"], created["tenant"]["id"]);
    let key = created["api_key"].as_str().unwrap();
    assert!(key.starts_with("agk_"));
    expect(app.get("/status").header("X-API-Key", key), 200).await;
    app.login("boss@acme.test", PASSWORD).await;
}

#[tokio::test]
async fn tenant_input_is_validated_and_duplicates_conflict() {
    let app = spawn_app().await;
    let body = json!({"name": "", "admin_email": "nope", "admin_password": "short"});
    let err = expect_problem(app.post("/tenants").header("X-Admin-Key", ADMIN_KEY).json(&body), 422).await;
    assert_eq!(err["errors"].as_array().unwrap().len(), 3);
    app.create_tenant("acme").await;
    let body = json!({"name": "acme", "admin_email": "other@acme.test", "admin_password": PASSWORD});
    expect_problem(app.post("/tenants").header("X-Admin-Key", ADMIN_KEY).json(&body), 409).await;
    let body = json!({"name": "acme2", "admin_email": "admin@acme.test", "admin_password": PASSWORD});
    expect_problem(app.post("/tenants").header("X-Admin-Key", ADMIN_KEY).json(&body), 409).await;
    // Nothing of the failed tenant was stored.
    let list = expect(app.get("/tenants").header("X-Admin-Key", ADMIN_KEY), 200).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn tenants_list_newest_first_with_pages() {
    let app = spawn_app().await;
    for name in ["a", "b", "c"] {
        app.create_tenant(name).await;
    }
    let page = expect(app.get("/tenants?limit=2").header("X-Admin-Key", ADMIN_KEY), 200).await;
    let names: Vec<_> = page["items"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["c", "b"]);
    let cursor = page["next_cursor"].as_str().unwrap();
    let page =
        expect(app.get(&format!("/tenants?limit=2&cursor={cursor}")).header("X-Admin-Key", ADMIN_KEY), 200).await;
    assert_eq!(page["items"][0]["name"], "a");
    assert!(page["next_cursor"].is_null());
}
