//! Runs the HTTP server until SIGTERM/SIGINT, letting in-flight requests finish.

use std::net::TcpListener;
use std::time::Duration;

use actix_web::{HttpServer, web};
use agentgov_api::{AppState, HttpSettings};
use anyhow::Context;
use secrecy::ExposeSecret;

use crate::config::Config;
use crate::wiring::build_services;

/// A server bound and ready to run.
pub struct Running {
    pub addr: std::net::SocketAddr,
    pub server: actix_web::dev::Server,
    /// The SIEM forwarders; stop them after the server to hand their sinks over at once.
    pub siem: crate::wiring::SiemForwarders,
    /// The HITL expiry and callback worker; stop it after the server, likewise.
    pub hitl: crate::wiring::HitlWorkerHandle,
    /// The guardrail spans' exporter: flushed last, once no decision is being made.
    pub telemetry: std::sync::Arc<dyn agentgov_domain::ports::Telemetry>,
}

/// Builds the services and binds `listener` (or `config.bind`). The returned server runs
/// when awaited (or spawned) and stops gracefully on SIGTERM/SIGINT or its handle's `stop`.
pub async fn start(config: &Config, listener: Option<TcpListener>) -> anyhow::Result<Running> {
    let built = build_services(config).await?;
    let telemetry = built.telemetry.clone();
    let siem = crate::wiring::spawn_siem_forwarders(&built.services.siem);
    let hitl = crate::wiring::spawn_hitl_worker(&built.services.hitl, built.lease_work);
    let state = web::Data::new(AppState { services: built.services, info: built.info, feed: built.feed });
    let doc = agentgov_api::openapi();
    let http = HttpSettings {
        body_limit: config.body_limit_bytes,
        trusted_proxy_hops: config.trusted_proxy_hops,
        metrics_token: agentgov_api::metrics::MetricsToken::new(
            config.metrics_token.as_ref().map(|t| t.expose_secret()),
        ),
    };
    agentgov_api::metrics::handle();
    let mut server = HttpServer::new(move || agentgov_api::app(state.clone(), http.clone(), doc.clone()))
        .shutdown_timeout(config.shutdown_timeout_secs)
        .client_request_timeout(Duration::from_secs(30));
    if let Some(workers) = config.workers {
        server = server.workers(workers);
    }
    let server = match listener {
        Some(l) => server.listen(l).context("listening")?,
        None => server.bind(config.bind).with_context(|| format!("binding {}", config.bind))?,
    };
    let addr = server.addrs().first().copied().context("no listening address")?;
    Ok(Running { addr, server: server.run(), siem, hitl, telemetry })
}

/// `agentgov serve`.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    let running = start(&config, None).await?;
    tracing::info!(addr = %running.addr, mode = config.mode(), "agentgov is serving; docs at http://{}/docs", running.addr);
    running.server.await.context("server error")?;
    running.siem.stop().await;
    running.hitl.stop().await;
    // Blocks (within the export timeout) on the exporter's own thread, not this runtime's.
    running.telemetry.flush();
    tracing::info!("stopped");
    Ok(())
}
