//! `OidcAdapter` against a stub OpenID provider served by actix-web on 127.0.0.1:0
//! (loopback only): discovery, JWKS and a token endpoint whose ID tokens the test shapes
//! (Ed25519 keys made from fixed seeds), to check key rotation and every refusal.
//! `tests/tests/sso_adapter.rs` runs the whole flow against a real provider.

#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use agentgov_domain::DomainError;
use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{Role, SsoProvider};
use agentgov_domain::ports::{OidcClient, VerifiedIdentity};
use agentgov_sso_oidc::OidcAdapter;
use base64::Engine;
use openidconnect::core::{CoreEdDsaPrivateSigningKey, CoreIdToken, CoreIdTokenClaims, CoreJwsSigningAlgorithm};
use openidconnect::{AccessToken, JsonWebKeyId, PrivateSigningKey};
use serde_json::{Value, json};

const CLIENT_ID: &str = "agentgov-client";
const SECRET: &str = "client-SUPERSECRET-0123456789";
const REDIRECT: &str = "https://agentgov.test/sso/callback";
const CODE: &str = "code-SUPERSECRET-abcdef";
const VERIFIER: &str = "verifier-SUPERSECRET-0123456789-0123456789-0123456789";
const NONCE: &str = "nonce-0123456789";
const ACCESS_TOKEN: &str = "access-SUPERSECRET-token";

// ---------------------------------------------------------------------------------------
// The stub
// ---------------------------------------------------------------------------------------

/// An Ed25519 signing key from a fixed seed (test keys, not secrets), as PKCS#8 PEM.
fn key(seed: u8, kid: &str) -> CoreEdDsaPrivateSigningKey {
    let mut der = vec![0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
    der.extend_from_slice(&[seed; 32]);
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(der)
    );
    CoreEdDsaPrivateSigningKey::from_ed25519_pem(&pem, Some(JsonWebKeyId::new(kid.into()))).unwrap()
}

/// How the token endpoint answers.
#[derive(Clone)]
enum Answer {
    /// An ID token with these claims (merged over the good ones) signed with key `signer`.
    Ok { tweak: Value, signer: usize, at_hash_of: Option<&'static str> },
    /// No `id_token` in the response.
    NoIdToken,
    /// This status and JSON body.
    Error(u16, Value),
}

struct State {
    issuer: String,
    /// The issuer the discovery document names (default: the real one).
    discovery_issuer: Option<String>,
    /// Indexes in `keys` of the keys the JWKS publishes.
    published: Vec<usize>,
    token: Answer,
    discovery_reads: usize,
    jwks_reads: usize,
    /// Authorization header and form of each token request.
    token_requests: Vec<(Option<String>, HashMap<String, String>)>,
}

struct Shared {
    keys: Vec<CoreEdDsaPrivateSigningKey>,
    state: Mutex<State>,
}

struct Stub {
    issuer: String,
    shared: Arc<Shared>,
    handle: actix_web::dev::ServerHandle,
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

async fn discovery(shared: web::Data<Arc<Shared>>) -> HttpResponse {
    let mut s = shared.state.lock().unwrap();
    s.discovery_reads += 1;
    let base = s.issuer.clone();
    let issuer = s.discovery_issuer.clone().unwrap_or_else(|| base.clone());
    HttpResponse::Ok().json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "jwks_uri": format!("{base}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["EdDSA"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
    }))
}

async fn jwks(shared: web::Data<Arc<Shared>>) -> HttpResponse {
    let mut s = shared.state.lock().unwrap();
    s.jwks_reads += 1;
    let keys: Vec<_> = s.published.iter().map(|&i| shared.keys[i].as_verification_key()).collect();
    HttpResponse::Ok().json(json!({ "keys": keys }))
}

async fn token(
    shared: web::Data<Arc<Shared>>,
    req: HttpRequest,
    form: web::Form<HashMap<String, String>>,
) -> HttpResponse {
    let mut s = shared.state.lock().unwrap();
    let authorization = req.headers().get("authorization").map(|v| v.to_str().unwrap().to_owned());
    s.token_requests.push((authorization, form.into_inner()));
    match s.token.clone() {
        Answer::Error(status, body) => {
            HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap()).json(body)
        }
        Answer::NoIdToken => {
            HttpResponse::Ok().json(json!({"access_token": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 3600}))
        }
        Answer::Ok { tweak, signer, at_hash_of } => {
            let mut claims = json!({
                "iss": s.issuer,
                "aud": [CLIENT_ID],
                "exp": now() + 300,
                "iat": now(),
                "sub": "user-1",
                "email": "ann@acme.test",
                "email_verified": true,
                "name": "Ann Example",
                "nonce": NONCE,
            });
            for (k, v) in tweak.as_object().unwrap() {
                if v.is_null() {
                    claims.as_object_mut().unwrap().remove(k);
                } else {
                    claims[k] = v.clone();
                }
            }
            let claims: CoreIdTokenClaims = serde_json::from_value(claims).unwrap();
            let at = at_hash_of.map(|t| AccessToken::new(t.into()));
            let id_token =
                CoreIdToken::new(claims, &shared.keys[signer], CoreJwsSigningAlgorithm::EdDsa, at.as_ref(), None)
                    .unwrap();
            HttpResponse::Ok().json(json!({
                "access_token": ACCESS_TOKEN,
                "token_type": "Bearer",
                "expires_in": 3600,
                "id_token": id_token.to_string(),
            }))
        }
    }
}

impl Stub {
    async fn start() -> Self {
        let shared = Arc::new(Shared {
            keys: vec![key(1, "k1"), key(2, "k2"), key(3, "k3")],
            state: Mutex::new(State {
                issuer: String::new(),
                discovery_issuer: None,
                published: vec![0],
                token: good(),
                discovery_reads: 0,
                jwks_reads: 0,
                token_requests: Vec::new(),
            }),
        });
        let data = web::Data::new(shared.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/.well-known/openid-configuration", web::get().to(discovery))
                .route("/jwks", web::get().to(jwks))
                .route("/token", web::post().to(token))
        })
        .workers(1)
        .disable_signals()
        .shutdown_timeout(0)
        .bind(("127.0.0.1", 0))
        .unwrap();
        let issuer = format!("http://{}", server.addrs()[0]);
        shared.state.lock().unwrap().issuer = issuer.clone();
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Self { issuer, shared, handle }
    }

    fn set(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.shared.state.lock().unwrap());
    }

    fn reads(&self) -> (usize, usize) {
        let s = self.shared.state.lock().unwrap();
        (s.discovery_reads, s.jwks_reads)
    }

    fn provider(&self) -> SsoProvider {
        provider(&self.issuer)
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        drop(tokio::spawn(async move { handle.stop(false).await }));
    }
}

fn good() -> Answer {
    Answer::Ok { tweak: json!({}), signer: 0, at_hash_of: Some(ACCESS_TOKEN) }
}

fn tweaked(tweak: Value) -> Answer {
    Answer::Ok { tweak, signer: 0, at_hash_of: Some(ACCESS_TOKEN) }
}

fn provider(issuer: &str) -> SsoProvider {
    SsoProvider {
        id: "stub".into(),
        name: "Stub".into(),
        issuer: issuer.into(),
        client_id: CLIENT_ID.into(),
        client_secret: SECRET.into(),
        redirect_uris: vec![REDIRECT.into(), "https://agentgov.test/other".into()],
        scopes: vec![],
        tenant_id: TenantId(uuid::Uuid::nil()),
        default_role: Role::Viewer,
        allowed_domains: vec![],
        create_users: false,
        trust_unverified_email: false,
    }
}

fn adapter() -> OidcAdapter {
    OidcAdapter::new(Duration::from_secs(5)).unwrap()
}

async fn finish(adapter: &OidcAdapter, provider: &SsoProvider) -> Result<VerifiedIdentity, DomainError> {
    adapter.finish(provider, REDIRECT, CODE, VERIFIER, NONCE).await
}

/// The message of an `Unauthorized`, checked to name no secret.
fn unauthorized(result: Result<VerifiedIdentity, DomainError>) -> String {
    match result {
        Err(DomainError::Unauthorized(m)) => {
            for secret in [SECRET, CODE, VERIFIER, ACCESS_TOKEN, "SUPERSECRET"] {
                assert!(!m.contains(secret), "{m} names a secret");
            }
            m
        }
        other => panic!("expected Unauthorized, got {other:?}"),
    }
}

fn assert_unavailable<T: std::fmt::Debug>(result: Result<T, DomainError>) {
    match result {
        Err(DomainError::Unavailable(what)) => assert_eq!(what, "identity provider"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

fn query(url: &str) -> HashMap<String, String> {
    let url = url::Url::parse(url).unwrap();
    url.query_pairs().into_owned().collect()
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn start_builds_the_authorization_url_and_discovery_is_cached() {
    let stub = Stub::start().await;
    let adapter = adapter();
    let a = adapter.start(&stub.provider(), REDIRECT).await.unwrap();
    let b = adapter.start(&stub.provider(), "https://agentgov.test/other").await.unwrap();
    assert!(a.url.starts_with(&format!("{}/authorize?", stub.issuer)), "{}", a.url);
    let q = query(&a.url);
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["client_id"], CLIENT_ID);
    assert_eq!(q["redirect_uri"], REDIRECT);
    assert_eq!(q["scope"], "openid email profile");
    assert_eq!(q["state"], a.state);
    assert_eq!(q["nonce"], a.nonce);
    assert_eq!(q["code_challenge_method"], "S256");
    // S256: base64url(sha256(verifier)) — checked for shape here; the provider checks the value.
    assert_eq!(q["code_challenge"].len(), 43);
    assert!(!q.contains_key("code_verifier"));
    assert!(!a.url.contains(&a.pkce_verifier));
    assert!(a.pkce_verifier.len() >= 43);
    assert!(a.state.len() >= 16 && a.nonce.len() >= 16);
    assert_ne!(a.state, b.state);
    assert_ne!(a.nonce, b.nonce);
    assert_ne!(a.pkce_verifier, b.pkce_verifier);
    assert_eq!(query(&b.url)["redirect_uri"], "https://agentgov.test/other");
    // One discovery for both.
    assert_eq!(stub.reads(), (1, 1));
    assert!(!format!("{a:?}").contains(&a.pkce_verifier));

    let custom =
        SsoProvider { scopes: vec!["groups".into(), "openid".into(), "email groups".into()], ..stub.provider() };
    let c = adapter.start(&custom, REDIRECT).await.unwrap();
    assert_eq!(query(&c.url)["scope"], "openid groups email");
}

#[tokio::test]
async fn a_redirect_uri_of_another_provider_is_refused_before_any_request() {
    let stub = Stub::start().await;
    let adapter = adapter();
    let evil = "https://evil.test/callback";
    assert!(matches!(adapter.start(&stub.provider(), evil).await, Err(DomainError::BadRequest(_))));
    assert!(matches!(
        adapter.finish(&stub.provider(), evil, CODE, VERIFIER, NONCE).await,
        Err(DomainError::BadRequest(_))
    ));
    // A prefix of an allowed one is not allowed either.
    assert!(matches!(
        adapter.start(&stub.provider(), "https://agentgov.test/sso/callback/../x").await,
        Err(DomainError::BadRequest(_))
    ));
    assert_eq!(stub.reads(), (0, 0));
}

#[tokio::test]
async fn finish_exchanges_the_code_and_returns_the_verified_identity() {
    let stub = Stub::start().await;
    let adapter = adapter();
    let identity = finish(&adapter, &stub.provider()).await.unwrap();
    assert_eq!(
        identity,
        VerifiedIdentity {
            subject: "user-1".into(),
            email: Some("ann@acme.test".into()),
            email_verified: Some(true),
            name: Some("Ann Example".into()),
        }
    );
    let (authorization, form) = stub.shared.state.lock().unwrap().token_requests[0].clone();
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{SECRET}"));
    assert_eq!(authorization.as_deref(), Some(format!("Basic {basic}").as_str()));
    assert_eq!(form["grant_type"], "authorization_code");
    assert_eq!(form["code"], CODE);
    assert_eq!(form["code_verifier"], VERIFIER);
    assert_eq!(form["redirect_uri"], REDIRECT);
    assert!(!form.contains_key("client_secret"), "client_secret_basic only");

    // Only the claims that are there; a string email_verified as some providers send it.
    stub.set(|s| s.token = tweaked(json!({"email": null, "name": null, "email_verified": "false"})));
    let identity = finish(&adapter, &stub.provider()).await.unwrap();
    assert_eq!(identity.email, None);
    assert_eq!(identity.email_verified, Some(false));
    assert_eq!(identity.name, None);

    // No at_hash at all is fine (it is optional in the code flow).
    stub.set(|s| s.token = Answer::Ok { tweak: json!({}), signer: 0, at_hash_of: None });
    finish(&adapter, &stub.provider()).await.unwrap();
    assert_eq!(stub.reads(), (1, 1));
}

#[tokio::test]
async fn rotated_keys_are_read_again_once() {
    let stub = Stub::start().await;
    let adapter = adapter();
    finish(&adapter, &stub.provider()).await.unwrap();
    assert_eq!(stub.reads(), (1, 1));

    // The provider rotates to k2 (k1 gone): the cached JWKS has no k2, so it is read again.
    stub.set(|s| {
        s.published = vec![1];
        s.token = Answer::Ok { tweak: json!({}), signer: 1, at_hash_of: Some(ACCESS_TOKEN) };
    });
    finish(&adapter, &stub.provider()).await.unwrap();
    assert_eq!(stub.reads(), (2, 2));
    // And kept: the next sign-in needs no read.
    finish(&adapter, &stub.provider()).await.unwrap();
    assert_eq!(stub.reads(), (2, 2));

    // A key the provider never publishes: read again once, then refused.
    stub.set(|s| s.token = Answer::Ok { tweak: json!({}), signer: 2, at_hash_of: Some(ACCESS_TOKEN) });
    let m = unauthorized(finish(&adapter, &stub.provider()).await);
    assert!(m.contains("signature"), "{m}");
    assert_eq!(stub.reads(), (3, 3));
}

#[tokio::test]
async fn a_signature_that_fails_with_just_read_keys_is_not_read_again() {
    let stub = Stub::start().await;
    stub.set(|s| s.token = Answer::Ok { tweak: json!({}), signer: 2, at_hash_of: Some(ACCESS_TOKEN) });
    let m = unauthorized(finish(&adapter(), &stub.provider()).await);
    assert!(m.contains("signature"), "{m}");
    assert_eq!(stub.reads(), (1, 1));
}

#[tokio::test]
async fn tokens_that_fail_verification_are_refused_with_the_reason() {
    let stub = Stub::start().await;
    let adapter = adapter();
    let cases: Vec<(Answer, &str)> = vec![
        (tweaked(json!({"nonce": "another-nonce"})), "nonce"),
        (tweaked(json!({"nonce": null})), "nonce"),
        (tweaked(json!({"aud": ["another-client"]})), "audience"),
        (tweaked(json!({"aud": [CLIENT_ID, "another-client"]})), "audience"),
        (tweaked(json!({"azp": "another-client"})), "authorized party"),
        (tweaked(json!({"exp": now() - 10})), "expired"),
        (tweaked(json!({"iss": "https://evil.test"})), "issuer"),
        (Answer::Ok { tweak: json!({}), signer: 0, at_hash_of: Some("another-access-token") }, "at_hash"),
        (Answer::NoIdToken, "no ID token"),
    ];
    for (token, reason) in cases {
        stub.set(|s| s.token = token);
        let m = unauthorized(finish(&adapter, &stub.provider()).await);
        assert!(m.contains(reason), "{m} should name {reason}");
    }
    // None of these were key problems: discovery was read once.
    assert_eq!(stub.reads(), (1, 1));
}

#[tokio::test]
async fn a_refused_code_is_unauthorized_and_a_failing_provider_unavailable() {
    let stub = Stub::start().await;
    let adapter = adapter();
    // A provider that echoes what it was sent in its description: scrubbed.
    stub.set(|s| {
        let description = format!("code {CODE} with {VERIFIER} by {SECRET} is invalid");
        s.token = Answer::Error(400, json!({"error": "invalid_grant", "error_description": description}));
    });
    let m = unauthorized(finish(&adapter, &stub.provider()).await);
    assert!(m.starts_with("the identity provider refused the code: invalid_grant"), "{m}");

    stub.set(|s| s.token = Answer::Error(401, json!({"error": "invalid_client"})));
    let m = unauthorized(finish(&adapter, &stub.provider()).await);
    assert!(m.contains("invalid_client"), "{m}");

    for status in [500, 502, 503, 429] {
        stub.set(|s| s.token = Answer::Error(status, json!({"error": "server_error"})));
        assert_unavailable(finish(&adapter, &stub.provider()).await);
    }
    stub.set(|s| s.token = Answer::Error(400, json!({"error": "temporarily_unavailable"})));
    assert_unavailable(finish(&adapter, &stub.provider()).await);
}

#[tokio::test]
async fn an_unreachable_or_invalid_provider_is_unavailable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let closed = provider(&format!("http://127.0.0.1:{port}"));
    let adapter = adapter();
    assert_unavailable(adapter.start(&closed, REDIRECT).await);
    assert_unavailable(finish(&adapter, &closed).await);

    // A discovery document naming another issuer is not trusted (and not cached).
    let stub = Stub::start().await;
    stub.set(|s| s.discovery_issuer = Some("https://evil.test".into()));
    assert_unavailable(adapter.start(&stub.provider(), REDIRECT).await);
    assert_unavailable(adapter.start(&stub.provider(), REDIRECT).await);
    assert_eq!(stub.reads().0, 2);
    stub.set(|s| s.discovery_issuer = None);
    adapter.start(&stub.provider(), REDIRECT).await.unwrap();

    // An issuer that is not a URL is the operator's mistake.
    let bad = provider("not a url");
    assert!(matches!(adapter.start(&bad, REDIRECT).await, Err(DomainError::Internal(_))));
}

#[tokio::test]
async fn a_slow_provider_times_out() {
    // A listener that accepts and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let adapter = OidcAdapter::new(Duration::from_millis(300)).unwrap();
    let started = std::time::Instant::now();
    assert_unavailable(adapter.start(&provider(&format!("http://{addr}")), REDIRECT).await);
    assert!(started.elapsed() < Duration::from_secs(3), "gave up after {:?}", started.elapsed());
    held.abort();
    assert!(matches!(OidcAdapter::new(Duration::ZERO), Err(DomainError::Internal(_))));
}

/// Log lines written by `tracing_subscriber::fmt`, kept in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test]
async fn logs_name_the_cause_but_never_a_secret() {
    let logs = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    // A current-thread runtime: the whole test runs on this thread.
    let _guard = tracing::subscriber::set_default(subscriber);

    let stub = Stub::start().await;
    let adapter = adapter();
    let tokens = vec![
        good(),
        Answer::Error(
            400,
            json!({"error": "invalid_grant", "error_description": format!("{CODE} {VERIFIER} {SECRET}")}),
        ),
        Answer::Error(
            500,
            json!({"error": "server_error", "error_description": format!("{CODE} {VERIFIER} {SECRET}")}),
        ),
        tweaked(json!({"nonce": "other"})),
        Answer::Ok { tweak: json!({}), signer: 2, at_hash_of: Some(ACCESS_TOKEN) },
        Answer::NoIdToken,
    ];
    for token in tokens {
        stub.set(|s| s.token = token);
        let _ = finish(&adapter, &stub.provider()).await;
    }
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("refused an authorization code"), "{text}");
    assert!(text.contains("refused an ID token"), "{text}");
    assert!(text.contains("nonce"), "{text}");
    for secret in [SECRET, CODE, VERIFIER, ACCESS_TOKEN, "SUPERSECRET"] {
        assert!(!text.contains(secret), "the logs name {secret}:\n{text}");
    }
}
