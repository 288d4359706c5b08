//! Service behaviour against in-memory fakes of every port.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::error::DomainError;
use crate::events::TENANT_UPDATED;
use crate::model::{EffectiveSettings, Permission, RiskLevels, Role, TenantSettings, UserStatus};
use crate::page::PageRequest;
use crate::ports::{AuditRepo, Cache, Clock, UserRepo};
use crate::secrets::{AdminKey, PasswordHasher, TokenCodec};
use crate::testing::{
    FakeBus, FakeCache, FakeCallbacks, FakeOidc, FakePolicyEngine, FakeTelemetry, FixedClock, MemoryStore, SeqIds,
};

pub(crate) struct Harness {
    pub(crate) svc: Services,
    pub(crate) clock: Arc<FixedClock>,
    pub(crate) cache: Arc<FakeCache>,
    pub(crate) store: Arc<MemoryStore>,
    /// What this process published.
    pub(crate) bus: Arc<FakeBus>,
    pub(crate) oidc: Arc<FakeOidc>,
    /// The HITL callbacks this process sent.
    pub(crate) callbacks: Arc<FakeCallbacks>,
    /// The ports the services were built on, to build another service over them.
    pub(crate) ports: Ports,
    ids: Arc<SeqIds>,
    /// The guardrail runs the services reported.
    pub(crate) telemetry: Arc<FakeTelemetry>,
}

pub(crate) const PASSWORD: &str = "correct horse battery staple";

pub(crate) fn harness() -> Harness {
    harness_with(AuditSettings::default())
}

pub(crate) fn harness_with(audit: AuditSettings) -> Harness {
    harness_with_settings(Settings { audit, ..Settings::default() })
}

pub(crate) fn harness_with_settings(settings: Settings) -> Harness {
    harness_with_offload(settings, Arc::new(crate::ports::offload::Inline))
}

/// Services whose CPU pool (`Ports::offload`) is `offload`.
pub(crate) fn harness_with_offload(settings: Settings, offload: Arc<dyn crate::ports::Offload>) -> Harness {
    let clock = Arc::new(FixedClock::default());
    let cache = Arc::new(FakeCache::default());
    let store = Arc::new(MemoryStore::new());
    build_with(settings, (clock, cache, store, Arc::new(SeqIds::default())), offload, builtin_embedder())
}

fn builtin_embedder() -> Arc<dyn crate::ports::Embedder> {
    Arc::new(crate::services::BuiltinEmbedder::new())
}

/// Another replica over the same store, cache and clock, embedding with `embedder` on
/// `offload`.
pub(crate) fn replica_with(
    h: &Harness,
    embedder: Arc<dyn crate::ports::Embedder>,
    offload: Arc<dyn crate::ports::Offload>,
) -> Harness {
    let parts = (h.clock.clone(), h.cache.clone(), h.store.clone(), h.ids.clone());
    build_with(Settings::default(), parts, offload, embedder)
}

/// A second server process over the same store, cache and clock (another replica).
pub(crate) fn replica(h: &Harness) -> Harness {
    rebuild(h, Settings::default())
}

/// Services with `settings` over the same store, cache and clock (a restart with another
/// configuration, or another replica).
pub(crate) fn rebuild(h: &Harness, settings: Settings) -> Harness {
    build(settings, h.clock.clone(), h.cache.clone(), h.store.clone(), h.ids.clone())
}

fn build(
    settings: Settings,
    clock: Arc<FixedClock>,
    cache: Arc<FakeCache>,
    store: Arc<MemoryStore>,
    ids: Arc<SeqIds>,
) -> Harness {
    build_with(settings, (clock, cache, store, ids), Arc::new(crate::ports::offload::Inline), builtin_embedder())
}

fn build_with(
    settings: Settings,
    (clock, cache, store, ids): (Arc<FixedClock>, Arc<FakeCache>, Arc<MemoryStore>, Arc<SeqIds>),
    offload: Arc<dyn crate::ports::Offload>,
    embedder: Arc<dyn crate::ports::Embedder>,
) -> Harness {
    let bus = Arc::new(FakeBus::default());
    let oidc = Arc::new(FakeOidc::default());
    let callbacks = Arc::new(FakeCallbacks::default());
    let telemetry = Arc::new(FakeTelemetry::default());
    let ports = Ports {
        cache: cache.clone(),
        bus: bus.clone(),
        policy: Arc::new(FakePolicyEngine),
        clock: clock.clone(),
        ids: ids.clone(),
        embedder,
        oidc: oidc.clone(),
        siem_sinks: Arc::from(Vec::new()),
        callbacks: callbacks.clone(),
        offload,
        hashing: Arc::new(crate::ports::offload::Inline),
        telemetry: telemetry.clone(),
    };
    let secrets = Secrets {
        hasher: PasswordHasher::new(256, 1).unwrap(),
        tokens: TokenCodec::hs256(&[42u8; 32]).unwrap(),
        admin_key: AdminKey::new(Some("operator-key")),
        webhook: crate::secrets::WebhookVerifier::new(b"webhook-secret-for-unit-tests-0123456789"),
    };
    let info = ServerInfo { version: "test", mode: "embedded", started_at: clock.now() };
    let (svc, background) = Services::new(ports.clone(), store.clone(), secrets, settings, info);
    tokio::spawn(background.audit_writer.run());
    Harness { svc, clock, cache, store, bus, oidc, callbacks, ports, ids, telemetry }
}

impl Harness {
    /// Claims the next job of `kind`, as the server's one worker would.
    pub(crate) async fn claim(&self, kind: crate::model::JobKind) -> Option<crate::services::ClaimedJob> {
        self.svc.jobs.claim(&[kind]).await.unwrap()
    }

    /// Runs the next export, as the worker would; `false` when none could be claimed.
    pub(crate) async fn run_next_export(&self) -> bool {
        let Some(claimed) = self.claim(crate::model::JobKind::Export).await else { return false };
        self.svc.audit.run_export(claimed).await.unwrap();
        true
    }

    pub(crate) async fn tenant(&self, name: &str) -> CreatedTenant {
        let req =
            NewTenant { name: name.into(), admin_email: format!("admin@{name}.test"), admin_password: PASSWORD.into() };
        self.svc.tenants.create(req, "test").await.unwrap()
    }

    pub(crate) async fn login(&self, email: &str) -> (LoginResult, Caller) {
        let res = self.svc.auth.login(email, PASSWORD, Some("10.0.0.1")).await.unwrap();
        let caller = self.svc.auth.authenticate_token(&res.access_token).await.unwrap();
        (res, caller)
    }

    pub(crate) async fn user(&self, admin: &Caller, email: &str, role: Role) -> Caller {
        let req = NewUser { email: email.into(), password: PASSWORD.into(), role: Some(role), name: None };
        self.svc.users.create(admin, req).await.unwrap();
        self.login(email).await.1
    }

    /// A new tenant's admin, signed in.
    pub(crate) async fn admin(&self, tenant: &str) -> Caller {
        self.tenant(tenant).await;
        self.login(&format!("admin@{tenant}.test")).await.1
    }

    /// A registered `llm` agent with one capability, `read`.
    pub(crate) async fn agent(&self, caller: &Caller, name: &str) -> crate::model::Agent {
        let req = agents::AgentRequest {
            name: name.into(),
            agent_type: "llm".into(),
            description: None,
            capabilities: vec!["read".into()],
            permissions: crate::model::JsonObject::new(),
            metadata: crate::model::JsonObject::new(),
            status: None,
        };
        self.svc.agents.register(caller, req).await.unwrap()
    }
}

#[tokio::test]
async fn a_new_tenant_admin_can_log_in_and_use_both_credentials() {
    let h = harness();
    let t = h.tenant("acme").await;
    let by_key = h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap();
    assert_eq!(by_key.user.id, t.admin_user.id);
    let (res, caller) = h.login("ADMIN@acme.test ").await;
    assert_eq!(res.user.role, Role::Admin);
    assert_eq!(caller.tenant_id(), t.tenant.tenant.id);
    let session_key = h.svc.auth.authenticate_api_key(&res.api_key).await.unwrap();
    assert!(session_key.has_permission(Permission::GuardManage));
}

#[tokio::test]
async fn wrong_passwords_are_401_then_rate_limited_even_with_the_right_one() {
    let h = harness();
    h.tenant("acme").await;
    for _ in 0..5 {
        let err = h.svc.auth.login("admin@acme.test", "wrong password!!", None).await.unwrap_err();
        assert!(matches!(err, DomainError::Unauthorized(_)));
    }
    let err = h.svc.auth.login("admin@acme.test", PASSWORD, None).await.unwrap_err();
    assert!(matches!(err, DomainError::RateLimited { .. }), "{err:?}");
}

#[tokio::test]
async fn unknown_email_is_the_same_401() {
    let h = harness();
    let err = h.svc.auth.login("nobody@acme.test", PASSWORD, None).await.unwrap_err();
    assert!(matches!(err, DomainError::Unauthorized(m) if m == "invalid email or password"));
}

#[tokio::test]
async fn a_blocked_users_right_password_is_the_same_401_as_a_wrong_one() {
    let h = harness();
    let admin = h.admin("acme").await;
    let bob = h.user(&admin, "bob@acme.test", Role::Analyst).await;
    h.svc.users.block(&admin, bob.user.id).await.unwrap();
    let err = h.svc.auth.login("bob@acme.test", PASSWORD, Some("10.0.0.2")).await.unwrap_err();
    assert!(matches!(err, DomainError::Unauthorized(m) if m == "invalid email or password"));
}

/// A login as a stranger from `ip` with a wrong password: 401 or 429, and which.
async fn wrong_login(h: &Harness, email: &str, ip: &str) -> std::result::Result<(), Duration> {
    match h.svc.auth.login(email, "wrong password!!", Some(ip)).await.unwrap_err() {
        DomainError::Unauthorized(_) => Ok(()),
        DomainError::RateLimited { retry_after } => Err(retry_after),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_email_and_address_pair_is_held_back_longer_after_each_hold() {
    // Keep the per-email ceiling (10 a minute) out of the way.
    let auth = AuthSettings { login_max_failures_per_email_per_minute: 1000, ..AuthSettings::default() };
    let h = harness_with_settings(Settings { auth, ..Settings::default() });
    h.tenant("acme").await;
    let pair = "login:pair:admin@acme.test|203.0.113.7";
    for expected_hold in [60, 120, 240, 480, 900, 900] {
        for _ in 0..5 {
            assert_eq!(wrong_login(&h, "admin@acme.test", "203.0.113.7").await, Ok(()));
        }
        let hold = wrong_login(&h, "admin@acme.test", "203.0.113.7").await.unwrap_err();
        // What is left of the hold, which began a moment ago.
        assert_eq!(hold.as_secs_f64().ceil() as u64, expected_hold, "{hold:?}");
        // End the hold by hand rather than wait it out.
        h.cache.delete(pair).await.unwrap();
    }
    // Another address, the owner's, was never held back; signing in forgets its own failures.
    assert_eq!(wrong_login(&h, "admin@acme.test", "198.51.100.9").await, Ok(()));
    h.svc.auth.login("admin@acme.test", PASSWORD, Some("198.51.100.9")).await.unwrap();
}

#[tokio::test]
async fn strangers_on_many_addresses_slow_an_email_but_not_from_where_it_signed_in() {
    let h = harness();
    h.tenant("acme").await;
    h.svc.auth.login("admin@acme.test", PASSWORD, Some("198.51.100.9")).await.unwrap();
    for i in 0..10 {
        assert_eq!(wrong_login(&h, "admin@acme.test", &format!("203.0.113.{i}")).await, Ok(()));
    }
    // The per-email ceiling (10 a minute) is reached: a new address waits at most a minute...
    let err = h.svc.auth.login("admin@acme.test", PASSWORD, Some("192.0.2.1")).await.unwrap_err();
    assert!(matches!(err, DomainError::RateLimited { retry_after } if retry_after <= Duration::from_secs(60)));
    // ...and the address the owner signed in from is exempt.
    h.svc.auth.login("admin@acme.test", PASSWORD, Some("198.51.100.9")).await.unwrap();
}

#[tokio::test]
async fn successful_logins_give_their_reservations_back() {
    let h = harness();
    h.tenant("acme").await;
    // Far more than the per-address (50) and per-email (10) limits, all from one address.
    for _ in 0..60 {
        h.svc.auth.login("admin@acme.test", PASSWORD, Some("10.0.0.7")).await.unwrap();
    }
    assert_eq!(h.cache.get_counter("login:address:10.0.0.7").await.unwrap().map(|c| c.count), Some(0));
}

#[tokio::test]
async fn change_password_attempts_are_limited_per_user_before_the_password_check() {
    let h = harness();
    let admin = h.admin("acme").await;
    let bob = h.user(&admin, "bob@acme.test", Role::Analyst).await;
    for _ in 0..5 {
        let err = h.svc.users.change_password(&admin, "not my password", "a brand new password").await.unwrap_err();
        assert!(matches!(err, DomainError::Validation(_)));
    }
    let err = h.svc.users.change_password(&admin, PASSWORD, "a brand new password").await.unwrap_err();
    assert!(matches!(err, DomainError::RateLimited { .. }), "{err:?}");
    h.svc.users.change_password(&bob, PASSWORD, "a brand new password").await.unwrap();
}

#[tokio::test]
async fn logout_revokes_the_token_and_the_session_key() {
    let h = harness();
    h.tenant("acme").await;
    let (res, caller) = h.login("admin@acme.test").await;
    h.svc.auth.logout(&caller).await.unwrap();
    assert!(matches!(h.svc.auth.authenticate_token(&res.access_token).await, Err(DomainError::Unauthorized(_))));
    assert!(matches!(h.svc.auth.authenticate_api_key(&res.api_key).await, Err(DomainError::Unauthorized(_))));
}

#[tokio::test]
async fn revocation_holds_even_when_the_cache_forgot_it() {
    let h = harness();
    h.tenant("acme").await;
    let (res, caller) = h.login("admin@acme.test").await;
    h.svc.auth.logout(&caller).await.unwrap();
    h.cache.set_down(true);
    assert!(h.svc.auth.authenticate_token(&res.access_token).await.is_err());
}

#[tokio::test]
async fn blocking_takes_effect_on_existing_tokens_and_keys_at_once() {
    let h = harness();
    h.tenant("acme").await;
    let (_, admin) = h.login("admin@acme.test").await;
    let req =
        NewUser { email: "bob@acme.test".into(), password: PASSWORD.into(), role: Some(Role::Analyst), name: None };
    let bob = h.svc.users.create(&admin, req).await.unwrap();
    let (bob_login, _) = h.login("bob@acme.test").await;
    h.svc.users.block(&admin, bob.id).await.unwrap();
    assert!(h.svc.auth.authenticate_token(&bob_login.access_token).await.is_err());
    assert!(h.svc.auth.authenticate_api_key(&bob_login.api_key).await.is_err());
    let err = h.svc.auth.login("bob@acme.test", PASSWORD, None).await.unwrap_err();
    assert!(matches!(err, DomainError::Unauthorized(_)), "a blocked user's right password is a plain 401");
    // Unblocking lets Bob log in again, but does not revive the old token.
    h.svc.users.unblock(&admin, bob.id).await.unwrap();
    assert!(h.svc.auth.authenticate_token(&bob_login.access_token).await.is_err());
    h.login("bob@acme.test").await;
}

#[tokio::test]
async fn demotion_narrows_existing_tokens_and_keys_at_once() {
    let h = harness();
    let t = h.tenant("acme").await;
    let (_, admin) = h.login("admin@acme.test").await;
    let second = h.user(&admin, "second@acme.test", Role::Admin).await;
    let (res, _) = h.login("second@acme.test").await;
    h.svc.users.set_role(&admin, second.user.id, Role::Viewer).await.unwrap();
    let caller = h.svc.auth.authenticate_token(&res.access_token).await.unwrap();
    assert_eq!(caller.role(), Role::Viewer);
    assert!(caller.require_role(Role::Admin).is_err());
    let by_key = h.svc.auth.authenticate_api_key(&res.api_key).await.unwrap();
    assert!(!by_key.has_permission(Permission::GuardManage));
    assert!(by_key.has_permission(Permission::AgentsRead));
    let _ = t;
}

#[tokio::test]
async fn the_last_admin_cannot_be_removed() {
    let h = harness();
    let t = h.tenant("acme").await;
    let (_, admin) = h.login("admin@acme.test").await;
    let me = t.admin_user.id;
    assert!(matches!(h.svc.users.set_role(&admin, me, Role::Analyst).await, Err(DomainError::Conflict(_))));
    assert!(matches!(h.svc.users.block(&admin, me).await, Err(DomainError::Conflict(_))));
    assert!(matches!(h.svc.users.delete(&admin, me).await, Err(DomainError::Conflict(_))));
    h.user(&admin, "second@acme.test", Role::Admin).await;
    h.svc.users.set_role(&admin, me, Role::Analyst).await.unwrap();
}

#[tokio::test]
async fn roles_above_the_callers_cannot_be_granted_or_managed() {
    let h = harness();
    h.tenant("acme").await;
    let (_, admin) = h.login("admin@acme.test").await;
    let req =
        NewUser { email: "root@acme.test".into(), password: PASSWORD.into(), role: Some(Role::SuperAdmin), name: None };
    assert!(matches!(h.svc.users.create(&admin, req).await, Err(DomainError::Forbidden(_))));
    let analyst = h.user(&admin, "ana@acme.test", Role::Analyst).await;
    let req = NewUser { email: "x@acme.test".into(), password: PASSWORD.into(), role: None, name: None };
    assert!(matches!(h.svc.users.create(&analyst, req).await, Err(DomainError::Forbidden(_))));
}

#[tokio::test]
async fn the_operator_sets_any_role_audited_but_keeps_the_last_admin() {
    let h = harness();
    let t = h.tenant("acme").await;
    let user = h.svc.users.set_role_as_operator("ADMIN@acme.test", Role::SuperAdmin, "cli").await.unwrap();
    assert_eq!(user.role, Role::SuperAdmin);
    let scan = crate::model::AuditScan { order: crate::model::SeqOrder::Desc, after_seq: None, limit: 1 };
    let last = h.store.scan_audit(t.tenant.tenant.id, &Default::default(), scan).await.unwrap().remove(0);
    assert_eq!((last.event_type.as_str(), last.actor.id.as_str()), ("user.role_changed", "cli"));
    let (_, root) = h.login("admin@acme.test").await;
    assert_eq!(root.role(), Role::SuperAdmin);
    assert!(matches!(
        h.svc.users.set_role_as_operator("admin@acme.test", Role::Viewer, "cli").await,
        Err(DomainError::Conflict(_))
    ));
    assert!(matches!(
        h.svc.users.set_role_as_operator("nobody@acme.test", Role::Admin, "cli").await,
        Err(DomainError::NotFound { .. })
    ));
}

#[tokio::test]
async fn another_tenants_users_are_not_found() {
    let h = harness();
    h.tenant("acme").await;
    let other = h.tenant("globex").await;
    let (_, admin) = h.login("admin@acme.test").await;
    let err = h.svc.users.get(&admin, other.admin_user.id).await.unwrap_err();
    assert!(matches!(err, DomainError::NotFound { .. }));
    let err = h.svc.api_keys.revoke(&admin, other.api_key_info.id).await.unwrap_err();
    assert!(matches!(err, DomainError::NotFound { .. }));
}

#[tokio::test]
async fn api_keys_cannot_exceed_the_creators_role_and_validate_permissions() {
    let h = harness();
    h.tenant("acme").await;
    let (_, admin) = h.login("admin@acme.test").await;
    let analyst = h.user(&admin, "ana@acme.test", Role::Analyst).await;
    let req = NewApiKey { name: "ci".into(), permissions: Some(vec!["guard:manage".into()]), expires_at: None };
    assert!(matches!(h.svc.api_keys.create(&analyst, req).await, Err(DomainError::Forbidden(_))));
    let req = NewApiKey {
        name: "ci".into(),
        permissions: Some(vec!["agents:read".into(), "bogus".into()]),
        expires_at: Some(h.clock.now() - Duration::from_secs(1)),
    };
    let Err(DomainError::Validation(errs)) = h.svc.api_keys.create(&analyst, req).await else { panic!() };
    let fields: Vec<_> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["expires_at", "permissions[1]"]);
    let req = NewApiKey { name: "ci".into(), permissions: None, expires_at: None };
    let created = h.svc.api_keys.create(&analyst, req).await.unwrap();
    assert_eq!(created.key.permissions, Role::Analyst.permissions());
    h.svc.api_keys.revoke(&analyst, created.key.id).await.unwrap();
    assert!(h.svc.auth.authenticate_api_key(&created.api_key).await.is_err());
}

#[tokio::test]
async fn expired_keys_and_tokens_stop_working() {
    let h = harness();
    h.tenant("acme").await;
    let (res, admin) = h.login("admin@acme.test").await;
    let req = NewApiKey {
        name: "short".into(),
        permissions: None,
        expires_at: Some(h.clock.now() + Duration::from_secs(60)),
    };
    let key = h.svc.api_keys.create(&admin, req).await.unwrap();
    h.clock.advance(Duration::from_secs(120));
    assert!(h.svc.auth.authenticate_api_key(&key.api_key).await.is_err());
    h.clock.advance(Duration::from_secs(3600));
    assert!(h.svc.auth.authenticate_token(&res.access_token).await.is_err());
}

#[tokio::test]
async fn changing_the_password_signs_out_other_sessions_only() {
    let h = harness();
    h.tenant("acme").await;
    let (other, _) = h.login("admin@acme.test").await;
    let (current, caller) = h.login("admin@acme.test").await;
    let err = h.svc.users.change_password(&caller, "not my password", "a brand new password").await.unwrap_err();
    assert!(matches!(err, DomainError::Validation(_)));
    h.svc.users.change_password(&caller, PASSWORD, "a brand new password").await.unwrap();
    assert!(h.svc.auth.authenticate_token(&other.access_token).await.is_err());
    h.svc.auth.authenticate_token(&current.access_token).await.unwrap();
    h.svc.auth.login("admin@acme.test", "a brand new password", None).await.unwrap();
}

#[tokio::test]
async fn tenants_validate_and_reject_duplicates() {
    let h = harness();
    let bad = NewTenant { name: " ".into(), admin_email: "nope".into(), admin_password: "short".into() };
    let Err(DomainError::Validation(errs)) = h.svc.tenants.create(bad, "test").await else { panic!() };
    assert_eq!(errs.len(), 3);
    h.tenant("acme").await;
    let dup = NewTenant { name: "acme".into(), admin_email: "other@acme.test".into(), admin_password: PASSWORD.into() };
    assert!(matches!(h.svc.tenants.create(dup, "test").await, Err(DomainError::Conflict(_))));
    let page = h.svc.tenants.list(&PageRequest::default()).await.unwrap();
    assert_eq!(page.items.len(), 1);
}

#[tokio::test]
async fn readiness_reports_the_failing_component() {
    let h = harness();
    assert!(h.svc.status.readiness().await.ready);
    h.cache.set_down(true);
    let r = h.svc.status.readiness().await;
    assert!(!r.ready);
    let cache = r.components.iter().find(|c| c.name == "cache").unwrap();
    assert!(!cache.up);
    assert_eq!(cache.error.as_deref(), Some("cache is unreachable"));
}

#[tokio::test]
async fn users_can_edit_their_own_profile_and_status_is_kept() {
    let h = harness();
    h.tenant("acme").await;
    let (_, admin) = h.login("admin@acme.test").await;
    let me = h.svc.users.update_me(&admin, UpdateUser { email: None, name: Some("  Ada  ".into()) }).await.unwrap();
    assert_eq!(me.name.as_deref(), Some("Ada"));
    assert_eq!(me.status, UserStatus::Active);
}

#[tokio::test]
async fn cached_credentials_stop_working_at_once_on_every_replica() {
    let a = harness();
    let b = replica(&a);
    let t = a.tenant("acme").await;
    let (_, admin) = a.login("admin@acme.test").await;
    let bob = a.user(&admin, "bob@acme.test", Role::Analyst).await;
    let key = a.svc.api_keys.create(&bob, NewApiKey { name: "k".into(), permissions: None, expires_at: None });
    let key = key.await.unwrap();
    let (bob_login, _) = a.login("bob@acme.test").await;
    // Warm both replicas' caches.
    for replica in [&a, &b] {
        for _ in 0..2 {
            replica.svc.auth.authenticate_api_key(&key.api_key).await.unwrap();
            replica.svc.auth.authenticate_token(&bob_login.access_token).await.unwrap();
        }
    }
    // A demotion on replica A narrows the key on replica B at once.
    a.svc.users.set_role(&admin, bob.user.id, Role::Viewer).await.unwrap();
    let narrowed = b.svc.auth.authenticate_api_key(&key.api_key).await.unwrap();
    assert!(!narrowed.has_permission(Permission::AuditWrite));
    assert_eq!(b.svc.auth.authenticate_token(&bob_login.access_token).await.unwrap().role(), Role::Viewer);
    // A block on B locks Bob out of A.
    b.svc.users.block(&admin, bob.user.id).await.unwrap();
    assert!(matches!(a.svc.auth.authenticate_api_key(&key.api_key).await, Err(DomainError::Unauthorized(_))));
    assert!(matches!(a.svc.auth.authenticate_token(&bob_login.access_token).await, Err(DomainError::Unauthorized(_))));

    // A revoked key, cached on both, fails on both.
    let admin_key = t.api_key.clone();
    a.svc.auth.authenticate_api_key(&admin_key).await.unwrap();
    b.svc.auth.authenticate_api_key(&admin_key).await.unwrap();
    b.svc.auth.authenticate_api_key(&admin_key).await.unwrap();
    a.svc.api_keys.revoke(&admin, t.api_key_info.id).await.unwrap();
    assert!(matches!(b.svc.auth.authenticate_api_key(&admin_key).await, Err(DomainError::Unauthorized(_))));
}

#[tokio::test]
async fn a_cached_key_is_still_checked_against_its_secret_and_expiry() {
    let h = harness();
    let t = h.tenant("acme").await;
    h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap();
    h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap();
    // Same prefix, wrong secret.
    let (prefix, _) = t.api_key.rsplit_once('_').unwrap();
    let forged = format!("{prefix}_{}", "A".repeat(43));
    assert!(matches!(h.svc.auth.authenticate_api_key(&forged).await, Err(DomainError::Unauthorized(_))));
}

#[tokio::test]
async fn without_the_cache_authentication_reads_the_store() {
    let h = harness();
    let t = h.tenant("acme").await;
    let (_, admin) = h.login("admin@acme.test").await;
    h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap();
    h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap();
    h.cache.set_down(true);
    // No epoch can be read or bumped: cached entries are not used, so the change shows.
    h.svc.api_keys.revoke(&admin, t.api_key_info.id).await.unwrap();
    assert!(matches!(h.svc.auth.authenticate_api_key(&t.api_key).await, Err(DomainError::Unauthorized(_))));
    h.cache.set_down(false);
    assert!(matches!(h.svc.auth.authenticate_api_key(&t.api_key).await, Err(DomainError::Unauthorized(_))));
}

#[tokio::test]
async fn repeated_requests_are_served_from_the_cache() {
    let h = harness();
    let t = h.tenant("acme").await;
    for _ in 0..3 {
        h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap();
    }
    // A change made behind the services' back (no epoch bump) is not seen while the entry
    // lives: proof that the store is not read on every request. Changes go through services.
    let mut admin = h.store.get_user(t.tenant.tenant.id, t.admin_user.id).await.unwrap().unwrap();
    admin.role = Role::Viewer;
    admin.name = Some("second admin needed".into());
    let mut other = admin.clone();
    other.id = crate::ids::UserId(uuid::Uuid::now_v7());
    other.email = "other@acme.test".into();
    other.role = Role::Admin;
    h.store.insert_user(&other).await.unwrap();
    h.store.update_user(&admin).await.unwrap();
    let caller = h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap();
    assert_eq!(caller.role(), Role::Admin, "served from the cache");
    h.svc.auth.credentials_changed(t.tenant.tenant.id).await;
    assert_eq!(h.svc.auth.authenticate_api_key(&t.api_key).await.unwrap().role(), Role::Viewer);
}

fn settings_change(threshold: Option<Option<f64>>, levels: Option<Option<RiskLevels>>) -> UpdateTenant {
    let change = SettingsChange { approval_threshold: threshold, risk_levels: levels, ..SettingsChange::default() };
    UpdateTenant { name: None, settings: Some(change) }
}

#[tokio::test]
async fn a_tenant_sees_its_settings_in_force_and_its_admins_change_them_with_an_audit_record() {
    let h = harness();
    let t = h.tenant("acme").await;
    let admin = h.login("admin@acme.test").await.1;
    let defaults = EffectiveSettings::default();
    let own = h.svc.tenants.own(&admin).await.unwrap();
    assert_eq!((own.tenant.settings.clone(), own.effective_settings), (TenantSettings::default(), defaults));
    assert_eq!(t.tenant.effective_settings, defaults);

    let levels = RiskLevels { medium: 0.2, high: 0.5, critical: 0.7 };
    h.clock.advance(Duration::from_secs(5));
    let changed = h.svc.tenants.update_own(&admin, settings_change(Some(Some(0.6)), Some(Some(levels)))).await.unwrap();
    assert_eq!(
        changed.effective_settings,
        EffectiveSettings { approval_threshold: 0.6, risk_levels: levels, hitl_timeout_secs: 3600 }
    );
    assert_eq!(changed.tenant.updated_at, h.clock.now());
    assert_eq!(changed.tenant.name, "acme", "what is left out stays");

    // A field left out stays; `null` returns one to the server's default.
    let back = h.svc.tenants.update_own(&admin, settings_change(Some(None), None)).await.unwrap();
    assert_eq!(back.tenant.settings, TenantSettings { risk_levels: Some(levels), ..TenantSettings::default() });
    assert_eq!(back.effective_settings.approval_threshold, defaults.approval_threshold);
    let renamed = UpdateTenant { name: Some("  Acme Corp ".into()), settings: None };
    let renamed = h.svc.tenants.update(admin.tenant_id(), renamed, "admin_key").await.unwrap();
    assert_eq!((renamed.tenant.name.as_str(), renamed.tenant.settings.risk_levels), ("Acme Corp", Some(levels)));
    assert_eq!(h.svc.tenants.get(admin.tenant_id()).await.unwrap(), renamed);

    let scan = crate::model::AuditScan { after_seq: None, limit: 100, order: crate::model::SeqOrder::Asc };
    let records = h.store.scan_audit(admin.tenant_id(), &crate::model::AuditFilter::default(), scan).await.unwrap();
    let updates: Vec<_> = records.iter().filter(|r| r.event_type == TENANT_UPDATED).collect();
    assert_eq!(updates.len(), 3);
    let first: serde_json::Value = serde_json::from_str(updates[0].details.as_str()).unwrap();
    assert_eq!(first["before"]["settings"], serde_json::json!({}));
    assert_eq!(first["after"]["settings"]["approval_threshold"], 0.6);
    assert_eq!(updates[2].actor.kind, crate::model::ActorType::System);
    let published = h.bus.published.lock().unwrap().clone();
    assert_eq!(published.iter().filter(|e| e.event_type == TENANT_UPDATED).count(), 3);
}

#[tokio::test]
async fn only_admins_change_a_tenant_and_bad_settings_name_their_field() {
    let h = harness();
    h.tenant("acme").await;
    h.tenant("other").await;
    let admin = h.login("admin@acme.test").await.1;
    let analyst = h.user(&admin, "ana@acme.test", Role::Analyst).await;
    assert_eq!(h.svc.tenants.own(&analyst).await.unwrap().tenant.name, "acme");
    let err = h.svc.tenants.update_own(&analyst, settings_change(Some(Some(0.5)), None)).await.unwrap_err();
    assert!(matches!(err, DomainError::Forbidden(_)), "{err:?}");

    let invalid = |threshold: f64, levels: RiskLevels| settings_change(Some(Some(threshold)), Some(Some(levels)));
    let falling = RiskLevels { medium: 0.5, high: 0.4, critical: 0.9 };
    let outside = RiskLevels { medium: 0.0, high: 0.4, critical: 1.5 };
    for (change, field) in [
        (invalid(0.0, falling), "settings.approval_threshold"),
        (invalid(1.01, falling), "settings.risk_levels"),
        (invalid(0.5, outside), "settings.risk_levels"),
        (UpdateTenant { name: Some(" ".into()), settings: None }, "name"),
    ] {
        match h.svc.tenants.update_own(&admin, change).await.unwrap_err() {
            DomainError::Validation(errors) => {
                assert!(errors.iter().any(|e| e.field == field), "{field} missing from {errors:?}")
            }
            other => panic!("expected 422 for {field}, got {other:?}"),
        }
    }
    let taken = UpdateTenant { name: Some("other".into()), settings: None };
    assert!(matches!(h.svc.tenants.update_own(&admin, taken).await, Err(DomainError::Conflict(_))));
    assert_eq!(h.svc.tenants.own(&admin).await.unwrap().tenant.settings, TenantSettings::default(), "nothing changed");
    let absent = crate::ids::TenantId(uuid::Uuid::now_v7());
    assert!(matches!(h.svc.tenants.get(absent).await, Err(DomainError::NotFound { .. })));
}

#[test]
fn a_settings_change_tells_null_from_left_out_and_refuses_unknown_fields() {
    let change: UpdateTenant = serde_json::from_str(r#"{"settings": {"approval_threshold": null}}"#).unwrap();
    let settings = change.settings.unwrap();
    assert_eq!((settings.approval_threshold, settings.risk_levels), (Some(None), None));
    let change: UpdateTenant =
        serde_json::from_str(r#"{"settings": {"risk_levels": {"medium": 0.2, "high": 0.4, "critical": 0.8}}}"#)
            .unwrap();
    assert!(matches!(change.settings.unwrap().risk_levels, Some(Some(RiskLevels { medium: 0.2, .. }))));
    assert!(serde_json::from_str::<UpdateTenant>(r#"{"settings": {"threshold": 0.5}}"#).is_err());
    assert!(serde_json::from_str::<UpdateTenant>(r#"{"settings": {"risk_levels": {"medium": 0.2}}}"#).is_err());
}
