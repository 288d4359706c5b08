//! The rows of the tables: those both stores share, expanded from
//! `agentgov_store_common::rows!` with the column types of `columns`. Postgres writes no row
//! of its own: appends and ingests go in as arrays (see `repo/audit.rs`, `repo/discovery.rs`).

pub(crate) use agentgov_store_common::rows::{body_text, vector_bytes};

agentgov_store_common::rows!();

#[cfg(test)]
mod tests {
    use agentgov_domain::DomainError;
    use agentgov_domain::model::{Agent, User};
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;

    #[test]
    fn bad_stored_agent_json_becomes_internal() {
        let row = AgentRow {
            id: Uuid::now_v7(),
            tenant_id: Uuid::now_v7(),
            name: "bot".into(),
            agent_type: "llm".into(),
            description: None,
            capabilities: vec![],
            permissions: "{}".into(),
            status: "active".into(),
            predicted_type: "llm".into(),
            risk: "low".into(),
            risk_score: 0.1,
            metadata: "[1]".into(),
            last_seen_at: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        };
        assert!(matches!(Agent::try_from(row.clone()), Err(DomainError::Internal(_))), "not an object");
        let row = AgentRow { metadata: "{".into(), ..row };
        assert!(matches!(Agent::try_from(row.clone()), Err(DomainError::Internal(_))), "not JSON");
        let row = AgentRow { metadata: "{}".into(), risk: "extreme".into(), ..row };
        assert!(matches!(Agent::try_from(row), Err(DomainError::Internal(_))), "unknown risk");
    }

    #[test]
    fn bad_stored_role_becomes_internal() {
        let row = UserRow {
            id: Uuid::now_v7(),
            tenant_id: Uuid::now_v7(),
            email: "a@example.com".into(),
            name: None,
            role: "root".into(),
            status: "active".into(),
            password_hash: None,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
            last_login_at: None,
        };
        assert!(matches!(User::try_from(row), Err(DomainError::Internal(_))));
    }
}
