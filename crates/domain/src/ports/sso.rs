//! OpenID Connect port: starting an authorization-code sign-in and finishing it with a
//! verified ID token. Adapters do the protocol (discovery, PKCE, the token request, the
//! ID token's signature against the provider's JWKS and its `iss`, `aud`, `exp`, `nonce`
//! and `at_hash`); the domain keeps the state and maps the identity to a user.

use async_trait::async_trait;

use crate::error::Result;
use crate::model::SsoProvider;

/// What a sign-in needs to be finished later, and where to send the user now.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthorizationStart {
    /// The provider's authorization endpoint with `client_id`, `redirect_uri`, `scope`,
    /// `state`, `nonce` and the PKCE (S256) challenge.
    pub url: String,
    /// Random, unguessable; names the pending sign-in.
    pub state: String,
    pub nonce: String,
    /// Secret until the code is exchanged.
    pub pkce_verifier: String,
}

impl std::fmt::Debug for AuthorizationStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationStart").field("url", &self.url).finish_non_exhaustive()
    }
}

/// The claims of a verified ID token that sign-in uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedIdentity {
    /// `sub`.
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: Option<bool>,
    pub name: Option<String>,
}

#[async_trait]
pub trait OidcClient: Send + Sync {
    /// Starts a sign-in with `provider`, returning to `redirect_uri` (one of its own).
    /// `Unavailable` when the provider cannot be reached.
    async fn start(&self, provider: &SsoProvider, redirect_uri: &str) -> Result<AuthorizationStart>;
    /// Exchanges `code` at the token endpoint (with the PKCE verifier) and verifies the ID
    /// token (signature, `iss`, `aud`, `exp`, `nonce`, `at_hash` when present).
    /// `Unauthorized` with the reason when the code or the token is refused, `Unavailable`
    /// when the provider cannot be reached.
    async fn finish(
        &self,
        provider: &SsoProvider,
        redirect_uri: &str,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
    ) -> Result<VerifiedIdentity>;
}
