//! Tenants: created by the platform operator (admin key) with a first admin and API key,
//! and their settings (approval threshold, risk levels), which the tenant's admins or the
//! operator may change.

use serde_json::json;

use super::audit::caller_actor;
use super::hitl::MAX_HITL_TIMEOUT_SECS;
use super::validate::{check_email, check_name, check_password, normalize_email};
use super::{AgentService, AuditEvent, AuditLog, Caller, PolicyService, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::events::{TENANT_SECRET_REMOVED, TENANT_SECRET_ROTATED, TENANT_UPDATED};
use crate::ids::{ApiKeyId, TenantId, UserId};
use crate::model::{
    Actor, ApiKey, ApiKeyKind, EffectiveSettings, Permission, RiskLevels, Role, SecretPurpose, Tenant, TenantSecret,
    TenantSettings, User, UserStatus,
};
use crate::page::{Page, PageRequest};
use crate::secrets::{self, AdminKey};

/// `POST /tenants`.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewTenant {
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub name: String,
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 254,
            pattern = r"^[^@\s\u0000-\u001f\u007f-\u009f]+@[^@\s.\u0000-\u001f\u007f-\u009f][^@\s\u0000-\u001f\u007f-\u009f]*\.[^@\s\u0000-\u001f\u007f-\u009f]*[^@\s.\u0000-\u001f\u007f-\u009f]$"
        )
    )]
    pub admin_email: String,
    /// At least 12 characters.
    #[cfg_attr(feature = "openapi", schema(min_length = 12, max_length = 1024))]
    pub admin_password: String,
}

/// A tenant as the API shows it: its record and the settings in force.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TenantView {
    #[serde(flatten)]
    pub tenant: Tenant,
    /// The values its policy checks and agents use: `settings`, or the server's defaults
    /// where it has none.
    pub effective_settings: EffectiveSettings,
}

/// `PATCH /tenant` and `PATCH /tenants/{id}`: what is left out stays as it is.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateTenant {
    /// Unique across the server; 1 to 200 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "crate::model::object::option")]
    pub settings: Option<SettingsChange>,
}

/// A change of settings: a field given sets it, `null` returns it to the server's default,
/// and a field left out stays as it is.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SettingsChange {
    /// Above 0 and at most 1.
    #[serde(default, deserialize_with = "given")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, exclusive_minimum = 0, maximum = 1))]
    pub approval_threshold: Option<Option<f64>>,
    /// All three bounds, rising, within (0, 1]. Agents are re-levelled at once.
    #[serde(default, deserialize_with = "crate::model::object::given")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<RiskLevels>))]
    pub risk_levels: Option<Option<RiskLevels>>,
    /// Above 0 and below 1: the Prompt Guard's threshold for this tenant, over its model's.
    #[serde(default, deserialize_with = "given")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, exclusive_minimum = 0, exclusive_maximum = 1))]
    pub guard_threshold: Option<Option<f64>>,
    /// 1 to 604,800 (seven days): how long an approval request that names no
    /// `timeout_seconds` waits for a decision.
    #[serde(default, deserialize_with = "given")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<u32>, minimum = 1, maximum = 604800))]
    pub hitl_timeout_secs: Option<Option<u32>>,
    /// The escalation chain of approval requests: up to five steps `{after_secs, role}`,
    /// `after_secs` rising, each 1 to 604,800; `role` one that may decide (`analyst`,
    /// `admin`, `super_admin`). `null` or `[]` removes it. New requests take it.
    #[serde(default, deserialize_with = "given")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<crate::model::EscalationStep>>, max_items = 5))]
    pub hitl_escalation: Option<Option<Vec<crate::model::EscalationStep>>>,
}

/// What is wrong with an escalation chain, if anything.
fn escalation_problem(steps: &[crate::model::EscalationStep]) -> Option<String> {
    use crate::model::MAX_ESCALATION_STEPS;
    if steps.len() > MAX_ESCALATION_STEPS {
        return Some(format!("at most {MAX_ESCALATION_STEPS} steps"));
    }
    if let Some(step) = steps.iter().find(|s| !(1..=MAX_HITL_TIMEOUT_SECS).contains(&s.after_secs)) {
        return Some(format!("after_secs must be between 1 and {MAX_HITL_TIMEOUT_SECS}, not {}", step.after_secs));
    }
    if steps.windows(2).any(|w| w[1].after_secs <= w[0].after_secs) {
        return Some("after_secs must rise from step to step".into());
    }
    if steps.iter().any(|s| s.role == Role::Viewer) {
        return Some("a step's role must be one that may decide: analyst, admin or super_admin".into());
    }
    None
}

/// Tells a member given as `null` (`Some(None)`) from one left out (`None`, by default).
fn given<'de, D, T>(deserializer: D) -> std::result::Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(deserializer).map(Some)
}

impl SettingsChange {
    /// `settings` with this change made, or the fields that cannot take it.
    fn apply(&self, mut settings: TenantSettings, v: &mut Violations) -> TenantSettings {
        if let Some(threshold) = self.approval_threshold {
            if let Some(t) = threshold
                && !(t.is_finite() && t > 0.0 && t <= 1.0)
            {
                v.add("settings.approval_threshold", "must be above 0 and at most 1");
            }
            settings.approval_threshold = threshold;
        }
        if let Some(threshold) = self.guard_threshold {
            if let Some(t) = threshold
                && !(t.is_finite() && t > 0.0 && t < 1.0)
            {
                v.add("settings.guard_threshold", "must be above 0 and below 1");
            }
            settings.guard_threshold = threshold;
        }
        if let Some(timeout) = self.hitl_timeout_secs {
            if let Some(t) = timeout
                && !(1..=MAX_HITL_TIMEOUT_SECS).contains(&t)
            {
                v.add("settings.hitl_timeout_secs", format!("must be between 1 and {MAX_HITL_TIMEOUT_SECS}"));
            }
            settings.hitl_timeout_secs = timeout;
        }
        if let Some(chain) = &self.hitl_escalation {
            let steps = chain.clone().unwrap_or_default();
            if let Some(problem) = escalation_problem(&steps) {
                v.add("settings.hitl_escalation", problem);
            }
            settings.hitl_escalation = (!steps.is_empty()).then_some(steps);
        }
        if let Some(levels) = self.risk_levels {
            if let Some(problem) = levels.as_ref().and_then(RiskLevels::problem) {
                v.add("settings.risk_levels", problem);
            }
            settings.risk_levels = levels;
        }
        settings
    }
}

/// `201` of `POST /tenants`: the tenant, its first admin, and an API key and callback
/// signing secret shown this once.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedTenant {
    pub tenant: TenantView,
    pub admin_user: User,
    pub api_key: String,
    /// The stored record of `api_key` (no secret).
    pub api_key_info: ApiKey,
    /// `whsec_…`: the key the tenant's HITL callbacks are signed with (docs/API.md,
    /// "Signatures"). Shown only here; `POST /tenant/callback-secret` makes a new one.
    pub callback_secret: String,
}

/// How long a replaced secret still signs callbacks beside the new one (callback) or is
/// still accepted (webhook), so receivers and senders can switch without a gap.
pub const SECRET_ROTATION_GRACE: time::Duration = time::Duration::hours(24);

/// A signing secret just made: the only time its value is shown.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IssuedSecret {
    /// `whsec_` and 43 characters; its UTF-8 bytes are the HMAC-SHA256 key.
    pub secret: String,
    #[serde(flatten)]
    pub info: SecretInfo,
}

/// A tenant's signing secret, without its value.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SecretInfo {
    pub purpose: SecretPurpose,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: time::OffsetDateTime,
    /// Until when the secret this one replaced still signs callbacks beside it (`callback`)
    /// or is still accepted (`webhook`); `null` when there is none.
    #[serde(with = "time::serde::rfc3339::option")]
    pub previous_valid_until: Option<time::OffsetDateTime>,
    /// `webhook`: whether this tenant's senders must use the timestamped form
    /// (`t=…,v1=…`); `sha256=` is refused. Always false for `callback`.
    pub require_timestamp: bool,
}

impl SecretInfo {
    fn of(secret: &TenantSecret, now: time::OffsetDateTime) -> Self {
        Self {
            purpose: secret.purpose,
            created_at: secret.created_at,
            previous_valid_until: secret.previous_until.filter(|until| *until > now),
            require_timestamp: secret.require_timestamp,
        }
    }
}

/// `GET /tenant/secrets`: which signing secrets the tenant has.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TenantSecrets {
    /// Signs the tenant's HITL callbacks (made with the tenant).
    pub callback: Option<SecretInfo>,
    /// The tenant's own key for `POST /webhooks/agent`; `null` when its senders use the
    /// server's `WEBHOOK_SECRET`.
    pub webhook: Option<SecretInfo>,
}

/// `POST /tenant/webhook-secret`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewWebhookSecret {
    /// Refuse the untimestamped `sha256=` form for this tenant (default true: only
    /// `t=…,v1=…`, which a replay outside five minutes cannot pass).
    pub require_timestamp: Option<bool>,
}

/// What a tenant's settings change must reach at once in this process: the services that
/// keep the tenant's settings or what was derived from them.
#[derive(Clone)]
pub(crate) struct SettingsReaders {
    pub(crate) policies: PolicyService,
    pub(crate) agents: AgentService,
    pub(crate) guard: super::guard::GuardService,
}

super::ports::repos!(Repos { tenants: TenantRepo });
#[derive(Clone)]
pub struct TenantService {
    repos: Repos,
    ports: Ports,
    audit: AuditLog,
    passwords: super::passwords::Passwords,
    admin_key: AdminKey,
    defaults: EffectiveSettings,
    readers: SettingsReaders,
    auth: super::AuthService,
}

impl TenantService {
    #[expect(clippy::too_many_arguments, reason = "built once, by the composition root: one argument per collaborator")]
    pub(crate) fn new(
        ports: Ports,
        repos: Repos,
        audit: AuditLog,
        passwords: super::passwords::Passwords,
        admin_key: AdminKey,
        defaults: EffectiveSettings,
        readers: SettingsReaders,
        auth: super::AuthService,
    ) -> Self {
        Self { ports, repos, audit, passwords, admin_key, defaults, readers, auth }
    }

    fn view(&self, tenant: Tenant) -> TenantView {
        TenantView { effective_settings: tenant.effective(&self.defaults), tenant }
    }

    /// Checks the operator's `X-Admin-Key` (constant time; 401 when unset or wrong).
    pub fn authorize_admin(&self, presented: Option<&str>) -> Result<()> {
        self.admin_key.verify(presented)
    }

    /// Creates a tenant; `by` names who asked (`admin_key`, `cli`) in the tenant's audit log.
    pub async fn create(&self, req: NewTenant, by: &str) -> Result<CreatedTenant> {
        let email = normalize_email(&req.admin_email);
        let mut v = Violations::new();
        check_name(&mut v, "name", &req.name);
        check_email(&mut v, "admin_email", &req.admin_email);
        check_password(&mut v, "admin_password", &req.admin_password);
        v.into_result()?;

        let now = self.ports.clock.now();
        let tenant = Tenant {
            id: TenantId(self.ports.ids.new_id()),
            name: req.name.trim().to_owned(),
            settings: TenantSettings::default(),
            created_at: now,
            updated_at: now,
        };
        let admin = User {
            id: UserId(self.ports.ids.new_id()),
            tenant_id: tenant.id,
            email,
            name: None,
            role: Role::Admin,
            status: UserStatus::Active,
            password_hash: Some(self.passwords.hash(tenant.id, &req.admin_password).await?),
            created_at: now,
            updated_at: now,
            last_login_at: None,
        };
        let generated = secrets::generate_api_key()?;
        let key = ApiKey {
            id: ApiKeyId(self.ports.ids.new_id()),
            tenant_id: tenant.id,
            user_id: admin.id,
            name: "initial key".into(),
            prefix: generated.prefix,
            key_hash: generated.hash,
            permissions: Role::Admin.permissions().to_vec(),
            kind: ApiKeyKind::Standard,
            session_id: None,
            created_at: now,
            expires_at: None,
            last_used_at: None,
            revoked_at: None,
        };
        let secret = TenantSecret::generate(tenant.id, SecretPurpose::Callback, false, now)?;
        self.repos.tenants.create_tenant(&tenant, &admin, &key, &secret).await?;
        let event = AuditEvent::new(tenant.id, Actor::system(by), "tenant.created")
            .action("created")
            .resource(format!("tenants/{}", tenant.id))
            .details(
                json!({"name": tenant.name, "admin_user": admin.id, "admin_email": admin.email, "api_key": key.prefix}),
            );
        self.audit.record_after(event).await;
        Ok(CreatedTenant {
            tenant: self.view(tenant),
            admin_user: admin,
            api_key: generated.full,
            api_key_info: key,
            callback_secret: secret.secret,
        })
    }

    pub async fn list(&self, page: &PageRequest) -> Result<Page<TenantView>> {
        let found = self.repos.tenants.list_tenants(page).await?;
        Ok(Page { items: found.items.into_iter().map(|t| self.view(t)).collect(), next_cursor: found.next_cursor })
    }

    async fn stored(&self, id: TenantId) -> Result<Tenant> {
        self.repos.tenants.get_tenant(id).await?.ok_or_else(|| DomainError::not_found("tenant", id))
    }

    /// `GET /tenants/{id}` (admin key).
    pub async fn get(&self, id: TenantId) -> Result<TenantView> {
        Ok(self.view(self.stored(id).await?))
    }

    /// `GET /tenant`: the caller's own tenant; needs `stats:read`.
    pub async fn own(&self, caller: &Caller) -> Result<TenantView> {
        caller.require_permission(Permission::StatsRead)?;
        self.get(caller.tenant_id()).await
    }

    /// `PATCH /tenants/{id}` (admin key; `by` names who asked in the tenant's audit log).
    pub async fn update(&self, id: TenantId, req: UpdateTenant, by: &str) -> Result<TenantView> {
        self.change(id, req, Actor::system(by)).await
    }

    /// `PATCH /tenant` (an admin of the tenant).
    pub async fn update_own(&self, caller: &Caller, req: UpdateTenant) -> Result<TenantView> {
        caller.require_role(Role::Admin)?;
        // Names are unique across the server; a tenant must not learn that another one
        // bears the name it asked for, so the conflict names nobody.
        self.change(caller.tenant_id(), req, caller_actor(caller)).await.map_err(|e| match e {
            DomainError::Conflict(m) if m == "tenant name already taken" => {
                DomainError::Conflict("this name cannot be used; choose another".into())
            }
            other => other,
        })
    }

    /// `GET /tenant/secrets` (an admin): the tenant's signing secrets, without their values.
    pub async fn secrets(&self, caller: &Caller) -> Result<TenantSecrets> {
        caller.require_role(Role::Admin)?;
        let (tenant, now) = (caller.tenant_id(), self.ports.clock.now());
        let info = |s: Option<TenantSecret>| s.map(|s| SecretInfo::of(&s, now));
        Ok(TenantSecrets {
            callback: info(self.repos.tenants.get_tenant_secret(tenant, SecretPurpose::Callback).await?),
            webhook: info(self.repos.tenants.get_tenant_secret(tenant, SecretPurpose::Webhook).await?),
        })
    }

    /// `POST /tenant/callback-secret` (an admin): a new key for the tenant's callbacks; the
    /// old one signs beside it for [`SECRET_ROTATION_GRACE`].
    pub async fn rotate_callback_secret(&self, caller: &Caller) -> Result<IssuedSecret> {
        caller.require_role(Role::Admin)?;
        self.rotate(caller, SecretPurpose::Callback, false).await
    }

    /// `POST /tenant/webhook-secret` (an admin): makes or replaces the tenant's own key for
    /// `POST /webhooks/agent`; from now on the server's `WEBHOOK_SECRET` is refused for it,
    /// and a replaced key is still accepted for [`SECRET_ROTATION_GRACE`].
    pub async fn rotate_webhook_secret(&self, caller: &Caller, req: NewWebhookSecret) -> Result<IssuedSecret> {
        caller.require_role(Role::Admin)?;
        let issued = self.rotate(caller, SecretPurpose::Webhook, req.require_timestamp.unwrap_or(true)).await?;
        self.auth.credentials_changed(caller.tenant_id()).await;
        Ok(issued)
    }

    /// `DELETE /tenant/webhook-secret` (an admin): the tenant's senders go back to the
    /// server's `WEBHOOK_SECRET`. 404 when it has no key of its own.
    pub async fn delete_webhook_secret(&self, caller: &Caller) -> Result<()> {
        caller.require_role(Role::Admin)?;
        let tenant = caller.tenant_id();
        if !self.repos.tenants.delete_tenant_secret(tenant, SecretPurpose::Webhook).await? {
            return Err(DomainError::not_found("webhook secret", "of this tenant"));
        }
        self.auth.credentials_changed(tenant).await;
        let event = AuditEvent::new(tenant, caller_actor(caller), TENANT_SECRET_REMOVED)
            .action("removed")
            .resource(format!("tenants/{tenant}/secrets/webhook"))
            .details(json!({"purpose": SecretPurpose::Webhook}));
        self.audit.record(event).await?;
        Ok(())
    }

    async fn rotate(&self, caller: &Caller, purpose: SecretPurpose, require_timestamp: bool) -> Result<IssuedSecret> {
        let (tenant, now) = (caller.tenant_id(), self.ports.clock.now());
        let before = self.repos.tenants.get_tenant_secret(tenant, purpose).await?;
        let secret = TenantSecret {
            previous_until: before.as_ref().map(|_| now + SECRET_ROTATION_GRACE),
            previous: before.map(|b| b.secret),
            ..TenantSecret::generate(tenant, purpose, require_timestamp, now)?
        };
        self.repos.tenants.put_tenant_secret(&secret).await?;
        let info = SecretInfo::of(&secret, now);
        let event = AuditEvent::new(tenant, caller_actor(caller), TENANT_SECRET_ROTATED)
            .action("rotated")
            .resource(format!("tenants/{tenant}/secrets/{}", purpose.as_str()))
            .details(json!({"purpose": purpose, "previous_valid_until": info.previous_valid_until.map(|t| t.unix_timestamp()), "require_timestamp": require_timestamp}));
        self.audit.record(event).await?;
        Ok(IssuedSecret { secret: secret.secret, info })
    }

    /// Validates and stores a change, re-levels the tenant's agents, audits it, and makes
    /// every replica forget what it kept of the old settings.
    async fn change(&self, id: TenantId, req: UpdateTenant, actor: Actor) -> Result<TenantView> {
        let mut v = Violations::new();
        if let Some(name) = &req.name {
            check_name(&mut v, "name", name);
        }
        let before = self.stored(id).await?;
        let settings = match &req.settings {
            Some(change) => change.apply(before.settings.clone(), &mut v),
            None => before.settings.clone(),
        };
        v.into_result()?;
        let after = Tenant {
            name: req.name.as_deref().map_or_else(|| before.name.clone(), |n| n.trim().to_owned()),
            settings,
            updated_at: self.ports.clock.now(),
            ..before.clone()
        };
        let view = self.view(after);
        let relevelled = self.repos.tenants.update_tenant(&view.tenant, &view.effective_settings.risk_levels).await?;
        self.readers.policies.forget_tenant(id);
        self.readers.agents.forget_snapshots();
        self.readers.guard.forget_tenant(id);
        let summary = |t: &Tenant| json!({"name": t.name, "settings": t.settings});
        let event =
            AuditEvent::new(id, actor, TENANT_UPDATED).action("updated").resource(format!("tenants/{id}")).details(
                json!({"before": summary(&before), "after": summary(&view.tenant), "agents_relevelled": relevelled}),
            );
        self.audit.record_after(event).await;
        let data = serde_json::to_value(&view).unwrap_or_default();
        self.ports.announce(id, TENANT_UPDATED, data).await;
        Ok(view)
    }
}
