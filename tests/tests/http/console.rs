//! The analyst console's page and session (issue 35): assets from the binary under a strict
//! CSP, the session cookie taken by the API like a bearer token, CSRF on state changes, role
//! gating as the API's, sign-out ending the session at once.

use agentgov_tests::*;
use reqwest::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, COOKIE, SET_COOKIE};
use serde_json::json;

/// Signs in through the console; the `Cookie` header to send back and the CSRF token.
async fn console_sign_in(app: &TestApp, email: &str) -> (String, String) {
    let res = app.post("/console/session").json(&json!({"email": email, "password": PASSWORD})).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let cookies: Vec<String> =
        res.headers().get_all(SET_COOKIE).iter().map(|v| v.to_str().unwrap().to_owned()).collect();
    let session = cookies.iter().find(|c| c.starts_with("agentgov_session=")).expect("a session cookie");
    let csrf_cookie = cookies.iter().find(|c| c.starts_with("agentgov_csrf=")).expect("a CSRF cookie");
    for attribute in ["Path=/", "SameSite=Strict", "HttpOnly", "Max-Age=3600"] {
        assert!(session.contains(attribute), "{session}");
    }
    assert!(!csrf_cookie.contains("HttpOnly"), "the page reads it: {csrf_cookie}");
    let (_, body) = read(res).await;
    let csrf = body["csrf_token"].as_str().unwrap().to_owned();
    assert_eq!(body["user"]["email"], email);
    assert!(body.get("access_token").is_none() && body.get("api_key").is_none(), "no credential in the page: {body}");
    let pair = |c: &String| c.split(';').next().unwrap().to_owned();
    (format!("{}; {}", pair(session), pair(csrf_cookie)), csrf)
}

async fn pending_request(app: &TestApp, t: &Tenant) -> String {
    let name = format!("bot-{}", uuid::Uuid::new_v4());
    let agent = expect(
        app.post("/agents/register").header("X-API-Key", &t.api_key).json(&json!({"name": name, "type": "llm"})),
        201,
    )
    .await;
    let body = json!({"agent_id": agent["id"], "action": "deploy", "resource": "prod", "reason": "a release"});
    let request = expect(app.post("/hitl/request").header("X-API-Key", &t.api_key).json(&body), 201).await;
    request["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_page_and_its_assets_come_from_the_binary_under_a_strict_policy() {
    let app = spawn_app().await;
    for (path, kind) in
        [("/console", "text/html"), ("/console/app.js", "text/javascript"), ("/console/app.css", "text/css")]
    {
        let res = app.get(path).send().await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        assert!(res.headers()[CONTENT_TYPE].to_str().unwrap().starts_with(kind), "{path}");
        let csp = res.headers()[CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe"), "{csp}");
        let text = res.text().await.unwrap();
        // Nothing from another origin.
        assert!(!text.contains("http://") && !text.contains("https://"), "{path} names another origin");
    }
    // Every module the page imports, and each of theirs, is served; nothing else is.
    let mut modules = vec!["app.js".to_owned()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(module) = modules.pop() {
        if !seen.insert(module.clone()) {
            continue;
        }
        let res = app.get(&format!("/console/{module}")).send().await.unwrap();
        assert_eq!(res.status(), 200, "{module}");
        assert!(res.headers()[CONTENT_SECURITY_POLICY].to_str().unwrap().contains("default-src 'none'"));
        // The SVG namespace is a name, not an address anything is fetched from.
        let text = res.text().await.unwrap().replace("\"http://www.w3.org/2000/svg\"", "");
        assert!(!text.contains("http://") && !text.contains("https://"), "{module} names another origin");
        modules.extend(text.split("from \"./").skip(1).filter_map(|rest| rest.split('"').next()).map(str::to_owned));
    }
    assert!(seen.len() >= 10, "{seen:?}");
    for missing in ["/console/nothing.js", "/console/..%2FCargo.toml", "/console/app.js.map"] {
        expect_problem(app.get(missing), 404).await;
    }
}

#[tokio::test]
async fn the_session_cookie_authenticates_and_state_changes_need_the_csrf_token() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (cookie, csrf) = console_sign_in(&app, &t.admin_email).await;
    let me = expect(app.get("/auth/me").header(COOKIE, &cookie), 200).await;
    assert_eq!(me["email"], t.admin_email.as_str());
    expect(app.get("/console/session").header(COOKIE, &cookie), 200).await;

    let id = pending_request(&app, &t).await;
    let approve = format!("/hitl/approve/{id}");
    let refused = expect_problem(app.post(&approve).header(COOKIE, &cookie), 403).await;
    assert!(refused["detail"].as_str().unwrap().contains("CSRF"), "{refused}");
    expect_problem(app.post(&approve).header(COOKIE, &cookie).header("X-CSRF-Token", "forged"), 403).await;
    let decided = expect(app.post(&approve).header(COOKIE, &cookie).header("X-CSRF-Token", &csrf), 200).await;
    assert_eq!(decided["status"], "approved");

    // Explicit credentials win over the cookie (no CSRF token needed for them).
    let id = pending_request(&app, &t).await;
    expect(app.post(&format!("/hitl/reject/{id}")).header(COOKIE, &cookie).bearer_auth(&t.token), 200).await;
}

#[tokio::test]
async fn a_viewer_cannot_decide_and_tenants_stay_apart() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let other = app.create_tenant("globex").await;
    app.user(&t, "viewer@acme.test", "viewer").await;
    let id = pending_request(&app, &t).await;
    let theirs = pending_request(&app, &other).await;
    // The console is gated as the API is: a viewer's session cannot decide, CSRF token or not.
    let (cookie, csrf) = console_sign_in(&app, "viewer@acme.test").await;
    let forged = app.post(&format!("/hitl/approve/{id}")).header(COOKIE, &cookie).header("X-CSRF-Token", &csrf);
    expect_problem(forged, 403).await;
    let (cookie, csrf) = console_sign_in(&app, &t.admin_email).await;
    let queue = expect(app.get("/hitl/pending").header(COOKIE, &cookie), 200).await;
    let ids: Vec<&str> = queue["items"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [id.as_str()], "only its own tenant's request");
    let elsewhere = app.post(&format!("/hitl/approve/{theirs}")).header(COOKIE, &cookie).header("X-CSRF-Token", &csrf);
    expect_problem(elsewhere, 404).await;
}

#[tokio::test]
async fn signing_out_ends_the_session_and_clears_the_cookies() {
    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (cookie, csrf) = console_sign_in(&app, &t.admin_email).await;
    expect_problem(app.delete("/console/session").header(COOKIE, &cookie), 403).await;
    let res =
        app.delete("/console/session").header(COOKIE, &cookie).header("X-CSRF-Token", &csrf).send().await.unwrap();
    assert_eq!(res.status(), 204);
    let cleared: Vec<&str> = res.headers().get_all(SET_COOKIE).iter().map(|v| v.to_str().unwrap()).collect();
    assert!(cleared.iter().all(|c| c.contains("Max-Age=0")) && cleared.len() == 2, "{cleared:?}");
    expect_problem(app.get("/auth/me").header(COOKIE, &cookie), 401).await;
    expect_problem(app.get("/console/session"), 401).await;
    let wrong = app.post("/console/session").json(&json!({"email": t.admin_email, "password": "wrong password!"}));
    expect_problem(wrong, 401).await;
    // JSON only: a form of another site cannot sign a browser in to the attacker's account.
    let form = app
        .post("/console/session")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("email={}&password={PASSWORD}", t.admin_email));
    expect_problem(form, 415).await;
}

#[tokio::test]
async fn the_feed_takes_the_session_cookie_only_from_the_servers_own_pages() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    let app = spawn_app().await;
    let t = app.create_tenant("acme").await;
    let (cookie, _) = console_sign_in(&app, &t.admin_email).await;
    let url = format!("{}/api/v1/ws", app.base.replacen("http://", "ws://", 1));
    let host = app.base.trim_start_matches("http://").to_owned();
    let request = |origin: Option<&str>| {
        let mut r = url.clone().into_client_request().unwrap();
        r.headers_mut().insert("cookie", cookie.parse().unwrap());
        if let Some(origin) = origin {
            r.headers_mut().insert("origin", origin.parse().unwrap());
        }
        r
    };
    for origin in [None, Some("https://evil.example".to_owned()), Some(format!("http://{host}.evil.example"))] {
        match tokio_tungstenite::connect_async(request(origin.as_deref())).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(response.status(), 401),
            other => panic!("{origin:?}: expected 401, got {:?}", other.map(|(_, r)| r.status())),
        }
    }
    let (mut socket, _) = tokio_tungstenite::connect_async(request(Some(&format!("http://{host}")))).await.unwrap();
    let subscribe = json!({"type": "subscribe", "events": ["hitl.*"]}).to_string();
    futures::SinkExt::send(&mut socket, tokio_tungstenite::tungstenite::Message::text(subscribe)).await.unwrap();
    let reply = crate::ws::next_json(&mut socket, std::time::Duration::from_secs(5)).await.expect("a reply");
    assert_eq!(reply["type"], "subscribed");
    let id = pending_request(&app, &t).await;
    let event = crate::ws::next_json(&mut socket, std::time::Duration::from_secs(5)).await.expect("an event");
    assert_eq!((event["type"].as_str(), event["data"]["id"].as_str()), (Some("hitl.requested"), Some(id.as_str())));
}

#[tokio::test]
async fn the_sso_session_route_refuses_what_the_exchange_refuses() {
    let app = spawn_app().await;
    let body = json!({"code": "a-code", "state": "never-issued"});
    let refused = expect_problem(app.post("/api/v1/auth/sso/session").json(&body), 401).await;
    assert!(refused["detail"].as_str().unwrap().contains("state"), "{refused}");
    let form = app
        .post("/api/v1/auth/sso/session")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body("code=a&state=b");
    expect_problem(form, 415).await;
}
