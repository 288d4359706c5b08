use agentgov_tests::*;
use serde_json::json;

#[tokio::test]
async fn login_returns_the_spec_shape_and_both_credentials_work() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = app.login("Admin@Acme.test", PASSWORD).await;
    assert!(body["access_token"].as_str().unwrap().split('.').count() == 3);
    assert_eq!(body["expires_in"], 3600);
    assert!(body["api_key"].as_str().unwrap().starts_with("agk_"));
    assert_eq!(body["user"]["email"], "admin@acme.test");
    assert_eq!(body["user"]["role"], "admin");
    assert_eq!(body["user"]["id"], t.admin_id.as_str());
    let me = expect(app.get("/auth/me").bearer_auth(body["access_token"].as_str().unwrap()), 200).await;
    assert_eq!(me["id"], t.admin_id.as_str());
    assert!(me["last_login_at"].is_string(), "{me}");
    assert!(me.get("password_hash").is_none());
    expect(app.get("/stats").header("X-API-Key", body["api_key"].as_str().unwrap()), 200).await;
}

#[tokio::test]
async fn wrong_credentials_and_a_blocked_users_right_password_are_the_same_401() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let body = expect_problem(
        app.post("/auth/login").json(&json!({"email": "admin@acme.test", "password": "wrong password!"})),
        401,
    )
    .await;
    assert_eq!(body["detail"], "invalid email or password");
    expect_problem(app.post("/auth/login").json(&json!({"email": "ghost@acme.test", "password": PASSWORD})), 401).await;
    let (id, _) = app.user(&t, "bob@acme.test", "analyst").await;
    let wrong = app.post("/auth/login").json(&json!({"email": "bob@acme.test", "password": "wrong password!"}));
    let wrong = wrong.send().await.unwrap();
    let wrong_challenge = wrong.headers()["www-authenticate"].clone();
    let (_, wrong) = read(wrong).await;
    expect(app.post(&format!("/users/{id}/block")).bearer_auth(&t.token), 200).await;
    // The right password of a blocked user tells nothing: the same status, body and challenge.
    let blocked = app.post("/auth/login").json(&json!({"email": "bob@acme.test", "password": PASSWORD}));
    let blocked = blocked.send().await.unwrap();
    assert_eq!(blocked.status(), 401);
    assert_eq!(blocked.headers()["www-authenticate"], wrong_challenge);
    assert_eq!(read(blocked).await.1, wrong);
}

/// 30 wrong passwords for one email, sent at once from one address: the reservation is
/// atomic, so at most the limit (5) reach the password check and the rest are 429.
async fn parallel_wrong_logins_stop_at_the_limit(app: &TestApp) {
    app.create_tenant("acme").await;
    let mut sends = tokio::task::JoinSet::new();
    for _ in 0..30 {
        let req = app.post("/auth/login").json(&json!({"email": "admin@acme.test", "password": "wrong password!"}));
        sends.spawn(async move {
            let res = req.send().await.unwrap();
            let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
            (res.status().as_u16(), retry)
        });
    }
    let (mut unauthorized, mut limited) = (0, 0);
    while let Some(answer) = sends.join_next().await {
        match answer.unwrap() {
            (401, _) => unauthorized += 1,
            (429, Some(retry)) => {
                assert!((1..=900).contains(&retry), "Retry-After {retry}");
                limited += 1;
            }
            other => panic!("unexpected answer {other:?}"),
        }
    }
    assert!(unauthorized <= 5, "{unauthorized} attempts reached the password check, past the limit of 5");
    assert_eq!(unauthorized + limited, 30);
    // Held back, even with the right password.
    expect_problem(app.post("/auth/login").json(&json!({"email": "admin@acme.test", "password": PASSWORD})), 429).await;
}

#[tokio::test]
async fn parallel_wrong_logins_stop_at_the_limit_embedded() {
    parallel_wrong_logins_stop_at_the_limit(&spawn_app().await).await;
}

#[tokio::test]
async fn parallel_wrong_logins_stop_at_the_limit_through_redis() {
    let Some((app, _guard)) = spawn_distributed().await else { return };
    parallel_wrong_logins_stop_at_the_limit(&app).await;
}

/// `n` wrong passwords for `email` sent at once from `address` (behind one trusted proxy).
async fn fail_from(app: &TestApp, email: &str, address: &str, n: usize) {
    let mut sends = tokio::task::JoinSet::new();
    for _ in 0..n {
        let req = app
            .post("/auth/login")
            .header("X-Forwarded-For", address.to_owned())
            .json(&json!({"email": email, "password": "wrong password!"}));
        sends.spawn(async move { req.send().await.unwrap().status().as_u16() });
    }
    while let Some(status) = sends.join_next().await {
        assert!(matches!(status.unwrap(), 401 | 429));
    }
}

fn login_from(app: &TestApp, email: &str, address: &str) -> reqwest::RequestBuilder {
    app.post("/auth/login")
        .header("X-Forwarded-For", address.to_owned())
        .json(&json!({"email": email, "password": PASSWORD}))
}

#[tokio::test]
async fn a_strangers_failures_do_not_lock_the_owner_out() {
    let app = spawn_with(|c| c.trusted_proxy_hops = 1).await;
    let t = app.create_tenant("acme").await;
    // A stranger hammers the owner's email from one address: that address is held back...
    fail_from(&app, &t.admin_email, "203.0.113.7", 30).await;
    expect_problem(login_from(&app, &t.admin_email, "203.0.113.7"), 429).await;
    // ...and the owner, from their own address, signs in at once.
    expect(login_from(&app, &t.admin_email, "198.51.100.9"), 200).await;
}

#[tokio::test]
async fn many_strangers_slow_an_email_from_new_addresses_but_not_from_the_owners() {
    let app = spawn_with(|c| c.trusted_proxy_hops = 1).await;
    let t = app.create_tenant("acme").await;
    expect(login_from(&app, &t.admin_email, "198.51.100.9"), 200).await;
    // 20 addresses, 5 failures each: far past the per-email ceiling (10 a minute).
    for i in 0..20 {
        fail_from(&app, &t.admin_email, &format!("203.0.113.{i}"), 5).await;
    }
    // A new address is slowed for at most the ceiling's minute...
    let res = login_from(&app, &t.admin_email, "192.0.2.50").send().await.unwrap();
    assert_eq!(res.status(), 429);
    let retry: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    // ...and the address the owner signed in from is not held back at all.
    expect(login_from(&app, &t.admin_email, "198.51.100.9"), 200).await;
}

#[tokio::test]
async fn ipv6_addresses_are_limited_by_their_64_block() {
    let app = spawn_with(|c| {
        c.trusted_proxy_hops = 1;
        c.login_max_failures_per_ip = 3;
    })
    .await;
    app.create_tenant("acme").await;
    for i in 0..3 {
        let body = json!({"email": format!("nobody{i}@acme.test"), "password": "wrong password!"});
        let address = format!("2001:db8:1:2::{i:x}");
        expect_problem(app.post("/auth/login").header("X-Forwarded-For", address).json(&body), 401).await;
    }
    // Another address of the same /64 is the same client; another /64 is not.
    let body = json!({"email": "admin@acme.test", "password": PASSWORD});
    expect_problem(app.post("/auth/login").header("X-Forwarded-For", "2001:db8:1:2:ffff::1").json(&body), 429).await;
    expect(app.post("/auth/login").header("X-Forwarded-For", "2001:db8:1:3::1").json(&body), 200).await;
}

#[tokio::test]
async fn repeated_login_failures_are_rate_limited_with_retry_after() {
    let app = spawn_app().await;
    app.create_tenant("acme").await;
    for _ in 0..5 {
        expect_problem(
            app.post("/auth/login").json(&json!({"email": "admin@acme.test", "password": "wrong password!"})),
            401,
        )
        .await;
    }
    let res =
        app.post("/auth/login").json(&json!({"email": "admin@acme.test", "password": PASSWORD})).send().await.unwrap();
    assert_eq!(res.status(), 429);
    let retry: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=900).contains(&retry));
    // Another email from the same client is not locked out by this one.
    let t2 = app.create_tenant("globex").await;
    app.login(&t2.admin_email, PASSWORD).await;
}

#[tokio::test]
async fn failures_are_limited_per_client_ip_across_emails() {
    let app = spawn_with(|c| c.login_max_failures_per_ip = 3).await;
    app.create_tenant("acme").await;
    for i in 0..3 {
        let body = json!({"email": format!("nobody{i}@acme.test"), "password": "wrong password!"});
        expect_problem(app.post("/auth/login").json(&body), 401).await;
    }
    expect_problem(app.post("/auth/login").json(&json!({"email": "admin@acme.test", "password": PASSWORD})), 429).await;
}

#[tokio::test]
async fn logout_revokes_the_jwt_and_the_session_key_at_once() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    expect(app.post("/auth/logout").bearer_auth(&t.token), 204).await;
    let body = expect_problem(app.get("/auth/me").bearer_auth(&t.token), 401).await;
    assert_eq!(body["detail"], "token revoked");
    expect_problem(app.get("/stats").header("X-API-Key", &t.session_key), 401).await;
    expect_problem(app.post("/auth/logout").bearer_auth(&t.token), 401).await;
    // The tenant's standing API key is unaffected.
    expect(app.get("/stats").header("X-API-Key", &t.api_key), 200).await;
}

#[tokio::test]
async fn revocation_survives_a_restart() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    expect(app.post("/auth/logout").bearer_auth(&t.token), 204).await;
    let fresh = app.login(&t.admin_email, PASSWORD).await;
    let fresh = fresh["access_token"].as_str().unwrap().to_owned();
    // A second server on the same data dir: a new in-process cache, the same database.
    let dir = app.dir.path().to_path_buf();
    let again = spawn_with(|c| c.data_dir = dir).await;
    expect_problem(again.get("/auth/me").bearer_auth(&t.token), 401).await;
    expect(again.get("/auth/me").bearer_auth(&fresh), 200).await;
}

#[tokio::test]
async fn bad_tokens_are_401_with_a_challenge() {
    let app = spawn_app().await;
    let res = app.get("/auth/me").send().await.unwrap();
    assert_eq!(res.status(), 401);
    assert!(res.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    for token in ["garbage", "a.b.c", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."] {
        expect_problem(app.get("/auth/me").bearer_auth(token), 401).await;
    }
    let t = app.create_tenant("acme").await;
    // An API key is not a session: JWT-only endpoints refuse it.
    expect_problem(app.get("/auth/me").header("X-API-Key", &t.api_key), 401).await;
}

#[tokio::test]
async fn tokens_from_another_server_secret_are_rejected() {
    let a = spawn_with(|c| c.jwt_secret = Some("a".repeat(32).into())).await;
    let b = spawn_with(|c| c.jwt_secret = Some("b".repeat(32).into())).await;
    let t = a.create_tenant("acme").await;
    expect_problem(b.get("/auth/me").bearer_auth(&t.token), 401).await;
}

#[tokio::test]
async fn logging_in_with_an_api_key_session_cannot_logout() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    expect_problem(app.post("/auth/logout").header("X-API-Key", &t.api_key), 401).await;
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_client_ip_is_limited_and_spoofing_does_not_help() {
    let app = spawn_with(|c| {
        c.login_max_failures_per_ip = 2;
        c.trusted_proxy_hops = 1;
    })
    .await;
    app.create_tenant("acme").await;
    let fail = |i: usize, xff: &str| {
        let body = json!({"email": format!("nobody{i}@acme.test"), "password": "wrong password!"});
        app.post("/auth/login").header("X-Forwarded-For", xff.to_owned()).json(&body)
    };
    // The proxy appends what it saw (203.0.113.7); the client prepends anything it likes.
    expect_problem(fail(0, "1.1.1.1, 203.0.113.7"), 401).await;
    expect_problem(fail(1, "2.2.2.2, 203.0.113.7"), 401).await;
    expect_problem(fail(2, "3.3.3.3, 203.0.113.7"), 429).await;
    // Another client behind the same proxy is not affected.
    expect_problem(fail(3, "198.51.100.9"), 401).await;
}

#[tokio::test]
async fn without_trusted_proxies_x_forwarded_for_is_ignored() {
    let app = spawn_with(|c| c.login_max_failures_per_ip = 2).await;
    app.create_tenant("acme").await;
    for (i, xff) in ["10.0.0.1", "10.0.0.2", "10.0.0.3"].into_iter().enumerate() {
        let body = json!({"email": format!("nobody{i}@acme.test"), "password": "wrong password!"});
        let status = if i < 2 { 401 } else { 429 };
        expect_problem(app.post("/auth/login").header("X-Forwarded-For", xff).json(&body), status).await;
    }
}
