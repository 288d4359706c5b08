//! Spec 4.3, single sign-on with OpenID Connect, against a real provider (`oidc-provider`
//! under Node, `tests/oidc`) started on 127.0.0.1: the whole flow through the browser's
//! redirects, and every refusal the issue names.
//!
//! The service's own cookie (`agentgov_sso`, the browser binding) is kept in `Sso::browser`,
//! a cookie jar the login and exchange requests go through, as a browser's would.
use std::sync::Mutex;

use agentgov_tests::oidc::{CookieJar, TestIdp, available, walk};
use agentgov_tests::*;
use serde_json::{Value, json};

const REDIRECT: &str = "http://127.0.0.1:9/sso/callback";
const SECRET: &str = "test-client-secret-0123456789";

struct Sso {
    app: TestApp,
    _tenant_app: TestApp,
    _idp: TestIdp,
    tenant: Tenant,
    /// The browser's cookies for the service.
    browser: Mutex<CookieJar>,
}

impl Sso {
    fn url(&self, path: &str) -> reqwest::Url {
        reqwest::Url::parse(&format!("{}/api/v1{path}", self.app.base)).unwrap()
    }

    /// `GET /auth/sso/login…` from the browser: its cookies go with it and come back into it.
    async fn start(&self, path: &str) -> reqwest::Response {
        let url = self.url(path);
        let mut req = self.app.get(path);
        if let Some(cookies) = self.browser.lock().unwrap().header_for(&url) {
            req = req.header(reqwest::header::COOKIE, cookies);
        }
        let res = req.send().await.unwrap();
        self.browser.lock().unwrap().store(&url, res.headers());
        res
    }

    /// `POST /auth/sso/exchange` from the browser (with its cookies).
    fn exchange_req(&self) -> reqwest::RequestBuilder {
        let path = "/auth/sso/exchange";
        let req = self.app.post(path);
        match self.browser.lock().unwrap().header_for(&self.url(path)) {
            Some(cookies) => req.header(reqwest::header::COOKIE, cookies),
            None => req,
        }
    }
}

/// A provider with two clients (the service's, and another with the same redirect URI),
/// accounts in the tenant's domain and outside it, and a server configured with it for the
/// tenant `acme` (`create_users` as given).
async fn setup(create_users: bool) -> Option<Sso> {
    setup_with(create_users, 600, |_| {}).await
}

async fn setup_with(
    create_users: bool,
    state_ttl_secs: u64,
    tweak: impl FnOnce(&mut agentgov_server::config::SsoProviderConfig) + Send + 'static,
) -> Option<Sso> {
    if !available() {
        return None;
    }
    let clients = json!([
        {"client_id": "agentgov", "client_secret": SECRET, "redirect_uris": [REDIRECT]},
        {"client_id": "other-app", "client_secret": SECRET, "redirect_uris": [REDIRECT]},
    ]);
    let accounts = json!([
        {"sub": "u-admin", "email": "admin@acme.test", "email_verified": true, "name": "Acme Admin"},
        {"sub": "u-ann", "email": "ann@acme.test", "email_verified": true, "name": "Ann"},
        {"sub": "u-new", "email": "new.person@acme.test", "email_verified": true, "name": "New Person"},
        {"sub": "u-eve", "email": "eve@evil.test", "email_verified": true, "name": "Eve"},
        {"sub": "u-mallory", "email": "mallory@acme.test", "email_verified": true, "name": "Mallory"},
        {"sub": "u-una", "email": "una@acme.test", "email_verified": false, "name": "Una"},
        {"sub": "u-nof", "email": "nof@acme.test", "name": "No Flag"},
    ]);
    let idp = TestIdp::start(clients, accounts);
    // The provider names its tenant by id: create the tenant first, then start the server
    // with the provider over the same data.
    let tenant_app = spawn_app().await;
    let tenant = tenant_app.create_tenant("acme").await;
    let data_dir = tenant_app.dir.path().to_path_buf();
    let issuer = idp.issuer.clone();
    let tenant_id = tenant.id.clone();
    let app = spawn_with(move |c| {
        c.data_dir = data_dir;
        c.sso_state_ttl_secs = state_ttl_secs;
        let mut provider = agentgov_server::config::SsoProviderConfig {
            id: "acme-idp".into(),
            name: Some("Acme IdP".into()),
            issuer,
            client_id: "agentgov".into(),
            client_secret: SECRET.into(),
            redirect_uris: vec![REDIRECT.into()],
            scopes: vec![],
            tenant_id,
            default_role: "analyst".into(),
            allowed_domains: vec!["acme.test".into()],
            create_users,
            trust_unverified_email: false,
        };
        tweak(&mut provider);
        c.sso_providers = vec![provider];
    })
    .await;
    Some(Sso { app, _tenant_app: tenant_app, _idp: idp, tenant, browser: Mutex::new(CookieJar::default()) })
}

/// Starts a sign-in for `email` and walks the provider's redirects back to the redirect
/// URI; answers (code, state). `tamper` may change the authorization URL first.
async fn sign_in_at_idp(sso: &Sso, email: &str, tamper: impl Fn(String) -> String) -> (String, String) {
    let res = sso.start("/auth/sso/login?provider=acme-idp").await;
    assert_eq!(res.status(), 302);
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let url = tamper(format!("{location}&login_hint={}", urlencode(email)));
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let back = walk(&client, &mut CookieJar::default(), &url, REDIRECT).await;
    let back = reqwest::Url::parse(&back).unwrap();
    let param = |name: &str| back.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    (param("code").expect("a code"), param("state").expect("a state"))
}

fn urlencode(s: &str) -> String {
    s.replace('@', "%40").replace('+', "%2B")
}

async fn exchange(sso: &Sso, code: &str, state: &str) -> reqwest::Response {
    sso.exchange_req().json(&json!({"code": code, "state": state})).send().await.unwrap()
}

#[tokio::test]
async fn a_user_signs_in_through_the_provider_and_gets_what_a_password_login_gives() {
    let Some(sso) = setup(false).await else { return };
    let providers = expect(sso.app.get("/auth/sso/providers"), 200).await;
    assert_eq!(providers, json!([{"id": "acme-idp", "name": "Acme IdP", "issuer": sso._idp.issuer}]));
    assert!(!providers.to_string().contains(SECRET));

    let res = sso.app.get("/auth/sso/login?provider=acme-idp").send().await.unwrap();
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    for part in ["code_challenge_method=S256", "code_challenge=", "nonce=", "state=", "client_id=agentgov"] {
        assert!(location.contains(part), "{part} missing from {location}");
    }

    let (code, state) = sign_in_at_idp(&sso, "admin@acme.test", |u| u).await;
    let signed_in =
        expect(sso.exchange_req().json(&json!({"code": code, "state": state, "provider": "acme-idp"})), 200).await;
    assert_eq!(signed_in["user"]["email"], "admin@acme.test");
    assert_eq!(signed_in["user"]["role"], "admin");
    for field in ["access_token", "expires_in", "api_key"] {
        assert!(!signed_in[field].is_null(), "{field}");
    }
    let token = signed_in["access_token"].as_str().unwrap();
    let me = expect(sso.app.get("/auth/me").bearer_auth(token), 200).await;
    assert_eq!(me["email"], "admin@acme.test");
    let key = signed_in["api_key"].as_str().unwrap();
    expect(sso.app.get("/agents").header("X-API-Key", key), 200).await;

    // The state works once.
    let replay = expect_problem(sso.exchange_req().json(&json!({"code": code, "state": state})), 401).await;
    assert!(replay["detail"].as_str().unwrap().contains("state"), "{replay}");
    let _ = &sso.tenant;
}

#[tokio::test]
async fn unknown_providers_foreign_redirects_and_bad_states_are_refused() {
    let Some(sso) = setup(false).await else { return };
    expect_problem(sso.app.get("/auth/sso/login?provider=nope"), 404).await;
    let foreign = format!("/auth/sso/login?provider=acme-idp&redirect_uri={}", urlencode("https://evil.test/cb"));
    expect_problem(sso.app.get(&foreign), 400).await;
    expect_problem(sso.app.get("/auth/sso/login"), 422).await;
    // A state never issued (or expired: the same to the server, whose entry is gone).
    let unknown = expect_problem(sso.exchange_req().json(&json!({"code": "x", "state": "never"})), 401).await;
    assert!(unknown["detail"].as_str().unwrap().contains("expired"), "{unknown}");
    expect_problem(sso.exchange_req().json(&json!({"code": "", "state": ""})), 422).await;
    // A sign-in started with this provider, finished naming another.
    let (code, state) = sign_in_at_idp(&sso, "admin@acme.test", |u| u).await;
    let body = json!({"code": code, "state": state, "provider": "other-idp"});
    expect_problem(sso.exchange_req().json(&body), 401).await;
}

#[tokio::test]
async fn a_code_issued_to_another_client_is_refused() {
    let Some(sso) = setup(false).await else { return };
    // The authorization request is altered to another client of the provider: the code is
    // issued to that client (the token's audience would be it), and the provider refuses
    // to redeem it for ours.
    let (code, state) =
        sign_in_at_idp(&sso, "admin@acme.test", |u| u.replace("client_id=agentgov", "client_id=other-app")).await;
    let res = exchange(&sso, &code, &state).await;
    let (status, body) = read(res).await;
    assert_eq!(status, 401, "{body}");
}

#[tokio::test]
async fn disallowed_domains_unknown_and_blocked_users_are_refused() {
    let Some(sso) = setup(false).await else { return };
    let (code, state) = sign_in_at_idp(&sso, "eve@evil.test", |u| u).await;
    let (status, body) = read(exchange(&sso, &code, &state).await).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("domain"), "{body}");

    let (code, state) = sign_in_at_idp(&sso, "new.person@acme.test", |u| u).await;
    let (status, body) = read(exchange(&sso, &code, &state).await).await;
    assert_eq!(status, 403, "no account and no creation: {body}");

    // Ann exists in the tenant, then is blocked.
    let (ann_id, _) = sso.app.user(&sso.tenant, "ann@acme.test", "analyst").await;
    expect(sso.app.post(&format!("/users/{ann_id}/block")).bearer_auth(&sso.tenant.token), 200).await;
    let (code, state) = sign_in_at_idp(&sso, "ann@acme.test", |u| u).await;
    let (status, body) = read(exchange(&sso, &code, &state).await).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("blocked"), "{body}");
}

#[tokio::test]
async fn a_provider_that_creates_users_creates_them_with_its_default_role() {
    let Some(sso) = setup(true).await else { return };
    let (code, state) = sign_in_at_idp(&sso, "new.person@acme.test", |u| u).await;
    let signed_in: Value = expect(sso.exchange_req().json(&json!({"code": code, "state": state})), 200).await;
    assert_eq!(signed_in["user"]["email"], "new.person@acme.test");
    assert_eq!(signed_in["user"]["role"], "analyst");
}

#[tokio::test]
async fn a_state_past_its_lifetime_is_refused() {
    let Some(sso) = setup_with(false, 1, |_| {}).await else { return };
    let (code, state) = sign_in_at_idp(&sso, "admin@acme.test", |u| u).await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let expired = expect_problem(sso.exchange_req().json(&json!({"code": code, "state": state})), 401).await;
    assert!(expired["detail"].as_str().unwrap().contains("expired"), "{expired}");
}

/// The cookie `agentgov_sso` as the login answer sets it.
fn binding_cookie(res: &reqwest::Response) -> String {
    res.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("agentgov_sso="))
        .unwrap_or_else(|| panic!("no agentgov_sso cookie: {:?}", res.headers()))
        .to_owned()
}

#[tokio::test]
async fn the_sign_in_cookie_is_http_only_lax_and_scoped_to_the_sso_routes() {
    let Some(sso) = setup(false).await else { return };
    let res = sso.start("/auth/sso/login?provider=acme-idp").await;
    let cookie = binding_cookie(&res);
    let value = cookie.trim_start_matches("agentgov_sso=").split(';').next().unwrap();
    assert_eq!(value.len(), 43, "{cookie}");
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/api/v1/auth/sso", "Max-Age=600"] {
        assert!(cookie.split("; ").any(|a| a == attribute), "{attribute} missing from {cookie}");
    }
    // Plain http on loopback (this test): not `Secure`, or the browser would never send it back.
    assert!(!cookie.contains("Secure"), "{cookie}");
    // A second sign-in in the same browser keeps its binding (two tabs both finish).
    let again = binding_cookie(&sso.start("/auth/sso/login?provider=acme-idp").await);
    assert_eq!(again, cookie);
}

#[tokio::test]
async fn an_exchange_without_the_starting_browsers_cookie_is_refused_and_uses_the_state_up() {
    let Some(sso) = setup(false).await else { return };
    // Login CSRF: the attacker starts a sign-in in their browser and has the victim's
    // browser (no cookie, or its own) finish it.
    let (code, state) = sign_in_at_idp(&sso, "admin@acme.test", |u| u).await;
    let body = json!({"code": code, "state": state});
    let refused = expect_problem(sso.app.post("/auth/sso/exchange").json(&body), 401).await;
    assert!(refused["detail"].as_str().unwrap().contains("browser"), "{refused}");
    // The state is used up: the right browser cannot finish it afterwards.
    let used = expect_problem(sso.exchange_req().json(&body), 401).await;
    assert!(used["detail"].as_str().unwrap().contains("state"), "{used}");

    // Another browser's cookie.
    let victim = setup_browser_cookie(&sso).await;
    let (code, state) = sign_in_at_idp(&sso, "admin@acme.test", |u| u).await;
    let req = sso.app.post("/auth/sso/exchange").header("cookie", format!("agentgov_sso={victim}"));
    let refused = expect_problem(req.json(&json!({"code": code, "state": state})), 401).await;
    assert!(refused["detail"].as_str().unwrap().contains("browser"), "{refused}");

    // The starting browser signs in.
    let (code, state) = sign_in_at_idp(&sso, "admin@acme.test", |u| u).await;
    expect(sso.exchange_req().json(&json!({"code": code, "state": state})), 200).await;
}

/// Starts a sign-in in a browser of its own (no cookies) and answers the binding it got.
async fn setup_browser_cookie(sso: &Sso) -> String {
    let res = sso.app.get("/auth/sso/login?provider=acme-idp").send().await.unwrap();
    let cookie = binding_cookie(&res);
    cookie.trim_start_matches("agentgov_sso=").split(';').next().unwrap().to_owned()
}

#[tokio::test]
async fn a_missing_or_false_email_verified_is_refused_and_nothing_is_created() {
    let Some(sso) = setup(true).await else { return };
    for email in ["una@acme.test", "nof@acme.test"] {
        let (code, state) = sign_in_at_idp(&sso, email, |u| u).await;
        let (status, body) = read(exchange(&sso, &code, &state).await).await;
        assert_eq!(status, 401, "{email}: {body}");
        assert!(body["detail"].as_str().unwrap().contains("verified"), "{body}");
    }
    let users = expect(sso.app.get("/users").bearer_auth(&sso.tenant.token), 200).await;
    assert!(!users.to_string().contains("una@acme.test") && !users.to_string().contains("nof@acme.test"), "{users}");
}

#[tokio::test]
async fn a_provider_that_trusts_unverified_emails_signs_them_in() {
    let Some(sso) = setup_with(true, 600, |p| p.trust_unverified_email = true).await else { return };
    for email in ["una@acme.test", "nof@acme.test"] {
        let (code, state) = sign_in_at_idp(&sso, email, |u| u).await;
        let signed_in = expect(sso.exchange_req().json(&json!({"code": code, "state": state})), 200).await;
        assert_eq!(signed_in["user"]["email"], email);
    }
}

#[tokio::test]
async fn the_second_sign_in_matches_by_sub_and_a_re_registered_email_takes_nothing_over() {
    let Some(sso) = setup(false).await else { return };
    let (ann_id, _) = sso.app.user(&sso.tenant, "ann@acme.test", "analyst").await;
    // First sign-in: by the verified e-mail; the identity (issuer, u-ann) is linked.
    let (code, state) = sign_in_at_idp(&sso, "ann@acme.test", |u| u).await;
    let first = expect(sso.exchange_req().json(&json!({"code": code, "state": state})), 200).await;
    assert_eq!(first["user"]["id"], ann_id.as_str());

    // Ann changes her e-mail at the provider; Mallory, another account there, takes Ann's.
    sso._idp.update_account(json!({"sub": "u-ann", "email": "ann.new@acme.test"})).await;
    sso._idp.update_account(json!({"sub": "u-mallory", "email": "ann@acme.test"})).await;

    // Ann still signs in as herself, by her `sub`.
    let (code, state) = sign_in_at_idp(&sso, "ann.new@acme.test", |u| u).await;
    let again = expect(sso.exchange_req().json(&json!({"code": code, "state": state})), 200).await;
    assert_eq!(again["user"]["id"], ann_id.as_str());
    assert_eq!(again["user"]["email"], "ann@acme.test", "the stored address is the service's");

    // Mallory's verified `ann@acme.test` does not sign in as Ann.
    let (code, state) = sign_in_at_idp(&sso, "ann@acme.test", |u| u).await;
    let (status, body) = read(exchange(&sso, &code, &state).await).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("linked"), "{body}");
}
