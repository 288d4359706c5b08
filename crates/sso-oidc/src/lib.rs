//! agentgov's adapter of the domain's [`OidcClient`] port: single sign-on with any OpenID
//! Connect provider (Okta, Entra ID, Google, Keycloak, Auth0, ...), through the
//! authorization-code flow with PKCE.
//!
//! # Protocol
//!
//! The protocol itself (discovery, the authorization URL, the token request, the ID token's
//! JOSE signature and claims) is the `openidconnect` crate's; this crate wires it to the
//! port, caches what discovery finds and maps every failure to a [`DomainError`].
//!
//! - **Discovery**: `{issuer}/.well-known/openid-configuration` and the JWKS it names are
//!   read on first use of an issuer and kept for [`DISCOVERY_TTL`]. The issuer in the
//!   document must be the configured one exactly.
//! - **Start**: the authorization URL asks for `openid` plus the provider's scopes (`email
//!   profile` when none are configured), with a random `state` and `nonce` and a PKCE S256
//!   challenge.
//! - **Finish**: the code is exchanged at the token endpoint with the PKCE verifier, the
//!   client authenticating with `client_secret_basic` (or `client_secret_post` when the
//!   provider's discovery says it supports only that). The ID token must be signed by a key
//!   of the provider's JWKS with an algorithm the provider announces (HMAC with the client
//!   secret only when it announces one), name the issuer and the client (`aud`, and `azp`
//!   when present), not be expired, carry the sign-in's `nonce` and, when it has an
//!   `at_hash`, match the access token.
//! - **Key rotation**: when the signature cannot be checked with the cached JWKS (unknown
//!   `kid`, or a signature that does not verify) the discovery document and JWKS are read
//!   again, once, and the token checked again.
//!
//! # Errors
//!
//! - Provider unreachable, timed out, HTTP 5xx or 429, a discovery document that is missing
//!   or invalid, a token response that cannot be read: [`DomainError::Unavailable`]
//!   (`"identity provider"`), with the cause logged at `warn`.
//! - The token endpoint refuses the code (`invalid_grant`, `invalid_client`, ...):
//!   [`DomainError::Unauthorized`] `"the identity provider refused the code: …"`.
//! - No ID token, or one that fails verification: [`DomainError::Unauthorized`] naming the
//!   reason (wrong issuer or audience, expired, bad signature, nonce or `at_hash` mismatch).
//! - A `redirect_uri` that is not one of the provider's: [`DomainError::BadRequest`].
//!
//! The client secret, the authorization code, the PKCE verifier and every token are never
//! logged and never put in an error; text quoted from the provider is scrubbed of them.
//!
//! # HTTP
//!
//! One `reqwest` client (rustls) for every provider, following **no redirects** (as
//! `openidconnect` recommends, against SSRF through a redirected token request), with a
//! timeout on each request and a cap of [`MAX_RESPONSE_BYTES`] on each response body.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::model::SsoProvider;
use agentgov_domain::ports::{AuthorizationStart, OidcClient, VerifiedIdentity};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreClientAuthMethod, CoreErrorResponseType, CoreIdToken, CoreIdTokenClaims,
    CoreIdTokenVerifier, CoreJsonWebKey, CoreProviderMetadata, CoreTokenResponse,
};
use openidconnect::http::StatusCode;
use openidconnect::{
    AccessTokenHash, AsyncHttpClient, AuthType, AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret,
    CsrfToken, DiscoveryError, EndpointMaybeSet, EndpointNotSet, EndpointSet, HttpRequest, HttpResponse, IssuerUrl,
    JsonWebKey, JwsSigningAlgorithm, Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl,
    RequestTokenError, Scope, SignatureVerificationError, StandardErrorResponse, TokenResponse, reqwest,
};

/// How long a provider's discovery document and JWKS are used before being read again.
pub const DISCOVERY_TTL: Duration = Duration::from_secs(3600);
/// The largest response body read from a provider (discovery documents, key sets and token
/// responses are a few kilobytes).
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;
/// Scopes asked for besides `openid` when the provider configures none.
pub const DEFAULT_SCOPES: [&str; 2] = ["email", "profile"];

/// The name used in [`DomainError::Unavailable`] and in log lines.
const SERVICE: &str = "identity provider";
/// How many characters of a provider's error description an error message may quote.
const EXCERPT_CHARS: usize = 200;
/// Most issuers whose discovery is kept at once.
const MAX_CACHED_ISSUERS: u64 = 1024;

/// The client `CoreClient::from_provider_metadata` builds: authorization endpoint set, token
/// and userinfo endpoints as discovery found them.
type Client =
    CoreClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointMaybeSet, EndpointMaybeSet>;

/// [`OidcClient`] for any OpenID Connect provider. Cheap to share behind an `Arc`: the HTTP
/// connection pool and the discovery cache are shared by every call.
pub struct OidcAdapter {
    http: ProviderHttp,
    /// Discovery document (with its JWKS) by issuer URL.
    discovery: moka::future::Cache<String, Arc<CoreProviderMetadata>>,
}

impl fmt::Debug for OidcAdapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcAdapter")
            .field("timeout", &self.http.timeout)
            .field("cached_issuers", &self.discovery.entry_count())
            .finish_non_exhaustive()
    }
}

impl OidcAdapter {
    /// Builds the HTTP client; nothing is sent until a sign-in starts. `http_timeout` limits
    /// each request to a provider, from connecting to the last byte of the response.
    ///
    /// Errors ([`DomainError::Internal`]): a zero timeout, or an HTTP client that cannot be
    /// built (no TLS backend).
    pub fn new(http_timeout: Duration) -> Result<Self> {
        if http_timeout.is_zero() {
            return Err(DomainError::Internal("the identity provider timeout must be more than zero".into()));
        }
        let client = reqwest::Client::builder()
            // Following redirects opens the token request up to SSRF (openidconnect's advice).
            .redirect(reqwest::redirect::Policy::none())
            .timeout(http_timeout)
            .user_agent(concat!("agentgov/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| DomainError::Internal(format!("cannot build the identity provider HTTP client: {e}")))?;
        let discovery =
            moka::future::Cache::builder().max_capacity(MAX_CACHED_ISSUERS).time_to_live(DISCOVERY_TTL).build();
        Ok(Self { http: ProviderHttp { client, timeout: http_timeout }, discovery })
    }

    /// The provider's discovery document and JWKS, from the cache or read now; `true` when
    /// read by this call (so there is no point reading it again at once).
    async fn metadata(&self, provider: &SsoProvider) -> Result<(Arc<CoreProviderMetadata>, bool)> {
        let issuer = issuer_url(provider)?;
        let entry = self
            .discovery
            .entry_by_ref(provider.issuer.as_str())
            .or_try_insert_with(self.discover(provider, issuer))
            .await
            // Already logged by `discover`.
            .map_err(|_| unavailable())?;
        let fresh = entry.is_fresh();
        Ok((entry.into_value(), fresh))
    }

    /// Reads the discovery document and JWKS again (the provider may have rotated its keys)
    /// and caches them.
    async fn rediscover(&self, provider: &SsoProvider) -> Result<Arc<CoreProviderMetadata>> {
        let metadata = self.discover(provider, issuer_url(provider)?).await.map_err(|()| unavailable())?;
        self.discovery.insert(provider.issuer.clone(), Arc::clone(&metadata)).await;
        Ok(metadata)
    }

    /// Reads `{issuer}/.well-known/openid-configuration` and the JWKS it names; failures are
    /// logged here.
    async fn discover(
        &self,
        provider: &SsoProvider,
        issuer: IssuerUrl,
    ) -> std::result::Result<Arc<CoreProviderMetadata>, ()> {
        match CoreProviderMetadata::discover_async(issuer, &self.http).await {
            Ok(metadata) => {
                tracing::debug!(provider = %provider.id, issuer = %provider.issuer, "read the provider's discovery");
                Ok(Arc::new(metadata))
            }
            Err(e) => {
                tracing::warn!(
                    provider = %provider.id,
                    issuer = %provider.issuer,
                    error = %describe_discovery_error(&e),
                    "identity provider discovery failed"
                );
                Err(())
            }
        }
    }

    /// Exchanges the code; the token response or the mapped error.
    async fn exchange(
        &self,
        provider: &SsoProvider,
        client: &Client,
        code: &str,
        pkce_verifier: &str,
    ) -> Result<CoreTokenResponse> {
        let request = client.exchange_code(AuthorizationCode::new(code.to_owned())).map_err(|e| {
            tracing::warn!(provider = %provider.id, error = %e, "the provider's discovery names no token endpoint");
            unavailable()
        })?;
        request
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_owned()))
            .request_async(&self.http)
            .await
            .map_err(|e| token_error(&Secrets { provider, code, pkce_verifier }, e))
    }
}

type TokenError = RequestTokenError<HttpError, StandardErrorResponse<CoreErrorResponseType>>;

/// A failed token request as a [`DomainError`], logged.
fn token_error(secrets: &Secrets<'_>, e: TokenError) -> DomainError {
    let provider = &secrets.provider.id;
    match e {
        RequestTokenError::ServerResponse(response) => {
            let kind = response.error();
            // Errors of the authorization endpoint that some providers answer the token request with.
            let transient = ["server_error", "temporarily_unavailable"];
            if matches!(kind, CoreErrorResponseType::Extension(k) if transient.contains(&k.as_str())) {
                tracing::warn!(%provider, error = %kind, "the identity provider's token endpoint failed");
                return unavailable();
            }
            let mut reason = kind.to_string();
            if let Some(description) = response.error_description() {
                reason.push_str(": ");
                reason.push_str(&secrets.scrub(description));
            }
            tracing::info!(%provider, %reason, "the identity provider refused an authorization code");
            DomainError::Unauthorized(format!("the identity provider refused the code: {reason}"))
        }
        RequestTokenError::Parse(e, _body) => {
            // The body holds tokens and serde's message may quote it: only the path.
            let path = e.path().to_string();
            if path.starts_with("id_token") {
                tracing::warn!(%provider, "the identity provider sent a malformed ID token");
                return DomainError::Unauthorized("the identity provider sent a malformed ID token".into());
            }
            tracing::warn!(%provider, at = %path, "cannot read the identity provider's token response");
            unavailable()
        }
        RequestTokenError::Request(e) => {
            tracing::warn!(%provider, error = %e, "the identity provider's token request failed");
            unavailable()
        }
        RequestTokenError::Other(message) => {
            let message = secrets.scrub(&message);
            tracing::warn!(%provider, error = %message, "unexpected token response from the identity provider");
            unavailable()
        }
    }
}

/// Values that must never reach an error or a log line, to scrub from text quoted from a
/// provider.
struct Secrets<'a> {
    provider: &'a SsoProvider,
    code: &'a str,
    pkce_verifier: &'a str,
}

impl Secrets<'_> {
    fn scrub(&self, text: &str) -> String {
        // Scrubbed before cutting, so that no part of a secret is left at the cut.
        let mut text = text.to_owned();
        for secret in [self.provider.client_secret.as_str(), self.code, self.pkce_verifier] {
            if !secret.is_empty() {
                text = text.replace(secret, "****");
            }
        }
        text.chars().take(EXCERPT_CHARS).collect()
    }
}

fn unavailable() -> DomainError {
    DomainError::Unavailable(SERVICE.into())
}

fn issuer_url(provider: &SsoProvider) -> Result<IssuerUrl> {
    IssuerUrl::new(provider.issuer.clone())
        .map_err(|e| DomainError::Internal(format!("SSO provider {}: the issuer is not a URL ({e})", provider.id)))
}

/// `redirect_uri` when it is one of the provider's own (exact match).
fn redirect_url(provider: &SsoProvider, redirect_uri: &str) -> Result<RedirectUrl> {
    if !provider.redirect_uris.iter().any(|r| r == redirect_uri) {
        return Err(DomainError::BadRequest("redirect_uri is not one of this provider's redirect URIs".into()));
    }
    RedirectUrl::new(redirect_uri.to_owned())
        .map_err(|e| DomainError::BadRequest(format!("redirect_uri is not a URL ({e})")))
}

/// The scopes asked for besides `openid` (which the client always adds): the provider's,
/// split on whitespace, without repeats, or [`DEFAULT_SCOPES`] when it has none.
fn scopes(provider: &SsoProvider) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for scope in provider.scopes.iter().flat_map(|s| s.split_whitespace()) {
        if scope != "openid" && !out.iter().any(|s| s == scope) {
            out.push(scope.to_owned());
        }
    }
    if provider.scopes.iter().all(|s| s.trim().is_empty()) {
        out = DEFAULT_SCOPES.iter().map(|s| (*s).to_owned()).collect();
    }
    out
}

/// The client for `provider` with `metadata`, returning to `redirect`.
fn client(provider: &SsoProvider, metadata: &CoreProviderMetadata, redirect: RedirectUrl) -> Client {
    // client_secret_basic is the default of OpenID Connect and the one to use unless the
    // provider announces only client_secret_post.
    let auth_type = match metadata.token_endpoint_auth_methods_supported() {
        Some(methods)
            if !methods.contains(&CoreClientAuthMethod::ClientSecretBasic)
                && methods.contains(&CoreClientAuthMethod::ClientSecretPost) =>
        {
            AuthType::RequestBody
        }
        _ => AuthType::BasicAuth,
    };
    CoreClient::from_provider_metadata(
        metadata.clone(),
        ClientId::new(provider.client_id.clone()),
        Some(ClientSecret::new(provider.client_secret.clone())),
    )
    .set_redirect_uri(redirect)
    .set_auth_type(auth_type)
}

/// Why verifying an ID token failed.
enum Refusal {
    /// The signature could not be checked with these keys: worth reading the JWKS again.
    Keys(String),
    /// Anything else: final.
    Token(String),
}

impl Refusal {
    fn message(&self) -> &str {
        match self {
            Refusal::Keys(m) | Refusal::Token(m) => m,
        }
    }
}

/// Verifies `id_token` with `client`'s keys, issuer and client ID, `nonce` and the access
/// token's hash; the verified claims or why not.
fn verify(
    client: &Client,
    provider: &SsoProvider,
    id_token: &CoreIdToken,
    access_token: &openidconnect::AccessToken,
    nonce: &Nonce,
) -> std::result::Result<CoreIdTokenClaims, Refusal> {
    let verifier: CoreIdTokenVerifier<'_> = client.id_token_verifier();
    let claims = id_token.claims(&verifier, nonce).map_err(|e| match e {
        ClaimsVerificationError::SignatureVerification(
            e @ (SignatureVerificationError::NoMatchingKey
            | SignatureVerificationError::AmbiguousKeyId(_)
            | SignatureVerificationError::CryptoError(_)
            | SignatureVerificationError::InvalidKey(_)
            | SignatureVerificationError::DisallowedAlg(_)),
        ) => Refusal::Keys(format!("bad signature ({e})")),
        e => Refusal::Token(describe_claims_error(&e)),
    })?;
    // Section 3.1.3.7 (5): an `azp` must name this client (openidconnect leaves it to us).
    if let Some(azp) = claims.authorized_party()
        && azp.as_str() != provider.client_id
    {
        return Err(Refusal::Token(format!(
            "wrong authorized party (azp is `{}`, not this client)",
            azp.as_str().chars().take(EXCERPT_CHARS).collect::<String>()
        )));
    }
    if let Some(expected) = claims.access_token_hash() {
        let alg = id_token.signing_alg().map_err(|e| Refusal::Token(format!("bad signature ({e})")))?;
        let actual = if alg.uses_shared_secret() {
            let key = CoreJsonWebKey::new_symmetric(provider.client_secret.clone().into_bytes());
            AccessTokenHash::from_token(access_token, alg, &key)
        } else {
            let key = id_token.signing_key(&verifier).map_err(|e| Refusal::Keys(format!("bad signature ({e})")))?;
            AccessTokenHash::from_token(access_token, alg, key)
        }
        .map_err(|e| Refusal::Token(format!("cannot compute at_hash ({e})")))?;
        if actual != *expected {
            return Err(Refusal::Token("at_hash does not match the access token".into()));
        }
    }
    Ok(claims.clone())
}

fn describe_claims_error(e: &ClaimsVerificationError) -> String {
    match e {
        ClaimsVerificationError::Expired(m) => format!("expired ({m})"),
        ClaimsVerificationError::InvalidAudience(m) => format!("wrong audience ({m})"),
        ClaimsVerificationError::InvalidIssuer(m) => format!("wrong issuer ({m})"),
        // "nonce mismatch" or "missing nonce claim".
        ClaimsVerificationError::InvalidNonce(m) => m.clone(),
        ClaimsVerificationError::InvalidSubject(m) => format!("bad subject ({m})"),
        ClaimsVerificationError::SignatureVerification(s) => format!("bad signature ({s})"),
        other => other.to_string(),
    }
}

/// A discovery failure for the logs: its causes too (its own message is often only "Request
/// failed"), never the response body. Discovery documents and key sets hold no secrets.
fn describe_discovery_error<E: std::error::Error>(e: &DiscoveryError<E>) -> String {
    match e {
        DiscoveryError::Response(status, _, message) => format!("HTTP {status}: {message}"),
        other => with_causes(other),
    }
}

/// `e`'s message followed by those of its sources.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn identity(claims: &CoreIdTokenClaims) -> VerifiedIdentity {
    let name = claims.name().and_then(|n| n.get(None).or_else(|| n.iter().next().map(|(_, v)| v)));
    VerifiedIdentity {
        subject: claims.subject().as_str().to_owned(),
        email: claims.email().map(|e| e.as_str().to_owned()),
        email_verified: claims.email_verified(),
        name: name.map(|n| n.as_str().to_owned()),
    }
}

#[async_trait]
impl OidcClient for OidcAdapter {
    async fn start(&self, provider: &SsoProvider, redirect_uri: &str) -> Result<AuthorizationStart> {
        let redirect = redirect_url(provider, redirect_uri)?;
        let (metadata, _) = self.metadata(provider).await?;
        let client = client(provider, &metadata, redirect);
        let (pkce_challenge, pkce_verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request =
            client.authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random);
        for scope in scopes(provider) {
            request = request.add_scope(Scope::new(scope));
        }
        let (url, state, nonce) = request.set_pkce_challenge(pkce_challenge).url();
        Ok(AuthorizationStart {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: pkce_verifier.secret().clone(),
        })
    }

    async fn finish(
        &self,
        provider: &SsoProvider,
        redirect_uri: &str,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
    ) -> Result<VerifiedIdentity> {
        let redirect = redirect_url(provider, redirect_uri)?;
        if code.is_empty() {
            return Err(DomainError::Unauthorized("the identity provider sent no authorization code".into()));
        }
        if pkce_verifier.is_empty() || nonce.is_empty() {
            return Err(DomainError::BadRequest("the sign-in has no nonce or PKCE verifier".into()));
        }
        let (metadata, fresh) = self.metadata(provider).await?;
        let oidc = client(provider, &metadata, redirect.clone());
        let response = self.exchange(provider, &oidc, code, pkce_verifier).await?;
        let id_token = response.id_token().ok_or_else(|| {
            tracing::warn!(provider = %provider.id, "the identity provider's token response has no ID token");
            DomainError::Unauthorized("the identity provider sent no ID token".into())
        })?;
        let nonce = Nonce::new(nonce.to_owned());
        let claims = match verify(&oidc, provider, id_token, response.access_token(), &nonce) {
            Ok(claims) => claims,
            Err(Refusal::Keys(first)) if !fresh => {
                tracing::info!(
                    provider = %provider.id,
                    reason = %first,
                    "ID token not verified with the cached keys; reading the provider's keys again"
                );
                let metadata = self.rediscover(provider).await?;
                let oidc = client(provider, &metadata, redirect);
                verify(&oidc, provider, id_token, response.access_token(), &nonce).map_err(|r| refused(provider, &r))?
            }
            Err(r) => return Err(refused(provider, &r)),
        };
        Ok(identity(&claims))
    }
}

fn refused(provider: &SsoProvider, refusal: &Refusal) -> DomainError {
    tracing::warn!(provider = %provider.id, reason = %refusal.message(), "refused an ID token");
    DomainError::Unauthorized(format!("the identity provider's ID token is not valid: {}", refusal.message()))
}

/// The HTTP client every request to a provider goes through: no redirects, a timeout, a
/// size cap, and 5xx and 429 answers turned into errors (the provider is unavailable, which
/// is not the same as refusing a code).
struct ProviderHttp {
    client: reqwest::Client,
    timeout: Duration,
}

/// Why a request to a provider failed.
#[derive(Debug)]
enum HttpError {
    Transport(reqwest::Error),
    Response(openidconnect::http::Error),
    Status(StatusCode),
    TooLarge,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // reqwest's own message hides the cause ("connection refused", "timed out").
            HttpError::Transport(e) => write!(f, "{}", with_causes(e)),
            HttpError::Response(e) => write!(f, "{e}"),
            HttpError::Status(s) => write!(f, "HTTP {s}"),
            HttpError::TooLarge => write!(f, "response larger than {MAX_RESPONSE_BYTES} bytes"),
        }
    }
}

impl std::error::Error for HttpError {}

impl From<reqwest::Error> for HttpError {
    fn from(e: reqwest::Error) -> Self {
        HttpError::Transport(e)
    }
}

impl<'c> AsyncHttpClient<'c> for ProviderHttp {
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = std::result::Result<HttpResponse, HttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let request = reqwest::Request::try_from(request)?;
            let mut response = self.client.execute(request).await?;
            let status = response.status();
            if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
                return Err(HttpError::Status(status));
            }
            if response.content_length().is_some_and(|n| n > MAX_RESPONSE_BYTES as u64) {
                return Err(HttpError::TooLarge);
            }
            let mut builder = openidconnect::http::Response::builder().status(status).version(response.version());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    return Err(HttpError::TooLarge);
                }
                body.extend_from_slice(&chunk);
            }
            builder.body(body).map_err(HttpError::Response)
        })
    }
}

#[cfg(test)]
mod tests {
    use agentgov_domain::ids::TenantId;
    use agentgov_domain::model::Role;

    use super::*;

    fn provider(scopes: &[&str]) -> SsoProvider {
        SsoProvider {
            id: "okta".into(),
            name: "Okta".into(),
            issuer: "https://acme.okta.test".into(),
            client_id: "client".into(),
            client_secret: "very-secret".into(),
            redirect_uris: vec!["https://app.test/cb".into(), "http://localhost:8080/cb".into()],
            scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
            tenant_id: TenantId(uuid::Uuid::nil()),
            default_role: Role::Viewer,
            allowed_domains: vec![],
            create_users: false,
            trust_unverified_email: false,
        }
    }

    #[test]
    fn scopes_default_to_email_and_profile_and_never_repeat_openid() {
        assert_eq!(scopes(&provider(&[])), ["email", "profile"]);
        assert_eq!(scopes(&provider(&["", "  "])), ["email", "profile"]);
        assert_eq!(scopes(&provider(&["email"])), ["email"]);
        assert_eq!(scopes(&provider(&["openid"])), Vec::<String>::new());
        assert_eq!(
            scopes(&provider(&["openid", "email groups", "groups", " profile "])),
            ["email", "groups", "profile"]
        );
    }

    #[test]
    fn only_the_providers_own_redirect_uris_are_accepted() {
        let p = provider(&[]);
        assert_eq!(redirect_url(&p, "https://app.test/cb").unwrap().as_str(), "https://app.test/cb");
        redirect_url(&p, "http://localhost:8080/cb").unwrap();
        for other in
            ["https://app.test/cb/", "https://app.test/CB", "https://evil.test/cb", "https://app.test/cb?x=1", ""]
        {
            assert!(matches!(redirect_url(&p, other), Err(DomainError::BadRequest(_))), "{other}");
        }
    }

    #[test]
    fn provider_text_is_cut_and_scrubbed_of_secrets() {
        let p = provider(&[]);
        let secrets = Secrets { provider: &p, code: "the-code", pkce_verifier: "the-verifier" };
        let text = secrets.scrub("bad the-code / the-verifier / very-secret!");
        assert_eq!(text, "bad **** / **** / ****!");
        assert_eq!(secrets.scrub(&"x".repeat(1000)).len(), EXCERPT_CHARS);
        let empty = Secrets { provider: &p, code: "", pkce_verifier: "" };
        assert_eq!(empty.scrub("abc"), "abc");
    }

    #[test]
    fn the_adapter_needs_a_timeout_and_prints_no_secret() {
        assert!(matches!(OidcAdapter::new(Duration::ZERO), Err(DomainError::Internal(_))));
        let adapter = OidcAdapter::new(Duration::from_secs(5)).unwrap();
        assert!(format!("{adapter:?}").starts_with("OidcAdapter"));
    }
}
