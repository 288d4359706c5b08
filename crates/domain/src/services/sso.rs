//! Single sign-on with OpenID Connect (spec 4.3, `/auth/sso/…`).
//!
//! `login` starts an authorization-code sign-in through the `OidcClient` port (state,
//! nonce, PKCE S256) and keeps what finishing needs in the shared cache under the state,
//! for `SsoSettings::state_ttl` (10 minutes), so any replica can finish it, together with
//! the hash of a random *browser binding* the API keeps in a cookie of the browser that
//! started. `exchange` takes that entry (once: a replayed state finds nothing), refuses it
//! unless the same browser presents the binding (login CSRF), has the port exchange the code
//! and verify the ID token, requires `email_verified: true` (unless the provider trusts
//! unverified addresses), and finds the user by the identity `(issuer, sub)` linked at an
//! earlier sign-in, else by the verified e-mail in the provider's tenant (creating one only
//! when the provider says so), linking the identity then. A user linked to another `sub` of
//! the same issuer is refused. It opens a session exactly as a password login does.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::audit::{AuditEvent, AuditLog};
use super::validate::normalize_email;
use super::{AuthService, LoginResult, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::ids::UserId;
use crate::model::{Actor, SsoProvider, User, UserStatus};
use crate::secrets::{generate_browser_binding, hash_browser_binding, is_browser_binding};

/// Tunables of single sign-on.
#[derive(Debug, Clone)]
pub struct SsoSettings {
    pub providers: Vec<SsoProvider>,
    /// How long a started sign-in may take to come back.
    pub state_ttl: Duration,
}

impl Default for SsoSettings {
    fn default() -> Self {
        Self { providers: Vec::new(), state_ttl: Duration::from_secs(600) }
    }
}

/// A provider as `GET /auth/sso/providers` shows it (no secrets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderView {
    pub id: String,
    pub name: String,
    pub issuer: String,
}

/// `POST /auth/sso/exchange`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ExchangeRequest {
    /// The `code` the provider sent back.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 4096, pattern = r"\S"))]
    pub code: String,
    /// The `state` the provider sent back.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 512, pattern = r"\S"))]
    pub state: String,
    /// The provider the sign-in was started with; refused (401) when it is not.
    pub provider: Option<String>,
}

/// A started sign-in: where to send the browser, and the browser binding to keep in its
/// cookie (the one it presented, when well-formed, else a fresh one).
#[derive(Clone, PartialEq, Eq)]
pub struct SsoStart {
    pub url: String,
    pub binding: String,
}

impl std::fmt::Debug for SsoStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoStart").field("url", &self.url).finish_non_exhaustive()
    }
}

/// Longest `sub` accepted (OpenID Connect Core 2: at most 255 ASCII characters).
const MAX_SUBJECT_LEN: usize = 255;

/// What finishing a sign-in needs, kept under its state.
#[derive(Serialize, Deserialize)]
struct Pending {
    provider: String,
    redirect_uri: String,
    nonce: String,
    pkce_verifier: String,
    /// Hex SHA-256 of the browser binding (an entry without one matches no browser).
    #[serde(default)]
    binding_hash: String,
}

fn state_key(state: &str) -> String {
    format!("sso-state:{state}")
}

super::ports::repos!(Repos { users: UserRepo });
#[derive(Clone)]
pub struct SsoService {
    inner: Arc<Inner>,
}

struct Inner {
    repos: Repos,
    ports: Ports,
    auth: AuthService,
    log: AuditLog,
    providers: Vec<SsoProvider>,
    state_ttl: Duration,
}

impl SsoService {
    pub fn new(ports: Ports, repos: Repos, auth: AuthService, log: AuditLog, settings: SsoSettings) -> Self {
        Self {
            inner: Arc::new(Inner {
                ports,
                repos,
                auth,
                log,
                providers: settings.providers,
                state_ttl: settings.state_ttl,
            }),
        }
    }

    fn provider(&self, id: &str) -> Option<&SsoProvider> {
        self.inner.providers.iter().find(|p| p.id == id)
    }

    /// How long a started sign-in may take to come back (and its browser binding lives).
    pub fn state_ttl(&self) -> Duration {
        self.inner.state_ttl
    }

    /// `GET /auth/sso/providers`.
    pub fn providers(&self) -> Vec<ProviderView> {
        self.inner
            .providers
            .iter()
            .map(|p| ProviderView { id: p.id.clone(), name: p.name.clone(), issuer: p.issuer.clone() })
            .collect()
    }

    /// `GET /auth/sso/login`: the provider's authorization URL to redirect the user to, and
    /// the browser binding for its cookie (`binding` is the one the browser presented: kept
    /// when well-formed, so sign-ins started in two tabs both finish).
    /// `redirect_uri` must be one of the provider's (default: its first).
    pub async fn login(&self, provider: &str, redirect_uri: Option<&str>, binding: Option<&str>) -> Result<SsoStart> {
        let provider = self.provider(provider).ok_or_else(|| DomainError::not_found("SSO provider", provider))?;
        let redirect_uri = match redirect_uri {
            None => provider
                .redirect_uris
                .first()
                .ok_or_else(|| DomainError::Internal(format!("SSO provider {} has no redirect URI", provider.id)))?,
            Some(r) => provider.redirect_uris.iter().find(|allowed| *allowed == r).ok_or_else(|| {
                DomainError::BadRequest("redirect_uri is not one of this provider's redirect URIs".into())
            })?,
        };
        let start = self.inner.ports.oidc.start(provider, redirect_uri).await?;
        let binding = match binding.filter(|b| is_browser_binding(b)) {
            Some(b) => b.to_owned(),
            None => generate_browser_binding()?,
        };
        let pending = Pending {
            provider: provider.id.clone(),
            redirect_uri: redirect_uri.clone(),
            nonce: start.nonce.clone(),
            pkce_verifier: start.pkce_verifier.clone(),
            binding_hash: hex::encode(hash_browser_binding(&binding)),
        };
        let value = serde_json::to_vec(&pending).map_err(DomainError::internal)?;
        self.inner.ports.cache.set(&state_key(&start.state), &value, self.inner.state_ttl).await?;
        Ok(SsoStart { url: start.url, binding })
    }

    /// `POST /auth/sso/exchange`: finishes a sign-in and answers as `/auth/login` does.
    /// `binding` is the browser binding the request's cookie carries; it must be the one the
    /// sign-in was started with (else 401, and the state is used up all the same).
    pub async fn exchange(
        &self,
        req: ExchangeRequest,
        binding: Option<&str>,
        client_ip: Option<&str>,
    ) -> Result<LoginResult> {
        let mut v = Violations::new();
        v.check(
            !req.code.trim().is_empty() && req.code.chars().count() <= 4096,
            "code",
            "must be 1 to 4,096 characters",
        );
        v.check(
            !req.state.trim().is_empty() && req.state.chars().count() <= 512,
            "state",
            "must be 1 to 512 characters",
        );
        v.into_result()?;
        let pending: Pending = match self.inner.ports.cache.take(&state_key(&req.state)).await? {
            Some(bytes) => serde_json::from_slice(&bytes).map_err(DomainError::internal)?,
            None => {
                return Err(DomainError::Unauthorized(
                    "unknown, expired or already used state; start the sign-in again".into(),
                ));
            }
        };
        if !same_browser(&pending, binding) {
            // Not audited: anyone may start a sign-in, so this costs an attacker nothing.
            tracing::info!(provider = %pending.provider, "an SSO exchange without the starting browser's binding");
            return Err(DomainError::Unauthorized(
                "this sign-in was not started in this browser (its sign-in cookie is missing or different); start \
                 the sign-in again"
                    .into(),
            ));
        }
        if req.provider.as_deref().is_some_and(|p| p != pending.provider) {
            return Err(DomainError::Unauthorized("this sign-in was started with another provider".into()));
        }
        let provider = self
            .provider(&pending.provider)
            .ok_or_else(|| DomainError::Unauthorized("the provider of this sign-in is no longer configured".into()))?;
        let identity = self
            .inner
            .ports
            .oidc
            .finish(provider, &pending.redirect_uri, req.code.trim(), &pending.pkce_verifier, &pending.nonce)
            .await?;
        let email = identity
            .email
            .as_deref()
            .map(normalize_email)
            .filter(|e| !e.is_empty())
            .ok_or_else(|| DomainError::Unauthorized("the identity provider gave no e-mail address".into()))?;
        let subject = identity.subject.as_str();
        if subject.is_empty() || subject.len() > MAX_SUBJECT_LEN {
            return Err(DomainError::Unauthorized("the identity provider's subject (sub) is empty or too long".into()));
        }
        // A missing `email_verified` is not a yes: anyone could register the address at a
        // provider that does not verify it.
        if identity.email_verified != Some(true) && !provider.trust_unverified_email {
            self.refused(provider, &email, "email_unverified").await;
            return Err(DomainError::Unauthorized(
                "the identity provider has not verified this e-mail address (email_verified is not true)".into(),
            ));
        }
        if !provider.allows_email(&email) {
            self.refused(provider, &email, "domain_not_allowed").await;
            return Err(DomainError::Forbidden("this e-mail domain may not sign in with this provider".into()));
        }
        let repos = &self.inner.repos;
        let linked = repos.users.find_user_by_sso_identity(provider.tenant_id, &provider.issuer, subject).await?;
        let user = match linked.clone() {
            Some(user) => user,
            None => {
                let user = match repos.users.find_user_by_email(&email).await? {
                    Some(user) if user.tenant_id != provider.tenant_id => {
                        self.refused(provider, &email, "other_tenant").await;
                        return Err(DomainError::Forbidden("this account cannot sign in with this provider".into()));
                    }
                    Some(user) => user,
                    None if provider.create_users => {
                        self.create_user(provider, &email, identity.name.as_deref()).await?
                    }
                    None => {
                        self.refused(provider, &email, "no_account").await;
                        return Err(DomainError::Forbidden(
                            "there is no account for this e-mail address; ask an administrator to create one".into(),
                        ));
                    }
                };
                if repos.users.sso_subject_of(provider.tenant_id, user.id, &provider.issuer).await?.is_some() {
                    // The address was registered again at the provider under another account.
                    self.refused(provider, &email, "linked_to_another_subject").await;
                    return Err(DomainError::Forbidden(
                        "this account is linked to another identity at this provider".into(),
                    ));
                }
                user
            }
        };
        if user.status == UserStatus::Blocked {
            self.refused(provider, &email, "blocked").await;
            return Err(DomainError::Forbidden("this user is blocked".into()));
        }
        if linked.is_none() {
            self.link(provider, &user, subject, &email).await?;
        }
        let how =
            json!({"method": "sso", "provider": provider.id, "subject": identity.subject, "client_ip": client_ip});
        self.inner.auth.open_session(&user, how).await
    }

    async fn create_user(&self, provider: &SsoProvider, email: &str, name: Option<&str>) -> Result<User> {
        let now = self.inner.ports.clock.now();
        let user = User {
            id: UserId(self.inner.ports.ids.new_id()),
            tenant_id: provider.tenant_id,
            email: email.to_owned(),
            name: name.map(str::trim).filter(|n| !n.is_empty()).map(|n| n.chars().take(200).collect()),
            role: provider.default_role,
            status: UserStatus::Active,
            // Signs in through the provider only, until someone sets a password.
            password_hash: None,
            created_at: now,
            updated_at: now,
            last_login_at: None,
        };
        match self.inner.repos.users.insert_user(&user).await {
            Ok(()) => {}
            // Created by a concurrent first sign-in: use that one.
            Err(DomainError::Conflict(_)) => {
                return self
                    .inner
                    .repos
                    .users
                    .find_user_by_email(email)
                    .await?
                    .filter(|u| u.tenant_id == provider.tenant_id)
                    .ok_or_else(|| DomainError::Forbidden("this account cannot sign in with this provider".into()));
            }
            Err(e) => return Err(e),
        }
        let event = AuditEvent::new(user.tenant_id, Actor::system(&format!("sso:{}", provider.id)), "user.created")
            .action("create")
            .resource(format!("users/{}", user.id))
            .details(json!({"email": user.email, "role": user.role, "via": "sso", "provider": provider.id}));
        self.inner.log.record_after(event).await;
        Ok(user)
    }

    /// Links `user` to the identity `(issuer, subject)` at their first sign-in with it. A
    /// concurrent first sign-in of the same identity may have linked it already: that is
    /// fine when it linked this user, refused otherwise.
    async fn link(&self, provider: &SsoProvider, user: &User, subject: &str, email: &str) -> Result<()> {
        let repos = &self.inner.repos;
        let now = self.inner.ports.clock.now();
        match repos.users.link_sso_identity(provider.tenant_id, user.id, &provider.issuer, subject, now).await {
            Ok(()) => {}
            Err(DomainError::Conflict(_)) => {
                let holder =
                    repos.users.find_user_by_sso_identity(provider.tenant_id, &provider.issuer, subject).await?;
                if holder.is_some_and(|u| u.id == user.id) {
                    return Ok(());
                }
                self.refused(provider, email, "linked_to_another_subject").await;
                return Err(DomainError::Forbidden(
                    "this account is linked to another identity at this provider".into(),
                ));
            }
            Err(e) => return Err(e),
        }
        let event = AuditEvent::new(user.tenant_id, Actor::system(&format!("sso:{}", provider.id)), "user.sso_linked")
            .action("link")
            .resource(format!("users/{}", user.id))
            .details(json!({"provider": provider.id, "issuer": provider.issuer, "subject": subject}));
        self.inner.log.record_after(event).await;
        Ok(())
    }

    /// Audits a refused sign-in in the provider's tenant.
    async fn refused(&self, provider: &SsoProvider, email: &str, reason: &str) {
        let event =
            AuditEvent::new(provider.tenant_id, Actor::system(&format!("sso:{}", provider.id)), "auth.login_failed")
                .action("login")
                .resource(format!("sso/{}", provider.id))
                .details(json!({"method": "sso", "reason": reason, "email": email}));
        self.inner.log.record_after(event).await;
    }
}

/// Whether the browser binding presented is the one the sign-in was started with (hashes
/// compared in constant time).
fn same_browser(pending: &Pending, binding: Option<&str>) -> bool {
    use subtle::ConstantTimeEq;
    let (Some(binding), Ok(stored)) = (binding, hex::decode(&pending.binding_hash)) else {
        return false;
    };
    !stored.is_empty() && bool::from(hash_browser_binding(binding).ct_eq(&stored))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;
    use crate::ports::{Cache, UserRepo, VerifiedIdentity};
    use crate::services::Settings;
    use crate::services::tests::{Harness, harness_with_settings};

    const REDIRECT: &str = "https://app.acme.test/sso/callback";

    fn provider(tenant: crate::ids::TenantId, create_users: bool) -> SsoProvider {
        SsoProvider {
            id: "acme-idp".into(),
            name: "Acme IdP".into(),
            issuer: "https://idp.acme.test".into(),
            client_id: "agentgov".into(),
            client_secret: "s3cret-client-secret".into(),
            redirect_uris: vec![REDIRECT.into(), "http://127.0.0.1:9/cb".into()],
            scopes: vec![],
            tenant_id: tenant,
            default_role: Role::Analyst,
            allowed_domains: vec!["acme.test".into()],
            create_users,
            trust_unverified_email: false,
        }
    }

    /// A harness whose tenant `acme` has the provider (and `other` exists too).
    async fn setup(create_users: bool) -> (Harness, crate::ids::TenantId) {
        setup_with(|p| p.create_users = create_users).await
    }

    async fn setup_with(tweak: impl FnOnce(&mut SsoProvider)) -> (Harness, crate::ids::TenantId) {
        // The tenant's id is known once it exists: create the tenants, then build the
        // services with the provider over the same store.
        let first = harness_with_settings(Settings::default());
        let acme = first.tenant("acme").await.tenant.tenant.id;
        first.tenant("other").await;
        let mut p = provider(acme, false);
        tweak(&mut p);
        let sso = SsoSettings { providers: vec![p], ..SsoSettings::default() };
        let settings = Settings { sso, ..Settings::default() };
        let h = crate::services::tests::rebuild(&first, settings);
        (h, acme)
    }

    fn identity(email: &str) -> VerifiedIdentity {
        VerifiedIdentity {
            subject: format!("sub-{email}"),
            email: Some(email.into()),
            email_verified: Some(true),
            name: Some("Ann Example".into()),
        }
    }

    /// The browser binding every test sign-in is started and finished with.
    const BROWSER: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    /// Starts a sign-in in [`BROWSER`] and answers its state (taken from the authorization URL).
    async fn start(h: &Harness) -> String {
        let started = h.svc.sso.login("acme-idp", Some(REDIRECT), Some(BROWSER)).await.unwrap();
        assert_eq!(started.binding, BROWSER, "a well-formed binding the browser has is kept");
        started.url.rsplit("state=").next().unwrap().to_owned()
    }

    fn exchange(code: &str, state: &str) -> ExchangeRequest {
        ExchangeRequest { code: code.into(), state: state.into(), provider: None }
    }

    /// `exchange` from [`BROWSER`].
    async fn finish(h: &Harness, code: &str, state: &str) -> Result<LoginResult> {
        h.svc.sso.exchange(exchange(code, state), Some(BROWSER), None).await
    }

    #[tokio::test]
    async fn the_providers_are_listed_without_secrets_and_login_checks_its_input() {
        let (h, _) = setup(false).await;
        let listed = h.svc.sso.providers();
        assert_eq!(
            listed,
            [ProviderView { id: "acme-idp".into(), name: "Acme IdP".into(), issuer: "https://idp.acme.test".into() }]
        );
        assert!(matches!(h.svc.sso.login("nope", None, None).await.unwrap_err(), DomainError::NotFound { .. }));
        let bad = h.svc.sso.login("acme-idp", Some("https://evil.test/cb"), None).await.unwrap_err();
        assert!(matches!(bad, DomainError::BadRequest(_)), "{bad:?}");
        let started = h.svc.sso.login("acme-idp", None, Some("not-a-binding")).await.unwrap();
        assert!(is_browser_binding(&started.binding) && started.binding != BROWSER);
        assert!(!format!("{started:?}").contains(&started.binding), "the binding is not printed");
        let url = started.url;
        assert!(url.starts_with("https://idp.acme.test/authorize?") && url.contains(REDIRECT), "{url}");
    }

    #[tokio::test]
    async fn a_verified_email_of_the_tenant_signs_in_like_a_password_login_once_per_state() {
        let (h, acme) = setup(false).await;
        let state = start(&h).await;
        h.oidc.issue("code-1", identity("Admin@acme.test"));
        let result = h.svc.sso.exchange(exchange("code-1", &state), Some(BROWSER), Some("10.0.0.9")).await.unwrap();
        assert_eq!(result.user.email, "admin@acme.test");
        let caller = h.svc.auth.authenticate_token(&result.access_token).await.unwrap();
        assert_eq!(caller.tenant_id(), acme);
        h.svc.auth.authenticate_api_key(&result.api_key).await.unwrap();

        // The state is single-use.
        h.oidc.issue("code-2", identity("admin@acme.test"));
        let replay = finish(&h, "code-2", &state).await.unwrap_err();
        assert!(matches!(replay, DomainError::Unauthorized(ref m) if m.contains("state")), "{replay:?}");
        // A state from another provider's sign-in is refused.
        let state = start(&h).await;
        let req = ExchangeRequest { provider: Some("other-idp".into()), ..exchange("code-2", &state) };
        assert!(matches!(
            h.svc.sso.exchange(req, Some(BROWSER), None).await.unwrap_err(),
            DomainError::Unauthorized(_)
        ));
    }

    #[tokio::test]
    async fn expired_states_refused_codes_and_unverified_emails_are_401() {
        let (h, _) = setup(false).await;
        let state = start(&h).await;
        h.cache.delete(&state_key(&state)).await.unwrap(); // what the TTL does
        h.oidc.issue("c", identity("admin@acme.test"));
        assert!(matches!(finish(&h, "c", &state).await.unwrap_err(), DomainError::Unauthorized(_)));

        let state = start(&h).await;
        let refused = finish(&h, "never-issued", &state).await.unwrap_err();
        assert!(matches!(refused, DomainError::Unauthorized(ref m) if m.contains("refused")), "{refused:?}");

        let state = start(&h).await;
        h.oidc.issue("u", VerifiedIdentity { email_verified: Some(false), ..identity("admin@acme.test") });
        let unverified = finish(&h, "u", &state).await.unwrap_err();
        assert!(matches!(unverified, DomainError::Unauthorized(ref m) if m.contains("verified")), "{unverified:?}");
    }

    #[tokio::test]
    async fn domains_tenants_blocked_users_and_unknown_emails_are_refused() {
        let (h, _) = setup(false).await;
        let cases = [("ann@elsewhere.test", "domain"), ("nobody@acme.test", "no account")];
        for (i, (email, why)) in cases.iter().enumerate() {
            let state = start(&h).await;
            h.oidc.issue(&format!("c{i}"), identity(email));
            let err = finish(&h, &format!("c{i}"), &state).await.unwrap_err();
            assert!(matches!(err, DomainError::Forbidden(ref m) if m.contains(why)), "{email}: {err:?}");
        }
        // A user of another tenant cannot use this tenant's provider (the domain allows it).
        let other_admin = h.store.find_user_by_email("admin@other.test").await.unwrap().unwrap();
        let mut moved = other_admin.clone();
        moved.email = "bob@acme.test".into();
        h.store.update_user(&moved).await.unwrap();
        let state = start(&h).await;
        h.oidc.issue("o", identity("bob@acme.test"));
        assert!(matches!(finish(&h, "o", &state).await.unwrap_err(), DomainError::Forbidden(_)));

        // A blocked user is refused.
        let (_, admin) = h.login("admin@acme.test").await;
        let analyst = h.user(&admin, "ann@acme.test", Role::Analyst).await;
        h.svc.users.block(&admin, analyst.user.id).await.unwrap();
        let state = start(&h).await;
        h.oidc.issue("b", identity("ann@acme.test"));
        let blocked = finish(&h, "b", &state).await.unwrap_err();
        assert!(matches!(blocked, DomainError::Forbidden(ref m) if m.contains("blocked")), "{blocked:?}");
    }

    #[tokio::test]
    async fn a_provider_that_creates_users_creates_them_once_with_its_default_role() {
        let (h, acme) = setup(true).await;
        for code in ["n1", "n2"] {
            let state = start(&h).await;
            h.oidc.issue(code, identity("new.person@acme.test"));
            let result = finish(&h, code, &state).await.unwrap();
            assert_eq!(result.user.role, Role::Analyst);
        }
        let user = h.store.find_user_by_email("new.person@acme.test").await.unwrap().unwrap();
        assert_eq!((user.tenant_id, user.role, user.password_hash.is_none()), (acme, Role::Analyst, true));
        assert_eq!(user.name.as_deref(), Some("Ann Example"));
    }

    #[tokio::test]
    async fn a_missing_or_false_email_verified_is_refused_unless_the_provider_trusts_it() {
        let (h, _) = setup(true).await;
        for (i, verified) in [None, Some(false)].into_iter().enumerate() {
            let state = start(&h).await;
            let code = format!("u{i}");
            h.oidc.issue(&code, VerifiedIdentity { email_verified: verified, ..identity("new.person@acme.test") });
            let err = finish(&h, &code, &state).await.unwrap_err();
            assert!(matches!(err, DomainError::Unauthorized(ref m) if m.contains("verified")), "{verified:?}: {err:?}");
        }
        // Nothing was created or linked.
        assert_eq!(h.store.find_user_by_email("new.person@acme.test").await.unwrap(), None);

        let (h, acme) = setup_with(|p| {
            p.create_users = true;
            p.trust_unverified_email = true;
        })
        .await;
        let state = start(&h).await;
        h.oidc.issue("t", VerifiedIdentity { email_verified: None, ..identity("new.person@acme.test") });
        let result = finish(&h, "t", &state).await.unwrap();
        let caller = h.svc.auth.authenticate_token(&result.access_token).await.unwrap();
        assert_eq!((caller.tenant_id(), result.user.email.as_str()), (acme, "new.person@acme.test"));
    }

    #[tokio::test]
    async fn the_identity_is_linked_at_the_first_sign_in_and_matched_by_sub_afterwards() {
        let (h, acme) = setup(false).await;
        let (_, admin) = h.login("admin@acme.test").await;
        let ann = h.user(&admin, "ann@acme.test", Role::Analyst).await.user;
        // First sign-in: matched by the verified e-mail, then linked.
        let state = start(&h).await;
        h.oidc.issue("a1", VerifiedIdentity { subject: "ann-sub".into(), ..identity("ann@acme.test") });
        assert_eq!(finish(&h, "a1", &state).await.unwrap().user.id, ann.id);
        let issuer = "https://idp.acme.test";
        assert_eq!(h.store.sso_subject_of(acme, ann.id, issuer).await.unwrap().as_deref(), Some("ann-sub"));

        // The address changes at the provider: the same `sub` is still Ann.
        let state = start(&h).await;
        h.oidc.issue("a2", VerifiedIdentity { subject: "ann-sub".into(), ..identity("ann.renamed@acme.test") });
        assert_eq!(finish(&h, "a2", &state).await.unwrap().user.id, ann.id);

        // Someone registers Ann's address at the provider under another account: refused,
        // and nothing is linked to that account.
        let state = start(&h).await;
        h.oidc.issue("x", VerifiedIdentity { subject: "mallory-sub".into(), ..identity("ann@acme.test") });
        let err = finish(&h, "x", &state).await.unwrap_err();
        assert!(matches!(err, DomainError::Forbidden(ref m) if m.contains("linked")), "{err:?}");
        assert_eq!(h.store.find_user_by_sso_identity(acme, issuer, "mallory-sub").await.unwrap(), None);
    }

    #[tokio::test]
    async fn an_exchange_needs_the_browser_that_started_the_sign_in_and_uses_the_state_up() {
        let (h, _) = setup(false).await;
        let other_browser = "ccccccccccccccccccccccccccccccccccccccccccc";
        for presented in [None, Some(other_browser), Some("")] {
            let state = start(&h).await;
            h.oidc.issue("c", identity("admin@acme.test"));
            let err = h.svc.sso.exchange(exchange("c", &state), presented, None).await.unwrap_err();
            assert!(matches!(err, DomainError::Unauthorized(ref m) if m.contains("browser")), "{presented:?}: {err:?}");
            // The state is gone: the right browser cannot use it afterwards either.
            let again = finish(&h, "c", &state).await.unwrap_err();
            assert!(matches!(again, DomainError::Unauthorized(ref m) if m.contains("state")), "{again:?}");
        }
        // A state stored before bindings existed matches no browser.
        let state = start(&h).await;
        let legacy = json!({"provider": "acme-idp", "redirect_uri": REDIRECT, "nonce": "n", "pkce_verifier": "v"});
        h.cache.set(&state_key(&state), legacy.to_string().as_bytes(), Duration::from_secs(60)).await.unwrap();
        assert!(matches!(finish(&h, "c", &state).await.unwrap_err(), DomainError::Unauthorized(_)));
    }
}
