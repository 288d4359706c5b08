//! Splunk HTTP Event Collector sink: batches of [`format::hec`] events POSTed to
//! `/services/collector/event` with `Authorization: Splunk <token>`.
//!
//! One `reqwest` client (rustls with ring; the webpki roots, or only the CA certificates
//! given), built once, following no redirects (a POST carrying the token is not sent
//! anywhere else), with a timeout on each request. A batch is sent in requests of at most
//! [`MAX_BODY`] bytes, in order, stopping at the first that fails.
//!
//! Every failure is [`DomainError::Unavailable`], so the caller keeps the records and
//! retries: a refusal (HTTP 400, 401, 403, 404, …) is most often a configuration Splunk's
//! side can fix (a disabled token, a missing index) without the records being at fault.
//! 429, 5xx and transport failures say `splunk-hec`; a refusal also says its status and
//! Splunk's `text`, and is logged at warn with Splunk's `text` and `code`. The token is never
//! logged nor part of [`SiemSink::destination`].

use std::time::Duration;

use agentgov_domain::model::AuditRecord;
use agentgov_domain::ports::SiemSink;
use agentgov_domain::{DomainError, Result};
use async_trait::async_trait;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};
use serde_json::Value;

use crate::format::{self, Payload};
use crate::tls;

/// Largest request body: a bigger batch is split (Splunk takes far more by default, but
/// modest requests keep a slow link and a proxy's limits out of the way). A single event
/// larger than this is sent alone.
pub const MAX_BODY: usize = 1024 * 1024;

/// Time allowed for each request, connecting included.
pub const TIMEOUT: Duration = Duration::from_secs(10);

const SERVICE: &str = "splunk-hec";
/// How much of a response body is read (Splunk's answers are a few dozen bytes).
const MAX_RESPONSE: usize = 16 * 1024;
/// How much of Splunk's `text` goes into an error or a log line.
const MAX_TEXT: usize = 200;
const CHANNEL: HeaderName = HeaderName::from_static("x-splunk-request-channel");

/// The HEC sink's settings besides the URL and the token.
#[derive(Debug, Clone)]
pub struct HecOptions<'a> {
    /// The events' `host`.
    pub host: &'a str,
    /// The events' `source`.
    pub source: &'a str,
    /// The events' `sourcetype`.
    pub sourcetype: &'a str,
    /// The events' `index`; `None` for the token's default index.
    pub index: Option<&'a str>,
    /// Sent as `X-Splunk-Request-Channel` (a GUID; needed when indexer acknowledgement is
    /// on for the token).
    pub channel: Option<&'a str>,
    /// The contents of a PEM file of CA certificates to verify an `https` collector
    /// against, instead of the webpki roots (a private CA).
    pub ca_pem: Option<&'a [u8]>,
    /// Accept any certificate. For tests only: it makes TLS worthless, and sends the token
    /// to whoever answers.
    pub insecure_skip_verify: bool,
    /// Each event's body: [`Payload::Json`] (the default) or [`Payload::Ocsf`].
    pub payload: Payload,
    /// This program's version, for OCSF's `metadata.product.version`.
    pub version: &'a str,
}

impl Default for HecOptions<'_> {
    fn default() -> Self {
        Self {
            host: "agentgov",
            source: "agentgov",
            sourcetype: "agentgov:audit",
            index: None,
            channel: None,
            ca_pem: None,
            insecure_skip_verify: false,
            payload: Payload::Json,
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

pub struct HecSink {
    client: reqwest::Client,
    endpoint: Url,
    /// `Splunk <token>`, marked sensitive.
    authorization: HeaderValue,
    channel: Option<HeaderValue>,
    host: String,
    source: String,
    sourcetype: String,
    index: Option<String>,
    payload: Payload,
    version: String,
    max_body: usize,
}

/// The URL events are posted to: `url` itself when it already ends in
/// `/services/collector` or `/services/collector/event`, else `url` with
/// `/services/collector/event` appended. Its query, if any, is kept.
fn endpoint(url: &str) -> Result<Url, String> {
    let mut url = Url::parse(url.trim()).map_err(|e| format!("HEC URL is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("HEC URL must be http:// or https://, not {}://", url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("HEC URL has no host".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("HEC URL must not contain credentials; set the token instead".into());
    }
    url.set_fragment(None);
    let segments: Vec<String> =
        url.path_segments().map(|s| s.filter(|s| !s.is_empty()).map(str::to_owned).collect()).unwrap_or_default();
    let tail: Vec<&str> = segments.iter().map(String::as_str).collect();
    let complete = tail.ends_with(&["services", "collector"]) || tail.ends_with(&["services", "collector", "event"]);
    {
        let mut path = url.path_segments_mut().map_err(|()| "HEC URL cannot have a path".to_owned())?;
        path.pop_if_empty();
        if !complete {
            path.extend(["services", "collector", "event"]);
        }
    }
    Ok(url)
}

impl HecSink {
    /// Checks the settings and builds the HTTP client; nothing is sent yet. `url` is the
    /// collector's base URL (`https://splunk.example.com:8088`) or its endpoint. An error for
    /// a URL that is not `http(s)://host…` or carries credentials, an empty token or channel,
    /// one that cannot be sent in a header, or a bad CA file.
    pub fn new(url: &str, token: &str, options: HecOptions<'_>) -> Result<Self, String> {
        let endpoint = endpoint(url)?;
        let token = token.trim();
        if token.is_empty() {
            return Err("HEC token is empty".into());
        }
        let mut authorization = HeaderValue::from_str(&format!("Splunk {token}"))
            // The error says nothing of the value; do not even hint at it.
            .map_err(|_| "HEC token contains characters not allowed in an HTTP header".to_owned())?;
        authorization.set_sensitive(true);
        let channel = match options.channel.map(str::trim) {
            None => None,
            Some("") => return Err("HEC channel is empty; leave it unset instead".into()),
            Some(c) => Some(
                HeaderValue::from_str(c)
                    .map_err(|_| "HEC channel contains characters not allowed in an HTTP header".to_owned())?,
            ),
        };
        if options.payload == Payload::Cef {
            return Err("HEC events are json or ocsf, not cef".into());
        }
        if options.index.is_some_and(|i| i.trim().is_empty()) {
            return Err("HEC index is empty; leave it unset for the token's default".into());
        }
        let mut builder = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            // A POST must not be turned into a GET, nor the token sent elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("agentgov/", env!("CARGO_PKG_VERSION")));
        if let Some(pem) = options.ca_pem {
            builder = builder.tls_built_in_root_certs(false);
            for cert in tls::ca_certificates(pem)? {
                let cert = reqwest::Certificate::from_der(cert.as_ref()).map_err(|e| format!("CA file: {e}"))?;
                builder = builder.add_root_certificate(cert);
            }
        }
        if options.insecure_skip_verify {
            builder = builder.danger_accept_invalid_certs(true);
        }
        let client = builder.build().map_err(|e| format!("HTTP client: {e}"))?;
        Ok(Self {
            client,
            endpoint,
            authorization,
            channel,
            host: options.host.to_owned(),
            source: options.source.to_owned(),
            sourcetype: options.sourcetype.to_owned(),
            index: options.index.map(|i| i.trim().to_owned()),
            payload: options.payload,
            version: options.version.to_owned(),
            max_body: MAX_BODY,
        })
    }

    /// The URL requests are posted to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }

    /// The endpoint without query or fragment (and never credentials, refused by `new`).
    fn bare_endpoint(&self) -> String {
        let mut url = self.endpoint.clone();
        url.set_query(None);
        url.set_fragment(None);
        url.to_string()
    }

    fn event(&self, r: &AuditRecord) -> String {
        let event = self.payload.object(r, &self.version).unwrap_or_else(|| format::json(r));
        format::hec(r, event, &self.host, &self.source, &self.sourcetype, self.index.as_deref())
    }

    /// One request; `events` is how many it carries (for the logs).
    async fn post(&self, body: String, events: usize) -> Result<()> {
        let mut request = self
            .client
            .post(self.endpoint.clone())
            .header(AUTHORIZATION, self.authorization.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(channel) = &self.channel {
            request = request.header(CHANNEL, channel.clone());
        }
        let response = request.send().await.map_err(|e| self.transport_error(e))?;
        let status = response.status();
        // Read (a little of) the answer even on success, so the connection can be reused.
        let answer = read_capped(response).await;
        if status.is_success() {
            return Ok(());
        }
        let (text, code) = self.splunk_reply(&answer);
        let destination = self.bare_endpoint();
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            tracing::warn!(%destination, status = status.as_u16(), text, code, events, "{SERVICE} unavailable");
            return Err(DomainError::Unavailable(SERVICE.into()));
        }
        tracing::warn!(%destination, status = status.as_u16(), text, code, events, "{SERVICE} refused the events");
        Err(DomainError::Unavailable(format!("{SERVICE} (HTTP {}: {text})", status.as_u16())))
    }

    /// Splunk's `text` and `code` from an error answer (`{"text":"Invalid token","code":4}`),
    /// or an excerpt of whatever else it is; the token scrubbed should it be echoed.
    fn splunk_reply(&self, answer: &[u8]) -> (String, Option<i64>) {
        let parsed: Option<Value> = serde_json::from_slice(answer).ok();
        let code = parsed.as_ref().and_then(|v| v.get("code")).and_then(Value::as_i64);
        let text = match parsed.as_ref().and_then(|v| v.get("text")).and_then(Value::as_str) {
            Some(t) => t.to_owned(),
            None => String::from_utf8_lossy(answer).trim().to_owned(),
        };
        let text = match self.authorization.to_str().ok().and_then(|a| a.strip_prefix("Splunk ")) {
            Some(token) => text.replace(token, "****"),
            None => text,
        };
        let mut excerpt: String = text.chars().filter(|c| !c.is_control()).take(MAX_TEXT).collect();
        if text.chars().count() > MAX_TEXT {
            excerpt.push('…');
        }
        (excerpt, code)
    }

    fn transport_error(&self, error: reqwest::Error) -> DomainError {
        let kind = if error.is_timeout() {
            "timed out"
        } else if error.is_connect() {
            "cannot connect"
        } else {
            "request failed"
        };
        // The endpoint is logged on its own, without its query.
        let error = error.without_url();
        let mut cause = format!("{kind}: {error}");
        let mut source = std::error::Error::source(&error);
        while let Some(inner) = source {
            cause.push_str(": ");
            cause.push_str(&inner.to_string());
            source = inner.source();
        }
        tracing::warn!(destination = %self.bare_endpoint(), cause, "{SERVICE} unavailable");
        DomainError::Unavailable(SERVICE.into())
    }
}

/// Up to [`MAX_RESPONSE`] bytes of the response body (less if reading fails).
async fn read_capped(mut response: reqwest::Response) -> Vec<u8> {
    let mut out = Vec::new();
    while out.len() < MAX_RESPONSE {
        match response.chunk().await {
            Ok(Some(chunk)) => out.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    out.truncate(MAX_RESPONSE);
    out
}

#[async_trait]
impl SiemSink for HecSink {
    fn kind(&self) -> &'static str {
        "splunk-hec"
    }

    fn destination(&self) -> String {
        self.bare_endpoint()
    }

    fn format(&self) -> &'static str {
        self.payload.name()
    }

    async fn send(&self, records: &[AuditRecord]) -> Result<()> {
        let mut body = String::new();
        let mut events = 0;
        for r in records {
            let event = self.event(r);
            if events > 0 && body.len() + event.len() > self.max_body {
                self.post(std::mem::take(&mut body), events).await?;
                events = 0;
            }
            body.push_str(&event);
            events += 1;
        }
        if events > 0 {
            self.post(body, events).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::net::SocketAddr;
    use std::sync::{Arc, Mutex};

    use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
    use tokio::net::TcpListener;
    use tokio_rustls::TlsAcceptor;

    use super::*;
    use crate::testing::{Captured, localhost_tls, record, record_with};

    const TOKEN: &str = "8c5a2d6e-0000-4000-8000-5ec7e70c3e75";
    const CHANNEL_ID: &str = "0aeeac95-ac74-4aa9-b30d-6c4c0ac581ba";

    /// One request the stub received.
    #[derive(Debug, Clone)]
    struct Request {
        path: String,
        headers: HashMap<String, String>,
        body: String,
    }

    impl Request {
        /// The body's events: JSON objects one after another.
        fn events(&self) -> Vec<Value> {
            serde_json::Deserializer::from_str(&self.body).into_iter::<Value>().map(Result::unwrap).collect()
        }
    }

    /// A Splunk HEC stand-in speaking just enough HTTP/1.1 (keep-alive, Content-Length
    /// bodies): it checks `Authorization: Splunk <TOKEN>` and answers with the configured
    /// status and body.
    struct Stub {
        addr: SocketAddr,
        requests: Arc<Mutex<Vec<Request>>>,
        answer: Arc<Mutex<(u16, String)>>,
    }

    impl Stub {
        async fn start(tls: Option<TlsAcceptor>) -> Stub {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let stub = Stub {
                addr: listener.local_addr().unwrap(),
                requests: Arc::default(),
                answer: Arc::new(Mutex::new((200, r#"{"text":"Success","code":0}"#.into()))),
            };
            let (requests, answer) = (stub.requests.clone(), stub.answer.clone());
            tokio::spawn(async move {
                loop {
                    let Ok((tcp, _)) = listener.accept().await else { return };
                    let (requests, answer, tls) = (requests.clone(), answer.clone(), tls.clone());
                    tokio::spawn(async move {
                        match tls {
                            None => serve(tcp, requests, answer).await,
                            Some(acceptor) => {
                                if let Ok(stream) = acceptor.accept(tcp).await {
                                    serve(stream, requests, answer).await;
                                }
                            }
                        }
                    });
                }
            });
            stub
        }

        fn answer(&self, status: u16, body: &str) {
            *self.answer.lock().unwrap() = (status, body.into());
        }

        fn requests(&self) -> Vec<Request> {
            self.requests.lock().unwrap().clone()
        }

        fn url(&self, scheme: &str) -> String {
            format!("{scheme}://localhost:{}", self.addr.port())
        }
    }

    async fn serve(
        stream: impl AsyncRead + AsyncWrite + Unpin,
        requests: Arc<Mutex<Vec<Request>>>,
        answer: Arc<Mutex<(u16, String)>>,
    ) {
        let mut stream = BufReader::new(stream);
        loop {
            let mut line = String::new();
            if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            let path = line.split_whitespace().nth(1).unwrap_or_default().to_owned();
            let mut headers = HashMap::new();
            loop {
                let mut header = String::new();
                if stream.read_line(&mut header).await.unwrap_or(0) == 0 {
                    return;
                }
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                let (name, value) = header.split_once(':').unwrap();
                headers.insert(name.to_ascii_lowercase(), value.trim().to_owned());
            }
            let len: usize = headers.get("content-length").map_or(0, |v| v.parse().unwrap());
            let mut body = vec![0u8; len];
            if stream.read_exact(&mut body).await.is_err() {
                return;
            }
            let authorized = headers.get("authorization").is_some_and(|a| *a == format!("Splunk {TOKEN}"));
            let (status, reply) = if authorized {
                answer.lock().unwrap().clone()
            } else {
                (401, r#"{"text":"Token is required","code":2}"#.to_owned())
            };
            requests.lock().unwrap().push(Request { path, headers, body: String::from_utf8(body).unwrap() });
            let response = format!(
                "HTTP/1.1 {status} Stub\r\nContent-Type: application/json; charset=UTF-8\r\nContent-Length: {}\r\n\r\n{reply}",
                reply.len()
            );
            if stream.get_mut().write_all(response.as_bytes()).await.is_err() {
                return;
            }
        }
    }

    fn sink(url: &str) -> HecSink {
        HecSink::new(url, TOKEN, HecOptions::default()).unwrap()
    }

    fn seqs(requests: &[Request]) -> Vec<i64> {
        requests.iter().flat_map(Request::events).map(|e| e["event"]["seq"].as_i64().unwrap()).collect()
    }

    #[tokio::test]
    async fn events_arrive_in_order_with_the_token_index_and_channel() {
        let stub = Stub::start(None).await;
        let options =
            HecOptions { host: "gov-1", index: Some("security"), channel: Some(CHANNEL_ID), ..HecOptions::default() };
        let sink = HecSink::new(&stub.url("http"), TOKEN, options).unwrap();
        assert_eq!((sink.kind(), sink.format()), ("splunk-hec", "json"));
        let records: Vec<_> = (1..=5).map(record).collect();
        sink.send(&records).await.unwrap();
        sink.send(&[]).await.unwrap();
        let requests = stub.requests();
        assert_eq!(requests.len(), 1, "one request for a small batch, none for an empty one");
        let request = &requests[0];
        assert_eq!(request.path, "/services/collector/event");
        assert_eq!(request.headers["authorization"], format!("Splunk {TOKEN}"));
        assert_eq!(request.headers["content-type"], "application/json");
        assert_eq!(request.headers["x-splunk-request-channel"], CHANNEL_ID);
        assert_eq!(seqs(&requests), [1, 2, 3, 4, 5]);
        let events = request.events();
        assert_eq!(events[0]["index"], "security");
        assert_eq!(events[0]["host"], "gov-1");
        assert_eq!(events[0]["sourcetype"], "agentgov:audit");
        assert_eq!(events[4]["event"]["details"]["text"], "ünïcode");
        assert_eq!(events[0]["time"], 1_790_000_001.0);

        // Without index or channel: neither is sent.
        sink_without_extras(&stub).await;
    }

    async fn sink_without_extras(stub: &Stub) {
        let sink = sink(&format!("{}/services/collector", stub.url("http")));
        sink.send(&[record(9)]).await.unwrap();
        let last = stub.requests().pop().unwrap();
        assert_eq!(last.path, "/services/collector", "an endpoint given is used as is");
        assert!(!last.headers.contains_key("x-splunk-request-channel"));
        assert!(last.events()[0].get("index").is_none());
    }

    #[tokio::test]
    async fn a_large_batch_is_split_into_requests_of_at_most_1_mib_in_order() {
        let stub = Stub::start(None).await;
        let sink = sink(&stub.url("http"));
        // 30 records of about 100 KB: 3 MB, so 3 requests at least.
        let big = "x".repeat(100_000);
        let records: Vec<_> = (1..=30).map(|seq| record_with(seq, serde_json::json!({"blob": big}))).collect();
        sink.send(&records).await.unwrap();
        let requests = stub.requests();
        assert!(requests.len() >= 3, "{} requests", requests.len());
        for r in &requests {
            assert!(r.body.len() <= MAX_BODY, "{} bytes", r.body.len());
        }
        assert_eq!(seqs(&requests), (1..=30).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_busy_collector_is_unavailable_and_the_rest_of_the_batch_is_not_sent() {
        let stub = Stub::start(None).await;
        stub.answer(503, r#"{"text":"Server is busy","code":9}"#);
        let mut sink = sink(&stub.url("http"));
        sink.max_body = 1; // one event per request
        let err = sink.send(&[record(1), record(2), record(3)]).await.unwrap_err();
        assert!(matches!(&err, DomainError::Unavailable(s) if s == "splunk-hec"), "{err:?}");
        assert_eq!(seqs(&stub.requests()), [1], "stops at the first failure");

        stub.answer(429, "");
        assert!(matches!(sink.send(&[record(1)]).await, Err(DomainError::Unavailable(_))));

        // Back: every event, in order, one request each.
        stub.answer(200, r#"{"text":"Success","code":0}"#);
        sink.send(&[record(1), record(2), record(3)]).await.unwrap();
        assert_eq!(seqs(&stub.requests()[2..]), [1, 2, 3]);
    }

    #[tokio::test]
    async fn a_refusal_is_an_error_naming_splunks_text_and_never_the_token() {
        let logs = Captured::default();
        let subscriber = tracing_subscriber::fmt().with_writer(logs.clone()).with_ansi(false).finish();
        // A current-thread runtime: the whole test runs on this thread.
        let _guard = tracing::subscriber::set_default(subscriber);

        let stub = Stub::start(None).await;
        stub.answer(403, r#"{"text":"Invalid token","code":4}"#);
        let sink = sink(&format!("{}?pass=through", stub.url("http")));
        let err = sink.send(&[record(1)]).await.unwrap_err();
        let DomainError::Unavailable(what) = &err else { panic!("{err:?}") };
        assert!(what.contains("403") && what.contains("Invalid token"), "{what}");

        // A wrong token: the stub's own 401.
        let wrong = HecSink::new(&stub.url("http"), "not-the-token", HecOptions::default()).unwrap();
        assert!(matches!(wrong.send(&[record(1)]).await, Err(DomainError::Unavailable(s)) if s.contains("401")));

        // A 404 whose body is not Splunk's JSON.
        stub.answer(404, "<html>Not Found</html>");
        let err = sink.send(&[record(1)]).await.unwrap_err();
        assert!(err.to_string().contains("404"), "{err}");

        let text = logs.text();
        assert_eq!(text.matches("WARN").count(), 3, "{text}");
        assert!(text.contains("status=403") && text.contains("Invalid token") && text.contains("code=4"), "{text}");
        assert!(text.contains("Not Found"), "{text}");
        assert!(!text.contains(TOKEN) && !text.contains("not-the-token"), "{text}");
        assert!(!text.contains("pass=through"), "the query is not logged: {text}");
    }

    #[tokio::test]
    async fn no_collector_or_a_wrong_one_is_unavailable() {
        // Nothing listening.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let err = sink(&format!("http://127.0.0.1:{port}")).send(&[record(1)]).await.unwrap_err();
        assert!(matches!(&err, DomainError::Unavailable(s) if s == "splunk-hec"), "{err:?}");

        // Something that is not HTTP: it closes the connection at once.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                drop(conn);
            }
        });
        assert!(matches!(sink(&format!("http://{addr}")).send(&[record(1)]).await, Err(DomainError::Unavailable(_))));

        // https to a plain HTTP collector.
        let stub = Stub::start(None).await;
        assert!(matches!(sink(&stub.url("https")).send(&[record(1)]).await, Err(DomainError::Unavailable(_))));
        assert!(stub.requests().is_empty());
    }

    #[tokio::test]
    async fn https_with_a_private_ca_or_for_tests_no_verification() {
        let server = localhost_tls();
        let stub = Stub::start(Some(server.acceptor.clone())).await;
        let url = stub.url("https");

        let trusted =
            HecSink::new(&url, TOKEN, HecOptions { ca_pem: Some(server.ca_pem.as_bytes()), ..HecOptions::default() })
                .unwrap();
        trusted.send(&[record(1), record(2)]).await.unwrap();

        // The webpki roots do not hold the self-signed certificate, nor another CA.
        let untrusted = sink(&url);
        assert!(matches!(untrusted.send(&[record(3)]).await, Err(DomainError::Unavailable(_))));
        let other_ca = localhost_tls().ca_pem;
        let wrong_ca =
            HecSink::new(&url, TOKEN, HecOptions { ca_pem: Some(other_ca.as_bytes()), ..HecOptions::default() })
                .unwrap();
        assert!(matches!(wrong_ca.send(&[record(3)]).await, Err(DomainError::Unavailable(_))));

        let insecure =
            HecSink::new(&url, TOKEN, HecOptions { insecure_skip_verify: true, ..HecOptions::default() }).unwrap();
        insecure.send(&[record(4)]).await.unwrap();
        assert_eq!(seqs(&stub.requests()), [1, 2, 4]);
    }

    #[test]
    fn settings_are_checked_and_the_destination_has_no_credentials() {
        let endpoint = |url: &str| HecSink::new(url, TOKEN, HecOptions::default()).map(|s| s.endpoint().to_owned());
        let destination = |url: &str| sink(url).destination();
        assert_eq!(
            endpoint("https://splunk.example.com:8088").unwrap(),
            "https://splunk.example.com:8088/services/collector/event"
        );
        assert_eq!(
            endpoint(" https://splunk.example.com/ ").unwrap(),
            "https://splunk.example.com/services/collector/event"
        );
        assert_eq!(
            endpoint("https://gw.example.com/splunk/").unwrap(),
            "https://gw.example.com/splunk/services/collector/event"
        );
        assert_eq!(
            endpoint("https://s.example.com/services/collector").unwrap(),
            "https://s.example.com/services/collector"
        );
        assert_eq!(
            endpoint("https://s.example.com/services/collector/event/").unwrap(),
            "https://s.example.com/services/collector/event"
        );
        assert_eq!(
            endpoint("http://s.example.com:8088/?a=b#f").unwrap(),
            "http://s.example.com:8088/services/collector/event?a=b"
        );
        assert_eq!(
            destination("https://s.example.com:8088/?a=b#f"),
            "https://s.example.com:8088/services/collector/event"
        );
        assert!(!destination("https://s.example.com").contains(TOKEN));

        assert!(endpoint("https://admin:secret@s.example.com").unwrap_err().contains("credentials"));
        assert!(endpoint("ftp://s.example.com").is_err());
        assert!(endpoint("s.example.com:8088").is_err());
        assert!(endpoint("not a url").is_err());
        let new =
            |token: &str, options: HecOptions<'_>| HecSink::new("https://s.example.com", token, options).map(|_| ());
        assert!(new(" ", HecOptions::default()).is_err());
        assert!(new("tok\nen", HecOptions::default()).unwrap_err().contains("header"));
        assert!(new(TOKEN, HecOptions { channel: Some(""), ..HecOptions::default() }).is_err());
        assert!(new(TOKEN, HecOptions { index: Some(" "), ..HecOptions::default() }).is_err());
        assert!(
            new(TOKEN, HecOptions { ca_pem: Some(b"garbage"), ..HecOptions::default() })
                .unwrap_err()
                .contains("CA file")
        );
        let not_a_cert = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        assert!(new(TOKEN, HecOptions { ca_pem: Some(not_a_cert), ..HecOptions::default() }).is_err());
    }
}
