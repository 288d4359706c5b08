//! Translation of diesel and pool errors into the domain's error kinds.

use agentgov_domain::DomainError;
use diesel::result::{DatabaseErrorKind, Error as DieselError};

/// The name the domain sees for this backing service in `Unavailable`.
pub(crate) const SERVICE: &str = "database";

pub(crate) fn unavailable() -> DomainError {
    DomainError::Unavailable(SERVICE.into())
}

/// A query failed: unique and foreign-key violations are conflicts (the record exists, or
/// the one it belongs to does not), a lost connection is `Unavailable`, anything else is a
/// bug or an unexpected state (`Internal`).
pub(crate) fn db(err: DieselError) -> DomainError {
    match err {
        // The server ended the session while the query ran (a fast shutdown, a crash,
        // `pg_terminate_backend`). Postgres sends these as errors with a SQLSTATE of their
        // own (57P01…), which diesel-async reports as `Unknown` without the code, so the
        // message is all there is to tell them by.
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info) if ends_the_session(info.message()) => {
            tracing::warn!(error = info.message(), "database connection ended by the server");
            unavailable()
        }
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            DomainError::Conflict(conflict_message(info.constraint_name()).into())
        }
        DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, info) => {
            DomainError::Conflict(missing_parent_message(info.constraint_name()).into())
        }
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            info,
        ) => {
            tracing::warn!(error = info.message(), "database connection lost");
            unavailable()
        }
        DieselError::BrokenTransactionManager => unavailable(),
        other => DomainError::Internal(format!("database: {other}")),
    }
}

/// Whether `message` is one of the errors with which Postgres ends a session rather than
/// fails a statement: `terminating connection …` (administrator command, crash of another
/// server process, unexpected postmaster exit, idle timeouts) and `the database system is
/// …` (shutting down, starting up, in recovery mode). Servers whose `lc_messages` is not
/// English send them translated; those still answer `Internal` for the queries in flight.
fn ends_the_session(message: &str) -> bool {
    message.starts_with("terminating connection ") || message.starts_with("the database system is ")
}

/// Checking a connection out of the pool failed or timed out.
pub(crate) fn pool(err: impl std::fmt::Display) -> DomainError {
    tracing::warn!(error = %err, "no database connection");
    unavailable()
}

/// The error type inside a transaction: diesel's (so diesel can roll back on it) or a
/// domain decision such as "last admin".
#[derive(Debug)]
pub(crate) enum TxError {
    Db(DieselError),
    Domain(DomainError),
}

impl From<DieselError> for TxError {
    fn from(err: DieselError) -> Self {
        TxError::Db(err)
    }
}

impl From<DomainError> for TxError {
    fn from(err: DomainError) -> Self {
        TxError::Domain(err)
    }
}

impl From<TxError> for DomainError {
    fn from(err: TxError) -> Self {
        match err {
            TxError::Db(e) => db(e),
            TxError::Domain(e) => e,
        }
    }
}

/// The message of a unique violation, chosen by the constraint Postgres names.
fn conflict_message(constraint: Option<&str>) -> &'static str {
    match constraint {
        Some("tenants_name_key") => "tenant name already taken",
        Some("users_email_key") => "email already registered",
        Some("api_keys_prefix_key") => "API key prefix already in use",
        Some("tenants_pkey") => "tenant already exists",
        Some("users_pkey") => "user already exists",
        Some("api_keys_pkey") => "API key already exists",
        Some("sessions_pkey") => "session already exists",
        Some("audit_records_pkey") => "an audit record with this id exists",
        Some("jobs_pkey") => "a job with this id exists",
        Some("model_versions_pkey") => "model version already exists",
        Some("model_versions_active_key") => "another model version is active",
        Some("agents_tenant_name_key") => "agent name already taken",
        Some("agents_pkey") | Some("agent_embeddings_pkey") => "agent already exists",
        Some("policies_tenant_name_key") => "policy name already taken",
        Some("policies_pkey") => "policy already exists",
        Some("guard_feedback_pkey") => "guard feedback with this id exists",
        Some("discovery_events_pkey") => "a discovery event with this id exists",
        Some("discovery_candidates_pkey") => "a discovery candidate with this id exists",
        Some("hitl_requests_pkey") => "an approval request with this id exists",
        Some("anomaly_reports_pkey") => "an anomaly report with this id exists",
        Some("user_sso_identities_pkey") => "this SSO identity is linked to a user already",
        Some("user_sso_identities_user_key") => "the user is linked to another identity of this issuer",
        _ => "record already exists",
    }
}

/// The message of a foreign-key violation: what the new row refers to does not exist.
fn missing_parent_message(constraint: Option<&str>) -> &'static str {
    match constraint {
        Some(name) if name.ends_with("_tenant_id_fkey") => "tenant does not exist",
        Some(name) if name.ends_with("_user_id_fkey") => "user does not exist",
        Some(name) if name.ends_with("_session_id_fkey") => "session does not exist",
        Some(name) if name.ends_with("_job_id_fkey") => "export job does not exist",
        Some(name) if name.ends_with("_agent_id_fkey") => "agent does not exist",
        Some(name) if name.ends_with("_created_by_fkey") => "user does not exist",
        _ => "a referenced record does not exist",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraint_names_give_clear_messages() {
        assert_eq!(conflict_message(Some("users_email_key")), "email already registered");
        assert_eq!(conflict_message(Some("tenants_name_key")), "tenant name already taken");
        assert_eq!(conflict_message(None), "record already exists");
        assert_eq!(conflict_message(Some("model_versions_active_key")), "another model version is active");
        assert_eq!(conflict_message(Some("agents_tenant_name_key")), "agent name already taken");
        assert_eq!(missing_parent_message(Some("agents_tenant_id_fkey")), "tenant does not exist");
        assert_eq!(conflict_message(Some("policies_tenant_name_key")), "policy name already taken");
        assert_eq!(missing_parent_message(Some("policies_tenant_id_fkey")), "tenant does not exist");
        assert_eq!(missing_parent_message(Some("policies_created_by_fkey")), "user does not exist");
        assert_eq!(missing_parent_message(Some("audit_heads_tenant_id_fkey")), "tenant does not exist");
        assert_eq!(missing_parent_message(Some("guard_stats_tenant_id_fkey")), "tenant does not exist");
        assert_eq!(missing_parent_message(Some("discovery_events_tenant_id_fkey")), "tenant does not exist");
        assert_eq!(missing_parent_message(Some("jobs_tenant_id_fkey")), "tenant does not exist");
        assert_eq!(missing_parent_message(None), "a referenced record does not exist");
    }

    #[test]
    fn foreign_key_violations_are_conflicts() {
        let err = DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, Box::new("no parent".to_owned()));
        assert!(matches!(db(err), DomainError::Conflict(_)));
    }

    #[test]
    fn lost_connections_are_unavailable() {
        let err = DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, Box::new("gone".to_owned()));
        assert!(matches!(db(err), DomainError::Unavailable(s) if s == "database"));
        assert!(matches!(db(DieselError::NotFound), DomainError::Internal(_)));
    }

    #[test]
    fn sessions_the_server_ends_are_unavailable() {
        let unknown =
            |message: &str| DieselError::DatabaseError(DatabaseErrorKind::Unknown, Box::new(message.to_owned()));
        for message in [
            "terminating connection due to administrator command",
            "terminating connection because of crash of another server process",
            "terminating connection due to idle-session timeout",
            "the database system is shutting down",
            "the database system is starting up",
        ] {
            assert!(matches!(db(unknown(message)), DomainError::Unavailable(s) if s == "database"), "{message}");
        }
        // A statement's own failure stays a bug to look into.
        assert!(matches!(db(unknown("division by zero")), DomainError::Internal(_)));
        assert!(matches!(db(unknown("relation \"agents\" does not exist")), DomainError::Internal(_)));
    }
}
