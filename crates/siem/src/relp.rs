//! RELP sink: RFC 5424 messages over rsyslog's Reliable Event Logging Protocol, where the
//! receiver acknowledges each message once it has taken it. A batch succeeds only when every
//! one of its messages is acknowledged, so a receiver that stops or restarts mid-batch makes
//! the batch fail and be sent again: at least once, without syslog-over-TCP's guess of how
//! long a connection must stay open before its bytes count as received.
//!
//! The protocol (rsyslog's RELP specification): every frame is `TXNR SP COMMAND SP DATALEN
//! [SP DATA] LF`, TXNR counting from 1 per connection (after 999,999,999 it starts at 1
//! again). The client opens with `open` (offering `relp_version=0` and `commands=syslog`),
//! sends each message as `syslog`, and the server answers each with `rsp` carrying the same
//! TXNR and a status, `200 OK` when taken. A server about to close says `serverclose`.
//!
//! Up to [`WINDOW`] messages are in flight before their acknowledgements are read. One
//! connection is kept between batches; if it turns out to be gone, the batch is tried once
//! more on a new one. Plain TCP only: RELP over TLS is not offered.

use std::time::Duration;

use agentgov_domain::model::AuditRecord;
use agentgov_domain::ports::SiemSink;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

use crate::format::{self, Payload, SyslogOrigin};

/// Messages sent before their acknowledgements are read (rsyslog's own client sends up to 128).
pub const WINDOW: usize = 128;
/// Time allowed for connecting and opening, and for each window's acknowledgements.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest TXNR; the next one is 1.
const MAX_TXNR: u32 = 999_999_999;
/// Longest acknowledgement data read (rsyslog's are a few dozen bytes).
const MAX_RESPONSE: usize = 64 * 1024;
/// Longest command name.
const MAX_COMMAND: usize = 32;

/// A frame received from the server.
#[derive(Debug, PartialEq, Eq)]
struct Frame {
    txnr: u32,
    command: String,
    data: Vec<u8>,
}

impl Frame {
    /// The status code at the start of an `rsp`'s data (`200 OK` → 200).
    fn status(&self) -> Option<u16> {
        self.data.get(..3).and_then(|code| std::str::from_utf8(code).ok()?.parse().ok())
    }

    /// The status line, for errors (printable ASCII only, at most 100 characters).
    fn status_line(&self) -> String {
        let line = self.data.split(|b| *b == b'\n').next().unwrap_or_default();
        line.iter().take(100).filter(|b| b.is_ascii_graphic() || **b == b' ').map(|b| char::from(*b)).collect()
    }
}

/// The TXNR after `txnr`.
fn following(txnr: u32) -> u32 {
    if txnr >= MAX_TXNR { 1 } else { txnr + 1 }
}

/// A connection past its `open`, and the next TXNR to use on it.
struct Session {
    stream: BufReader<TcpStream>,
    next: u32,
}

impl Session {
    /// One frame to send, `TXNR SP COMMAND SP DATALEN [SP DATA] LF`, appended to `out`;
    /// answers its TXNR.
    fn frame(&mut self, command: &str, data: &[u8], out: &mut Vec<u8>) -> u32 {
        let txnr = self.next;
        self.next = following(txnr);
        out.extend_from_slice(format!("{txnr} {command} {}", data.len()).as_bytes());
        if !data.is_empty() {
            out.push(b' ');
            out.extend_from_slice(data);
        }
        out.push(b'\n');
        txnr
    }

    /// Reads one frame, refusing anything malformed or oversized.
    async fn read_frame(&mut self) -> std::result::Result<Frame, String> {
        let txnr = self.read_word(10).await?;
        let txnr: u32 = txnr.parse().map_err(|_| format!("bad TXNR {txnr:?}"))?;
        let command = self.read_word(MAX_COMMAND).await?;
        // DATALEN ends with a space (data follows) or, when it is 0, may end the frame.
        let mut len = String::new();
        let ended = loop {
            let b = self.stream.read_u8().await.map_err(|e| format!("reading: {e}"))?;
            match b {
                b'0'..=b'9' if len.len() < 9 => len.push(char::from(b)),
                b' ' => break false,
                b'\n' => break true,
                _ => return Err("bad DATALEN".into()),
            }
        };
        let len: usize = len.parse().map_err(|_| "bad DATALEN".to_owned())?;
        if len > MAX_RESPONSE {
            return Err(format!("a {len}-byte frame"));
        }
        let mut data = vec![0; len];
        if !ended {
            self.stream.read_exact(&mut data).await.map_err(|e| format!("reading: {e}"))?;
            if self.stream.read_u8().await.map_err(|e| format!("reading: {e}"))? != b'\n' {
                return Err("a frame without its trailer".into());
            }
        } else if len != 0 {
            return Err("a frame without its data".into());
        }
        Ok(Frame { txnr, command, data })
    }

    /// Bytes up to the next space (not included), at most `max` of them.
    async fn read_word(&mut self, max: usize) -> std::result::Result<String, String> {
        let mut word = Vec::new();
        (&mut self.stream)
            .take(max as u64 + 1)
            .read_until(b' ', &mut word)
            .await
            .map_err(|e| format!("reading: {e}"))?;
        match word.pop() {
            Some(b' ') if !word.is_empty() => String::from_utf8(word).map_err(|_| "a frame that is not text".into()),
            None => Err("connection closed".into()),
            _ => Err("a malformed frame".into()),
        }
    }

    /// Waits for the `rsp` to `txnr`, which must be `200`.
    async fn acknowledged(&mut self, txnr: u32) -> std::result::Result<Frame, String> {
        let frame = self.read_frame().await?;
        if frame.command == "serverclose" {
            return Err("the receiver closed the session".into());
        }
        if frame.command != "rsp" || frame.txnr != txnr {
            return Err(format!("expected the answer to {txnr}, got {} {}", frame.txnr, frame.command));
        }
        match frame.status() {
            Some(200) => Ok(frame),
            _ => Err(format!("the receiver refused: {}", frame.status_line())),
        }
    }
}

pub struct RelpSink {
    /// `host:port`, as configured.
    addr: String,
    payload: Payload,
    origin: SyslogOrigin,
    version: String,
    session: Mutex<Option<Session>>,
}

impl RelpSink {
    /// A sink to the RELP receiver at `addr` (`host:port`); an error for an address that is
    /// not `host:port`. Nothing is sent yet.
    pub fn new(addr: &str, payload: Payload, origin: SyslogOrigin, version: &str) -> std::result::Result<Self, String> {
        crate::syslog::host_of(addr)?;
        Ok(Self { addr: addr.to_owned(), payload, origin, version: version.to_owned(), session: Mutex::new(None) })
    }

    /// Connects and opens a session.
    async fn open(&self) -> std::result::Result<Session, String> {
        let tcp = TcpStream::connect(self.addr.as_str()).await.map_err(|e| format!("connect: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        let mut session = Session { stream: BufReader::new(tcp), next: 1 };
        let offer = format!("relp_version=0\nrelp_software=agentgov,{},-\ncommands=syslog", self.version);
        let mut out = Vec::new();
        let txnr = session.frame("open", offer.as_bytes(), &mut out);
        session.stream.write_all(&out).await.map_err(|e| format!("writing: {e}"))?;
        let answer = session.acknowledged(txnr).await?;
        let offers_syslog = String::from_utf8_lossy(&answer.data)
            .lines()
            .filter_map(|l| l.strip_prefix("commands="))
            .any(|commands| commands.split(',').any(|c| c == "syslog"));
        if !offers_syslog {
            return Err("the receiver does not take syslog messages".into());
        }
        Ok(session)
    }

    /// Sends `messages` on `session`, a window at a time, each window acknowledged in full.
    async fn send_on(session: &mut Session, messages: &[String]) -> std::result::Result<(), String> {
        for window in messages.chunks(WINDOW) {
            let mut out = Vec::new();
            let mut pending = Vec::with_capacity(window.len());
            for msg in window {
                pending.push(session.frame("syslog", msg.as_bytes(), &mut out));
            }
            session.stream.write_all(&out).await.map_err(|e| format!("writing: {e}"))?;
            let acknowledged = async {
                for txnr in pending {
                    session.acknowledged(txnr).await?;
                }
                Ok::<(), String>(())
            };
            tokio::time::timeout(TIMEOUT, acknowledged)
                .await
                .map_err(|_| "no acknowledgement in time".to_owned())??;
        }
        Ok(())
    }

    fn unavailable(&self, why: &str) -> DomainError {
        crate::syslog::unavailable(&self.addr, self.kind(), why)
    }
}

#[async_trait]
impl SiemSink for RelpSink {
    fn kind(&self) -> &'static str {
        "syslog-relp"
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
        let messages: Vec<String> =
            records.iter().map(|r| format::syslog(r, &self.origin, &self.payload.text(r, &self.version))).collect();
        let mut kept = self.session.lock().await;
        // A kept session may have ended since the last batch: one fresh attempt more.
        let reused = kept.is_some();
        for attempt in 0..2 {
            let mut session = match kept.take() {
                Some(session) => session,
                None => tokio::time::timeout(TIMEOUT, self.open())
                    .await
                    .map_err(|_| self.unavailable("opening the session timed out"))?
                    .map_err(|e| self.unavailable(&e))?,
            };
            match Self::send_on(&mut session, &messages).await {
                Ok(()) => {
                    *kept = Some(session);
                    return Ok(());
                }
                Err(e) if attempt == 0 && reused => {
                    tracing::debug!(error = %e, "RELP session lost; opening another");
                }
                Err(e) => return Err(self.unavailable(&e)),
            }
        }
        Err(self.unavailable("could not send"))
    }
}

#[cfg(test)]
mod tests {
    use tokio::net::TcpListener;

    use super::*;
    use crate::testing::record;

    fn origin() -> SyslogOrigin {
        SyslogOrigin { facility: 13, hostname: "gov-1".into(), app_name: "agentgov".into() }
    }

    /// A RELP server that answers `open` as `open_answer` says, then each `syslog` with
    /// `status` (or closes after `close_after` messages); it returns the messages it took.
    async fn server(
        open_answer: &'static str,
        status: &'static str,
        close_after: Option<usize>,
    ) -> (String, tokio::task::JoinHandle<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let task = tokio::spawn(async move {
            // One connection: the sink under test keeps its session.
            let mut taken = Vec::new();
            let (tcp, _) = listener.accept().await.unwrap();
            let mut session = Session { stream: BufReader::new(tcp), next: 1 };
            while let Ok(frame) = session.read_frame().await {
                let answer = match frame.command.as_str() {
                    "open" => open_answer.to_owned(),
                    "syslog" if close_after.is_some_and(|n| taken.len() >= n) => break,
                    "syslog" => {
                        taken.push(String::from_utf8(frame.data).unwrap());
                        status.to_owned()
                    }
                    _ => "500 unknown".to_owned(),
                };
                let reply = format!("{} rsp {} {answer}\n", frame.txnr, answer.len());
                if session.stream.write_all(reply.as_bytes()).await.is_err() {
                    break;
                }
            }
            taken
        });
        (addr, task)
    }

    const OPEN_OK: &str = "200 OK\nrelp_version=0\nrelp_software=test\ncommands=syslog";

    #[tokio::test]
    async fn every_message_is_sent_once_and_acknowledged_across_windows() {
        let (addr, task) = server(OPEN_OK, "200 OK", None).await;
        let sink = RelpSink::new(&addr, Payload::Cef, origin(), "0.1.0").unwrap();
        let records: Vec<_> = (1..=300).map(record).collect();
        sink.send(&records[..200]).await.unwrap();
        sink.send(&records[200..]).await.unwrap();
        assert_eq!((sink.kind(), sink.format(), sink.destination()), ("syslog-relp", "cef", addr.clone()));
        drop(sink);
        let taken = task.await.unwrap();
        assert_eq!(taken.len(), 300, "one session, every message once");
        assert!(taken[0].starts_with("<") && taken[0].contains(" - CEF:0|agentgov|"), "{}", taken[0]);
    }

    #[tokio::test]
    async fn a_refusal_or_a_receiver_that_closes_mid_batch_fails_the_batch() {
        let (addr, _task) = server(OPEN_OK, "500 queue full", None).await;
        let sink = RelpSink::new(&addr, Payload::Json, origin(), "1").unwrap();
        assert!(matches!(sink.send(&[record(1)]).await, Err(DomainError::Unavailable(_))));

        let (addr, task) = server(OPEN_OK, "200 OK", Some(5)).await;
        let sink = RelpSink::new(&addr, Payload::Json, origin(), "1").unwrap();
        let records: Vec<_> = (1..=10).map(record).collect();
        assert!(matches!(sink.send(&records).await, Err(DomainError::Unavailable(_))));
        assert_eq!(task.await.unwrap().len(), 5);

        let (addr, _task) = server("200 OK\nrelp_version=0\ncommands=", "200 OK", None).await;
        let sink = RelpSink::new(&addr, Payload::Json, origin(), "1").unwrap();
        assert!(sink.send(&[record(1)]).await.is_err(), "a receiver that takes no syslog");

        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
        let sink = RelpSink::new(&closed, Payload::Json, origin(), "1").unwrap();
        assert!(matches!(sink.send(&[record(1)]).await, Err(DomainError::Unavailable(_))));
        assert!(RelpSink::new("no-port", Payload::Cef, origin(), "1").is_err());
    }

    #[tokio::test]
    async fn frames_are_read_strictly() {
        async fn read(bytes: &'static [u8]) -> std::result::Result<Frame, String> {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                let (mut tcp, _) = listener.accept().await.unwrap();
                tcp.write_all(bytes).await.unwrap();
            });
            let tcp = TcpStream::connect(addr).await.unwrap();
            Session { stream: BufReader::new(tcp), next: 1 }.read_frame().await
        }
        assert_eq!(
            read(b"7 rsp 6 200 OK\n").await.unwrap(),
            Frame { txnr: 7, command: "rsp".into(), data: b"200 OK".to_vec() }
        );
        assert_eq!(read(b"0 serverclose 0\n").await.unwrap().command, "serverclose");
        for bad in [&b"x rsp 6 200 OK\n"[..], b"7 rsp 6 200 OKX", b"7 rsp 99999999999 a\n", b"7 rsp 3\n", b"7 rsp"] {
            assert!(read(bad).await.is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn txnr_counts_from_one_and_wraps() {
        assert_eq!((following(1), following(MAX_TXNR - 1), following(MAX_TXNR)), (2, MAX_TXNR, 1));
    }
}
