use agentgov_domain::ids::{SessionId, TenantId, UserId};
use agentgov_domain::model::{ApiKey, Session};
use agentgov_domain::ports::SessionRepo;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{self, TxError};
use crate::rows::{ApiKeyRow, SessionRow};
use crate::schema::{api_keys, sessions, users};
use crate::store::PgStore;

#[async_trait]
impl SessionRepo for PgStore {
    async fn insert_session(&self, session: &Session, key: Option<&ApiKey>) -> Result<()> {
        let session = SessionRow::from(session);
        let key = key.map(ApiKeyRow::from);
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            diesel::insert_into(sessions::table).values(&session).execute(conn).await?;
            diesel::update(users::table.find(session.user_id))
                .set(users::last_login_at.eq(session.created_at))
                .execute(conn)
                .await?;
            if let Some(key) = &key {
                diesel::insert_into(api_keys::table).values(key).execute(conn).await?;
            }
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn get_session(&self, tenant: TenantId, id: SessionId) -> Result<Option<Session>> {
        let mut conn = self.conn().await?;
        let row = sessions::table
            .filter(sessions::id.eq(id.as_uuid()))
            .filter(sessions::tenant_id.eq(tenant.as_uuid()))
            .select(SessionRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(error::db)?;
        Ok(row.map(Session::from))
    }

    async fn revoke_session(&self, tenant: TenantId, id: SessionId, at: OffsetDateTime) -> Result<()> {
        let (tenant, sid) = (tenant.as_uuid(), id.as_uuid());
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction(async |conn| -> Result<(), TxError> {
            let revoked = diesel::update(
                sessions::table
                    .filter(sessions::id.eq(sid))
                    .filter(sessions::tenant_id.eq(tenant))
                    .filter(sessions::revoked_at.is_null()),
            )
            .set(sessions::revoked_at.eq(at))
            .execute(conn)
            .await?;
            if revoked == 0 {
                return Err(TxError::Domain(DomainError::not_found("session", id)));
            }
            revoke_keys_of(conn, tenant, &[sid], at).await?;
            Ok(())
        })
        .await
        .map_err(DomainError::from)
    }

    async fn revoke_user_sessions(
        &self,
        tenant: TenantId,
        user: UserId,
        keep: Option<SessionId>,
        at: OffsetDateTime,
    ) -> Result<Vec<SessionId>> {
        let (tenant, user) = (tenant.as_uuid(), user.as_uuid());
        let keep: Vec<Uuid> = keep.map(|s| s.as_uuid()).into_iter().collect();
        let mut conn = self.tx_conn().await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        let mut ids = conn
            .transaction(async |conn| -> Result<Vec<Uuid>, TxError> {
                // Live as in `Session::is_live_at(at)`: not revoked and not yet expired.
                let ids: Vec<Uuid> = diesel::update(
                    sessions::table
                        .filter(sessions::tenant_id.eq(tenant))
                        .filter(sessions::user_id.eq(user))
                        .filter(sessions::revoked_at.is_null())
                        .filter(sessions::expires_at.gt(at))
                        .filter(sessions::id.ne_all(&keep)),
                )
                .set(sessions::revoked_at.eq(at))
                .returning(sessions::id)
                .get_results(conn)
                .await?;
                revoke_keys_of(conn, tenant, &ids, at).await?;
                Ok(ids)
            })
            .await
            .map_err(DomainError::from)?;
        ids.sort_unstable_by(|a, b| b.cmp(a));
        Ok(ids.into_iter().map(SessionId::from).collect())
    }
}

/// Revokes the live API keys bound to these sessions.
async fn revoke_keys_of(
    conn: &mut AsyncPgConnection,
    tenant: Uuid,
    sessions: &[Uuid],
    at: OffsetDateTime,
) -> QueryResult<usize> {
    if sessions.is_empty() {
        return Ok(0);
    }
    diesel::update(
        api_keys::table
            .filter(api_keys::tenant_id.eq(tenant))
            .filter(api_keys::session_id.eq_any(sessions))
            .filter(api_keys::revoked_at.is_null()),
    )
    .set(api_keys::revoked_at.eq(at))
    .execute(conn)
    .await
}
