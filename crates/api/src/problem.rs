//! RFC 9457 problem details: every error this API answers is `application/problem+json`.

use std::borrow::Cow;

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::ServiceResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::ErrorHandlerResponse;
use actix_web::{HttpResponse, ResponseError};
use agentgov_domain::{DomainError, FieldError};

pub const PROBLEM_JSON: &str = "application/problem+json";

/// The body of every error response.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct Problem {
    /// A URN naming the kind of problem, e.g. `urn:agentgov:problem:not-found`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The HTTP status phrase.
    pub title: String,
    pub status: u16,
    /// What went wrong, for a person.
    pub detail: String,
    /// The invalid fields (422 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldError>>,
    /// Extra facts some problems carry (e.g. the readiness components of a 503).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub components: Option<serde_json::Value>,
}

/// An error on its way to becoming a problem+json response.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub detail: Cow<'static, str>,
    pub errors: Option<Vec<FieldError>>,
    pub retry_after: Option<u64>,
    pub www_authenticate: Option<&'static str>,
    pub components: Option<serde_json::Value>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, detail: impl Into<Cow<'static, str>>) -> Self {
        Self {
            status,
            detail: detail.into(),
            errors: None,
            retry_after: None,
            www_authenticate: None,
            components: None,
        }
    }

    pub fn bad_request(detail: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, detail)
    }

    pub fn unprocessable(field: impl Into<String>, message: impl Into<String>) -> Self {
        let mut e = Self::new(StatusCode::UNPROCESSABLE_ENTITY, "the request has invalid fields");
        e.errors = Some(vec![FieldError::new(field, message)]);
        e
    }

    pub fn unauthorized(detail: impl Into<Cow<'static, str>>, challenge: &'static str) -> Self {
        let mut e = Self::new(StatusCode::UNAUTHORIZED, detail);
        e.www_authenticate = Some(challenge);
        e
    }

    pub fn problem(&self) -> Problem {
        Problem {
            kind: format!("urn:agentgov:problem:{}", slug(self.status)),
            title: self.status.canonical_reason().unwrap_or("Error").to_owned(),
            status: self.status.as_u16(),
            detail: self.detail.to_string(),
            errors: self.errors.clone(),
            components: self.components.clone(),
        }
    }
}

fn slug(status: StatusCode) -> String {
    status.canonical_reason().unwrap_or("error").to_ascii_lowercase().replace([' ', '\''], "-")
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.status, self.detail)
    }
}

pub const BEARER_CHALLENGE: &str = "Bearer realm=\"agentgov\"";

impl From<DomainError> for ApiError {
    fn from(err: DomainError) -> Self {
        match err {
            DomainError::NotFound { .. } => Self::new(StatusCode::NOT_FOUND, err.to_string()),
            DomainError::Conflict(m) => Self::new(StatusCode::CONFLICT, m),
            DomainError::Validation(errors) => {
                let mut e = Self::new(StatusCode::UNPROCESSABLE_ENTITY, "the request has invalid fields");
                e.errors = Some(errors);
                e
            }
            DomainError::BadRequest(m) => Self::new(StatusCode::BAD_REQUEST, m),
            DomainError::Unauthorized(m) => Self::unauthorized(m, BEARER_CHALLENGE),
            DomainError::Forbidden(m) => Self::new(StatusCode::FORBIDDEN, m),
            DomainError::RateLimited { retry_after } => {
                let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, "too many attempts; try again later");
                e.retry_after = Some(retry_after.as_secs().max(1));
                e
            }
            DomainError::QuotaExceeded { message, retry_after } => {
                let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, message);
                e.retry_after = Some(retry_after.as_secs().max(1));
                e
            }
            DomainError::Unavailable(what) => {
                tracing::warn!(component = %what, "backing service unavailable");
                Self::new(StatusCode::SERVICE_UNAVAILABLE, format!("{what} is unavailable; try again shortly"))
            }
            DomainError::Internal(m) => {
                tracing::error!(error = %m, "internal error");
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
            }
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut res = HttpResponse::build(self.status);
        res.insert_header((header::CONTENT_TYPE, PROBLEM_JSON));
        if let Some(secs) = self.retry_after {
            res.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        if let Some(challenge) = self.www_authenticate {
            res.insert_header((header::WWW_AUTHENTICATE, challenge));
        }
        res.body(serde_json::to_vec(&self.problem()).unwrap_or_default())
    }
}

/// Turns any error response that is not already problem+json (actix's own 404, 405, 413,
/// extractor errors) into one, keeping its status.
pub fn render_plain_errors<B: MessageBody + 'static>(
    res: ServiceResponse<B>,
) -> actix_web::Result<ErrorHandlerResponse<B>> {
    let is_problem = res
        .response()
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
    if is_problem {
        return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
    }
    let status = res.status();
    let detail: Cow<'static, str> = match status {
        StatusCode::NOT_FOUND => "no such route; see /docs for the API".into(),
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed on this route".into(),
        StatusCode::PAYLOAD_TOO_LARGE => "request body too large".into(),
        s => s.canonical_reason().unwrap_or("error").to_ascii_lowercase().into(),
    };
    let (req, old) = res.into_parts();
    let mut new = ApiError::new(status, detail).error_response();
    for (name, value) in old.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            new.headers_mut().insert(name.clone(), value.clone());
        }
    }
    new.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    let res: ServiceResponse<EitherBody<B, BoxBody>> = ServiceResponse::new(req, new).map_into_right_body();
    Ok(ErrorHandlerResponse::Response(res))
}
