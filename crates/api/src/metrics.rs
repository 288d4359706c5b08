//! Prometheus metrics: request counts and latency by route and status, served at `/metrics`.
//!
//! Every label takes values from a fixed set, so no request can add series: the method is
//! one of the standard ones or `OTHER`, the route is a registered pattern or `unmatched`,
//! the status is one of the codes the service answers or its class (`5xx`).

use std::sync::OnceLock;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::AppState;
use crate::problem::{ApiError, BEARER_CHALLENGE};

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// How often histogram samples are folded into their buckets.
const UPKEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// The process-wide recorder, installed on first use (several servers in one test process
/// share it). A thread folds recorded samples into the histograms every few seconds:
/// without it they pile up until `/metrics` is scraped, which grew memory with every request.
pub fn handle() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Full("http_request_duration_seconds".into()), &buckets)
                .ok()?
                .build_recorder();
            let handle = recorder.handle();
            metrics::set_global_recorder(recorder).ok()?;
            describe();
            let upkeep = handle.clone();
            std::thread::Builder::new()
                .name("metrics-upkeep".into())
                .spawn(move || {
                    loop {
                        std::thread::sleep(UPKEEP_EVERY);
                        upkeep.run_upkeep();
                    }
                })
                .ok()?;
            Some(handle)
        })
        .as_ref()
}

/// Middleware: counts and times every request under its route pattern (never the raw path,
/// which would explode cardinality with ids), and returns the request id as `X-Request-Id`
/// (unless the handler set it: the AuthZEN endpoints echo the caller's).
pub async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let start = Instant::now();
    let method = method_label(req.method());
    let mut res = next.call(req).await?;
    let request_id = res.request().extensions().get::<tracing_actix_web::RequestId>().map(|id| id.to_string());
    if let Some(id) = request_id.and_then(|id| actix_web::http::header::HeaderValue::from_str(&id).ok()) {
        let name = actix_web::http::header::HeaderName::from_static("x-request-id");
        if !res.headers().contains_key(&name) {
            res.headers_mut().insert(name, id);
        }
    }
    let route = res.request().match_pattern().unwrap_or_else(|| "unmatched".to_owned());
    let status = status_label(res.status());
    let labels = [("method", method.to_owned()), ("route", route), ("status", status)];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels).record(start.elapsed().as_secs_f64());
    Ok(res)
}

/// The method as a label: a standard method by name, any other (a client may send any token
/// as a method) as `OTHER`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// The status as a label: the codes the service answers by number, anything else by its
/// class (`1xx` … `5xx`).
fn status_label(status: StatusCode) -> String {
    const KNOWN: &[u16] = &[
        101, 200, 201, 202, 204, 206, 301, 302, 304, 307, 308, 400, 401, 403, 404, 405, 406, 408, 409, 410, 411, 412,
        413, 414, 415, 416, 422, 426, 429, 431, 500, 501, 502, 503, 504, 505,
    ];
    let code = status.as_u16();
    if KNOWN.contains(&code) { code.to_string() } else { format!("{}xx", code / 100) }
}

/// The operator's token guarding `/metrics` (`AGENTGOV_METRICS_TOKEN`); unset, the page is
/// open. Never printed.
#[derive(Clone, Default)]
pub struct MetricsToken(Option<std::sync::Arc<[u8]>>);

impl MetricsToken {
    pub fn new(token: Option<&str>) -> Self {
        Self(token.filter(|t| !t.is_empty()).map(|t| t.as_bytes().into()))
    }

    /// Whether `req` may read `/metrics`: no token configured, or `Authorization: Bearer`
    /// with it (compared in constant time).
    fn admits(&self, req: &HttpRequest) -> Result<(), ApiError> {
        let Some(expected) = &self.0 else { return Ok(()) };
        let given = req
            .headers()
            .get(actix_web::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        match given {
            Some(given) if agentgov_domain::secrets::secrets_equal(expected, given.as_bytes()) => Ok(()),
            Some(_) => Err(ApiError::unauthorized("invalid metrics token", BEARER_CHALLENGE)),
            None => Err(ApiError::unauthorized("/metrics needs the operator's metrics token", BEARER_CHALLENGE)),
        }
    }
}

impl std::fmt::Debug for MetricsToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "MetricsToken(****)" } else { "MetricsToken(unset)" })
    }
}

/// The help text of the metrics recorded outside the request middleware.
fn describe() {
    metrics::describe_gauge!(
        "agentgov_siem_queue_depth",
        "Audit records a SIEM sink has not examined yet, over every tenant"
    );
    metrics::describe_counter!("agentgov_siem_forwarded_total", "Audit records a SIEM sink has delivered");
    metrics::describe_counter!(
        "agentgov_siem_failed_total",
        "Audit records in delivery attempts to a SIEM sink that failed (a record retried three times counts three)"
    );
    metrics::describe_gauge!(
        "agentgov_siem_last_success_timestamp_seconds",
        "When a SIEM sink last took a batch, in Unix seconds"
    );
}

/// `GET /metrics` in the Prometheus text format; with `AGENTGOV_METRICS_TOKEN` set, only for
/// `Authorization: Bearer <token>` (401 otherwise).
pub async fn render(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let token = req.app_data::<crate::HttpSettings>().map(|h| &h.metrics_token);
    token.map_or(Ok(()), |t| t.admits(&req))?;
    record_siem(&state).await;
    let body = handle().map(PrometheusHandle::render).unwrap_or_default();
    Ok(HttpResponse::Ok().content_type("text/plain; version=0.0.4").body(body))
}

/// Each SIEM sink's figures, read from the store as `GET /siem/status` reads them (so every
/// replica reports the same), labelled by the sink's name only: no destination. If the store
/// cannot answer, the last figures stand and the rest of the page is served.
async fn record_siem(state: &AppState) {
    let states = match state.services.siem.states().await {
        Ok(states) => states,
        Err(e) => return tracing::warn!(error = %e, "cannot read the SIEM sinks' figures for /metrics"),
    };
    for (name, s) in states {
        let sink = [("sink", name.to_owned())];
        metrics::gauge!("agentgov_siem_queue_depth", &sink).set(s.queue_depth as f64);
        metrics::counter!("agentgov_siem_forwarded_total", &sink).absolute(s.forwarded);
        metrics::counter!("agentgov_siem_failed_total", &sink).absolute(s.failed);
        if let Some(at) = s.last_success_at {
            let seconds = at.unix_timestamp_nanos() as f64 / 1e9;
            metrics::gauge!("agentgov_siem_last_success_timestamp_seconds", &sink).set(seconds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_fixed_sets() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::OPTIONS), "OPTIONS");
        assert_eq!(method_label(&Method::from_bytes(b"MADEUP123").unwrap()), "OTHER");
        assert_eq!(method_label(&Method::CONNECT), "OTHER");
        assert_eq!(status_label(StatusCode::TOO_MANY_REQUESTS), "429");
        assert_eq!(status_label(StatusCode::from_u16(599).unwrap()), "5xx");
        assert_eq!(status_label(StatusCode::IM_A_TEAPOT), "4xx");
    }

    #[test]
    fn the_token_is_never_printed() {
        assert_eq!(format!("{:?}", MetricsToken::new(Some("s3cret-metrics-token"))), "MetricsToken(****)");
        assert_eq!(format!("{:?}", MetricsToken::new(None)), "MetricsToken(unset)");
    }
}
