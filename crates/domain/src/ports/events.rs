//! Event bus port: tenant events fanned out to every replica (WebSocket feed, cache
//! invalidation, model reload).

use async_trait::async_trait;
use futures::stream::BoxStream;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::Result;
use crate::ids::TenantId;

/// One event, as sent on the WebSocket feed: `{"id", "type", "tenant_id", "ts", "data"}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Event {
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
    pub id: Uuid,
    #[serde(rename = "type")]
    pub event_type: String,
    pub tenant_id: TenantId,
    #[serde(with = "time::serde::rfc3339")]
    pub ts: OffsetDateTime,
    pub data: serde_json::Value,
}

impl Event {
    /// Whether the real-time feed sends it to clients: every event but the internal
    /// `auth.*` ones, which only tell replicas to check credentials again.
    pub fn is_public(&self) -> bool {
        !self.event_type.starts_with("auth.")
    }
}

/// Every event published after the subscription was made, from any replica.
pub type EventStream = BoxStream<'static, Event>;

#[async_trait]
pub trait EventBus: Send + Sync {
    async fn publish(&self, event: &Event) -> Result<()>;
    /// Events of every tenant; subscribers filter by tenant.
    async fn subscribe(&self) -> Result<EventStream>;
    /// "memory" or "redis", for `/status`.
    fn backend(&self) -> &'static str;
}
