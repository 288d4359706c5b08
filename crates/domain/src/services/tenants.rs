//! Tenants: created by the platform operator (admin key) with a first admin and API key.

use serde_json::json;

use super::validate::{check_email, check_name, check_password, normalize_email};
use super::{AuditEvent, AuditLog, Ports};
use crate::error::{Result, Violations};
use crate::ids::{ApiKeyId, TenantId, UserId};
use crate::model::{Actor, ApiKey, ApiKeyKind, Role, Tenant, User, UserStatus};
use crate::page::{Page, PageRequest};
use crate::secrets::{self, AdminKey, PasswordHasher};

/// `POST /tenants`.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewTenant {
    pub name: String,
    pub admin_email: String,
    /// At least 12 characters.
    pub admin_password: String,
}

/// `201` of `POST /tenants`: the tenant, its first admin, and an API key shown this once.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct CreatedTenant {
    pub tenant: Tenant,
    pub admin_user: User,
    pub api_key: String,
    /// The stored record of `api_key` (no secret).
    pub api_key_info: ApiKey,
}

#[derive(Clone)]
pub struct TenantService {
    ports: Ports,
    audit: AuditLog,
    hasher: PasswordHasher,
    admin_key: AdminKey,
}

impl TenantService {
    pub fn new(ports: Ports, audit: AuditLog, hasher: PasswordHasher, admin_key: AdminKey) -> Self {
        Self { ports, audit, hasher, admin_key }
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
        check_email(&mut v, "admin_email", &email);
        check_password(&mut v, "admin_password", &req.admin_password);
        v.into_result()?;

        let now = self.ports.clock.now();
        let tenant =
            Tenant { id: TenantId(self.ports.ids.new_id()), name: req.name.trim().to_owned(), created_at: now };
        let admin = User {
            id: UserId(self.ports.ids.new_id()),
            tenant_id: tenant.id,
            email,
            name: None,
            role: Role::Admin,
            status: UserStatus::Active,
            password_hash: Some(self.hasher.hash(&req.admin_password)?),
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
        self.ports.store.create_tenant(&tenant, &admin, &key).await?;
        let event = AuditEvent::new(tenant.id, Actor::system(by), "tenant.created")
            .action("created")
            .resource(format!("tenants/{}", tenant.id))
            .details(
                json!({"name": tenant.name, "admin_user": admin.id, "admin_email": admin.email, "api_key": key.prefix}),
            );
        self.audit.record_after(event).await;
        Ok(CreatedTenant { tenant, admin_user: admin, api_key: generated.full, api_key_info: key })
    }

    pub async fn list(&self, page: &PageRequest) -> Result<Page<Tenant>> {
        self.ports.store.list_tenants(page).await
    }
}
