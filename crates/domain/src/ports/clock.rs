//! Time and id generation as ports, so tests can be deterministic.

use time::OffsetDateTime;
use uuid::Uuid;

pub trait Clock: Send + Sync {
    /// Now, truncated to microseconds (what every store keeps).
    fn now(&self) -> OffsetDateTime;
}

pub trait IdGen: Send + Sync {
    /// A new UUID v7 (time-ordered).
    fn new_id(&self) -> Uuid;
}

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        truncate_to_micros(OffsetDateTime::now_utc())
    }
}

pub fn truncate_to_micros(t: OffsetDateTime) -> OffsetDateTime {
    let micros = t.microsecond();
    t.replace_microsecond(micros).unwrap_or(t)
}

#[derive(Debug, Default, Clone, Copy)]
pub struct UuidV7Gen;

impl IdGen for UuidV7Gen {
    fn new_id(&self) -> Uuid {
        Uuid::now_v7()
    }
}
