//! The OpenID Connect adapter (`agentgov-sso-oidc`) end to end against a real OpenID
//! provider (`tests/oidc`, oidc-provider on 127.0.0.1): start, the browser's trip through
//! the provider (a cookie jar, `login_hint` picks the account), finish; and the refusals.
//! Signature, audience, expiry, `at_hash` and key rotation are tested against a stub provider
//! in `crates/sso-oidc/tests/stub_provider.rs`, which can forge what a real provider won't.

#![expect(clippy::unwrap_used, reason = "test code: a failed unwrap is a failed test")]

use std::collections::HashMap;
use std::time::Duration;

use agentgov_domain::DomainError;
use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{Role, SsoProvider};
use agentgov_domain::ports::{AuthorizationStart, OidcClient, VerifiedIdentity};
use agentgov_sso_oidc::OidcAdapter;
use agentgov_tests::oidc::{self, CookieJar, TestIdp};
use reqwest::Url;
use serde_json::json;

const REDIRECT_A: &str = "http://127.0.0.1:9/sso/a/callback";
const REDIRECT_B: &str = "http://127.0.0.1:9/sso/b/callback";
const SECRET_A: &str = "client-a-SUPERSECRET-0123456789";
const SECRET_B: &str = "client-b-SUPERSECRET-0123456789";

fn idp() -> TestIdp {
    TestIdp::start(
        json!([
            { "client_id": "client-a", "client_secret": SECRET_A, "redirect_uris": [REDIRECT_A] },
            { "client_id": "client-b", "client_secret": SECRET_B, "redirect_uris": [REDIRECT_B] },
        ]),
        json!([
            { "sub": "alice-1", "email": "alice@example.test", "email_verified": true, "name": "Alice Example" },
            { "sub": "bob-2", "email": "bob@example.test", "email_verified": false, "name": "Bob" },
        ]),
    )
}

fn provider(issuer: &str, client_id: &str, secret: &str, redirect: &str) -> SsoProvider {
    SsoProvider {
        id: client_id.into(),
        name: client_id.into(),
        issuer: issuer.into(),
        client_id: client_id.into(),
        client_secret: secret.into(),
        redirect_uris: vec![redirect.into()],
        scopes: vec![],
        tenant_id: TenantId(uuid::Uuid::nil()),
        default_role: Role::Viewer,
        allowed_domains: vec![],
        create_users: false,
        trust_unverified_email: false,
    }
}

fn adapter() -> OidcAdapter {
    OidcAdapter::new(Duration::from_secs(10)).unwrap()
}

/// The browser's part: from the authorization URL (as `email`) to the redirect URI; the
/// `code` it brings back, after checking its `state`.
async fn authorize(start: &AuthorizationStart, redirect: &str, email: &str) -> String {
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let mut url = Url::parse(&start.url).unwrap();
    url.query_pairs_mut().append_pair("login_hint", email);
    let back = oidc::walk(&client, &mut CookieJar::default(), url.as_str(), redirect).await;
    let query: HashMap<String, String> = Url::parse(&back).unwrap().query_pairs().into_owned().collect();
    assert_eq!(query.get("state"), Some(&start.state), "{back}");
    query.get("code").unwrap_or_else(|| panic!("no code: {back}")).clone()
}

fn unauthorized(result: Result<VerifiedIdentity, DomainError>) -> String {
    match result {
        Err(DomainError::Unauthorized(m)) => {
            assert!(!m.contains("SUPERSECRET"), "{m}");
            m
        }
        other => panic!("expected Unauthorized, got {other:?}"),
    }
}

#[tokio::test]
async fn a_sign_in_goes_through_a_real_provider() {
    if !oidc::available() {
        return;
    }
    let idp = idp();
    let adapter = adapter();
    let a = provider(&idp.issuer, "client-a", SECRET_A, REDIRECT_A);

    let start = adapter.start(&a, REDIRECT_A).await.unwrap();
    let query: HashMap<String, String> = Url::parse(&start.url).unwrap().query_pairs().into_owned().collect();
    assert_eq!(query["scope"], "openid email profile");
    assert_eq!(query["code_challenge_method"], "S256");
    let code = authorize(&start, REDIRECT_A, "alice@example.test").await;
    let identity = adapter.finish(&a, REDIRECT_A, &code, &start.pkce_verifier, &start.nonce).await;
    assert_eq!(
        identity.unwrap_or_else(|e| panic!("{e:?}; IdP stderr:\n{}", idp.stderr())),
        VerifiedIdentity {
            subject: "alice-1".into(),
            email: Some("alice@example.test".into()),
            email_verified: Some(true),
            name: Some("Alice Example".into()),
        }
    );

    // Another account, another sign-in: its own state, nonce and verifier.
    let second = adapter.start(&a, REDIRECT_A).await.unwrap();
    assert_ne!((&second.state, &second.nonce), (&start.state, &start.nonce));
    let code = authorize(&second, REDIRECT_A, "bob@example.test").await;
    let bob = adapter.finish(&a, REDIRECT_A, &code, &second.pkce_verifier, &second.nonce).await.unwrap();
    assert_eq!((bob.subject.as_str(), bob.email_verified), ("bob-2", Some(false)));
}

#[tokio::test]
async fn a_code_is_good_once_and_only_with_its_nonce_verifier_and_client() {
    if !oidc::available() {
        return;
    }
    let idp = idp();
    let adapter = adapter();
    let a = provider(&idp.issuer, "client-a", SECRET_A, REDIRECT_A);
    let b = provider(&idp.issuer, "client-b", SECRET_B, REDIRECT_B);

    // The code used twice: the second time the provider refuses it.
    let start = adapter.start(&a, REDIRECT_A).await.unwrap();
    let code = authorize(&start, REDIRECT_A, "alice@example.test").await;
    adapter.finish(&a, REDIRECT_A, &code, &start.pkce_verifier, &start.nonce).await.unwrap();
    let m = unauthorized(adapter.finish(&a, REDIRECT_A, &code, &start.pkce_verifier, &start.nonce).await);
    assert!(m.starts_with("the identity provider refused the code: invalid_grant"), "{m}");

    // The ID token of another sign-in (its nonce): refused, though the code was good.
    let start = adapter.start(&a, REDIRECT_A).await.unwrap();
    let code = authorize(&start, REDIRECT_A, "alice@example.test").await;
    let m = unauthorized(adapter.finish(&a, REDIRECT_A, &code, &start.pkce_verifier, "another-sign-ins-nonce").await);
    assert!(m.contains("nonce mismatch"), "{m}");

    // A wrong PKCE verifier: the provider refuses the code.
    let start = adapter.start(&a, REDIRECT_A).await.unwrap();
    let code = authorize(&start, REDIRECT_A, "alice@example.test").await;
    let wrong_verifier = "wrong-verifier-0123456789-0123456789-0123456789-0123";
    let m = unauthorized(adapter.finish(&a, REDIRECT_A, &code, wrong_verifier, &start.nonce).await);
    assert!(m.contains("invalid_grant"), "{m}");

    // A code issued to client B, finished as client A (configured with B's redirect URI so
    // that only the client differs): refused.
    let start = adapter.start(&b, REDIRECT_B).await.unwrap();
    let code = authorize(&start, REDIRECT_B, "alice@example.test").await;
    let a_at_b = SsoProvider { redirect_uris: vec![REDIRECT_B.into()], ..a.clone() };
    let m = unauthorized(adapter.finish(&a_at_b, REDIRECT_B, &code, &start.pkce_verifier, &start.nonce).await);
    assert!(m.contains("refused the code"), "{m}");

    // Client A with B's ID (a provider configured with the wrong client ID and secret pair):
    // the provider refuses the client.
    let mixed = SsoProvider { client_secret: SECRET_A.into(), ..b.clone() };
    let start = adapter.start(&mixed, REDIRECT_B).await.unwrap();
    let code = authorize(&start, REDIRECT_B, "alice@example.test").await;
    let m = unauthorized(adapter.finish(&mixed, REDIRECT_B, &code, &start.pkce_verifier, &start.nonce).await);
    assert!(m.contains("invalid_client"), "{m}");
}

#[tokio::test]
async fn an_unreachable_provider_is_unavailable() {
    // No provider process needed: a port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let gone = provider(&format!("http://127.0.0.1:{port}"), "client-a", SECRET_A, REDIRECT_A);
    let adapter = adapter();
    for result in [
        adapter.start(&gone, REDIRECT_A).await.map(|_| ()),
        adapter
            .finish(&gone, REDIRECT_A, "code", "verifier-0123456789-0123456789-0123456789-0", "nonce")
            .await
            .map(|_| ()),
    ] {
        match result {
            Err(DomainError::Unavailable(what)) => assert_eq!(what, "identity provider"),
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }

    if !oidc::available() {
        return;
    }
    // A provider that was there for the start and is gone at the finish.
    let idp = idp();
    let a = provider(&idp.issuer, "client-a", SECRET_A, REDIRECT_A);
    let start = adapter.start(&a, REDIRECT_A).await.unwrap();
    let code = authorize(&start, REDIRECT_A, "alice@example.test").await;
    drop(idp);
    match adapter.finish(&a, REDIRECT_A, &code, &start.pkce_verifier, &start.nonce).await {
        Err(DomainError::Unavailable(what)) => assert_eq!(what, "identity provider"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
}
