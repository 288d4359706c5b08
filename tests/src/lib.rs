//! Black-box test harness: starts a real agentgov server (embedded SQLite in a temp dir,
//! in-process cache) on an ephemeral port and talks to it over HTTP.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test code: a failed unwrap is a failed test")]

use std::net::TcpListener;

use agentgov_server::Config;
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};

pub mod hooks;
pub mod oidc;
pub mod siem;

pub const ADMIN_KEY: &str = "test-operator-admin-key";
pub const PASSWORD: &str = "correct horse battery staple";
/// The `WEBHOOK_SECRET` of every test server.
pub const WEBHOOK_SECRET: &str = "test-webhook-secret-0123456789abcdef-0123";

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub dir: tempfile::TempDir,
    server: actix_web::dev::ServerHandle,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Stop accepting and close workers; don't wait.
        let handle = self.server.clone();
        drop(tokio::spawn(async move { handle.stop(false).await }));
    }
}

/// The operator allow-list of the test servers: callbacks go to receivers on loopback
/// ([`hooks::Receiver`]), which the default configuration refuses.
pub const TEST_CALLBACK_ALLOW_PRIVATE: &str = "127.0.0.0/8";

/// A config for tests: temp data dir, an admin key, cheap password hashing, loopback
/// callback receivers allowed.
pub fn test_config(dir: &std::path::Path) -> Config {
    Config {
        data_dir: dir.to_path_buf(),
        admin_key: Some(ADMIN_KEY.into()),
        webhook_secret: Some(WEBHOOK_SECRET.into()),
        argon2_memory_kib: 256,
        argon2_iterations: 1,
        workers: Some(2),
        policy_worker_program: Some(policy_worker()),
        hitl_callback_allow_private: TEST_CALLBACK_ALLOW_PRIVATE.into(),
        ..Config::default()
    }
}

/// This package's `policy-worker` binary, built beside the test binaries (`target/<profile>/`,
/// the parent of their `deps/`).
pub fn policy_worker() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    dir.join(format!("policy-worker{}", std::env::consts::EXE_SUFFIX))
}

pub async fn spawn_app() -> TestApp {
    spawn_with(|_| {}).await
}

pub async fn spawn_with(tweak: impl FnOnce(&mut Config)) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    tweak(&mut config);
    config.validate().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let running = agentgov_server::serve::start(&config, Some(listener)).await.unwrap();
    let server = running.server.handle();
    tokio::spawn(running.server);
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    TestApp { base: format!("http://{}", running.addr), client, dir, server }
}

/// A server in production mode: Postgres (a fresh schema, dropped with the guard) and Redis
/// (a fresh key prefix). `None` when the test services are not configured (never in CI).
pub async fn spawn_distributed() -> Option<(TestApp, agentgov_store_postgres::testing::SchemaGuard)> {
    let (mut apps, guard) = spawn_replicas(1, |_, _| {}).await?;
    Some((apps.remove(0), guard))
}

/// `n` replicas in production mode sharing one fresh Postgres schema and Redis prefix, like
/// servers behind a load balancer; `tweak(i, config)` adjusts replica `i`.
pub async fn spawn_replicas(
    n: usize,
    tweak: impl Fn(usize, &mut Config),
) -> Option<(Vec<TestApp>, agentgov_store_postgres::testing::SchemaGuard)> {
    let db = agentgov_store_conformance::service_url("AGENTGOV_TEST_DATABASE_URL")?;
    let redis = agentgov_store_conformance::service_url("AGENTGOV_TEST_REDIS_URL")?;
    let (url, guard) = agentgov_store_postgres::testing::fresh_schema(&db).await;
    let prefix = format!("agentgov-test-{}:", uuid::Uuid::now_v7().simple());
    let mut apps = Vec::new();
    for i in 0..n {
        let app = spawn_with(|c| {
            c.database_url = Some(url.clone().into());
            c.redis_url = Some(redis.clone().into());
            c.redis_prefix = prefix.clone();
            c.jwt_secret = Some("distributed-test-secret-0123456789abcdef".into());
            c.db_pool_size = 4;
            c.redis_pool_size = 4;
            // Only the first replica migrates, as `agentgov migrate` would before a rollout.
            c.migrate_on_start = i == 0;
            tweak(i, c);
        })
        .await;
        apps.push(app);
    }
    Some((apps, guard))
}

/// A tenant made through the API: its admin's credentials and the initial API key.
pub struct Tenant {
    pub id: String,
    pub admin_id: String,
    pub admin_email: String,
    pub api_key: String,
    pub token: String,
    pub session_key: String,
    /// The key its HITL callbacks are signed with, shown at creation.
    pub callback_secret: String,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        if path.starts_with('/')
            && !path.starts_with("/api/")
            && !path.starts_with("/docs")
            && !path.starts_with("/console")
            && !path.starts_with("/webhooks/")
            && !path.starts_with("/access/")
            && !path.starts_with("/.well-known/")
            && path != "/openapi.json"
            && path != "/metrics"
        {
            format!("{}/api/v1{path}", self.base)
        } else {
            format!("{}{path}", self.base)
        }
    }

    pub fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, self.url(path))
    }

    pub fn get(&self, path: &str) -> RequestBuilder {
        self.req(Method::GET, path)
    }

    pub fn post(&self, path: &str) -> RequestBuilder {
        self.req(Method::POST, path)
    }

    pub fn put(&self, path: &str) -> RequestBuilder {
        self.req(Method::PUT, path)
    }

    pub fn patch(&self, path: &str) -> RequestBuilder {
        self.req(Method::PATCH, path)
    }

    pub fn delete(&self, path: &str) -> RequestBuilder {
        self.req(Method::DELETE, path)
    }

    pub async fn create_tenant(&self, name: &str) -> Tenant {
        let email = format!("admin@{name}.test");
        let res = self
            .post("/tenants")
            .header("X-Admin-Key", ADMIN_KEY)
            .json(&json!({"name": name, "admin_email": email, "admin_password": PASSWORD}))
            .send()
            .await
            .unwrap();
        let (status, body) = read(res).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let login = self.login(&email, PASSWORD).await;
        Tenant {
            id: body["tenant"]["id"].as_str().unwrap().into(),
            admin_id: body["admin_user"]["id"].as_str().unwrap().into(),
            admin_email: email,
            api_key: body["api_key"].as_str().unwrap().into(),
            token: login["access_token"].as_str().unwrap().into(),
            session_key: login["api_key"].as_str().unwrap().into(),
            callback_secret: body["callback_secret"].as_str().unwrap().into(),
        }
    }

    pub async fn login(&self, email: &str, password: &str) -> Value {
        let res = self.post("/auth/login").json(&json!({"email": email, "password": password})).send().await.unwrap();
        let (status, body) = read(res).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }

    /// Creates a user with `role` as the tenant admin and logs them in; returns (id, token).
    pub async fn user(&self, t: &Tenant, email: &str, role: &str) -> (String, String) {
        let res = self
            .post("/users")
            .bearer_auth(&t.token)
            .json(&json!({"email": email, "password": PASSWORD, "role": role}))
            .send()
            .await
            .unwrap();
        let (status, body) = read(res).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let login = self.login(email, PASSWORD).await;
        (body["id"].as_str().unwrap().into(), login["access_token"].as_str().unwrap().into())
    }
}

/// Status and JSON body (`Value::Null` when empty or not JSON).
pub async fn read(res: reqwest::Response) -> (StatusCode, Value) {
    let status = res.status();
    let bytes = res.bytes().await.unwrap();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// Sends and asserts a problem+json error with `status`; returns the body.
pub async fn expect_problem(req: RequestBuilder, status: u16) -> Value {
    let res = req.send().await.unwrap();
    let got = res.status().as_u16();
    let content_type = res.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    let (_, body) = read(res).await;
    assert_eq!(got, status, "{body}");
    assert!(content_type.starts_with("application/problem+json"), "content-type {content_type} for {body}");
    assert_eq!(body["status"], status, "{body}");
    assert!(body["type"].as_str().unwrap().starts_with("urn:agentgov:problem:"));
    assert!(body["title"].is_string() && body["detail"].is_string(), "{body}");
    body
}

/// Sends and asserts `status`; returns the JSON body.
pub async fn expect(req: RequestBuilder, status: u16) -> Value {
    let (got, body) = read(req.send().await.unwrap()).await;
    assert_eq!(got.as_u16(), status, "{body}");
    body
}
