//! A real OpenID provider for the single sign-on tests: `tests/oidc/server.mjs` (the certified
//! `oidc-provider` package on Node.js), started on 127.0.0.1 on an ephemeral port, plain http.
//!
//! It logs in the account whose email is the authorization request's `login_hint` (the first
//! account without one) and consents to the requested scopes by itself, so [`walk`] takes an
//! authorization URL to the client's redirect URI with plain HTTP requests and a [`CookieJar`].
//! PKCE (S256) is required; ID tokens are RS256 and carry `email`, `email_verified`, `name`
//! (scopes `email` and `profile`) and the `nonce`. The token endpoint takes
//! `client_secret_basic` and `client_secret_post` alike.
//!
//! Tests start with `if !oidc::available() { return; }`: outside CI a missing Node.js or
//! `npm ci --prefix tests/oidc` skips them with a message; in CI it fails them.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use reqwest::{StatusCode, Url};
use serde_json::{Value, json};

/// How long the provider may take to print its ready line.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// The provider's directory: `tests/oidc`, beside this crate's sources.
pub fn idp_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("oidc")
}

/// Whether the test provider can run here: `node` answers and `tests/oidc/node_modules` is
/// installed. When it can't: `false` with a "skipped" message, or a panic when `CI` is set (CI
/// never skips these tests).
pub fn available() -> bool {
    let missing = if !idp_dir().join("node_modules/oidc-provider/package.json").is_file() {
        Some("its packages are not installed: run `npm ci --prefix tests/oidc`".to_owned())
    } else {
        match Command::new("node").arg("--version").stdin(Stdio::null()).output() {
            Ok(out) if out.status.success() => None,
            Ok(out) => Some(format!("`node --version` failed: {}", String::from_utf8_lossy(&out.stderr).trim())),
            Err(e) => Some(format!("`node` cannot be run: {e}")),
        }
    };
    match missing {
        None => true,
        Some(why) if agentgov_store_conformance::in_ci() => {
            panic!("the test OpenID provider is unavailable ({why}), but CI is set: the SSO tests must run in CI")
        }
        Some(why) => {
            eprintln!("skipped: the test OpenID provider is unavailable: {why}");
            false
        }
    }
}

/// A running test OpenID provider; killed when dropped.
pub struct TestIdp {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub issuer: String,
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl TestIdp {
    /// Starts the provider with these clients and accounts and waits for it to listen.
    ///
    /// `clients`: `[{"client_id", "client_secret", "redirect_uris": [..]}]`, plus any client
    /// metadata of oidc-provider (defaults: grant `authorization_code`, response type `code`,
    /// `client_secret_basic`). `accounts`: `[{"sub", "email", "email_verified", "name"}]`.
    /// Panics, with the provider's stderr, when it does not come up within 20 s.
    pub fn start(clients: Value, accounts: Value) -> TestIdp {
        let dir = idp_dir();
        let config = json!({ "clients": clients, "accounts": accounts });
        let mut child = Command::new("node")
            .args(["server.mjs", "--port", "0", "--exit-on-stdin-close"])
            .current_dir(&dir)
            .env("IDP_CONFIG", config.to_string())
            // The provider exits when its stdin closes: with this process, however it ends.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `node server.mjs` in {}: {e}", dir.display()));

        // Drain both pipes for the provider's whole life, so that it never blocks on them.
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_pipe = child.stderr.take().unwrap();
        let stderr_buf = Arc::clone(&stderr);
        let stderr_thread = std::thread::spawn(move || {
            let mut reader = BufReader::new(stderr_pipe);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                stderr_buf.lock().unwrap().push_str(&String::from_utf8_lossy(&line));
                line.clear();
            }
        });
        let stdout_pipe = child.stdout.take().unwrap();
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout_pipe).lines();
            let _ = ready_tx.send(lines.next());
            for _ in lines {}
        });

        let ready = ready_rx.recv_timeout(READY_TIMEOUT);
        let issuer = match &ready {
            Ok(Some(Ok(line))) => serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v["issuer"].as_str().map(str::to_owned))
                .ok_or_else(|| format!("an unexpected ready line: {line:?}")),
            Ok(Some(Err(e))) => Err(format!("cannot read its stdout: {e}")),
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => Err("it exited before it was ready".to_owned()),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("not ready after {READY_TIMEOUT:?}")),
        };
        match issuer {
            Ok(issuer) => TestIdp { issuer, child, stderr },
            Err(why) => {
                let _ = child.kill();
                let status = child.wait();
                let _ = stderr_thread.join();
                let stderr = stderr.lock().unwrap().clone();
                panic!("the test OpenID provider did not start: {why} ({status:?}); its stderr:\n{stderr}")
            }
        }
    }

    /// `{issuer}/.well-known/openid-configuration`.
    pub fn discovery_url(&self) -> String {
        format!("{}/.well-known/openid-configuration", self.issuer)
    }

    /// Changes an account's claims from its next sign-in on (`{"sub", ...claims}`), as when a
    /// user changes their e-mail at the provider.
    pub async fn update_account(&self, change: Value) {
        let res = reqwest::Client::new()
            .post(format!("{}/test/accounts", self.issuer))
            .json(&change)
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST /test/accounts: {e}"));
        assert_eq!(res.status(), StatusCode::NO_CONTENT, "POST /test/accounts {change}");
    }

    /// What the provider has written to stderr so far (its warnings and the errors it saw).
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for TestIdp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A browser's cookies, enough for redirect chains between loopback servers: keyed by host
/// (not port, as browsers do), name and path; sent where the path matches. A cookie set with an
/// empty value, `Max-Age=0` or an `Expires` in 1970 is removed. `Domain`, `Secure` and
/// `SameSite` are not enforced.
#[derive(Debug, Default, Clone)]
pub struct CookieJar {
    cookies: Vec<Cookie>,
}

#[derive(Debug, Clone)]
struct Cookie {
    host: String,
    name: String,
    path: String,
    value: String,
}

impl CookieJar {
    /// Takes in the `Set-Cookie` headers of a response to a request for `url`.
    pub fn store(&mut self, url: &Url, headers: &reqwest::header::HeaderMap) {
        let host = url.host_str().unwrap_or_default().to_owned();
        for header in headers.get_all(reqwest::header::SET_COOKIE) {
            let Ok(header) = header.to_str() else { continue };
            let mut parts = header.split(';').map(str::trim);
            let Some((name, value)) = parts.next().and_then(|p| p.split_once('=')) else { continue };
            let (name, mut value) = (name.trim().to_owned(), value.trim().to_owned());
            let mut path = default_path(url.path());
            for attr in parts {
                let (key, val) = attr.split_once('=').unwrap_or((attr, ""));
                match key.trim().to_ascii_lowercase().as_str() {
                    "path" if val.starts_with('/') => path = val.to_owned(),
                    "max-age" if val.trim().parse::<i64>().is_ok_and(|s| s <= 0) => value.clear(),
                    "expires" if val.contains("1970") => value.clear(),
                    _ => {}
                }
            }
            self.cookies.retain(|c| !(c.host == host && c.name == name && c.path == path));
            if !value.is_empty() {
                self.cookies.push(Cookie { host: host.clone(), name, path, value });
            }
        }
    }

    /// The `Cookie` header for a request to `url`, if any cookie goes with it.
    pub fn header_for(&self, url: &Url) -> Option<String> {
        let host = url.host_str().unwrap_or_default();
        let path = url.path();
        let mut matching: Vec<&Cookie> = self
            .cookies
            .iter()
            .filter(|c| {
                c.host == host
                    && (path == c.path
                        || path.starts_with(&c.path)
                            && (c.path.ends_with('/') || path[c.path.len()..].starts_with('/')))
            })
            .collect();
        // Longer paths first, as browsers send them.
        matching.sort_by_key(|c| std::cmp::Reverse(c.path.len()));
        let header = matching.iter().map(|c| format!("{}={}", c.name, c.value)).collect::<Vec<_>>().join("; ");
        (!header.is_empty()).then_some(header)
    }

    /// The value of the cookie `name` set by `host`, whatever its path.
    pub fn get(&self, host: &str, name: &str) -> Option<&str> {
        self.cookies.iter().find(|c| c.host == host && c.name == name).map(|c| c.value.as_str())
    }
}

fn default_path(path: &str) -> String {
    match path.rfind('/') {
        Some(0) | None => "/".to_owned(),
        Some(i) => path[..i].to_owned(),
    }
}

/// Follows redirects from `url` as a browser would (GET, cookies from and into `jar`) until
/// one points at a URL starting with `until`, and returns that URL (absolute), unfetched.
/// `client` must not follow redirects itself (`redirect::Policy::none()`). Panics on a
/// response that is not a redirect, or after 20 hops.
pub async fn walk(client: &reqwest::Client, jar: &mut CookieJar, url: &str, until: &str) -> String {
    let mut url = Url::parse(url).unwrap_or_else(|e| panic!("not a URL: {url}: {e}"));
    for _ in 0..20 {
        if url.as_str().starts_with(until) {
            return url.to_string();
        }
        let mut req = client.get(url.clone());
        if let Some(cookies) = jar.header_for(&url) {
            req = req.header(reqwest::header::COOKIE, cookies);
        }
        let res = req.send().await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
        jar.store(&url, res.headers());
        let status = res.status();
        let location = res.headers().get(reqwest::header::LOCATION).and_then(|l| l.to_str().ok()).map(str::to_owned);
        match location {
            Some(location) if status.is_redirection() && status != StatusCode::NOT_MODIFIED => {
                url = url.join(&location).unwrap_or_else(|e| panic!("GET {url}: a bad Location {location:?}: {e}"));
            }
            _ => {
                let body = res.text().await.unwrap_or_default();
                panic!("GET {url}: {status}, not a redirect on the way to {until}: {body}")
            }
        }
    }
    panic!("more than 20 redirects on the way to {until}, last at {url}")
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use sha2::{Digest, Sha256};

    use super::*;

    const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";
    const CLIENT_ID: &str = "agentgov-test";
    const CLIENT_SECRET: &str = "agentgov-test-secret";

    fn b64url_encode(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    fn b64url_decode(text: &str) -> Vec<u8> {
        URL_SAFE_NO_PAD.decode(text).unwrap_or_else(|e| panic!("not base64url: {text}: {e}"))
    }

    fn jwt_payload(jwt: &str) -> Value {
        let payload = jwt.split('.').nth(1).unwrap();
        serde_json::from_slice(&b64url_decode(payload)).unwrap()
    }

    fn authorization_url(endpoint: &str, challenge: &str, state: &str, nonce: &str, login_hint: Option<&str>) -> Url {
        let mut url = Url::parse(endpoint).unwrap();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", CLIENT_ID)
            .append_pair("redirect_uri", REDIRECT_URI)
            .append_pair("scope", "openid email profile")
            .append_pair("state", state)
            .append_pair("nonce", nonce)
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256");
        if let Some(hint) = login_hint {
            url.query_pairs_mut().append_pair("login_hint", hint);
        }
        url
    }

    fn query(url: &str) -> std::collections::HashMap<String, String> {
        Url::parse(url).unwrap().query_pairs().into_owned().collect()
    }

    async fn exchange(client: &reqwest::Client, endpoint: &str, code: &str, verifier: &str) -> (StatusCode, Value) {
        let res = client
            .post(endpoint)
            .basic_auth(CLIENT_ID, Some(CLIENT_SECRET))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", REDIRECT_URI),
                ("code_verifier", verifier),
            ])
            .send()
            .await
            .unwrap();
        (res.status(), res.json().await.unwrap())
    }

    #[test]
    fn base64url_round_trips() {
        assert_eq!(b64url_encode(b"hello?>"), "aGVsbG8_Pg");
        assert_eq!(b64url_decode("aGVsbG8_Pg"), b"hello?>");
        // RFC 7636, appendix B.
        let challenge = b64url_encode(&Sha256::digest(b"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
        assert_eq!(challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }

    #[tokio::test]
    async fn the_test_idp_runs_the_authorization_code_flow_with_pkce() {
        if !available() {
            return;
        }
        let idp = TestIdp::start(
            json!([{ "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "redirect_uris": [REDIRECT_URI] }]),
            json!([
                { "sub": "alice-1", "email": "alice@example.test", "email_verified": true, "name": "Alice" },
                { "sub": "bob-2", "email": "bob@example.test", "email_verified": false, "name": "Bob" },
            ]),
        );
        assert!(idp.issuer.starts_with("http://127.0.0.1:") && !idp.issuer.ends_with('/'), "{}", idp.issuer);
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();

        // Discovery and keys.
        let res = client.get(idp.discovery_url()).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let meta: Value = res.json().await.unwrap();
        assert_eq!(meta["issuer"], idp.issuer.as_str());
        for key in ["authorization_endpoint", "token_endpoint", "jwks_uri"] {
            let endpoint = meta[key].as_str().unwrap_or_else(|| panic!("no {key}: {meta}"));
            assert!(endpoint.starts_with(&format!("{}/", idp.issuer)), "{key}: {endpoint}");
        }
        assert!(meta["code_challenge_methods_supported"].as_array().unwrap().contains(&json!("S256")), "{meta}");
        let (authorize, token) =
            (meta["authorization_endpoint"].as_str().unwrap(), meta["token_endpoint"].as_str().unwrap());
        let jwks: Value = client.get(meta["jwks_uri"].as_str().unwrap()).send().await.unwrap().json().await.unwrap();
        let key = &jwks["keys"][0];
        assert_eq!((key["kty"].as_str(), key["alg"].as_str()), (Some("RSA"), Some("RS256")), "{jwks}");
        assert!(key.get("d").is_none(), "the JWKS leaks a private key: {jwks}");

        // Bob, by his login_hint: the provider logs him in and consents without a person.
        let verifier = "agentgov-test-verifier-0123456789-abcdefghijklmnop";
        let challenge = b64url_encode(&Sha256::digest(verifier.as_bytes()));
        let url = authorization_url(authorize, &challenge, "state-1", "nonce-1", Some("bob@example.test"));
        let mut jar = CookieJar::default();
        let back = query(&walk(&client, &mut jar, url.as_str(), REDIRECT_URI).await);
        assert_eq!(back.get("state").map(String::as_str), Some("state-1"), "{back:?}");
        assert_eq!(back.get("iss"), Some(&idp.issuer), "{back:?}");
        let code = back.get("code").unwrap_or_else(|| panic!("no code: {back:?}; IdP stderr:\n{}", idp.stderr()));

        let (status, tokens) = exchange(&client, token, code, verifier).await;
        assert_eq!(status, StatusCode::OK, "{tokens}");
        let claims = jwt_payload(tokens["id_token"].as_str().unwrap_or_else(|| panic!("no id_token: {tokens}")));
        assert_eq!(claims["iss"], idp.issuer.as_str(), "{claims}");
        assert_eq!(claims["aud"], CLIENT_ID, "{claims}");
        assert_eq!(claims["sub"], "bob-2", "{claims}");
        assert_eq!(claims["email"], "bob@example.test", "{claims}");
        assert_eq!(claims["email_verified"], false, "{claims}");
        assert_eq!(claims["name"], "Bob", "{claims}");
        assert_eq!(claims["nonce"], "nonce-1", "{claims}");

        // A code is good once.
        let (status, again) = exchange(&client, token, code, verifier).await;
        assert_eq!((status, again["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")), "{again}");

        // No login_hint, a fresh browser: the first account. A wrong verifier is refused.
        let url = authorization_url(authorize, &challenge, "state-2", "nonce-2", None);
        let back = query(&walk(&client, &mut CookieJar::default(), url.as_str(), REDIRECT_URI).await);
        let code = &back["code"];
        let (status, refused) =
            exchange(&client, token, code, "agentgov-test-verifier-0123456789-WRONGWRONGWRONG").await;
        assert_eq!((status, refused["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")), "{refused}");
        let (status, tokens) = exchange(&client, token, code, verifier).await;
        assert_eq!(status, StatusCode::OK, "{tokens}");
        let claims = jwt_payload(tokens["id_token"].as_str().unwrap());
        assert_eq!(
            (claims["email"].as_str(), claims["email_verified"].as_bool()),
            (Some("alice@example.test"), Some(true))
        );
        assert_eq!(claims["nonce"], "nonce-2");

        // PKCE is required; an unknown login_hint comes back as an error to the client.
        let mut url = Url::parse(authorize).unwrap();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", CLIENT_ID)
            .append_pair("redirect_uri", REDIRECT_URI)
            .append_pair("scope", "openid")
            .append_pair("state", "state-3");
        let back = query(&walk(&client, &mut CookieJar::default(), url.as_str(), REDIRECT_URI).await);
        assert_eq!(back.get("error").map(String::as_str), Some("invalid_request"), "{back:?}");
        let url = authorization_url(authorize, &challenge, "state-4", "nonce-4", Some("nobody@example.test"));
        let back = query(&walk(&client, &mut CookieJar::default(), url.as_str(), REDIRECT_URI).await);
        assert_eq!(back.get("error").map(String::as_str), Some("login_required"), "{back:?}");
        assert_eq!(back.get("state").map(String::as_str), Some("state-4"), "{back:?}");
    }
}
