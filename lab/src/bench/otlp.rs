//! OpenTelemetry export, off against on: the same policy checks on two fresh servers, one
//! exporting a guardrail span per decision over OTLP/HTTP to [`Sink`], a collector
//! stand-in on loopback that decodes every export and counts its spans.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;
use prost::Message;

/// `ExportTraceServiceRequest` as far as counting its spans needs: the same field numbers,
/// each span kept as its bytes (prost skips the other fields), so the stand-in, which
/// shares the machine's cores with the server, does not build every attribute of every span.
#[derive(Clone, PartialEq, Message)]
struct Export {
    #[prost(message, repeated, tag = "1")]
    resource_spans: Vec<ResourceSpans>,
}

#[derive(Clone, PartialEq, Message)]
struct ResourceSpans {
    #[prost(message, repeated, tag = "2")]
    scope_spans: Vec<ScopeSpans>,
}

#[derive(Clone, PartialEq, Message)]
struct ScopeSpans {
    #[prost(bytes = "vec", repeated, tag = "2")]
    spans: Vec<Vec<u8>>,
}

/// A collector stand-in: OTLP/HTTP with protobuf bodies on `POST /v1/traces`, every
/// request decoded, its spans counted; answered 200 with an empty (valid) response.
pub struct Sink {
    pub endpoint: String,
    spans: Arc<AtomicU64>,
    rejected: Arc<AtomicU64>,
}

impl Sink {
    pub fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").context("binding the OTLP sink")?;
        let endpoint = format!("http://{}", listener.local_addr()?);
        let (spans, rejected) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let (s, r) = (spans.clone(), rejected.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (s, r) = (s.clone(), r.clone());
                std::thread::spawn(move || serve(stream, &s, &r));
            }
        });
        Ok(Sink { endpoint, spans, rejected })
    }

    /// Spans received so far.
    pub fn spans(&self) -> u64 {
        self.spans.load(Ordering::Relaxed)
    }

    /// Requests that were not a decodable export.
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }
}

/// Serves one keep-alive connection until the client closes it.
fn serve(stream: TcpStream, spans: &AtomicU64, rejected: &AtomicU64) {
    let Ok(mut writer) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let status = match Export::decode(body.as_slice()) {
            Ok(export) if request_line.starts_with("POST /v1/traces ") => {
                let n: usize = export.resource_spans.iter().flat_map(|r| &r.scope_spans).map(|s| s.spans.len()).sum();
                spans.fetch_add(n as u64, Ordering::Relaxed);
                "200 OK"
            }
            _ => {
                rejected.fetch_add(1, Ordering::Relaxed);
                "400 Bad Request"
            }
        };
        let answer = format!("HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n");
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
    use prost::Message;

    #[test]
    fn the_skeleton_counts_the_spans_of_a_real_export() {
        let span = |name: &str| Span { name: name.into(), ..Span::default() };
        let scope =
            |n: usize| ScopeSpans { spans: (0..n).map(|i| span(&format!("s{i}"))).collect(), ..ScopeSpans::default() };
        let request = ExportTraceServiceRequest {
            resource_spans: vec![
                ResourceSpans { scope_spans: vec![scope(3), scope(2)], ..ResourceSpans::default() },
                ResourceSpans { scope_spans: vec![scope(4)], ..ResourceSpans::default() },
            ],
        };
        let decoded = super::Export::decode(request.encode_to_vec().as_slice()).unwrap();
        let n: usize = decoded.resource_spans.iter().flat_map(|r| &r.scope_spans).map(|s| s.spans.len()).sum();
        assert_eq!(n, 9);
    }
}
