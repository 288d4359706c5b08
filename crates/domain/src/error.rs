//! The domain's error type. Every port and service answers with it; `api` maps each kind
//! to an HTTP status by an exhaustive match.

use std::time::Duration;

/// One invalid field of a request, as reported in a 422 body.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldError {
    /// Path of the field, e.g. `email` or `permissions[2]`.
    pub field: String,
    pub message: String,
    /// Where in the field's text the error is, 1-based (Rego compile errors).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into(), line: None, column: None }
    }

    /// An error at a position of the field's text.
    pub fn at(field: impl Into<String>, line: u32, column: u32, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into(), line: Some(line), column: Some(column) }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum DomainError {
    /// The record does not exist, or belongs to another tenant (never said which).
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    /// The request conflicts with the current state (duplicate, last admin, ...).
    #[error("{0}")]
    Conflict(String),
    /// The request is well formed but some fields are invalid.
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    /// Well formed but not an operation the service can take.
    #[error("{0}")]
    BadRequest(String),
    /// Missing, invalid, expired or revoked credentials.
    #[error("{0}")]
    Unauthorized(String),
    /// Authenticated but not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// Too many attempts; retry after the given delay.
    #[error("too many requests")]
    RateLimited { retry_after: Duration },
    /// The tenant holds as many of something as its share allows (queued exports, open
    /// callbacks, sockets, long-polls); the message names the limit and its setting. 429,
    /// retried after the given delay.
    #[error("{message}")]
    QuotaExceeded { message: String, retry_after: Duration },
    /// A backing service (database, cache, bus) is unreachable.
    #[error("{0} is unavailable")]
    Unavailable(String),
    /// A bug or an unexpected failure; the message is logged, never shown to clients.
    #[error("internal error: {0}")]
    Internal(String),
}

impl DomainError {
    pub fn not_found(what: &'static str, id: impl ToString) -> Self {
        Self::NotFound { what, id: id.to_string() }
    }

    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Validation(vec![FieldError::new(field, message)])
    }

    /// 429 for a tenant at its share of `what`: `message` says which limit and its setting.
    pub fn quota(message: impl Into<String>, retry_after: Duration) -> Self {
        Self::QuotaExceeded { message: message.into(), retry_after }
    }

    pub fn internal(err: impl std::fmt::Display) -> Self {
        Self::Internal(err.to_string())
    }
}

pub type Result<T, E = DomainError> = std::result::Result<T, E>;

/// Collects field errors and turns them into one `Validation` error.
#[derive(Debug, Default)]
pub struct Violations(Vec<FieldError>);

impl Violations {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    pub fn check(&mut self, ok: bool, field: &str, message: &str) {
        if !ok {
            self.add(field, message);
        }
    }

    /// Adds the field errors of a validation error, so every bad field is reported at once;
    /// any other error is handed back.
    pub fn absorb(&mut self, e: DomainError) -> Result<()> {
        match e {
            DomainError::Validation(errors) => {
                self.0.extend(errors);
                Ok(())
            }
            other => Err(other),
        }
    }

    pub fn into_result(self) -> Result<()> {
        if self.0.is_empty() { Ok(()) } else { Err(DomainError::Validation(self.0)) }
    }
}
