use time::OffsetDateTime;

use crate::ids::{ApiKeyId, SessionId, TenantId, UserId};
use crate::model::Permission;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApiKeyKind {
    /// Created through `POST /api-keys` or with a tenant; lives until revoked or expired.
    Standard,
    /// Issued by a login; lives and dies with that session.
    Session,
}

impl ApiKeyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiKeyKind::Standard => "standard",
            ApiKeyKind::Session => "session",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "standard" => Some(ApiKeyKind::Standard),
            "session" => Some(ApiKeyKind::Session),
            _ => None,
        }
    }
}

/// An API key. The secret itself is never stored: only its SHA-256 (`key_hash`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiKey {
    pub id: ApiKeyId,
    pub tenant_id: TenantId,
    /// The user who owns the key; it never holds more than that user's role allows.
    pub user_id: UserId,
    pub name: String,
    /// The visible part of the key, `agk_<8 chars>`; unique.
    pub prefix: String,
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub key_hash: Vec<u8>,
    pub permissions: Vec<Permission>,
    pub kind: ApiKeyKind,
    /// The login session a `session` key belongs to.
    pub session_id: Option<SessionId>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub revoked_at: Option<OffsetDateTime>,
}

impl ApiKey {
    pub fn is_usable_at(&self, now: OffsetDateTime) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|exp| exp > now)
    }
}
