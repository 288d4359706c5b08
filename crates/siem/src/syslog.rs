//! Syslog sinks: RFC 5424 messages over TCP (octet counting, one connection kept open and
//! opened again after a failure) or UDP (one datagram per message).

use std::net::SocketAddr;
use std::time::Duration;

use agentgov_domain::model::AuditRecord;
use agentgov_domain::ports::SiemSink;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpStream, UdpSocket};
use tokio::sync::Mutex;

use crate::format::{self, SyslogOrigin};

/// What each message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    Cef,
    Json,
}

impl Payload {
    fn name(self) -> &'static str {
        match self {
            Payload::Cef => "cef",
            Payload::Json => "json",
        }
    }
}

/// How messages travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Udp,
}

/// Largest UDP message; a longer one is cut (RFC 5426 recommends staying under the path
/// MTU; loopback and most collectors take 64 KiB).
pub const MAX_DATAGRAM: usize = 65_000;

const TIMEOUT: Duration = Duration::from_secs(10);
const SERVICE: &str = "syslog receiver";

pub struct SyslogSink {
    transport: Transport,
    addr: SocketAddr,
    payload: Payload,
    origin: SyslogOrigin,
    version: String,
    tcp: Mutex<Option<TcpStream>>,
}

impl SyslogSink {
    pub fn new(transport: Transport, addr: SocketAddr, payload: Payload, origin: SyslogOrigin, version: &str) -> Self {
        Self { transport, addr, payload, origin, version: version.to_owned(), tcp: Mutex::new(None) }
    }

    /// One record as its syslog message.
    fn message(&self, r: &AuditRecord) -> String {
        let msg = match self.payload {
            Payload::Cef => format::cef(r, &self.version),
            Payload::Json => format::json(r).to_string(),
        };
        format::syslog(r, &self.origin, &msg)
    }

    async fn send_tcp(&self, records: &[AuditRecord]) -> Result<()> {
        let mut bytes = Vec::new();
        for r in records {
            bytes.extend_from_slice(format::octet_counted(&self.message(r)).as_bytes());
        }
        let mut conn = self.tcp.lock().await;
        // A kept connection may have been closed by the receiver: one fresh attempt more.
        for attempt in 0..2 {
            // A receiver that closed the kept connection would take the next write without an
            // error (the reset comes later) and lose it: check for its end first.
            if let Some(stream) = conn.as_ref() {
                let mut probe = [0u8; 1];
                match stream.try_read(&mut probe) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    _ => *conn = None,
                }
            }
            if conn.is_none() {
                let stream = tokio::time::timeout(TIMEOUT, TcpStream::connect(self.addr))
                    .await
                    .map_err(|_| unavailable("connect timed out"))?
                    .map_err(|e| unavailable(&e.to_string()))?;
                stream.set_nodelay(true).map_err(|e| unavailable(&e.to_string()))?;
                *conn = Some(stream);
            }
            let Some(stream) = conn.as_mut() else { continue };
            let written = tokio::time::timeout(TIMEOUT, async {
                stream.write_all(&bytes).await?;
                stream.flush().await
            })
            .await;
            match written {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) if attempt == 0 => {
                    tracing::debug!(error = %e, "syslog connection lost; reconnecting");
                    *conn = None;
                }
                Ok(Err(e)) => {
                    *conn = None;
                    return Err(unavailable(&e.to_string()));
                }
                Err(_) => {
                    *conn = None;
                    return Err(unavailable("write timed out"));
                }
            }
        }
        Err(unavailable("could not send"))
    }

    async fn send_udp(&self, records: &[AuditRecord]) -> Result<()> {
        let bind: SocketAddr = if self.addr.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
        let socket = UdpSocket::bind(bind).await.map_err(|e| unavailable(&e.to_string()))?;
        for r in records {
            let msg = self.message(r);
            let mut end = msg.len().min(MAX_DATAGRAM);
            while !msg.is_char_boundary(end) {
                end -= 1;
            }
            socket.send_to(&msg.as_bytes()[..end], self.addr).await.map_err(|e| unavailable(&e.to_string()))?;
        }
        Ok(())
    }
}

fn unavailable(why: &str) -> DomainError {
    tracing::warn!(reason = why, "syslog receiver unavailable");
    DomainError::Unavailable(SERVICE.into())
}

#[async_trait]
impl SiemSink for SyslogSink {
    fn kind(&self) -> &'static str {
        match self.transport {
            Transport::Tcp => "syslog-tcp",
            Transport::Udp => "syslog-udp",
        }
    }

    fn destination(&self) -> String {
        self.addr.to_string()
    }

    fn format(&self) -> &'static str {
        self.payload.name()
    }

    async fn send(&self, records: &[AuditRecord]) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        match self.transport {
            Transport::Tcp => self.send_tcp(records).await,
            Transport::Udp => self.send_udp(records).await,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use agentgov_domain::ids::{AuditId, TenantId};
    use agentgov_domain::model::{Actor, ActorType, AuditHash, JsonText};
    use time::OffsetDateTime;
    use tokio::io::AsyncReadExt;
    use tokio::net::TcpListener;
    use uuid::Uuid;

    use super::*;

    fn record(seq: i64) -> AuditRecord {
        AuditRecord {
            id: AuditId(Uuid::from_u128(seq as u128)),
            tenant_id: TenantId(Uuid::from_u128(2)),
            seq,
            timestamp: OffsetDateTime::from_unix_timestamp(1_790_000_000 + seq).unwrap(),
            actor: Actor::new(ActorType::User, "u1"),
            event_type: "agent.action".into(),
            agent_id: None,
            action: Some("read".into()),
            resource: Some(format!("docs/{seq}")),
            decision: None,
            risk_score: None,
            details: JsonText::from_value(&serde_json::json!({"n": seq, "text": "ünïcode"})),
            prev_hash: AuditHash([0; 32]),
            hash: AuditHash([seq as u8; 32]),
        }
    }

    fn origin() -> SyslogOrigin {
        SyslogOrigin { facility: 13, hostname: "gov-1".into(), app_name: "agentgov".into() }
    }

    /// Splits an octet-counted stream into its messages.
    fn frames(mut bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let space = bytes.iter().position(|b| *b == b' ').unwrap();
            let len: usize = std::str::from_utf8(&bytes[..space]).unwrap().parse().unwrap();
            out.push(String::from_utf8(bytes[space + 1..space + 1 + len].to_vec()).unwrap());
            bytes = &bytes[space + 1 + len..];
        }
        out
    }

    #[tokio::test]
    async fn tcp_frames_arrive_in_order_and_the_sink_reconnects_after_the_receiver_closes() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sink = SyslogSink::new(Transport::Tcp, addr, Payload::Cef, origin(), "0.1.0");
        let records: Vec<_> = (1..=3).map(record).collect();
        let (send, accept) = tokio::join!(sink.send(&records), listener.accept());
        send.unwrap();
        let (mut conn, _) = accept.unwrap();
        let mut buf = vec![0u8; 64 * 1024];
        let mut got = Vec::new();
        while frames_complete(&got) < 3 {
            let n = conn.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        let msgs = frames(&got);
        assert_eq!(msgs.len(), 3);
        for (i, m) in msgs.iter().enumerate() {
            assert!(m.starts_with("<110>1 2026-09-21T14:13:2"), "facility 13, informational: {m}");
            assert!(m.contains(&format!("cn2={}", i + 1)), "in order: {m}");
            assert!(m.contains("CEF:0|agentgov|agentgov|0.1.0|agent.action|"), "{m}");
        }
        // The receiver goes away; the next batch opens a new connection.
        drop(conn);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let fourth = [record(4)];
        let (send, accept) = tokio::join!(sink.send(&fourth), listener.accept());
        send.unwrap();
        let (mut conn, _) = accept.unwrap();
        let mut got = Vec::new();
        while frames_complete(&got) < 1 {
            let n = conn.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert!(frames(&got)[0].contains("cn2=4"));
    }

    /// How many whole frames `bytes` holds.
    fn frames_complete(mut bytes: &[u8]) -> usize {
        let mut n = 0;
        while let Some(space) = bytes.iter().position(|b| *b == b' ') {
            let Some(len) = std::str::from_utf8(&bytes[..space]).ok().and_then(|s| s.parse::<usize>().ok()) else {
                break;
            };
            if bytes.len() < space + 1 + len {
                break;
            }
            n += 1;
            bytes = &bytes[space + 1 + len..];
        }
        n
    }

    #[tokio::test]
    async fn a_receiver_that_is_down_is_unavailable() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let sink = SyslogSink::new(Transport::Tcp, addr, Payload::Json, origin(), "0.1.0");
        let err = sink.send(&[record(1)]).await.unwrap_err();
        assert!(matches!(err, DomainError::Unavailable(_)), "{err:?}");
        assert_eq!((sink.kind(), sink.format()), ("syslog-tcp", "json"));
    }

    #[tokio::test]
    async fn udp_sends_one_datagram_per_record_carrying_json() {
        let receiver = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = receiver.local_addr().unwrap();
        let sink = SyslogSink::new(Transport::Udp, addr, Payload::Json, origin(), "0.1.0");
        sink.send(&[record(1), record(2)]).await.unwrap();
        let mut buf = vec![0u8; 70_000];
        for seq in 1..=2 {
            let n = receiver.recv(&mut buf).await.unwrap();
            let msg = std::str::from_utf8(&buf[..n]).unwrap();
            let json = msg.split(" - agent.action - ").nth(1).unwrap();
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(v["seq"], seq);
            assert_eq!(v["details"]["text"], "ünïcode");
        }
        assert_eq!(sink.kind(), "syslog-udp");
    }
}
