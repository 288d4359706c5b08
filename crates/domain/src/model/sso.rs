//! Single sign-on providers (OpenID Connect), as configured by the operator.

use std::fmt;

use crate::ids::TenantId;
use crate::model::Role;

/// An OpenID Connect provider users of one tenant sign in with.
#[derive(Clone, PartialEq, Eq)]
pub struct SsoProvider {
    /// Names it in URLs (`/auth/sso/login?provider=…`): 1 to 64 of `a-z0-9-_`.
    pub id: String,
    /// Shown to users, e.g. "Acme Okta".
    pub name: String,
    /// The issuer URL; discovery is read from `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    /// Never shown, logged or returned.
    pub client_secret: String,
    /// Where the provider may send users back (exact matches); the login request picks one.
    pub redirect_uris: Vec<String>,
    /// Scopes asked for besides `openid` (default `email profile`).
    pub scopes: Vec<String>,
    /// The tenant whose users sign in with it.
    pub tenant_id: TenantId,
    /// Role of users created at their first sign-in.
    pub default_role: Role,
    /// E-mail domains allowed to sign in (lower-case); empty allows every domain.
    pub allowed_domains: Vec<String>,
    /// Whether a verified e-mail without a user creates one (else the sign-in is refused).
    pub create_users: bool,
    /// Whether an ID token without `email_verified: true` may sign in (default `false`: it
    /// is refused). Only for a provider that verifies every address it hands out.
    pub trust_unverified_email: bool,
}

impl SsoProvider {
    /// Whether `email`'s domain may sign in.
    pub fn allows_email(&self, email: &str) -> bool {
        let domain = email.rsplit_once('@').map(|(_, d)| d.to_ascii_lowercase());
        self.allowed_domains.is_empty()
            || domain.is_some_and(|d| self.allowed_domains.iter().any(|a| a.eq_ignore_ascii_case(&d)))
    }
}

impl fmt::Debug for SsoProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SsoProvider")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .field("redirect_uris", &self.redirect_uris)
            .field("scopes", &self.scopes)
            .field("tenant_id", &self.tenant_id)
            .field("default_role", &self.default_role)
            .field("allowed_domains", &self.allowed_domains)
            .field("create_users", &self.create_users)
            .field("trust_unverified_email", &self.trust_unverified_email)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_matched_whole_and_the_secret_is_never_printed() {
        let p = SsoProvider {
            id: "okta".into(),
            name: "Okta".into(),
            issuer: "https://acme.okta.com".into(),
            client_id: "client".into(),
            client_secret: "very-secret".into(),
            redirect_uris: vec![],
            scopes: vec![],
            tenant_id: TenantId(uuid::Uuid::nil()),
            default_role: Role::Viewer,
            allowed_domains: vec!["acme.com".into()],
            create_users: false,
            trust_unverified_email: false,
        };
        assert!(p.allows_email("Ann@ACME.com"));
        assert!(!p.allows_email("ann@evilacme.com"));
        assert!(!p.allows_email("ann@acme.com.evil.io"));
        assert!(!p.allows_email("no-at-sign"));
        assert!(!format!("{p:?}").contains("very-secret"));
        let open = SsoProvider { allowed_domains: vec![], ..p };
        assert!(open.allows_email("x@anything.io"));
    }
}
