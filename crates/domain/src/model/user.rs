use time::OffsetDateTime;

use crate::ids::{TenantId, UserId};
use crate::model::Role;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum UserStatus {
    Active,
    Blocked,
}

impl UserStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            UserStatus::Active => "active",
            UserStatus::Blocked => "blocked",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "active" => Some(UserStatus::Active),
            "blocked" => Some(UserStatus::Blocked),
            _ => None,
        }
    }
}

/// A person who signs in to one tenant.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct User {
    pub id: UserId,
    pub tenant_id: TenantId,
    /// Lower-cased; unique across the platform (login takes no tenant).
    pub email: String,
    pub name: Option<String>,
    pub role: Role,
    pub status: UserStatus,
    /// Argon2id PHC string. Never serialised.
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub password_hash: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_login_at: Option<OffsetDateTime>,
}

impl User {
    /// An active administrator: the kind of user a tenant must always keep one of.
    pub fn is_active_admin(&self) -> bool {
        self.status == UserStatus::Active && self.role.is_admin()
    }
}
