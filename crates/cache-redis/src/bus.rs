//! [`RedisBus`]: the event-bus port over Redis pub/sub, events as JSON on one channel.

use agentgov_domain::ports::{Event, EventBus, EventStream};
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use deadpool_redis::redis::{self, aio::PubSub};
use futures::StreamExt;

use crate::conn::{CONNECT_TIMEOUT, Connections, answer, invalid_url};

const SERVICE: &str = "event bus";
/// Publishing is one short command: one shared connection serves any number of publishers.
const PUBLISH_CONNECTIONS: usize = 1;

/// The shared event bus. Every replica connected to the same channel sees every event,
/// its own included. Cloning shares the connections.
#[derive(Clone)]
pub struct RedisBus {
    /// Subscriptions need a dedicated connection each, opened from here.
    client: redis::Client,
    publisher: Connections,
    channel: String,
}

impl RedisBus {
    /// A bus on `url` publishing to and subscribing on `channel` (e.g. `agentgov:events`).
    /// Connects lazily, like [`crate::RedisCache::connect`].
    pub fn connect(url: &str, channel: &str) -> Result<RedisBus> {
        let client = redis::Client::open(url).map_err(|e| invalid_url(SERVICE, &e))?;
        Ok(Self {
            client,
            publisher: Connections::new(url, PUBLISH_CONNECTIONS, SERVICE)?,
            channel: channel.to_owned(),
        })
    }

    /// A new connection subscribed to the channel; returns once Redis confirmed it.
    async fn subscription(&self) -> Result<PubSub> {
        let subscribe = async {
            let mut pubsub = self.client.get_async_pubsub().await?;
            pubsub.subscribe(&self.channel).await?;
            Ok(pubsub)
        };
        match tokio::time::timeout(CONNECT_TIMEOUT, subscribe).await {
            // Whatever went wrong (refused, reset, not Redis at all), there is no bus to be had.
            Ok(result) => result.map_err(|e: redis::RedisError| {
                tracing::warn!(error = %e, "event bus: cannot subscribe");
                DomainError::Unavailable(SERVICE.into())
            }),
            Err(_elapsed) => {
                tracing::warn!("event bus: Redis subscription timed out");
                Err(DomainError::Unavailable(SERVICE.into()))
            }
        }
    }
}

impl std::fmt::Debug for RedisBus {
    // The client's own Debug would print the connection info, password included.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus").field("channel", &self.channel).finish_non_exhaustive()
    }
}

fn decode(msg: &redis::Msg) -> Option<Event> {
    match serde_json::from_slice(msg.get_payload_bytes()) {
        Ok(event) => Some(event),
        Err(error) => {
            tracing::warn!(%error, channel = msg.get_channel_name(), "event bus: skipping an undecodable message");
            None
        }
    }
}

#[async_trait]
impl EventBus for RedisBus {
    async fn publish(&self, event: &Event) -> Result<()> {
        let payload = serde_json::to_vec(event).map_err(DomainError::internal)?;
        let published =
            redis::cmd("PUBLISH").arg(&self.channel).arg(payload).query_async(&mut self.publisher.next()).await;
        let _receivers: u64 = answer(SERVICE, published)?;
        Ok(())
    }

    /// The stream ends if the connection drops; the subscriber decides whether to subscribe
    /// again (events published meanwhile are lost, as with any pub/sub).
    async fn subscribe(&self) -> Result<EventStream> {
        let messages = self.subscription().await?.into_on_message();
        let channel = self.channel.clone();
        let ended = futures::stream::once(async move {
            tracing::warn!(channel, "event bus: Redis subscription ended");
        })
        .filter_map(|()| std::future::ready(None));
        Ok(messages.filter_map(|msg| std::future::ready(decode(&msg))).chain(ended).boxed())
    }

    fn backend(&self) -> &'static str {
        "redis"
    }
}
