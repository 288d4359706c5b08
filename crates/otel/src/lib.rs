//! The `Telemetry` port on OpenTelemetry: each guardrail run (a policy decision, a Prompt
//! Guard screening) becomes one span named `run_guardrail {component}`, of kind internal,
//! with the attributes of the GenAI guardrail conventions (`attributes`), a child of the
//! caller's span when the request carried a `traceparent`, exported over OTLP (gRPC or
//! HTTP/protobuf) in batches.
//!
//! Ended spans wait in the SDK's bounded queue (`OTEL_BSP_MAX_QUEUE_SIZE`, 2,048 by default),
//! which its own thread sends in batches when one is full or every `OTEL_BSP_SCHEDULE_DELAY`;
//! the transports run on a small Tokio runtime of the adapter's (one thread), since the HTTP
//! workers' runtimes are not theirs to borrow. When the collector is slow or down, the newest
//! spans are dropped, never the decision, and the SDK logs how many.
//!
//! No text a client sent leaves the process: the judged input is exported only as
//! `hmac-sha256:<hex>` under a key of the deployment's, over the tenant's id and the input,
//! so the same input is the same hash within one tenant and unrelated across tenants.

pub mod attributes;

use std::time::{Duration, SystemTime};

use agentgov_domain::ports::{GuardrailRun, Telemetry};
use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, TraceContextExt as _, TraceFlags, TraceId, TraceState, Tracer as _,
    TracerProvider as _,
};
use opentelemetry::{Context, KeyValue, Value};
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracer, SdkTracerProvider, SpanData, SpanExporter};

use crate::attributes as attr;

/// How spans travel to the collector, spelt as `OTEL_EXPORTER_OTLP_PROTOCOL` spells it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Protocol {
    /// OTLP/gRPC (the collector's port 4317).
    #[default]
    #[serde(rename = "grpc")]
    Grpc,
    /// OTLP/HTTP with protobuf bodies, to `{endpoint}/v1/traces` (port 4318).
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
}

/// Where and how to export.
#[derive(Clone)]
pub struct OtlpConfig {
    /// The collector's base address, e.g. `http://collector:4317`.
    pub endpoint: String,
    pub protocol: Protocol,
    /// The key of the input hashes (every replica must share it to correlate).
    pub hash_key: Vec<u8>,
    /// How long one export may take.
    pub timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    #[error("the OTLP exporter's runtime could not be started: {0}")]
    Runtime(#[from] std::io::Error),
    #[error("the OTLP exporter could not be built: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// Exports guardrail runs as spans over OTLP. Dropping it flushes what is queued (within
/// the export timeout) and stops its runtime.
pub struct OtlpTelemetry {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    key: ring::hmac::Key,
    /// Held for the exporter's tasks; shut down in the background on drop (dropping a
    /// runtime from inside another one would panic).
    runtime: Option<tokio::runtime::Runtime>,
}

impl OtlpTelemetry {
    pub fn start(config: &OtlpConfig) -> Result<Self, OtlpError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("otlp-export")
            .enable_all()
            .build()?;
        // The transports bind to the runtime current when they are built.
        let _entered = runtime.enter();
        let exporter = match config.protocol {
            Protocol::Grpc => opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(config.endpoint.clone())
                .with_timeout(config.timeout)
                .build()?,
            Protocol::HttpProtobuf => opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(traces_url(&config.endpoint))
                .with_timeout(config.timeout)
                .build()?,
        };
        let exporter = OnRuntime { inner: exporter, runtime: runtime.handle().clone() };
        let processor = BatchSpanProcessor::builder(exporter).build();
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("agentgov");
        }
        let resource = resource.with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION"))).build();
        let provider = SdkTracerProvider::builder().with_span_processor(processor).with_resource(resource).build();
        let tracer = provider.tracer("agentgov");
        drop(_entered);
        Ok(Self {
            provider,
            tracer,
            key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &config.hash_key),
            runtime: Some(runtime),
        })
    }

    /// `hmac-sha256:<hex>` of the tenant's id and `input`.
    fn input_hash(&self, tenant: [u8; 16], input: &[u8]) -> String {
        let mut context = ring::hmac::Context::with_key(&self.key);
        context.update(&tenant);
        context.update(input);
        format!("hmac-sha256:{}", hex::encode(context.sign().as_ref()))
    }

    /// The span's attributes, in the conventions' terms.
    fn attributes(&self, run: &GuardrailRun<'_>) -> Vec<KeyValue> {
        let mut kv = vec![
            KeyValue::new(attr::OPERATION_NAME, attr::RUN_GUARDRAIL),
            KeyValue::new(attr::COMPONENT_NAME, run.component),
            KeyValue::new(attr::TARGET_TYPE, run.target.as_str()),
            KeyValue::new(attr::TARGET_SUBTYPE, run.subtype),
            KeyValue::new(attr::VERDICT_TYPE, run.verdict.as_str()),
            KeyValue::new(attr::ACTION_TYPE, run.action.action_str()),
            KeyValue::new(attr::INPUT_HASH, self.input_hash(*run.tenant_id.as_bytes(), run.input)),
            KeyValue::new(attr::TENANT_ID, run.tenant_id.to_string()),
        ];
        // The fixed words are borrowed (`&'static str`), not copied.
        let optional: [(&'static str, Option<Value>); 8] = [
            (attr::TARGET_ID, run.target_id.map(|t| Value::from(t.to_owned()))),
            (attr::VERDICT_REASON, run.reason.map(Value::from)),
            (attr::POLICY_ID, run.policy_id.clone().map(Value::from)),
            (attr::POLICY_RULE_ID, run.rule_id.clone().map(Value::from)),
            (attr::RISK_CATEGORY, run.risk_category.map(Value::from)),
            (attr::CONVERSATION_ID, run.conversation_id.map(|c| Value::from(c.to_owned()))),
            (attr::AGENT_ID, run.agent_id.map(|a| Value::from(a.to_string()))),
            (attr::AUDIT_RECORD_ID, run.record_id.map(|r| Value::from(r.to_string()))),
        ];
        kv.extend(optional.into_iter().filter_map(|(key, value)| value.map(|v| KeyValue::new(key, v))));
        if let Some(score) = run.risk_score {
            kv.push(KeyValue::new(attr::RISK_SCORE, score));
        }
        kv
    }
}

/// An exporter whose exports run on the adapter's runtime. The SDK's batch processor
/// calls it from its own thread, which wakes only when a batch is full or due (never per
/// span); the transports need a Tokio runtime to run on, which that thread is not.
#[derive(Debug)]
struct OnRuntime<E> {
    inner: E,
    runtime: tokio::runtime::Handle,
}

impl<E: SpanExporter> SpanExporter for OnRuntime<E> {
    fn export(&self, batch: Vec<SpanData>) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        // The processor's thread is outside any runtime, so blocking on this one is allowed.
        std::future::ready(self.runtime.block_on(self.inner.export(batch)))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The HTTP exporter's URL: the base endpoint with the traces path, as the SDK does for
/// `OTEL_EXPORTER_OTLP_ENDPOINT`; an endpoint that already ends in it is kept.
fn traces_url(endpoint: &str) -> String {
    let base = endpoint.trim_end_matches('/');
    if base.ends_with("/v1/traces") { base.to_owned() } else { format!("{base}/v1/traces") }
}

impl Telemetry for OtlpTelemetry {
    fn enabled(&self) -> bool {
        true
    }

    fn guardrail(&self, run: &GuardrailRun<'_>) {
        let parent = match run.parent {
            Some(p) => Context::new().with_remote_span_context(SpanContext::new(
                TraceId::from_bytes(p.trace_id),
                SpanId::from_bytes(p.parent_span_id),
                TraceFlags::new(p.flags),
                true,
                TraceState::default(),
            )),
            None => Context::new(),
        };
        let mut span = self
            .tracer
            .span_builder(format!("{} {}", attr::RUN_GUARDRAIL, run.component))
            .with_kind(SpanKind::Internal)
            .with_start_time(SystemTime::from(run.start))
            .with_attributes(self.attributes(run))
            .start_with_context(&self.tracer, &parent);
        span.end_with_timestamp(SystemTime::from(run.end));
    }

    fn flush(&self) {
        if let Err(e) = self.provider.force_flush() {
            tracing::warn!(error = %e, "the OTLP exporter did not flush every span");
        }
    }
}

impl Drop for OtlpTelemetry {
    fn drop(&mut self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "the OTLP exporter did not flush every span");
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_http_url_gets_the_traces_path_once() {
        assert_eq!(traces_url("http://127.0.0.1:4318"), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(traces_url("http://127.0.0.1:4318/"), "http://127.0.0.1:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
    }
}
