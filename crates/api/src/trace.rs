//! The request span: tracing-actix-web's fields, but with credentials in the query string
//! (the WebSocket feed's `?token=<JWT>`) redacted, so no log line carries a secret.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::{Error, HttpMessage};
use tracing::Span;
use tracing_actix_web::{DefaultRootSpanBuilder, RequestId, RootSpanBuilder};

/// Query parameters whose values are never logged.
const SECRET_PARAMS: [&str; 4] = ["token", "access_token", "api_key", "key"];

pub struct RedactedRootSpan;

impl RootSpanBuilder for RedactedRootSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let route = request.match_pattern().unwrap_or_else(|| "default".into());
        let user_agent = request.headers().get("User-Agent").and_then(|h| h.to_str().ok()).unwrap_or("");
        let request_id = request.extensions().get::<RequestId>().map(ToString::to_string).unwrap_or_default();
        let client_ip = request.connection_info().realip_remote_addr().unwrap_or("").to_owned();
        tracing::info_span!(
            "HTTP request",
            http.method = %request.method(),
            http.route = %route,
            http.client_ip = %client_ip,
            http.user_agent = %user_agent,
            http.target = %redacted_target(request.path(), request.query_string()),
            http.status_code = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            request_id = %request_id,
            exception.message = tracing::field::Empty,
            exception.details = tracing::field::Empty,
        )
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}

/// `path?query` with the values of [`SECRET_PARAMS`] replaced by `****`.
fn redacted_target(path: &str, query: &str) -> String {
    if query.is_empty() {
        return path.to_owned();
    }
    let query: Vec<String> = query
        .split('&')
        .map(|pair| {
            let name = pair.split('=').next().unwrap_or("");
            if SECRET_PARAMS.iter().any(|s| name.eq_ignore_ascii_case(s)) {
                format!("{name}=****")
            } else {
                pair.to_owned()
            }
        })
        .collect();
    format!("{path}?{}", query.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_the_query_are_redacted() {
        assert_eq!(redacted_target("/api/v1/ws", ""), "/api/v1/ws");
        assert_eq!(redacted_target("/api/v1/ws", "token=eyJ.a.b"), "/api/v1/ws?token=****");
        assert_eq!(redacted_target("/x", "limit=5&Token=abc&cursor=c"), "/x?limit=5&Token=****&cursor=c");
        assert_eq!(redacted_target("/x", "tokens=keep"), "/x?tokens=keep");
    }
}
