use agentgov_tests::*;
use serde_json::json;

#[tokio::test]
async fn admins_create_list_get_update_and_delete_users() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = json!({"email": "Ann@Acme.test", "password": PASSWORD, "role": "analyst", "name": "Ann"});
    let ann = expect(app.post("/users").bearer_auth(&t.token).json(&body), 201).await;
    assert_eq!(ann["email"], "ann@acme.test");
    assert_eq!(ann["role"], "analyst");
    assert_eq!(ann["status"], "active");
    assert!(ann.get("password_hash").is_none());
    let id = ann["id"].as_str().unwrap();
    let got = expect(app.get(&format!("/users/{id}")).bearer_auth(&t.token), 200).await;
    assert_eq!(got, ann);
    let updated =
        expect(app.put(&format!("/users/{id}")).bearer_auth(&t.token).json(&json!({"name": "Ann B"})), 200).await;
    assert_eq!(updated["name"], "Ann B");
    let list = expect(app.get("/users").bearer_auth(&t.token), 200).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
    assert_eq!(list["items"][0]["id"], id, "newest first");
    assert!(list["next_cursor"].is_null());
    expect(app.delete(&format!("/users/{id}")).bearer_auth(&t.token), 204).await;
    expect_problem(app.get(&format!("/users/{id}")).bearer_auth(&t.token), 404).await;
    expect_problem(app.delete(&format!("/users/{id}")).bearer_auth(&t.token), 404).await;
}

#[tokio::test]
async fn user_lists_paginate_with_a_cursor() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    for i in 0..4 {
        let body = json!({"email": format!("u{i}@acme.test"), "password": PASSWORD});
        expect(app.post("/users").bearer_auth(&t.token).json(&body), 201).await;
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/users?limit=2&cursor={c}"),
            None => "/users?limit=2".into(),
        };
        let page = expect(app.get(&path).bearer_auth(&t.token), 200).await;
        seen.extend(page["items"].as_array().unwrap().iter().map(|u| u["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 5);
    let mut dedup = seen.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), 5);
    expect_problem(app.get("/users?limit=0").bearer_auth(&t.token), 422).await;
    expect_problem(app.get("/users?limit=501").bearer_auth(&t.token), 422).await;
    expect_problem(app.get("/users?limit=abc").bearer_auth(&t.token), 422).await;
    expect_problem(app.get("/users?cursor=%%%").bearer_auth(&t.token), 422).await;
}

#[tokio::test]
async fn non_admins_are_403_on_admin_operations() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (_, analyst) = app.user(&t, "ana@acme.test", "analyst").await;
    expect_problem(app.get("/users").bearer_auth(&analyst), 403).await;
    expect_problem(app.get(&format!("/users/{}", t.admin_id)).bearer_auth(&analyst), 403).await;
    let body = json!({"email": "x@acme.test", "password": PASSWORD});
    expect_problem(app.post("/users").bearer_auth(&analyst).json(&body), 403).await;
    expect_problem(app.post(&format!("/users/{}/block", t.admin_id)).bearer_auth(&analyst), 403).await;
    expect_problem(
        app.put(&format!("/users/{}/role", t.admin_id)).bearer_auth(&analyst).json(&json!({"role": "viewer"})),
        403,
    )
    .await;
    expect_problem(app.delete(&format!("/users/{}", t.admin_id)).bearer_auth(&analyst), 403).await;
    // Everyone reads and edits their own profile.
    let me = expect(app.get("/users/me").bearer_auth(&analyst), 200).await;
    assert_eq!(me["email"], "ana@acme.test");
    let me = expect(app.put("/users/me").bearer_auth(&analyst).json(&json!({"name": "Ana"})), 200).await;
    assert_eq!(me["name"], "Ana");
}

#[tokio::test]
async fn admins_cannot_grant_or_manage_roles_above_their_own() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = json!({"email": "root@acme.test", "password": PASSWORD, "role": "super_admin"});
    expect_problem(app.post("/users").bearer_auth(&t.token).json(&body), 403).await;
    let (id, _) = app.user(&t, "v@acme.test", "viewer").await;
    expect_problem(
        app.put(&format!("/users/{id}/role")).bearer_auth(&t.token).json(&json!({"role": "super_admin"})),
        403,
    )
    .await;
    let body = expect_problem(
        app.put(&format!("/users/{id}/role")).bearer_auth(&t.token).json(&json!({"role": "owner"})),
        422,
    )
    .await;
    assert_eq!(body["errors"][0]["field"], "role");
}

#[tokio::test]
async fn duplicate_emails_are_409_in_any_tenant() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let other = app.create_tenant("globex").await;
    let body = json!({"email": other.admin_email, "password": PASSWORD});
    let elsewhere = expect_problem(app.post("/users").bearer_auth(&t.token).json(&body), 409).await;
    let (id, _) = app.user(&t, "v@acme.test", "viewer").await;
    let here = expect_problem(
        app.put(&format!("/users/{id}")).bearer_auth(&t.token).json(&json!({"email": t.admin_email})),
        409,
    )
    .await;
    // Taken in another tenant or in one's own: the same answer, which says neither.
    let renamed = expect_problem(
        app.put(&format!("/users/{id}")).bearer_auth(&t.token).json(&json!({"email": other.admin_email})),
        409,
    )
    .await;
    let body = json!({"email": t.admin_email, "password": PASSWORD});
    let here_new = expect_problem(app.post("/users").bearer_auth(&t.token).json(&body), 409).await;
    for err in [&elsewhere, &here, &renamed, &here_new] {
        assert_eq!(err["detail"], "this e-mail cannot be used; choose another", "{err}");
        assert!(!err.to_string().contains("registered"), "{err}");
    }
}

#[tokio::test]
async fn the_last_admin_cannot_be_demoted_blocked_or_deleted() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let me = &t.admin_id;
    expect_problem(app.put(&format!("/users/{me}/role")).bearer_auth(&t.token).json(&json!({"role": "analyst"})), 409)
        .await;
    expect_problem(app.post(&format!("/users/{me}/block")).bearer_auth(&t.token), 409).await;
    expect_problem(app.delete(&format!("/users/{me}")).bearer_auth(&t.token), 409).await;
    // With a second admin, stepping down is fine.
    app.user(&t, "second@acme.test", "admin").await;
    let body =
        expect(app.put(&format!("/users/{me}/role")).bearer_auth(&t.token).json(&json!({"role": "analyst"})), 200)
            .await;
    assert_eq!(body["role"], "analyst");
    // ...and it bites on the same token at once.
    expect_problem(app.get("/users").bearer_auth(&t.token), 403).await;
}

#[tokio::test]
async fn blocking_revokes_existing_tokens_and_keys_at_once_and_unblock_needs_a_new_login() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (id, bob) = app.user(&t, "bob@acme.test", "analyst").await;
    let login = app.login("bob@acme.test", PASSWORD).await;
    let bob_key = login["api_key"].as_str().unwrap();
    expect(app.get("/auth/me").bearer_auth(&bob), 200).await;
    let blocked = expect(app.post(&format!("/users/{id}/block")).bearer_auth(&t.token), 200).await;
    assert_eq!(blocked["status"], "blocked");
    expect(app.post(&format!("/users/{id}/block")).bearer_auth(&t.token), 200).await;
    expect_problem(app.get("/auth/me").bearer_auth(&bob), 401).await;
    expect_problem(app.get("/stats").header("X-API-Key", bob_key), 401).await;
    let active = expect(app.post(&format!("/users/{id}/unblock")).bearer_auth(&t.token), 200).await;
    assert_eq!(active["status"], "active");
    expect_problem(app.get("/auth/me").bearer_auth(&bob), 401).await;
    app.login("bob@acme.test", PASSWORD).await;
}

#[tokio::test]
async fn deleting_a_user_kills_their_tokens_and_keys() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (id, bob) = app.user(&t, "bob@acme.test", "analyst").await;
    let key = expect(app.post("/api-keys").bearer_auth(&bob).json(&json!({"name": "bot"})), 201).await;
    expect(app.delete(&format!("/users/{id}")).bearer_auth(&t.token), 204).await;
    expect_problem(app.get("/auth/me").bearer_auth(&bob), 401).await;
    expect_problem(app.get("/stats").header("X-API-Key", key["api_key"].as_str().unwrap()), 401).await;
}

#[tokio::test]
async fn changing_the_password_checks_the_old_one_and_signs_out_other_sessions() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let other = app.login(&t.admin_email, PASSWORD).await;
    let body = json!({"current_password": "not the password", "new_password": "a brand new password"});
    let err = expect_problem(app.post("/users/me/change-password").bearer_auth(&t.token).json(&body), 422).await;
    assert_eq!(err["errors"][0]["field"], "current_password");
    let body = json!({"current_password": PASSWORD, "new_password": "short"});
    expect_problem(app.post("/users/me/change-password").bearer_auth(&t.token).json(&body), 422).await;
    let body = json!({"current_password": PASSWORD, "new_password": "a brand new password"});
    expect(app.post("/users/me/change-password").bearer_auth(&t.token).json(&body), 204).await;
    expect(app.get("/auth/me").bearer_auth(&t.token), 200).await;
    expect_problem(app.get("/auth/me").bearer_auth(other["access_token"].as_str().unwrap()), 401).await;
    app.login(&t.admin_email, "a brand new password").await;
    expect_problem(app.post("/auth/login").json(&json!({"email": t.admin_email, "password": PASSWORD})), 401).await;
}

#[tokio::test]
async fn change_password_attempts_are_limited_per_user() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (_, bob) = app.user(&t, "bob@acme.test", "analyst").await;
    let wrong = json!({"current_password": "not the password", "new_password": "a brand new password"});
    for _ in 0..5 {
        expect_problem(app.post("/users/me/change-password").bearer_auth(&t.token).json(&wrong), 422).await;
    }
    // Past the limit the current password is not even looked at: the right one is 429 too.
    let right = json!({"current_password": PASSWORD, "new_password": "a brand new password"});
    let res = app.post("/users/me/change-password").bearer_auth(&t.token).json(&right).send().await.unwrap();
    assert_eq!(res.status(), 429);
    let retry: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=900).contains(&retry), "Retry-After {retry}");
    // The limit is the user's own: another user of the tenant changes theirs.
    expect(app.post("/users/me/change-password").bearer_auth(&bob).json(&right), 204).await;
}

#[tokio::test]
async fn user_input_is_validated_field_by_field() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = json!({"email": "not-an-email", "password": "short", "name": " "});
    let err = expect_problem(app.post("/users").bearer_auth(&t.token).json(&body), 422).await;
    let fields: Vec<_> = err["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["email", "password", "name"]);
    let err = expect_problem(app.post("/users").bearer_auth(&t.token).json(&json!({"email": "a@b.co"})), 422).await;
    assert_eq!(err["errors"][0]["field"], "password");
    assert!(err["errors"][0]["message"].as_str().unwrap().contains("missing field"));
    let body = json!({"email": "a@b.co", "password": PASSWORD, "role": "viewer", "admin": true});
    let err = expect_problem(app.post("/users").bearer_auth(&t.token).json(&body), 422).await;
    assert!(err["errors"][0]["message"].as_str().unwrap().contains("unknown field"));
}
