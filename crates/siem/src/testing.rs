//! Helpers the sinks' tests share: records, a self-signed `localhost` certificate with a TLS
//! acceptor for it, and captured log lines.

use std::sync::{Arc, Mutex};

use agentgov_domain::ids::{AuditId, TenantId};
use agentgov_domain::model::{Actor, ActorType, AuditHash, AuditOrigin, AuditRecord, JsonText};
use serde_json::Value;
use time::OffsetDateTime;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use uuid::Uuid;

pub(crate) fn record(seq: i64) -> AuditRecord {
    record_with(seq, serde_json::json!({"n": seq, "text": "ünïcode"}))
}

pub(crate) fn record_with(seq: i64, details: Value) -> AuditRecord {
    AuditRecord {
        id: AuditId(Uuid::from_u128(seq as u128)),
        tenant_id: TenantId(Uuid::from_u128(2)),
        seq,
        timestamp: OffsetDateTime::from_unix_timestamp(1_790_000_000 + seq).unwrap(),
        actor: Actor::new(ActorType::User, "u1"),
        event_type: "agent.action".into(),
        origin: AuditOrigin::Service,
        agent_id: None,
        action: Some("read".into()),
        resource: Some(format!("docs/{seq}")),
        decision: None,
        risk_score: None,
        details: JsonText::from_value(&details),
        prev_hash: AuditHash([0; 32]),
        hash: AuditHash([seq as u8; 32]),
        session_id: None,
    }
}

/// A TLS server identity for `localhost` (and 127.0.0.1): its self-signed certificate as
/// PEM, for clients to trust, and an acceptor presenting it.
pub(crate) struct LocalhostTls {
    pub ca_pem: String,
    pub acceptor: TlsAcceptor,
}

pub(crate) fn localhost_tls() -> LocalhostTls {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(signing_key.serialize_der()));
    let config = ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key)
        .unwrap();
    LocalhostTls { ca_pem: cert.pem(), acceptor: TlsAcceptor::from(Arc::new(config)) }
}

/// Log lines written by a `tracing_subscriber::fmt` subscriber.
#[derive(Clone, Default)]
pub(crate) struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Captured {
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}
