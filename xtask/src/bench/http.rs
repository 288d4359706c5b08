//! A minimal HTTP/1.1 client over one keep-alive `TcpStream`, for the many small requests of a
//! set-up step (registering thousands of agents) or of a long mixed load (`crash`, `soak`),
//! where starting a `curl` per request would cost more than the request. Plain `http://` on
//! loopback, GET and POST with JSON bodies, nothing else.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, bail};

const TIMEOUT: Duration = Duration::from_secs(60);

/// A response: its status and its body as text.
#[derive(Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

/// One connection, opened at the first request and again after the server closes it.
pub struct Connection {
    authority: String,
    stream: Option<BufReader<TcpStream>>,
}

impl Connection {
    /// A connection to `base` (`http://host:port`); nothing is opened yet.
    pub fn new(base: &str) -> anyhow::Result<Self> {
        let authority = base.strip_prefix("http://").with_context(|| format!("not an http:// URL: {base}"))?;
        Ok(Connection { authority: authority.trim_end_matches('/').to_owned(), stream: None })
    }

    /// `POST path` with a JSON `body` and extra `headers` (`Name: value`).
    pub fn post_json(&mut self, path: &str, headers: &[String], body: &str) -> anyhow::Result<Response> {
        self.request("POST", path, headers, Some(body))
    }

    /// `GET path` with extra `headers` (`Name: value`).
    pub fn get(&mut self, path: &str, headers: &[String]) -> anyhow::Result<Response> {
        self.request("GET", path, headers, None)
    }

    fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[String],
        body: Option<&str>,
    ) -> anyhow::Result<Response> {
        let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.authority);
        if let Some(body) = body {
            request.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
        }
        for header in headers {
            request.push_str(header);
            request.push_str("\r\n");
        }
        request.push_str("\r\n");
        request.push_str(body.unwrap_or_default());

        let stream = match &mut self.stream {
            Some(stream) => stream,
            None => {
                let tcp =
                    TcpStream::connect(&self.authority).with_context(|| format!("connecting to {}", self.authority))?;
                tcp.set_nodelay(true)?;
                tcp.set_read_timeout(Some(TIMEOUT))?;
                tcp.set_write_timeout(Some(TIMEOUT))?;
                self.stream.insert(BufReader::new(tcp))
            }
        };
        let sent = stream.get_mut().write_all(request.as_bytes());
        let answer = sent.map_err(anyhow::Error::from).and_then(|()| read_response(stream));
        match answer {
            Ok((response, keep_alive)) => {
                if !keep_alive {
                    self.stream = None;
                }
                Ok(response)
            }
            Err(err) => {
                self.stream = None;
                Err(err.context(format!("{method} {path}")))
            }
        }
    }
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
    loop {
        let line = read_line(reader)?;
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else { bail!("not a header: {line:?}") };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = Some(value.parse::<usize>().with_context(|| format!("{line:?}"))?),
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
    Ok((Response { status, body }, keep_alive))
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

    #[test]
    fn a_response_with_a_length_keeps_the_connection() {
        let raw = "HTTP/1.1 201 Created\r\ncontent-length: 7\r\ncontent-type: application/json\r\n\r\n{\"a\":1}extra";
        assert_eq!(parse(raw), (Response { status: 201, body: r#"{"a":1}"#.into() }, true));
    }

    #[test]
    fn a_chunked_response_is_joined() {
        let raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse(raw), (Response { status: 200, body: "abcde".into() }, true));
    }

    #[test]
    fn connection_close_and_unknown_lengths_end_the_connection() {
        let closed = "HTTP/1.1 409 Conflict\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(parse(closed), (Response { status: 409, body: "{}".into() }, false));
        let to_eof = "HTTP/1.1 200 OK\r\n\r\nall of it";
        assert_eq!(parse(to_eof), (Response { status: 200, body: "all of it".into() }, false));
        assert!(read_response(&mut "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort".as_bytes()).is_err());
        assert!(read_response(&mut "".as_bytes()).is_err());
    }
}
