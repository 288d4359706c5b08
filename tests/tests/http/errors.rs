//! Bad input always gets a clear problem+json 4xx.
use agentgov_tests::*;
use serde_json::json;

#[tokio::test]
async fn unknown_routes_and_methods_are_problem_json() {
    let app = spawn_app().await;
    let body = expect_problem(app.get("/nope"), 404).await;
    assert!(body["detail"].as_str().unwrap().contains("/docs"));
    expect_problem(app.get("/api/v2/health"), 404).await;
    // A path the API has, with a method it does not take there: 405 naming the ones it does.
    for (method, path, allow) in [
        (reqwest::Method::DELETE, "/health", "GET"),
        (reqwest::Method::PATCH, "/agents", "GET"),
        (reqwest::Method::TRACE, "/policies", "GET, POST"),
        (reqwest::Method::POST, "/users/0193a4c2-0000-7000-8000-000000000001", "GET, PUT, DELETE"),
    ] {
        let res = app.req(method.clone(), path).send().await.unwrap();
        assert_eq!(res.status(), 405, "{method} {path}");
        assert_eq!(res.headers()["allow"], allow, "{method} {path}");
        assert_eq!(res.headers()["content-type"], "application/problem+json");
    }
    let res = app.req(reqwest::Method::POST, "/health").send().await.unwrap();
    assert_eq!(res.status(), 405);
    let res = app.get("/webhooks/agent").send().await.unwrap();
    assert_eq!((res.status().as_u16(), &res.headers()["allow"]), (405, &"POST".parse().unwrap()));
    expect_problem(app.get("/agents/x/y"), 404).await;
}

#[tokio::test]
async fn malformed_json_is_400_and_the_wrong_shape_422() {
    let app = spawn_app().await;
    let send = |body: &'static str| app.post("/auth/login").header("content-type", "application/json").body(body);
    let err = expect_problem(send("{\"email\": "), 400).await;
    assert!(err["detail"].as_str().unwrap().contains("not valid JSON"));
    expect_problem(send(""), 400).await;
    expect_problem(send("[1, 2"), 400).await;
    let err = expect_problem(send("{\"email\": 5, \"password\": \"x\"}"), 422).await;
    assert_eq!(err["errors"][0]["field"], "email");
    expect_problem(send("[]"), 422).await;
    // serde would fill the struct from an array by position: every body must be an object.
    let err = expect_problem(send("[\"a@b.co\", \"a long password\"]"), 422).await;
    assert_eq!(err["errors"][0]["field"], "body");
    assert_eq!(err["errors"][0]["message"], "must be a JSON object");
    expect_problem(send("5"), 422).await;
    expect_problem(send("null"), 422).await;
}

#[tokio::test]
async fn non_json_bodies_are_415() {
    let app = spawn_app().await;
    let req = app.post("/auth/login").header("content-type", "text/plain").body("email=a&password=b");
    expect_problem(req, 415).await;
}

#[tokio::test]
async fn oversized_bodies_are_413() {
    let app = spawn_with(|c| c.body_limit_bytes = 4096).await;
    let big = json!({"email": "a@b.co", "password": "x".repeat(10_000)});
    expect_problem(app.post("/auth/login").json(&big), 413).await;
    let body = json!({"name": "x".repeat(10_000), "admin_email": "a@b.co", "admin_password": PASSWORD});
    expect_problem(app.post("/tenants").header("X-Admin-Key", ADMIN_KEY).json(&body), 413).await;
}

#[tokio::test]
async fn internals_never_leak_into_error_bodies() {
    let app = spawn_app().await;
    app.create_tenant("acme").await;
    let body = json!({"name": "acme", "admin_email": "z@acme.test", "admin_password": PASSWORD});
    let err = expect_problem(app.post("/tenants").header("X-Admin-Key", ADMIN_KEY).json(&body), 409).await;
    let text = err.to_string().to_lowercase();
    for leak in ["unique", "constraint", "sqlite", "diesel", "select", "insert"] {
        assert!(!text.contains(leak), "{leak} in {text}");
    }
}
