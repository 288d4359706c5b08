//! The Prompt Guard's feedback and statistics in `MemoryStore`.

use std::collections::{BTreeMap, HashMap};
use std::sync::MutexGuard;

use async_trait::async_trait;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict};
use crate::error::Result;
use crate::ids::TenantId;
use crate::model::{GuardFeedback, GuardLabel, GuardStatsKey};
use crate::ports::store::GuardRepo;

#[derive(Debug, Default)]
pub(super) struct GuardTables {
    feedback: BTreeMap<Uuid, GuardFeedback>,
    stats: HashMap<GuardStatsKey, i64>,
}

impl MemoryStore {
    fn guard_tables(&self) -> MutexGuard<'_, GuardTables> {
        self.guard.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl GuardRepo for MemoryStore {
    async fn insert_guard_feedback(&self, feedback: &GuardFeedback) -> Result<()> {
        if !self.tenant_exists(feedback.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.guard_tables();
        if t.feedback.contains_key(&feedback.id.0) {
            return Err(conflict("guard feedback with this id exists"));
        }
        t.feedback.insert(feedback.id.0, feedback.clone());
        Ok(())
    }

    async fn list_guard_feedback(&self, tenant: TenantId, limit: i64) -> Result<Vec<GuardFeedback>> {
        let limit = usize::try_from(limit).unwrap_or(0);
        let t = self.guard_tables();
        Ok(t.feedback.values().filter(|f| f.tenant_id == tenant).take(limit).cloned().collect())
    }

    async fn add_guard_stats(&self, counts: &[(GuardStatsKey, i64)]) -> Result<()> {
        if counts.iter().any(|(k, _)| !self.tenant_exists(k.tenant_id)) {
            return Err(conflict("tenant does not exist"));
        }
        let mut t = self.guard_tables();
        for (key, count) in counts {
            *t.stats.entry(*key).or_default() += count;
        }
        Ok(())
    }

    async fn guard_stats(&self, tenant: TenantId, from_hour: i64) -> Result<Vec<(GuardStatsKey, i64)>> {
        let t = self.guard_tables();
        let mut totals: BTreeMap<(i64, GuardLabel, i16), i64> = BTreeMap::new();
        for (key, count) in t.stats.iter().filter(|(k, _)| k.tenant_id == tenant && k.hour >= from_hour) {
            *totals.entry((key.hour, key.verdict, key.bucket)).or_default() += count;
        }
        Ok(totals
            .into_iter()
            .map(|((hour, verdict, bucket), count)| (GuardStatsKey { tenant_id: tenant, hour, verdict, bucket }, count))
            .collect())
    }
}
