use agentgov_tests::*;
use serde_json::json;

#[tokio::test]
async fn keys_are_shown_once_listed_without_secrets_and_revoked_at_once() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = json!({"name": "ci bot", "permissions": ["agents:read", "guard:manage"]});
    let created = expect(app.post("/api-keys").bearer_auth(&t.token).json(&body), 201).await;
    let secret = created["api_key"].as_str().unwrap();
    assert!(secret.starts_with(created["prefix"].as_str().unwrap()));
    assert_eq!(created["permissions"], json!(["agents:read", "guard:manage"]));
    assert!(created.get("key_hash").is_none());
    expect(app.get("/agents").header("X-API-Key", secret), 200).await;

    let list = expect(app.get("/api-keys").bearer_auth(&t.token), 200).await;
    let text = list.to_string();
    assert!(!text.contains(secret), "list leaks the secret");
    let ids: Vec<_> = list["items"].as_array().unwrap().iter().map(|k| k["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&created["id"].as_str().unwrap()));
    assert!(list["items"][0].get("last_used_at").is_some());

    let id = created["id"].as_str().unwrap();
    expect(app.delete(&format!("/api-keys/{id}")).bearer_auth(&t.token), 204).await;
    expect_problem(app.get("/agents").header("X-API-Key", secret), 401).await;
    expect_problem(app.delete(&format!("/api-keys/{id}")).bearer_auth(&t.token), 404).await;
    let list = expect(app.get("/api-keys").bearer_auth(&t.token), 200).await;
    assert!(!list.to_string().contains(id));
}

#[tokio::test]
async fn a_key_cannot_carry_permissions_its_creator_lacks() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (_, analyst) = app.user(&t, "ana@acme.test", "analyst").await;
    let body = json!({"name": "x", "permissions": ["guard:manage"]});
    expect_problem(app.post("/api-keys").bearer_auth(&analyst).json(&body), 403).await;
    let body = json!({"name": "x", "permissions": ["agents:read", "nope:nope"]});
    let err = expect_problem(app.post("/api-keys").bearer_auth(&analyst).json(&body), 422).await;
    assert_eq!(err["errors"][0]["field"], "permissions[1]");
    let key = expect(app.post("/api-keys").bearer_auth(&analyst).json(&json!({"name": "default"})), 201).await;
    assert!(!key["permissions"].as_array().unwrap().contains(&json!("guard:manage")));
}

#[tokio::test]
async fn users_see_and_revoke_their_own_keys_admins_all() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (_, ana) = app.user(&t, "ana@acme.test", "analyst").await;
    let (_, bob) = app.user(&t, "bob@acme.test", "analyst").await;
    let ana_key = expect(app.post("/api-keys").bearer_auth(&ana).json(&json!({"name": "ana"})), 201).await;
    let bob_list = expect(app.get("/api-keys").bearer_auth(&bob), 200).await;
    assert!(!bob_list.to_string().contains(ana_key["id"].as_str().unwrap()));
    let path = format!("/api-keys/{}", ana_key["id"].as_str().unwrap());
    expect_problem(app.delete(&path).bearer_auth(&bob), 403).await;
    let admin_list = expect(app.get("/api-keys?limit=500").bearer_auth(&t.token), 200).await;
    assert!(admin_list.to_string().contains(ana_key["id"].as_str().unwrap()));
    expect(app.delete(&path).bearer_auth(&t.token), 204).await;
}

#[tokio::test]
async fn expiry_is_validated_and_enforced() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = json!({"name": "old", "expires_at": "2001-01-01T00:00:00Z"});
    let err = expect_problem(app.post("/api-keys").bearer_auth(&t.token).json(&body), 422).await;
    assert_eq!(err["errors"][0]["field"], "expires_at");
    let body = json!({"name": "bad", "expires_at": "next tuesday"});
    expect_problem(app.post("/api-keys").bearer_auth(&t.token).json(&body), 422).await;
    let body = json!({"name": "future", "expires_at": "2999-01-01T00:00:00Z"});
    let key = expect(app.post("/api-keys").bearer_auth(&t.token).json(&body), 201).await;
    assert_eq!(key["expires_at"], "2999-01-01T00:00:00Z");
}

#[tokio::test]
async fn api_key_endpoints_need_a_user_session() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    expect_problem(app.get("/api-keys"), 401).await;
    expect_problem(app.get("/api-keys").header("X-API-Key", &t.api_key), 401).await;
    expect_problem(app.post("/api-keys").header("X-API-Key", &t.api_key).json(&json!({"name": "x"})), 401).await;
}

#[tokio::test]
async fn an_admin_cannot_revoke_the_keys_of_a_higher_role() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    app.user(&t, "root@acme.test", "admin").await;
    agentgov_server::cli::set_role(&test_config(app.dir.path()), "root@acme.test", "super_admin".parse().unwrap())
        .await
        .unwrap();
    let root = app.login("root@acme.test", PASSWORD).await["access_token"].as_str().unwrap().to_owned();
    let key = expect(app.post("/api-keys").bearer_auth(&root).json(&json!({"name": "root's"})), 201).await;
    let id = key["id"].as_str().unwrap();
    let secret = key["api_key"].as_str().unwrap();

    // The tenant's admin is below the super_admin: 403, and the key still works.
    let err = expect_problem(app.delete(&format!("/api-keys/{id}")).bearer_auth(&t.token), 403).await;
    assert!(err["detail"].as_str().unwrap().contains("above yours"), "{err}");
    expect(app.get("/agents").header("X-API-Key", secret), 200).await;

    // The super_admin may revoke an admin's key, and its own.
    let admin_key = expect(app.post("/api-keys").bearer_auth(&t.token).json(&json!({"name": "admin's"})), 201).await;
    expect(app.delete(&format!("/api-keys/{}", admin_key["id"].as_str().unwrap())).bearer_auth(&root), 204).await;
    expect(app.delete(&format!("/api-keys/{id}")).bearer_auth(&root), 204).await;
    expect_problem(app.get("/agents").header("X-API-Key", secret), 401).await;
}
