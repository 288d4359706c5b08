//! Outbound webhooks as a receiver sees them: a minimal HTTP/1.1 server on loopback that
//! records every request and answers scripted statuses, and the HMAC signature scheme
//! (computed with `hmac` and `sha2`, independently of the server's ring).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::WEBHOOK_SECRET;

/// `sha256=<hex HMAC-SHA256 of body with WEBHOOK_SECRET>`.
pub fn sign(body: &[u8]) -> String {
    sign_with(WEBHOOK_SECRET.as_bytes(), body)
}

/// `sha256=<hex HMAC-SHA256 of body with secret>`.
pub fn sign_with(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// `t=<t>,v1=<hex HMAC-SHA256 of "<t>." and body with secret>`: the timestamped form.
pub fn sign_timestamped(secret: &[u8], t: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// The current Unix time in seconds.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// What a receiver does with `X-Webhook-Timestamp-Signature`: the `t` and every `v1`, and
/// whether one of them is `secret`'s signature of `"<t>." + body`.
pub fn timestamped_matches(header: &str, secret: &[u8], body: &[u8]) -> (i64, usize, bool) {
    let mut t = None;
    let mut v1 = Vec::new();
    for part in header.split(',') {
        match part.split_once('=').unwrap() {
            ("t", v) => t = Some(v.parse::<i64>().unwrap()),
            ("v1", v) => v1.push(v.to_owned()),
            _ => {}
        }
    }
    let t = t.unwrap();
    let expected = sign_timestamped(secret, t, body);
    let digest = expected.split_once(",v1=").unwrap().1.to_owned();
    (t, v1.len(), v1.contains(&digest))
}

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// A receiver on `127.0.0.1`; answers each request with the next scripted status (200 once
/// the script is used up). Stops when dropped.
pub struct Receiver {
    pub url: String,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    pub async fn start(script: &[u16]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks/hitl", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.iter().copied().collect::<VecDeque<u16>>()));
        let (seen, script_) = (received.clone(), script.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else { return };
                let (seen, script) = (seen.clone(), script_.clone());
                tokio::spawn(async move {
                    let Some(request) = read_request(&mut socket).await else { return };
                    let status = script.lock().unwrap().pop_front().unwrap_or(200);
                    seen.lock().unwrap().push(request);
                    let reply = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                    let _ = socket.write_all(reply.as_bytes()).await;
                });
            }
        });
        Self { url, received, task }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits (up to `within`) until at least `n` requests arrived; returns them all.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let got = self.received();
            if got.len() >= n || tokio::time::Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_owned(), first.next()?.to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Received { method, path, headers, body })
}
