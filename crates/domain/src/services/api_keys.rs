//! API keys: created by users for their agents and SDKs, shown once, revocable at once.

use time::OffsetDateTime;

use serde_json::json;

use super::audit::caller_actor;
use super::validate::check_name;
use super::{AuditEvent, AuditLog, AuthService, Caller, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::ids::ApiKeyId;
use crate::model::{ApiKey, ApiKeyKind, Permission, Role};
use crate::page::{Page, PageRequest};
use crate::secrets;

/// `POST /api-keys`.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewApiKey {
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub name: String,
    /// Permission strings such as `guard:manage`. Defaults to every permission the creator's
    /// role holds; may not exceed it.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<Permission>>))]
    pub permissions: Option<Vec<String>>,
    /// When the key stops working; must be in the future. Never, if absent.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
}

/// A new key: the record, and the full secret shown this once.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedApiKey {
    #[serde(flatten)]
    pub key: ApiKey,
    /// The full key (`agk_<8 chars>_<secret>`). It is not stored and cannot be shown again.
    pub api_key: String,
}

super::ports::repos!(Repos { api_keys: ApiKeyRepo, users: UserRepo });
#[derive(Clone)]
pub struct ApiKeyService {
    repos: Repos,
    ports: Ports,
    audit: AuditLog,
    auth: AuthService,
}

impl ApiKeyService {
    pub fn new(ports: Ports, repos: Repos, audit: AuditLog, auth: AuthService) -> Self {
        Self { ports, repos, audit, auth }
    }

    async fn audited(&self, caller: &Caller, event_type: &str, key: &ApiKey) {
        let details = json!({
            "name": key.name, "prefix": key.prefix, "permissions": key.permissions, "owner": key.user_id,
        });
        let event = AuditEvent::new(caller.tenant_id(), caller_actor(caller), event_type)
            .action(event_type.rsplit('.').next().unwrap_or(event_type))
            .resource(format!("api_keys/{}", key.id))
            .details(details);
        self.audit.record_after(event).await;
    }

    pub async fn create(&self, caller: &Caller, req: NewApiKey) -> Result<CreatedApiKey> {
        let now = self.ports.clock.now();
        let mut v = Violations::new();
        check_name(&mut v, "name", &req.name);
        if req.expires_at.is_some_and(|t| t <= now) {
            v.add("expires_at", "must be in the future");
        }
        let mut permissions = Vec::new();
        for (i, p) in req.permissions.iter().flatten().enumerate() {
            match p.parse::<Permission>() {
                Ok(p) if !permissions.contains(&p) => permissions.push(p),
                Ok(_) => {}
                Err(e) => v.add(format!("permissions[{i}]"), e),
            }
        }
        v.into_result()?;
        if req.permissions.is_none() {
            permissions = caller.role().permissions().to_vec();
        }
        if let Some(p) = permissions.iter().find(|p| !caller.has_permission(**p)) {
            return Err(DomainError::Forbidden(format!("you cannot grant the {p} permission, which you do not hold")));
        }
        let generated = secrets::generate_api_key()?;
        let key = ApiKey {
            id: ApiKeyId(self.ports.ids.new_id()),
            tenant_id: caller.tenant_id(),
            user_id: caller.user.id,
            name: req.name.trim().to_owned(),
            prefix: generated.prefix,
            key_hash: generated.hash,
            permissions,
            kind: ApiKeyKind::Standard,
            session_id: None,
            created_at: now,
            expires_at: req.expires_at,
            last_used_at: None,
            revoked_at: None,
        };
        self.repos.api_keys.insert_api_key(&key).await?;
        self.audited(caller, "api_key.created", &key).await;
        Ok(CreatedApiKey { key, api_key: generated.full })
    }

    /// Admins see every key of their tenant; other users their own.
    pub async fn list(&self, caller: &Caller, page: &PageRequest) -> Result<Page<ApiKey>> {
        let owner = if caller.role() >= Role::Admin { None } else { Some(caller.user.id) };
        self.repos.api_keys.list_api_keys(caller.tenant_id(), owner, page).await
    }

    /// Revokes a key at once. Users revoke their own keys; admins any key of their tenant
    /// whose owner's role is not above theirs.
    pub async fn revoke(&self, caller: &Caller, id: ApiKeyId) -> Result<()> {
        let not_found = || DomainError::not_found("API key", id);
        let key = self.repos.api_keys.get_api_key(caller.tenant_id(), id).await?.ok_or_else(not_found)?;
        if key.revoked_at.is_some() {
            return Err(not_found());
        }
        if key.user_id != caller.user.id {
            if caller.role() < Role::Admin {
                return Err(DomainError::Forbidden("only an admin can revoke another user's key".into()));
            }
            // As with users themselves: nobody manages the keys of a role above theirs.
            let owner = self.repos.users.get_user(caller.tenant_id(), key.user_id).await?;
            if owner.is_some_and(|o| o.role > caller.role()) {
                return Err(DomainError::Forbidden("cannot revoke a key of a user whose role is above yours".into()));
            }
        }
        self.repos.api_keys.revoke_api_key(caller.tenant_id(), id, self.ports.clock.now()).await?;
        self.auth.credentials_changed(caller.tenant_id()).await;
        self.audited(caller, "api_key.revoked", &key).await;
        Ok(())
    }
}
