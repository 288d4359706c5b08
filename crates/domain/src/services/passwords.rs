//! Argon2 off the request threads (issue 32, point 2): every password hash and check runs on
//! the hashing pool, a few at a time in all and at most half of them for one tenant, so a
//! flood of sign-ins costs its own share of that pool, never the threads that answer
//! everyone's requests. Sign-ins for an e-mail that names no user share the nil tenant's
//! share, so unauthenticated floods cannot take the whole pool either.

use std::sync::Arc;
use std::time::Duration;

use crate::error::{DomainError, Result};
use crate::ids::TenantId;
use crate::ports::{Offload, OffloadError};
use crate::secrets::PasswordHasher;

/// Longest a hash or check may wait for and use a pool thread (Argon2 at its defaults takes
/// tens of milliseconds; the rest is queueing).
pub const HASH_BUDGET: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub struct Passwords {
    hasher: PasswordHasher,
    pool: Arc<dyn Offload>,
}

impl std::fmt::Debug for Passwords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Passwords").finish_non_exhaustive()
    }
}

/// 429 for a full queue, 503 past the budget: the request can be tried again shortly.
fn offload_failed(e: OffloadError) -> DomainError {
    match e {
        OffloadError::Busy => DomainError::RateLimited { retry_after: Duration::from_secs(1) },
        OffloadError::TimedOut => DomainError::Unavailable("password hashing is overloaded; try again shortly".into()),
        OffloadError::Panicked => DomainError::internal("password hashing failed"),
    }
}

impl Passwords {
    pub fn new(hasher: PasswordHasher, pool: Arc<dyn Offload>) -> Self {
        Self { hasher, pool }
    }

    /// The PHC string of `password`, computed on the pool as `tenant`'s job.
    pub async fn hash(&self, tenant: TenantId, password: &str) -> Result<String> {
        let (hasher, password) = (self.hasher.clone(), password.to_owned());
        self.pool.call(tenant, HASH_BUDGET, move || hasher.hash(&password)).await.map_err(offload_failed)?
    }

    /// Whether `password` matches `stored` ([`PasswordHasher::verify`]), on the pool.
    /// `tenant` is the user's, or `None` for an e-mail that names nobody.
    pub async fn verify(&self, tenant: Option<TenantId>, password: &str, stored: Option<&str>) -> Result<bool> {
        let (hasher, password, stored) = (self.hasher.clone(), password.to_owned(), stored.map(str::to_owned));
        let tenant = tenant.unwrap_or(TenantId(uuid::Uuid::nil()));
        self.pool
            .call(tenant, HASH_BUDGET, move || hasher.verify(&password, stored.as_deref()))
            .await
            .map_err(offload_failed)
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::testing::RecordingOffload;

    #[tokio::test]
    async fn hashes_and_checks_run_on_the_pool_as_their_tenants_jobs() {
        let pool = Arc::new(RecordingOffload::new(HASH_BUDGET));
        let passwords = Passwords::new(PasswordHasher::new(256, 1).unwrap(), pool.clone());
        let tenant = TenantId(uuid::Uuid::now_v7());
        let hash = passwords.hash(tenant, "correct horse battery staple").await.unwrap();
        assert!(passwords.verify(Some(tenant), "correct horse battery staple", Some(&hash)).await.unwrap());
        assert!(!passwords.verify(Some(tenant), "wrong", Some(&hash)).await.unwrap());
        // An e-mail that names nobody: the nil tenant's share, and never a match.
        assert!(!passwords.verify(None, "anything", None).await.unwrap());
        let nil = TenantId(uuid::Uuid::nil());
        assert_eq!(pool.tenants(), [tenant, tenant, tenant, nil]);

        // A full pool is a 429 to try again, never a hash computed on the caller's thread.
        pool.fill();
        assert!(matches!(passwords.hash(tenant, "x").await, Err(DomainError::RateLimited { .. })));
        assert!(matches!(passwords.verify(None, "x", None).await, Err(DomainError::RateLimited { .. })));
    }
}
