//! Login sessions and their keys.

use agentgov_domain::ids::{SessionId, TenantId, UserId};
use agentgov_domain::model::{ApiKey, Session};
use agentgov_domain::ports::store::SessionRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use time::OffsetDateTime;

use super::accounts::revoke_sessions;
use crate::SqliteStore;
use crate::columns::Id;
use crate::rows::{ApiKeyRow, SessionRow, id_text};
use crate::schema::{api_keys, sessions, users};

#[async_trait]
impl SessionRepo for SqliteStore {
    async fn insert_session(&self, session: &Session, key: Option<&ApiKey>) -> Result<()> {
        let session = SessionRow::from(session);
        let key = key.map(ApiKeyRow::from);
        self.transaction(move |c| {
            diesel::insert_into(sessions::table).values(&session).execute(c)?;
            diesel::update(users::table.find(&session.user_id))
                .set(users::last_login_at.eq(session.created_at))
                .execute(c)?;
            if let Some(key) = key {
                diesel::insert_into(api_keys::table).values(&key).execute(c)?;
            }
            Ok(())
        })
        .await
    }

    async fn get_session(&self, tenant: TenantId, id: SessionId) -> Result<Option<Session>> {
        let (tenant, id) = (id_text(tenant.0), id_text(id.0));
        self.read(move |c| {
            let row = sessions::table
                .filter(sessions::id.eq(id))
                .filter(sessions::tenant_id.eq(tenant))
                .select(SessionRow::as_select())
                .first(c)
                .optional()?;
            Ok(row.map(Session::from))
        })
        .await
    }

    async fn revoke_session(&self, tenant: TenantId, id: SessionId, at: OffsetDateTime) -> Result<()> {
        self.transaction(move |c| {
            let target = Id(id.as_uuid());
            let live: i64 = sessions::table
                .filter(sessions::id.eq(target))
                .filter(sessions::tenant_id.eq(id_text(tenant.0)))
                .filter(sessions::revoked_at.is_null())
                .count()
                .get_result(c)?;
            if live == 0 {
                return Err(DomainError::not_found("session", id).into());
            }
            revoke_sessions(c, &[target], at)
        })
        .await
    }

    async fn revoke_user_sessions(
        &self,
        tenant: TenantId,
        user: UserId,
        keep: Option<SessionId>,
        at: OffsetDateTime,
    ) -> Result<Vec<SessionId>> {
        let (tenant, user, keep) = (id_text(tenant.0), id_text(user.0), keep.map(|k| Id(k.as_uuid())));
        self.transaction(move |c| {
            let candidates: Vec<(Id, OffsetDateTime)> = sessions::table
                .filter(sessions::tenant_id.eq(tenant))
                .filter(sessions::user_id.eq(user))
                .filter(sessions::revoked_at.is_null())
                .select((sessions::id, sessions::expires_at))
                .order(sessions::id.desc())
                .load(c)?;
            // Expiry is compared here, not in SQL: stored timestamps are text of varying width.
            let ids: Vec<Id> = candidates
                .into_iter()
                .filter(|(id, expires_at)| *expires_at > at && keep.as_ref() != Some(id))
                .map(|(id, _)| id)
                .collect();
            revoke_sessions(c, &ids, at)?;
            Ok(ids.into_iter().map(|id| SessionId(id.0)).collect())
        })
        .await
    }
}
