use time::OffsetDateTime;

use crate::ids::TenantId;

/// A customer organisation; every other record belongs to exactly one tenant.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct Tenant {
    pub id: TenantId,
    pub name: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}
