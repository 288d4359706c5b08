//! Another tenant's ids answer 404, whatever the operation and credential.
use agentgov_tests::*;
use serde_json::json;

#[tokio::test]
async fn another_tenants_users_and_keys_are_404_everywhere() {
    let app = spawn_app().await;
    let a = app.create_tenant("acme").await;
    let b = app.create_tenant("globex").await;
    let (b_user, b_token) = app.user(&b, "bob@globex.test", "viewer").await;
    let b_key = expect(app.post("/api-keys").bearer_auth(&b_token).json(&json!({"name": "k"})), 201).await;
    let b_key = b_key["id"].as_str().unwrap();
    let user_paths = [
        (reqwest::Method::GET, format!("/users/{b_user}")),
        (reqwest::Method::PUT, format!("/users/{b_user}")),
        (reqwest::Method::PUT, format!("/users/{b_user}/role")),
        (reqwest::Method::POST, format!("/users/{b_user}/block")),
        (reqwest::Method::POST, format!("/users/{b_user}/unblock")),
        (reqwest::Method::DELETE, format!("/users/{b_user}")),
        (reqwest::Method::DELETE, format!("/api-keys/{b_key}")),
    ];
    for (method, path) in user_paths {
        let body = if path.ends_with("/role") { json!({"role": "viewer"}) } else { json!({"name": "x"}) };
        let req = app.req(method.clone(), &path).bearer_auth(&a.token);
        let req = if method == reqwest::Method::PUT { req.json(&body) } else { req };
        let err = expect_problem(req, 404).await;
        assert!(!err.to_string().contains("globex"), "{err}");
    }
    // Nothing happened to them.
    expect(app.get("/auth/me").bearer_auth(&b_token), 200).await;
    let list = expect(app.get("/users").bearer_auth(&a.token), 200).await;
    assert!(!list.to_string().contains(&b_user));
    let keys = expect(app.get("/api-keys").bearer_auth(&a.token), 200).await;
    assert!(!keys.to_string().contains(b_key));
}

#[tokio::test]
async fn ids_that_are_not_uuids_are_404() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    expect_problem(app.get("/users/not-a-uuid").bearer_auth(&t.token), 404).await;
    expect_problem(app.delete("/api-keys/123").bearer_auth(&t.token), 404).await;
}
