//! Syslog sinks: RFC 5424 messages over TCP or TLS (RFC 5425), each framed by octet
//! counting, one connection kept open and opened again after a failure, or over UDP (one
//! datagram per message).
//!
//! The destination is `host:port` (a DNS name, an IPv4 address or a bracketed IPv6 one),
//! resolved each time a connection is opened (or, for UDP, each batch), so a collector whose
//! address changes is followed.
//!
//! A kept connection the receiver has closed would take the next write without an error (the
//! reset comes later) and lose it, so before each write the sink checks for the receiver's
//! end with one read that must not wait: the stream's `poll_read`, polled once. Over TCP that
//! is the socket's. Over TLS it is the TLS stream's, never the socket's: the bytes waiting on
//! the socket are TLS records (after a TLS 1.3 handshake, the server's session tickets) that
//! only rustls may consume, and a peek would see them as "data" even on a healthy
//! connection. rustls processes such records and reports a close (`close_notify` or the TCP
//! end without one, an error) or waits for more; the sink reconnects on a close, an error or
//! a receiver that keeps talking, and keeps the connection when the read would wait.
//!
//! Syslog over TCP has no acknowledgement: a write succeeds once the bytes are in the
//! kernel's buffer, and a receiver that stops before it has read them loses them. So the
//! sink keeps what it wrote on the current connection until that connection has been seen
//! open [`CONFIRM_AFTER`] later (at the next send). When the connection is found closed
//! instead, those frames are written again on the new connection before the new ones: at
//! least once, with the duplicates a receiver restart can cause.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use agentgov_domain::model::AuditRecord;
use agentgov_domain::ports::SiemSink;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpStream, UdpSocket};
use tokio::sync::Mutex;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::pki_types::ServerName;

pub use crate::format::Payload;
use crate::format::{self, SyslogOrigin};
use crate::tls;

/// How messages travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// TCP, octet counting (RFC 6587).
    Tcp,
    /// UDP, one datagram per message (RFC 5426).
    Udp,
    /// TLS over TCP, octet counting (RFC 5425). Built with [`SyslogSink::tls`].
    Tls,
}

/// Largest UDP message; a longer one is cut (RFC 5426 recommends staying under the path
/// MTU; loopback and most collectors take 64 KiB).
pub const MAX_DATAGRAM: usize = 65_000;

const TIMEOUT: Duration = Duration::from_secs(10);
const SERVICE: &str = "syslog receiver";

/// How many reads the check for a closed connection makes of a receiver that sends data
/// (syslog receivers send none) before giving up on the connection.
const PROBE_READS: usize = 16;

/// How long a connection must be seen open after a write before the frames written are
/// taken as received (a receiver reads its socket continuously).
pub const CONFIRM_AFTER: Duration = Duration::from_secs(1);

/// Most bytes of unconfirmed frames kept for writing again; past it the oldest are dropped
/// (with a warning), which only a rate of tens of megabytes a second reaches.
const MAX_UNCONFIRMED: usize = 32 * 1024 * 1024;

/// The kept connection and the frames written on it not yet known to be received.
#[derive(Default)]
struct Link {
    conn: Option<Conn>,
    /// When each batch was written, and its bytes, oldest first.
    unconfirmed: VecDeque<(Instant, Vec<u8>)>,
    unconfirmed_bytes: usize,
}

impl Link {
    /// Forgets the frames written at least `CONFIRM_AFTER` before `now` (the connection was
    /// just seen open).
    fn confirm(&mut self, now: Instant) {
        while let Some((at, bytes)) = self.unconfirmed.front() {
            if now.duration_since(*at) < CONFIRM_AFTER {
                break;
            }
            self.unconfirmed_bytes -= bytes.len();
            self.unconfirmed.pop_front();
        }
    }

    /// Keeps `bytes`, written at `now`, until confirmed.
    fn written(&mut self, now: Instant, bytes: Vec<u8>) {
        self.unconfirmed_bytes += bytes.len();
        self.unconfirmed.push_back((now, bytes));
        while self.unconfirmed_bytes > MAX_UNCONFIRMED && self.unconfirmed.len() > 1 {
            if let Some((_, dropped)) = self.unconfirmed.pop_front() {
                self.unconfirmed_bytes -= dropped.len();
                tracing::warn!(bytes = dropped.len(), "syslog frames dropped from the resend buffer");
            }
        }
    }
}

/// What a TLS sink verifies the receiver against.
struct TlsClient {
    connector: TlsConnector,
    server_name: ServerName<'static>,
}

/// A kept connection.
enum Conn {
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Conn {
    /// Whether the receiver has closed or reset the connection (or keeps sending, which a
    /// syslog receiver does not), found without waiting: see the module's documentation.
    async fn closed(&mut self) -> bool {
        let mut scratch = [0u8; 512];
        for _ in 0..PROBE_READS {
            let mut buf = ReadBuf::new(&mut scratch);
            // Polled once: `Pending` means nothing has arrived, the connection is open.
            let polled = poll_fn(|cx| {
                Poll::Ready(match self {
                    Conn::Tcp(s) => Pin::new(s).poll_read(cx, &mut buf),
                    Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, &mut buf),
                })
            })
            .await;
            match polled {
                Poll::Pending => return false,
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return true,
                Poll::Ready(Ok(())) => {
                    tracing::debug!(bytes = buf.filled().len(), "syslog receiver sent data; ignored")
                }
                Poll::Ready(Err(e)) => {
                    tracing::debug!(error = %e, "syslog connection closed by the receiver");
                    return true;
                }
            }
        }
        true
    }

    async fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Conn::Tcp(s) => {
                s.write_all(bytes).await?;
                s.flush().await
            }
            Conn::Tls(s) => {
                s.write_all(bytes).await?;
                // rustls holds the records until flushed to the socket.
                s.flush().await
            }
        }
    }
}

pub struct SyslogSink {
    transport: Transport,
    /// `host:port`, as configured.
    addr: String,
    tls: Option<TlsClient>,
    payload: Payload,
    origin: SyslogOrigin,
    version: String,
    link: Mutex<Link>,
}

/// The host of `addr` (`host:port`): a DNS name, an IPv4 address or an IPv6 one in brackets
/// (returned without them), with a port 1..=65535.
pub(crate) fn host_of(addr: &str) -> Result<&str, String> {
    let bad = || format!("syslog address {addr:?} is not host:port (e.g. siem.example.com:6514 or [::1]:514)");
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    if !port.parse::<u16>().is_ok_and(|p| p != 0) {
        return Err(bad());
    }
    if let Some(bracketed) = host.strip_prefix('[') {
        return bracketed.strip_suffix(']').filter(|h| h.parse::<std::net::Ipv6Addr>().is_ok()).ok_or_else(bad);
    }
    let name_like = host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    if host.is_empty() || !name_like {
        return Err(bad());
    }
    Ok(host)
}

impl SyslogSink {
    /// A sink over TCP or UDP to `addr` (`host:port`). An error for an address that is not
    /// `host:port`, or for [`Transport::Tls`] (which needs [`SyslogSink::tls`]).
    pub fn new(
        transport: Transport,
        addr: &str,
        payload: Payload,
        origin: SyslogOrigin,
        version: &str,
    ) -> Result<Self, String> {
        if transport == Transport::Tls {
            return Err("a TLS syslog sink is built with SyslogSink::tls".into());
        }
        host_of(addr)?;
        Ok(Self::build(transport, addr, None, payload, origin, version))
    }

    /// A sink over TLS (RFC 5425) to `addr` (`host:port`). The receiver's certificate must
    /// be valid for `server_name` (also sent as SNI; by default the address's host, which
    /// may be an IP address) and chain to a CA of `ca_pem` (the contents of a PEM file, one
    /// or more certificates; only those are trusted) or, without it, to one of the webpki
    /// roots (Mozilla's list). An error for a bad address, server name or CA file.
    pub fn tls(
        addr: &str,
        server_name: Option<&str>,
        ca_pem: Option<&[u8]>,
        payload: Payload,
        origin: SyslogOrigin,
        version: &str,
    ) -> Result<Self, String> {
        let host = host_of(addr)?;
        let name = server_name.map(str::trim).filter(|n| !n.is_empty()).unwrap_or(host);
        let server_name = ServerName::try_from(name.to_owned())
            .map_err(|_| format!("TLS server name {name:?} is not a DNS name or IP address"))?;
        let config = tls::client_config(ca_pem)?;
        let tls = TlsClient { connector: TlsConnector::from(Arc::new(config)), server_name };
        Ok(Self::build(Transport::Tls, addr, Some(tls), payload, origin, version))
    }

    fn build(
        transport: Transport,
        addr: &str,
        tls: Option<TlsClient>,
        payload: Payload,
        origin: SyslogOrigin,
        version: &str,
    ) -> Self {
        Self {
            transport,
            addr: addr.to_owned(),
            tls,
            payload,
            origin,
            version: version.to_owned(),
            link: Mutex::new(Link::default()),
        }
    }

    /// One record as its syslog message.
    fn message(&self, r: &AuditRecord) -> String {
        format::syslog(r, &self.origin, &self.payload.text(r, &self.version))
    }

    /// A new connection (TCP, and the TLS handshake over it for TLS).
    async fn connect(&self) -> std::result::Result<Conn, String> {
        let tcp = TcpStream::connect(self.addr.as_str()).await.map_err(|e| format!("connect: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        match &self.tls {
            None => Ok(Conn::Tcp(tcp)),
            Some(tls) => {
                let stream = tls
                    .connector
                    .connect(tls.server_name.clone(), tcp)
                    .await
                    .map_err(|e| format!("TLS handshake: {e}"))?;
                Ok(Conn::Tls(Box::new(stream)))
            }
        }
    }

    /// Octet-counted frames over the kept TCP or TLS connection; on a new connection, the
    /// frames not yet confirmed on the old one go first.
    async fn send_stream(&self, records: &[AuditRecord]) -> Result<()> {
        let mut bytes = Vec::new();
        for r in records {
            bytes.extend_from_slice(format::octet_counted(&self.message(r)).as_bytes());
        }
        let mut link = self.link.lock().await;
        // A kept connection may have been closed by the receiver: one fresh attempt more.
        for attempt in 0..2 {
            if let Some(stream) = link.conn.as_mut() {
                if stream.closed().await {
                    link.conn = None;
                } else {
                    link.confirm(Instant::now());
                }
            }
            let replay = link.conn.is_none() && !link.unconfirmed.is_empty();
            if link.conn.is_none() {
                let stream = tokio::time::timeout(TIMEOUT, self.connect())
                    .await
                    .map_err(|_| self.unavailable("connect timed out"))?
                    .map_err(|e| self.unavailable(&e))?;
                link.conn = Some(stream);
            }
            let mut out = Vec::new();
            if replay {
                tracing::info!(
                    batches = link.unconfirmed.len(),
                    bytes = link.unconfirmed_bytes,
                    "syslog connection renewed; writing again what the old one may have lost"
                );
                for (_, frames) in &link.unconfirmed {
                    out.extend_from_slice(frames);
                }
            }
            out.extend_from_slice(&bytes);
            let Some(stream) = link.conn.as_mut() else { continue };
            let written = tokio::time::timeout(TIMEOUT, stream.write_all(&out)).await;
            match written {
                Ok(Ok(())) => {
                    let now = Instant::now();
                    for (at, _) in link.unconfirmed.iter_mut() {
                        *at = now;
                    }
                    link.written(now, bytes);
                    return Ok(());
                }
                Ok(Err(e)) if attempt == 0 => {
                    tracing::debug!(error = %e, "syslog connection lost; reconnecting");
                    link.conn = None;
                }
                Ok(Err(e)) => {
                    link.conn = None;
                    return Err(self.unavailable(&e.to_string()));
                }
                Err(_) => {
                    link.conn = None;
                    return Err(self.unavailable("write timed out"));
                }
            }
        }
        Err(self.unavailable("could not send"))
    }

    async fn send_udp(&self, records: &[AuditRecord]) -> Result<()> {
        let target: SocketAddr = tokio::time::timeout(TIMEOUT, tokio::net::lookup_host(self.addr.as_str()))
            .await
            .map_err(|_| self.unavailable("name resolution timed out"))?
            .map_err(|e| self.unavailable(&format!("name resolution: {e}")))?
            .next()
            .ok_or_else(|| self.unavailable("the name resolves to no address"))?;
        let bind: SocketAddr = match target.ip() {
            IpAddr::V4(_) => ([0, 0, 0, 0], 0).into(),
            IpAddr::V6(_) => ([0u16; 8], 0).into(),
        };
        let socket = UdpSocket::bind(bind).await.map_err(|e| self.unavailable(&e.to_string()))?;
        for r in records {
            let msg = self.message(r);
            let mut end = msg.len().min(MAX_DATAGRAM);
            while !msg.is_char_boundary(end) {
                end -= 1;
            }
            socket.send_to(&msg.as_bytes()[..end], target).await.map_err(|e| self.unavailable(&e.to_string()))?;
        }
        Ok(())
    }
}

impl SyslogSink {
    fn unavailable(&self, why: &str) -> DomainError {
        unavailable(&self.addr, self.kind(), why)
    }
}

/// What a syslog sink (of any transport, RELP included) answers when the receiver has not
/// taken a batch: logged with the reason, which the error does not carry.
pub(crate) fn unavailable(destination: &str, kind: &str, why: &str) -> DomainError {
    tracing::warn!(destination, kind, reason = why, "syslog receiver unavailable");
    DomainError::Unavailable(SERVICE.into())
}

#[async_trait]
impl SiemSink for SyslogSink {
    fn kind(&self) -> &'static str {
        match self.transport {
            Transport::Tcp => "syslog-tcp",
            Transport::Udp => "syslog-udp",
            Transport::Tls => "syslog-tls",
        }
    }

    fn destination(&self) -> String {
        self.addr.clone()
    }

    fn format(&self) -> &'static str {
        self.payload.name()
    }

    async fn send(&self, records: &[AuditRecord]) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        match self.transport {
            Transport::Tcp | Transport::Tls => self.send_stream(records).await,
            Transport::Udp => self.send_udp(records).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncRead, AsyncReadExt};
    use tokio::net::TcpListener;

    use super::*;
    use crate::testing::{localhost_tls, record};

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

    /// Reads `n` whole frames from a receiver's end of the connection.
    async fn read_frames(conn: &mut (impl AsyncRead + Unpin), n: usize) -> Vec<String> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut got = Vec::new();
        while frames_complete(&got) < n {
            let read = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf)).await.unwrap().unwrap();
            assert!(read > 0, "the sink closed the connection");
            got.extend_from_slice(&buf[..read]);
        }
        frames(&got)
    }

    #[tokio::test]
    async fn tcp_frames_arrive_in_order_and_the_sink_reconnects_after_the_receiver_closes() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let sink = SyslogSink::new(Transport::Tcp, &addr, Payload::Cef, origin(), "0.1.0").unwrap();
        let records: Vec<_> = (1..=3).map(record).collect();
        let (send, accept) = tokio::join!(sink.send(&records), listener.accept());
        send.unwrap();
        let (mut conn, _) = accept.unwrap();
        let msgs = read_frames(&mut conn, 3).await;
        assert_eq!(msgs.len(), 3);
        for (i, m) in msgs.iter().enumerate() {
            assert!(m.starts_with("<110>1 2026-09-21T14:13:2"), "facility 13, informational: {m}");
            assert!(m.contains(&format!("cn2={}", i + 1)), "in order: {m}");
            assert!(m.contains("CEF:0|agentgov|agentgov|0.1.0|agent.action|"), "{m}");
        }
        // The receiver goes away before the frames were confirmed: the next batch opens a
        // new connection and writes them again first.
        drop(conn);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let fourth = [record(4)];
        let (send, accept) = tokio::join!(sink.send(&fourth), listener.accept());
        send.unwrap();
        let (mut conn, _) = accept.unwrap();
        let seqs = |msgs: Vec<String>| -> Vec<usize> {
            msgs.iter().map(|m| m.split("cn2=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap()).collect()
        };
        assert_eq!(seqs(read_frames(&mut conn, 4).await), [1, 2, 3, 4]);
        // Seen open a while later: what was written is confirmed and not written again.
        tokio::time::sleep(CONFIRM_AFTER + Duration::from_millis(100)).await;
        sink.send(&[record(5)]).await.unwrap();
        assert_eq!(seqs(read_frames(&mut conn, 1).await), [5]);
        drop(conn);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let sixth = [record(6)];
        let (send, accept) = tokio::join!(sink.send(&sixth), listener.accept());
        send.unwrap();
        let (mut conn, _) = accept.unwrap();
        assert_eq!(seqs(read_frames(&mut conn, 2).await), [5, 6], "only the unconfirmed one again");
        assert_eq!(sink.destination(), addr);
    }

    #[tokio::test]
    async fn frames_written_to_a_receiver_that_died_are_written_again_once_it_is_back() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sink = SyslogSink::new(Transport::Tcp, &addr.to_string(), Payload::Cef, origin(), "0.1.0").unwrap();
        let first = [record(1), record(2)];
        let (send, accept) = tokio::join!(sink.send(&first), listener.accept());
        send.unwrap();
        // The receiver stops without reading: the write had succeeded, the frames are lost there.
        drop(accept.unwrap());
        drop(listener);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(sink.send(&[record(3)]).await.is_err(), "down");
        assert!(sink.send(&[record(3)]).await.is_err(), "still down");
        let listener = TcpListener::bind(addr).await.unwrap();
        let third = [record(3)];
        let (send, accept) = tokio::join!(sink.send(&third), listener.accept());
        send.unwrap();
        let (mut conn, _) = accept.unwrap();
        let msgs = read_frames(&mut conn, 3).await;
        for (i, m) in msgs.iter().enumerate() {
            assert!(m.contains(&format!("cn2={} ", i + 1)), "{m}");
        }
    }

    #[tokio::test]
    async fn tls_frames_arrive_in_order_on_one_connection_and_the_sink_reconnects_after_the_receiver_closes() {
        let server = localhost_tls();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        // A DNS name, also the default server name checked against the certificate.
        let addr = format!("localhost:{port}");
        let sink =
            SyslogSink::tls(&addr, None, Some(server.ca_pem.as_bytes()), Payload::Json, origin(), "0.1.0").unwrap();
        assert_eq!((sink.kind(), sink.format(), sink.destination()), ("syslog-tls", "json", addr.clone()));
        let accept = async {
            let (tcp, _) = listener.accept().await.unwrap();
            server.acceptor.accept(tcp).await.unwrap()
        };
        let records: Vec<_> = (1..=3).map(record).collect();
        let (send, mut conn) = tokio::join!(sink.send(&records), accept);
        send.unwrap();
        let msgs = read_frames(&mut conn, 3).await;
        for (i, m) in msgs.iter().enumerate() {
            let json = m.split(" - agent.action - ").nth(1).unwrap();
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(v["seq"], i + 1, "in order: {m}");
        }
        // Still open (the TLS 1.3 session tickets waiting on the socket are not an end): the
        // next batch goes over the same connection, with no new handshake to accept.
        tokio::time::sleep(Duration::from_millis(50)).await;
        sink.send(&[record(4), record(5)]).await.unwrap();
        let msgs = read_frames(&mut conn, 2).await;
        assert!(msgs[0].contains(r#""seq":4"#) && msgs[1].contains(r#""seq":5"#), "{msgs:?}");

        // The receiver goes away (no close_notify, just the TCP end); the next batch opens
        // a new connection.
        drop(conn);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let accept = async {
            let (tcp, _) = listener.accept().await.unwrap();
            server.acceptor.accept(tcp).await.unwrap()
        };
        let (send, mut conn) = tokio::join!(async { sink.send(&[record(6)]).await }, accept);
        send.unwrap();
        // 1 to 5 were not confirmed yet (written under a second ago): written again first.
        let msgs = read_frames(&mut conn, 6).await;
        assert!(msgs[0].contains(r#""seq":1"#) && msgs[5].contains(r#""seq":6"#), "{msgs:?}");

        // This time it closes properly (close_notify first): the same.
        tokio::io::AsyncWriteExt::shutdown(&mut conn).await.unwrap();
        drop(conn);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let accept = async {
            let (tcp, _) = listener.accept().await.unwrap();
            server.acceptor.accept(tcp).await.unwrap()
        };
        let (send, mut conn) = tokio::join!(async { sink.send(&[record(7)]).await }, accept);
        send.unwrap();
        assert!(read_frames(&mut conn, 7).await[6].contains(r#""seq":7"#));
    }

    #[tokio::test]
    async fn tls_to_a_receiver_whose_certificate_is_not_trusted_is_unavailable() {
        let server = localhost_tls();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        // No CA given: the webpki roots, which do not hold the self-signed certificate.
        let sink = SyslogSink::tls(&addr, Some("localhost"), None, Payload::Cef, origin(), "0.1.0").unwrap();
        let accept = async {
            let (tcp, _) = listener.accept().await.unwrap();
            server.acceptor.accept(tcp).await
        };
        let (send, accepted) = tokio::join!(async { sink.send(&[record(1)]).await }, accept);
        let err = send.unwrap_err();
        assert!(matches!(err, DomainError::Unavailable(_)), "{err:?}");
        assert!(accepted.is_err(), "the client aborts the handshake");

        // Trusted CA, but a server name the certificate is not for.
        let other = localhost_tls();
        let sink = SyslogSink::tls(
            &addr,
            Some("siem.example.com"),
            Some(other.ca_pem.as_bytes()),
            Payload::Cef,
            origin(),
            "0.1.0",
        )
        .unwrap();
        let accept = async {
            let (tcp, _) = listener.accept().await.unwrap();
            other.acceptor.accept(tcp).await
        };
        let (send, _) = tokio::join!(async { sink.send(&[record(1)]).await }, accept);
        assert!(matches!(send, Err(DomainError::Unavailable(_))), "{send:?}");
    }

    #[test]
    fn construction_checks_the_address_server_name_and_ca_file() {
        let tls = |addr: &str, name: Option<&str>, ca: Option<&[u8]>| {
            SyslogSink::tls(addr, name, ca, Payload::Cef, origin(), "1").map(|s| s.destination())
        };
        let pem = localhost_tls().ca_pem;
        assert_eq!(tls("siem.example.com:6514", None, None).unwrap(), "siem.example.com:6514");
        assert_eq!(tls("[::1]:6514", None, Some(pem.as_bytes())).unwrap(), "[::1]:6514", "an IP as server name");
        assert!(
            tls("siem.example.com:6514", None, Some(b"not a pem file")).unwrap_err().contains("no PEM certificate")
        );
        let bad_base64 = b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
        assert!(tls("siem.example.com:6514", None, Some(bad_base64)).is_err());
        let not_a_cert = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        assert!(tls("siem.example.com:6514", None, Some(not_a_cert)).unwrap_err().contains("not usable"));
        for bad in
            ["siem.example.com", "siem.example.com:0", "siem.example.com:x", ":514", "::1:514", "[x]:514", "a b:514"]
        {
            assert!(tls(bad, None, None).is_err(), "{bad}");
            assert!(SyslogSink::new(Transport::Tcp, bad, Payload::Cef, origin(), "1").is_err(), "{bad}");
        }
        assert!(tls("siem.example.com:6514", Some("not a name!"), None).is_err());
        assert!(SyslogSink::new(Transport::Tls, "siem.example.com:6514", Payload::Cef, origin(), "1").is_err());
    }

    #[tokio::test]
    async fn a_receiver_that_is_down_is_unavailable() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        drop(listener);
        let sink = SyslogSink::new(Transport::Tcp, &addr, Payload::Json, origin(), "0.1.0").unwrap();
        let err = sink.send(&[record(1)]).await.unwrap_err();
        assert!(matches!(err, DomainError::Unavailable(_)), "{err:?}");
        assert_eq!((sink.kind(), sink.format()), ("syslog-tcp", "json"));
        let sink =
            SyslogSink::new(Transport::Tcp, "no-such-host.invalid:514", Payload::Json, origin(), "0.1.0").unwrap();
        assert!(matches!(sink.send(&[record(1)]).await, Err(DomainError::Unavailable(_))));
    }

    #[tokio::test]
    async fn udp_sends_one_datagram_per_record_carrying_json() {
        let receiver = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let port = receiver.local_addr().unwrap().port();
        let sink =
            SyslogSink::new(Transport::Udp, &format!("127.0.0.1:{port}"), Payload::Json, origin(), "0.1.0").unwrap();
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
