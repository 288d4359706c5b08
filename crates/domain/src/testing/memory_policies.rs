//! The tenant policies of `MemoryStore`.

use std::collections::BTreeMap;
use std::sync::MutexGuard;

use async_trait::async_trait;
use uuid::Uuid;

use super::memory_store::{MemoryStore, conflict, page_of};
use crate::error::{DomainError, Result};
use crate::ids::{PolicyId, TenantId, UserId};
use crate::model::{Policy, PolicyFilter};
use crate::page::{Page, PageRequest};
use crate::ports::store::PolicyRepo;

#[derive(Debug, Default)]
pub(super) struct PolicyTables {
    policies: BTreeMap<Uuid, Policy>,
}

impl PolicyTables {
    fn name_taken(&self, policy: &Policy) -> bool {
        self.policies.values().any(|p| p.tenant_id == policy.tenant_id && p.name == policy.name && p.id != policy.id)
    }

    fn of_tenant(&self, tenant: TenantId, id: PolicyId) -> Option<&Policy> {
        self.policies.get(&id.0).filter(|p| p.tenant_id == tenant)
    }

    /// What the schemas' `ON DELETE SET NULL` does when a user is deleted.
    pub(super) fn forget_creator(&mut self, user: UserId) {
        for p in self.policies.values_mut().filter(|p| p.created_by == Some(user)) {
            p.created_by = None;
        }
    }
}

fn not_found(id: PolicyId) -> DomainError {
    DomainError::not_found("policy", id)
}

impl MemoryStore {
    pub(super) fn policy_tables(&self) -> MutexGuard<'_, PolicyTables> {
        self.policies.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl PolicyRepo for MemoryStore {
    async fn insert_policy(&self, policy: &Policy, max_per_tenant: u64) -> Result<()> {
        if !self.tenant_exists(policy.tenant_id) {
            return Err(conflict("tenant does not exist"));
        }
        // The foreign key on `created_by`.
        if let Some(user) = policy.created_by
            && !self.user_exists(user)
        {
            return Err(conflict("user does not exist"));
        }
        let mut t = self.policy_tables();
        if t.policies.contains_key(&policy.id.0) {
            return Err(conflict("policy already exists"));
        }
        if t.name_taken(policy) {
            return Err(conflict("policy name already taken"));
        }
        let held = t.policies.values().filter(|p| p.tenant_id == policy.tenant_id).count();
        if u64::try_from(held).unwrap_or(u64::MAX) >= max_per_tenant {
            return Err(conflict(crate::ports::store::POLICY_LIMIT_REACHED));
        }
        t.policies.insert(policy.id.0, policy.clone());
        Ok(())
    }

    async fn get_policy(&self, tenant: TenantId, id: PolicyId) -> Result<Option<Policy>> {
        Ok(self.policy_tables().of_tenant(tenant, id).cloned())
    }

    async fn list_policies(&self, tenant: TenantId, filter: &PolicyFilter, page: &PageRequest) -> Result<Page<Policy>> {
        let t = self.policy_tables();
        Ok(page_of(&t.policies, page, |p| p.tenant_id == tenant && filter.matches(p), |p| p.id.0))
    }

    async fn enabled_policies(&self, tenant: TenantId) -> Result<Vec<Policy>> {
        let t = self.policy_tables();
        Ok(t.policies.values().filter(|p| p.tenant_id == tenant && p.enabled).cloned().collect())
    }

    async fn update_policy(&self, policy: &Policy) -> Result<()> {
        let mut t = self.policy_tables();
        let Some(stored) = t.of_tenant(policy.tenant_id, policy.id).cloned() else {
            return Err(not_found(policy.id));
        };
        if stored.version != policy.version - 1 {
            return Err(conflict("policy was changed concurrently"));
        }
        if t.name_taken(policy) {
            return Err(conflict("policy name already taken"));
        }
        let updated = Policy { created_at: stored.created_at, created_by: stored.created_by, ..policy.clone() };
        t.policies.insert(policy.id.0, updated);
        Ok(())
    }

    async fn delete_policy(&self, tenant: TenantId, id: PolicyId) -> Result<()> {
        let mut t = self.policy_tables();
        if t.of_tenant(tenant, id).is_none() {
            return Err(not_found(id));
        }
        t.policies.remove(&id.0);
        Ok(())
    }
}
