//! Translation of diesel's errors into the domain's, where they occur.

use agentgov_domain::DomainError;
use diesel::result::{DatabaseErrorKind, Error as DieselError};

/// What a blocking database task fails with: a driver error not yet translated, or a
/// domain error decided inside a transaction (which rolls it back either way).
#[derive(Debug)]
pub(crate) enum TxError {
    Db(DieselError),
    Domain(DomainError),
}

impl From<DieselError> for TxError {
    fn from(e: DieselError) -> Self {
        TxError::Db(e)
    }
}

impl From<DomainError> for TxError {
    fn from(e: DomainError) -> Self {
        TxError::Domain(e)
    }
}

impl From<TxError> for DomainError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Db(e) => from_diesel(e),
            TxError::Domain(e) => e,
        }
    }
}

pub(crate) type TxResult<T> = Result<T, TxError>;

pub(crate) fn unavailable(err: impl std::fmt::Display) -> DomainError {
    tracing::warn!(error = %err, "sqlite is unavailable");
    DomainError::Unavailable("database".into())
}

pub(crate) fn from_diesel(e: DieselError) -> DomainError {
    match e {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            DomainError::Conflict(unique_violation_message(info.message()).into())
        }
        DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _) => {
            DomainError::Conflict("a record it refers to does not exist".into())
        }
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            info,
        ) => unavailable(info.message()),
        DieselError::DatabaseError(_, ref info) if is_unavailable(info.message()) => unavailable(&e),
        other => DomainError::Internal(format!("sqlite: {other}")),
    }
}

/// SQLite reports `UNIQUE constraint failed: table.column` (`table.a, table.b` for a
/// constraint on several columns).
fn unique_violation_message(message: &str) -> &'static str {
    let column = message.rsplit(": ").next().unwrap_or_default();
    match column {
        "tenants.name" => "tenant name already taken",
        "users.email" => "email already registered",
        "api_keys.prefix" => "api key prefix already taken",
        "tenants.id" => "tenant id already exists",
        "users.id" => "user id already exists",
        "api_keys.id" => "api key id already exists",
        "sessions.id" => "session id already exists",
        "audit_records.id" => "an audit record with this id exists",
        "jobs.id" => "a job with this id exists",
        "model_versions.tenant_id, model_versions.kind, model_versions.version" => "model version already exists",
        "model_versions.tenant_id, model_versions.kind" => "another model version is active",
        "agents.tenant_id, agents.name" => "agent name already taken",
        "agents.id" => "agent id already exists",
        "policies.tenant_id, policies.name" => "policy name already taken",
        "policies.id" => "policy already exists",
        "guard_feedback.id" => "guard feedback with this id exists",
        "discovery_events.id" => "a discovery event with this id exists",
        "discovery_candidates.id" => "a discovery candidate with this id exists",
        "hitl_requests.id" => "an approval request with this id exists",
        "user_sso_identities.tenant_id, user_sso_identities.issuer, user_sso_identities.subject" => {
            "this SSO identity is linked to a user already"
        }
        "user_sso_identities.user_id, user_sso_identities.issuer" => {
            "the user is linked to another identity of this issuer"
        }
        "anomaly_reports.id" => "an anomaly report with this id exists",
        _ => "record already exists",
    }
}

/// Errors that say the database cannot be reached or written, not that the query is wrong.
fn is_unavailable(message: &str) -> bool {
    const SIGNS: [&str; 7] = [
        "database is locked",
        "database table is locked",
        "disk I/O error",
        "unable to open database",
        "database or disk is full",
        "readonly database",
        "no such file",
    ];
    SIGNS.iter().any(|s| message.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_violations_name_what_is_taken() {
        assert_eq!(unique_violation_message("UNIQUE constraint failed: users.email"), "email already registered");
        assert_eq!(unique_violation_message("UNIQUE constraint failed: tenants.name"), "tenant name already taken");
        assert_eq!(
            unique_violation_message("UNIQUE constraint failed: audit_records.id"),
            "an audit record with this id exists"
        );
        assert_eq!(
            unique_violation_message("UNIQUE constraint failed: agents.tenant_id, agents.name"),
            "agent name already taken"
        );
        assert_eq!(
            unique_violation_message("UNIQUE constraint failed: policies.tenant_id, policies.name"),
            "policy name already taken"
        );
        assert_eq!(unique_violation_message("something else"), "record already exists");
    }
}
