//! [`HttpCallbacks`]: the `CallbackSender` port on reqwest.
//!
//! A callback is one POST with a bounded time to answer; redirects are not followed (a
//! signed POST must not be turned into a GET or sent elsewhere), and the receiver's body is
//! not read beyond what the connection needs.

use std::time::Duration;

use agentgov_domain::ports::{CallbackError, CallbackSender};
use async_trait::async_trait;

/// How long a receiver has to answer one attempt.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct HttpCallbacks {
    client: reqwest::Client,
}

impl HttpCallbacks {
    /// A sender whose attempts each end after `timeout`.
    pub fn new(timeout: Duration) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("agentgov/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the callback HTTP client: {e}"))?;
        Ok(Self { client })
    }
}

/// What went wrong, without the URL (which may carry a token in its path or query).
fn describe(e: &reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_request() {
        "could not send the request"
    } else {
        "failed"
    };
    let mut cause = String::new();
    let mut source = std::error::Error::source(e);
    // The innermost cause names the reason (refused, DNS, TLS, …).
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    if cause.is_empty() { what.to_owned() } else { format!("{what}: {cause}") }
}

#[async_trait]
impl CallbackSender for HttpCallbacks {
    async fn post(&self, url: &str, headers: &[(&'static str, String)], body: &[u8]) -> Result<u16, CallbackError> {
        let mut request = self.client.post(url).body(body.to_vec());
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = request.send().await.map_err(|e| describe(&e.without_url()))?;
        Ok(response.status().as_u16())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A one-shot HTTP receiver on loopback: answers `reply` and hands back what it read.
    async fn receiver(reply: &'static str) -> (String, tokio::task::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = socket.read(&mut buf).await.unwrap();
                seen.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&seen);
                if let Some(end) = text.find("\r\n\r\n") {
                    let length: usize = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    if seen.len() >= end + 4 + length {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            socket.write_all(reply.as_bytes()).await.unwrap();
            String::from_utf8(seen).unwrap()
        });
        (format!("http://{addr}/hook?x=1"), task)
    }

    #[tokio::test]
    async fn posts_the_body_and_headers_and_answers_the_status() {
        let (url, seen) = receiver("HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n").await;
        let sender = HttpCallbacks::new(Duration::from_secs(5)).unwrap();
        let headers = [("x-webhook-signature", "sha256=abc".to_owned()), ("content-type", "application/json".into())];
        assert_eq!(sender.post(&url, &headers, br#"{"a":1}"#).await, Ok(204));
        let seen = seen.await.unwrap();
        assert!(seen.starts_with("POST /hook?x=1 HTTP/1.1\r\n"), "{seen}");
        assert!(seen.contains("x-webhook-signature: sha256=abc\r\n"), "{seen}");
        assert!(seen.ends_with(r#"{"a":1}"#), "{seen}");
    }

    #[tokio::test]
    async fn a_redirect_is_answered_not_followed() {
        let (url, _seen) =
            receiver("HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:1/\r\ncontent-length: 0\r\n\r\n")
                .await;
        let sender = HttpCallbacks::new(Duration::from_secs(5)).unwrap();
        assert_eq!(sender.post(&url, &[], b"{}").await, Ok(307));
    }

    #[tokio::test]
    async fn an_unreachable_receiver_is_an_error_that_does_not_name_the_url() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let sender = HttpCallbacks::new(Duration::from_secs(5)).unwrap();
        let err = sender.post(&format!("http://{addr}/secret-token-path"), &[], b"{}").await.unwrap_err();
        assert!(err.starts_with("could not connect"), "{err}");
        assert!(!err.contains("secret-token-path"), "{err}");
    }
}
