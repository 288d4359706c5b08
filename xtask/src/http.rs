//! A minimal HTTP/1.1 client over one keep-alive `TcpStream`, for the many small requests of a
//! set-up step (registering thousands of agents) or of a long mixed load (`crash`, `soak`,
//! `faults`), where starting a `curl` per request would cost more than the request. Plain
//! `http://` on loopback, GET and POST with JSON bodies, nothing else.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, bail};

const TIMEOUT: Duration = Duration::from_secs(60);

/// A response: its status, `Content-Type` (empty when there was none) and body as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

impl Response {
    /// Whether the body is an RFC 9457 problem (`application/problem+json`).
    pub fn is_problem(&self) -> bool {
        self.content_type.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("application/problem+json"))
    }
}

/// One connection, opened at the first request and again after the server closes it.
pub struct Connection {
    authority: String,
    timeout: Duration,
    stream: Option<BufReader<TcpStream>>,
}

impl Connection {
    /// A connection to `base` (`http://host:port`); nothing is opened yet. Reads and writes
    /// give up after 60 s.
    pub fn new(base: &str) -> anyhow::Result<Self> {
        Self::with_timeout(base, TIMEOUT)
    }

    /// [`Connection::new`] with reads and writes that give up after `timeout`.
    pub fn with_timeout(base: &str, timeout: Duration) -> anyhow::Result<Self> {
        let authority = base.strip_prefix("http://").with_context(|| format!("not an http:// URL: {base}"))?;
        Ok(Connection { authority: authority.trim_end_matches('/').to_owned(), timeout, stream: None })
    }

    /// `POST path` with a JSON `body` and extra `headers` (`Name: value`).
    pub fn post_json(&mut self, path: &str, headers: &[String], body: &str) -> anyhow::Result<Response> {
        self.send("POST", path, headers, Some(body))
    }

    /// `GET path` with extra `headers` (`Name: value`).
    pub fn get(&mut self, path: &str, headers: &[String]) -> anyhow::Result<Response> {
        self.send("GET", path, headers, None)
    }

    /// Sends one request. A kept-alive connection that the server closed while it was idle
    /// (nothing of the response came back) is opened again and the request sent once more.
    fn send(&mut self, method: &str, path: &str, headers: &[String], body: Option<&str>) -> anyhow::Result<Response> {
        let request = encode_request(&self.authority, method, path, headers, body);
        let reused = self.stream.is_some();
        match self.exchange(&request) {
            Err(Attempt::Closed(_)) if reused => self.exchange(&request),
            other => other,
        }
        .map_err(|err| {
            let err = match err {
                Attempt::Closed(err) | Attempt::Failed(err) => err,
            };
            err.context(format!("{method} {path}"))
        })
    }

    fn exchange(&mut self, request: &[u8]) -> Result<Response, Attempt> {
        let stream = match &mut self.stream {
            Some(stream) => stream,
            None => {
                let tcp = TcpStream::connect(&self.authority)
                    .with_context(|| format!("connecting to {}", self.authority))
                    .map_err(Attempt::Failed)?;
                let configure = |tcp: &TcpStream| -> std::io::Result<()> {
                    tcp.set_nodelay(true)?;
                    tcp.set_read_timeout(Some(self.timeout))?;
                    tcp.set_write_timeout(Some(self.timeout))
                };
                configure(&tcp).map_err(|e| Attempt::Failed(e.into()))?;
                self.stream.insert(BufReader::new(tcp))
            }
        };
        let result = match stream.get_mut().write_all(request) {
            Err(err) => Err(Attempt::Closed(err.into())),
            // Nothing at all came back: the server had closed the connection.
            Ok(()) => match stream.fill_buf() {
                Ok([]) => Err(Attempt::Closed(anyhow::anyhow!("the server closed the connection"))),
                Err(err) if matches!(err.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe) => {
                    Err(Attempt::Closed(err.into()))
                }
                Err(err) => Err(Attempt::Failed(anyhow::Error::from(err).context("reading the response"))),
                Ok(_) => read_response(stream).map_err(Attempt::Failed),
            },
        };
        match result {
            Ok((response, keep_alive)) => {
                if !keep_alive {
                    self.stream = None;
                }
                Ok(response)
            }
            Err(err) => {
                self.stream = None;
                Err(err)
            }
        }
    }
}

/// A failed exchange: `Closed` before any of the response arrived (worth one retry on a
/// fresh connection), or `Failed`.
enum Attempt {
    Closed(anyhow::Error),
    Failed(anyhow::Error),
}

fn encode_request(authority: &str, method: &str, path: &str, headers: &[String], body: Option<&str>) -> Vec<u8> {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n");
    if let Some(body) = body {
        request.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body.unwrap_or_default());
    request.into_bytes()
}

/// Reads one response; also says whether the connection stays open after it.
fn read_response(reader: &mut impl BufRead) -> anyhow::Result<(Response, bool)> {
    let status_line = read_line(reader)?;
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let status: u16 = parts
        .next()
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("not an HTTP status line: {status_line:?}"))?;
    let (mut length, mut chunked, mut keep_alive) = (None, false, version == "HTTP/1.1");
    let mut content_type = String::new();
    loop {
        let line = read_line(reader)?;
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else { bail!("not a header: {line:?}") };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = Some(value.parse::<usize>().with_context(|| format!("{line:?}"))?),
            "content-type" => value.clone_into(&mut content_type),
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            "connection" if value.eq_ignore_ascii_case("close") => keep_alive = false,
            "connection" if value.eq_ignore_ascii_case("keep-alive") => keep_alive = true,
            _ => {}
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let line = read_line(reader)?;
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16).with_context(|| format!("bad chunk size {line:?}"))?;
            if size == 0 {
                while !read_line(reader)?.is_empty() {}
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..]).context("reading a chunk")?;
            if !read_line(reader)?.is_empty() {
                bail!("a chunk not followed by CRLF");
            }
        }
    } else if let Some(length) = length {
        body.resize(length, 0);
        reader.read_exact(&mut body).context("reading the body")?;
    } else if status >= 200 && status != 204 && status != 304 {
        // No length: the body runs to the end of the connection.
        reader.read_to_end(&mut body).context("reading the body")?;
        keep_alive = false;
    }
    let body = String::from_utf8(body).context("a body that is not UTF-8")?;
    Ok((Response { status, content_type, body }, keep_alive))
}

/// One line without its CRLF; fails at the end of the stream.
fn read_line(reader: &mut impl BufRead) -> anyhow::Result<String> {
    let mut line = String::new();
    if reader.read_line(&mut line).context("reading the response")? == 0 {
        bail!("the server closed the connection");
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> (Response, bool) {
        read_response(&mut raw.as_bytes()).unwrap()
    }

    fn response(status: u16, content_type: &str, body: &str) -> Response {
        Response { status, content_type: content_type.into(), body: body.into() }
    }

    #[test]
    fn a_response_with_a_length_keeps_the_connection() {
        let raw = "HTTP/1.1 201 Created\r\ncontent-length: 7\r\ncontent-type: application/json\r\n\r\n{\"a\":1}extra";
        assert_eq!(parse(raw), (response(201, "application/json", r#"{"a":1}"#), true));
        let problem =
            "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 2\r\ncontent-type: application/problem+json\r\n\r\n{}";
        assert!(parse(problem).0.is_problem());
        assert!(!parse(raw).0.is_problem());
    }

    #[test]
    fn a_chunked_response_is_joined() {
        let raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse(raw), (response(200, "", "abcde"), true));
    }

    #[test]
    fn connection_close_and_unknown_lengths_end_the_connection() {
        let closed = "HTTP/1.1 409 Conflict\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(parse(closed), (response(409, "", "{}"), false));
        let to_eof = "HTTP/1.1 200 OK\r\n\r\nall of it";
        assert_eq!(parse(to_eof), (response(200, "", "all of it"), false));
        assert!(read_response(&mut "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort".as_bytes()).is_err());
        assert!(read_response(&mut "garbage\r\n\r\n".as_bytes()).is_err());
        assert!(read_response(&mut "".as_bytes()).is_err());
    }

    #[test]
    fn requests_are_encoded_with_a_length_for_bodies_only() {
        let get = encode_request("h:1", "GET", "/a", &["X-API-Key: k".into()], None);
        assert_eq!(String::from_utf8(get).unwrap(), "GET /a HTTP/1.1\r\nHost: h:1\r\nX-API-Key: k\r\n\r\n");
        let post = encode_request("h:1", "POST", "/b", &[], Some("{}"));
        assert_eq!(
            String::from_utf8(post).unwrap(),
            "POST /b HTTP/1.1\r\nHost: h:1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        );
    }
}
