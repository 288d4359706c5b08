//! [`MemoryBus`]: the event-bus port on a `tokio::sync::broadcast` channel, for one process.

use agentgov_domain::Result;
use agentgov_domain::ports::{Event, EventBus, EventStream};
use async_trait::async_trait;
use tokio::sync::broadcast::{self, error::RecvError};

const DEFAULT_CAPACITY: usize = 1024;
/// `broadcast::channel` panics above `usize::MAX / 2`; far below that is already plenty.
const MAX_CAPACITY: usize = 1 << 20;

/// The in-process event bus. Clones share the channel, as replicas share a Redis channel.
#[derive(Debug, Clone)]
pub struct MemoryBus {
    sender: broadcast::Sender<Event>,
}

impl MemoryBus {
    /// A bus buffering up to `capacity` events per subscriber (clamped to 1..=2^20). A
    /// subscriber that falls further behind skips the events it missed.
    pub fn new(capacity: usize) -> Self {
        let (sender, _) = broadcast::channel(capacity.clamp(1, MAX_CAPACITY));
        Self { sender }
    }
}

impl Default for MemoryBus {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY)
    }
}

#[async_trait]
impl EventBus for MemoryBus {
    async fn publish(&self, event: &Event) -> Result<()> {
        // Fails only when nobody is subscribed, and then nobody is owed the event.
        let _no_subscribers = self.sender.send(event.clone());
        Ok(())
    }

    async fn subscribe(&self) -> Result<EventStream> {
        let receiver = self.sender.subscribe();
        Ok(Box::pin(futures::stream::unfold(receiver, |mut receiver| async move {
            loop {
                match receiver.recv().await {
                    Ok(event) => return Some((event, receiver)),
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "event subscriber fell behind; skipping the events it missed");
                    }
                    Err(RecvError::Closed) => return None,
                }
            }
        })))
    }

    fn backend(&self) -> &'static str {
        "memory"
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use agentgov_domain::ids::TenantId;
    use futures::StreamExt;
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;

    fn event(n: u64) -> Event {
        Event {
            id: Uuid::now_v7(),
            event_type: "test".into(),
            tenant_id: TenantId(Uuid::now_v7()),
            ts: OffsetDateTime::now_utc(),
            data: serde_json::json!({ "n": n }),
        }
    }

    async fn next(stream: &mut EventStream) -> Event {
        tokio::time::timeout(Duration::from_secs(1), stream.next()).await.unwrap().unwrap()
    }

    #[tokio::test]
    async fn a_lagging_subscriber_skips_what_it_missed_and_continues() {
        let bus = MemoryBus::new(2);
        let mut stream = bus.subscribe().await.unwrap();
        let sent: Vec<Event> = (0..5).map(event).collect();
        for e in &sent {
            bus.publish(e).await.unwrap();
        }
        assert_eq!(next(&mut stream).await, sent[3], "the oldest events were dropped");
        assert_eq!(next(&mut stream).await, sent[4]);

        let later = event(5);
        bus.publish(&later).await.unwrap();
        assert_eq!(next(&mut stream).await, later, "the stream keeps going after a lag");
    }

    #[tokio::test]
    async fn the_stream_ends_when_the_bus_is_gone() {
        let bus = MemoryBus::default();
        let mut stream = bus.subscribe().await.unwrap();
        drop(bus);
        assert!(stream.next().await.is_none());
    }
}
