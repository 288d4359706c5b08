//! Prometheus metrics: request counts and latency by route and status, served at `/metrics`.

use std::sync::OnceLock;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpResponse, web};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::AppState;

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
/// which would explode cardinality with ids), and returns the request id as `X-Request-Id`.
pub async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let start = Instant::now();
    let method = req.method().to_string();
    let mut res = next.call(req).await?;
    let request_id = res.request().extensions().get::<tracing_actix_web::RequestId>().map(|id| id.to_string());
    if let Some(id) = request_id.and_then(|id| actix_web::http::header::HeaderValue::from_str(&id).ok()) {
        res.headers_mut().insert(actix_web::http::header::HeaderName::from_static("x-request-id"), id);
    }
    let route = res.request().match_pattern().unwrap_or_else(|| "unmatched".to_owned());
    let status = res.status().as_u16().to_string();
    let labels = [("method", method), ("route", route), ("status", status)];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels).record(start.elapsed().as_secs_f64());
    Ok(res)
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

/// `GET /metrics` in the Prometheus text format.
pub async fn render(state: web::Data<AppState>) -> HttpResponse {
    record_siem(&state).await;
    let body = handle().map(PrometheusHandle::render).unwrap_or_default();
    HttpResponse::Ok().content_type("text/plain; version=0.0.4").body(body)
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
