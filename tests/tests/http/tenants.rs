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

#[tokio::test]
async fn a_tenant_reads_its_settings_and_its_admin_changes_them() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let own = expect(app.get("/tenant").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(own["id"], t.id.as_str());
    assert_eq!(own["settings"], json!({}));
    assert_eq!(
        own["effective_settings"],
        json!({"approval_threshold": 0.8, "risk_levels": {"medium": 0.3, "high": 0.6, "critical": 0.85},
            "hitl_timeout_secs": 3600})
    );
    assert_eq!(own["updated_at"], own["created_at"]);

    let change = json!({"settings": {"approval_threshold": 0.5, "hitl_timeout_secs": 90,
        "risk_levels": {"medium": 0.2, "high": 0.4, "critical": 0.7}}});
    let changed = expect(app.patch("/tenant").bearer_auth(&t.token).json(&change), 200).await;
    assert_eq!(changed["settings"], change["settings"]);
    assert_eq!(changed["effective_settings"], change["settings"]);
    let bad = json!({"settings": {"hitl_timeout_secs": 0}});
    let body = expect_problem(app.patch("/tenant").bearer_auth(&t.token).json(&bad), 422).await;
    assert_eq!(body["errors"][0]["field"], "settings.hitl_timeout_secs");
    // `null` returns a setting to the server's default; what is left out stays.
    let reset = json!({"settings": {"approval_threshold": null}});
    let reset = expect(app.patch("/tenant").bearer_auth(&t.token).json(&reset), 200).await;
    assert_eq!(reset["effective_settings"]["approval_threshold"], 0.8);
    assert_eq!(
        reset["settings"],
        json!({"hitl_timeout_secs": 90, "risk_levels": {"medium": 0.2, "high": 0.4, "critical": 0.7}})
    );

    // The operator reads and changes any tenant by id.
    let by_id = expect(app.get(&format!("/tenants/{}", t.id)).header("X-Admin-Key", ADMIN_KEY), 200).await;
    assert_eq!(by_id, reset);
    let renamed = json!({"name": "Acme Corp"});
    let renamed =
        expect(app.patch(&format!("/tenants/{}", t.id)).header("X-Admin-Key", ADMIN_KEY).json(&renamed), 200).await;
    assert_eq!(renamed["name"], "Acme Corp");
    let list = expect(app.get("/tenants").header("X-Admin-Key", ADMIN_KEY), 200).await;
    assert_eq!(list["items"][0]["effective_settings"]["risk_levels"]["high"], 0.4);

    let audit = expect(app.get("/audit?event_type=tenant.updated").header("X-API-Key", &t.api_key), 200).await;
    assert_eq!(audit["items"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn tenant_changes_need_an_admin_jwt_and_valid_settings() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    app.create_tenant("other").await;
    let (_, analyst) = app.user(&t, "ana@acme.test", "analyst").await;
    let change = json!({"settings": {"approval_threshold": 0.5}});
    expect_problem(app.patch("/tenant").json(&change), 401).await;
    expect_problem(app.patch("/tenant").header("X-API-Key", &t.api_key).json(&change), 401).await;
    expect_problem(app.patch("/tenant").bearer_auth(&analyst).json(&change), 403).await;
    expect_problem(app.patch(&format!("/tenants/{}", t.id)).bearer_auth(&t.token).json(&change), 401).await;

    for (body, field) in [
        (json!({"settings": {"approval_threshold": 0}}), "settings.approval_threshold"),
        (json!({"settings": {"approval_threshold": 1.5}}), "settings.approval_threshold"),
        (json!({"settings": {"risk_levels": {"medium": 0.5, "high": 0.5, "critical": 0.9}}}), "settings.risk_levels"),
        (json!({"settings": {"risk_levels": {"medium": -0.1, "high": 0.5, "critical": 0.9}}}), "settings.risk_levels"),
        (json!({"name": ""}), "name"),
    ] {
        let err = expect_problem(app.patch("/tenant").bearer_auth(&t.token).json(&body), 422).await;
        assert_eq!(err["errors"][0]["field"], field, "{body}: {err}");
    }
    // Unknown, incomplete or mistyped members are refused, not ignored.
    for body in [
        json!({"settings": {"threshold": 0.5}}),
        json!({"settings": {"risk_levels": {"medium": 0.2}}}),
        json!({"settings": {"approval_threshold": "high"}}),
    ] {
        expect_problem(app.patch("/tenant").bearer_auth(&t.token).json(&body), 422).await;
    }
    let err = expect_problem(app.patch("/tenant").bearer_auth(&t.token).json(&json!({"name": "other"})), 409).await;
    // The answer does not say that another tenant bears the name.
    assert_eq!(err["detail"], "this name cannot be used; choose another", "{err}");
    assert!(!err.to_string().contains("taken"), "{err}");
    let absent = "01936b2e-0000-7000-8000-000000000000";
    expect_problem(app.get(&format!("/tenants/{absent}")).header("X-Admin-Key", ADMIN_KEY), 404).await;
    expect_problem(app.patch(&format!("/tenants/{absent}")).header("X-Admin-Key", ADMIN_KEY).json(&change), 404).await;
    expect_problem(app.get("/tenants/not-a-uuid").header("X-Admin-Key", ADMIN_KEY), 404).await;
    let own = expect(app.get("/tenant").bearer_auth(&t.token), 200).await;
    assert_eq!(own["settings"], json!({}), "nothing was changed");
}
