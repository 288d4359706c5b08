use time::OffsetDateTime;

use crate::ids::{SessionId, TenantId, UserId};

/// A login. Its id is the `jti` of the JWT handed out with it; its API key (if any) points
/// back to it through `ApiKey::session_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: SessionId,
    pub tenant_id: TenantId,
    pub user_id: UserId,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
}

impl Session {
    pub fn is_live_at(&self, now: OffsetDateTime) -> bool {
        self.revoked_at.is_none() && self.expires_at > now
    }
}
