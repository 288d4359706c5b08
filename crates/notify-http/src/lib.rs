//! [`HttpCallbacks`]: the `CallbackSender` port on reqwest.
//!
//! A callback is one POST with a bounded time to answer; redirects are not followed (a
//! signed POST must not be turned into a GET or sent elsewhere), no proxy from the
//! environment is used (a proxy would resolve the name itself), and the receiver's body is
//! not read beyond what the connection needs.
//!
//! The receiver is a tenant's choice, so the sender connects only where the
//! [`ReceiverPolicy`] permits (public addresses, and the private ranges the operator
//! allows). Names are resolved by [`PolicyResolver`], which refuses the attempt when *any*
//! address the name resolved to is refused: the addresses checked are the ones connected
//! to, so a name that answered a public address to an earlier look-up and a private one
//! now (DNS rebinding) gains nothing. Address literals never reach a resolver in reqwest,
//! so [`HttpCallbacks::post`] checks them itself.

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use agentgov_domain::net::ReceiverPolicy;
use agentgov_domain::ports::{CallbackError, CallbackFailure, CallbackSender};
use async_trait::async_trait;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// How long a receiver has to answer one attempt.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a [`Lookup`] answers.
pub type LookupResult = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send>>;

/// Turns a host name into addresses: the system's resolver ([`SystemLookup`]), or a stub
/// in tests.
pub trait Lookup: Send + Sync {
    fn lookup(&self, host: &str) -> LookupResult;
}

/// The system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str) -> LookupResult {
        let host = host.to_owned();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// Refused: an address of the receiver is not one the policy permits. Named in the
/// operator's log only.
#[derive(Debug)]
pub struct RefusedByPolicy {
    host: String,
    addr: IpAddr,
}

impl std::fmt::Display for RefusedByPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} resolves to {}, which the receiver policy refuses", self.host, self.addr)
    }
}

impl std::error::Error for RefusedByPolicy {}

/// reqwest's resolver for the callbacks: looks the name up and answers its addresses only
/// if the policy permits every one of them.
pub struct PolicyResolver {
    lookup: Arc<dyn Lookup>,
    policy: Arc<ReceiverPolicy>,
}

impl PolicyResolver {
    pub fn new(lookup: Arc<dyn Lookup>, policy: Arc<ReceiverPolicy>) -> Self {
        Self { lookup, policy }
    }
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let lookup = self.lookup.lookup(&host);
        let policy = self.policy.clone();
        Box::pin(async move {
            let ips = lookup.await?;
            if ips.is_empty() {
                return Err(io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address")).into());
            }
            if let Some(&addr) = ips.iter().find(|ip| !policy.permits(**ip)) {
                return Err(Box::new(RefusedByPolicy { host, addr }) as _);
            }
            let addrs: Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

#[derive(Clone)]
pub struct HttpCallbacks {
    client: reqwest::Client,
    policy: Arc<ReceiverPolicy>,
}

impl std::fmt::Debug for HttpCallbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpCallbacks").field("policy", &self.policy).finish_non_exhaustive()
    }
}

impl HttpCallbacks {
    /// A sender whose attempts each end after `timeout`, to receivers `policy` permits,
    /// names resolved by the system.
    pub fn new(timeout: Duration, policy: ReceiverPolicy) -> Result<Self, String> {
        Self::with_lookup(timeout, policy, Arc::new(SystemLookup))
    }

    /// The same with names resolved by `lookup`.
    pub fn with_lookup(timeout: Duration, policy: ReceiverPolicy, lookup: Arc<dyn Lookup>) -> Result<Self, String> {
        let policy = Arc::new(policy);
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(PolicyResolver::new(lookup, policy.clone())))
            .user_agent(concat!("agentgov/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the callback HTTP client: {e}"))?;
        Ok(Self { client, policy })
    }

    /// Refuses a URL whose host is an address literal the policy refuses (reqwest connects
    /// to those without asking the resolver).
    fn check_literal(&self, url: &reqwest::Url) -> Result<(), CallbackError> {
        let ip = match url.host() {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            _ => return Ok(()),
        };
        self.policy.check_ip(ip).map_err(|_| {
            CallbackError::new(CallbackFailure::Refused, format!("{ip} is an address the receiver policy refuses"))
        })
    }
}

/// What went wrong, without the URL (which may carry a token in its path or query).
fn describe(e: &reqwest::Error) -> CallbackError {
    let mut kind = if e.is_timeout() { CallbackFailure::TimedOut } else { CallbackFailure::Failed };
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
        if s.downcast_ref::<RefusedByPolicy>().is_some() {
            kind = CallbackFailure::Refused;
        }
        cause = s.to_string();
        source = s.source();
    }
    let detail = if cause.is_empty() { what.to_owned() } else { format!("{what}: {cause}") };
    CallbackError::new(kind, detail)
}

#[async_trait]
impl CallbackSender for HttpCallbacks {
    async fn post(&self, url: &str, headers: &[(&'static str, String)], body: &[u8]) -> Result<u16, CallbackError> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| CallbackError::new(CallbackFailure::Failed, format!("not a URL: {e}")))?;
        self.check_literal(&url)?;
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

    use std::collections::{HashMap, VecDeque};
    use std::sync::Mutex;
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A one-shot HTTP receiver on loopback: answers `reply` and hands back what it read.
    async fn receiver(reply: &'static str) -> (SocketAddr, tokio::task::JoinHandle<String>) {
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
        (addr, task)
    }

    const NO_CONTENT: &str = "HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n";

    /// The operator allows loopback receivers (as the black-box tests' servers do).
    fn loopback_allowed() -> HttpCallbacks {
        HttpCallbacks::new(Duration::from_secs(5), ReceiverPolicy::parse("127.0.0.0/8").unwrap()).unwrap()
    }

    /// A resolver stub: each name answers its scripted address lists in turn (the last one
    /// again once the script is used up); unknown names do not resolve.
    #[derive(Default)]
    struct StubLookup {
        answers: Mutex<HashMap<String, VecDeque<Vec<IpAddr>>>>,
        asked: Mutex<Vec<String>>,
    }

    impl StubLookup {
        fn answer(self: &Arc<Self>, name: &str, answers: &[&[&str]]) -> Arc<Self> {
            let answers = answers.iter().map(|ips| ips.iter().map(|ip| ip.parse().unwrap()).collect()).collect();
            self.answers.lock().unwrap().insert(name.to_owned(), answers);
            self.clone()
        }

        fn asked(&self) -> Vec<String> {
            self.asked.lock().unwrap().clone()
        }
    }

    impl Lookup for StubLookup {
        fn lookup(&self, host: &str) -> LookupResult {
            self.asked.lock().unwrap().push(host.to_owned());
            let mut answers = self.answers.lock().unwrap();
            let answer = match answers.get_mut(host) {
                Some(queue) if queue.len() > 1 => queue.pop_front(),
                Some(queue) => queue.front().cloned(),
                None => None,
            };
            Box::pin(async move { answer.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such name")) })
        }
    }

    fn stubbed(lookup: &Arc<StubLookup>, allow: &str) -> HttpCallbacks {
        let lookup: Arc<dyn Lookup> = lookup.clone();
        HttpCallbacks::with_lookup(Duration::from_secs(5), ReceiverPolicy::parse(allow).unwrap(), lookup).unwrap()
    }

    #[tokio::test]
    async fn posts_the_body_and_headers_and_answers_the_status() {
        let (addr, seen) = receiver(NO_CONTENT).await;
        let url = format!("http://{addr}/hook?x=1");
        let headers = [("x-webhook-signature", "sha256=abc".to_owned()), ("content-type", "application/json".into())];
        assert_eq!(loopback_allowed().post(&url, &headers, br#"{"a":1}"#).await, Ok(204));
        let seen = seen.await.unwrap();
        assert!(seen.starts_with("POST /hook?x=1 HTTP/1.1\r\n"), "{seen}");
        assert!(seen.contains("x-webhook-signature: sha256=abc\r\n"), "{seen}");
        assert!(seen.ends_with(r#"{"a":1}"#), "{seen}");
    }

    #[tokio::test]
    async fn a_redirect_is_answered_not_followed() {
        let (addr, _seen) =
            receiver("HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:1/\r\ncontent-length: 0\r\n\r\n")
                .await;
        assert_eq!(loopback_allowed().post(&format!("http://{addr}/"), &[], b"{}").await, Ok(307));
    }

    #[tokio::test]
    async fn an_unreachable_receiver_is_an_error_that_does_not_name_the_url() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let url = format!("http://{addr}/secret-token-path");
        let err = loopback_allowed().post(&url, &[], b"{}").await.unwrap_err();
        assert_eq!(err.kind, CallbackFailure::Failed);
        assert!(err.detail.starts_with("could not connect"), "{err:?}");
        assert!(!err.detail.contains("secret-token-path"), "{err:?}");
    }

    /// Issue 32.3: by default a loopback receiver is never connected to, however the
    /// address is spelled.
    #[tokio::test]
    async fn by_default_address_literals_inside_the_network_are_refused_without_connecting() {
        let (addr, seen) = receiver(NO_CONTENT).await;
        let port = addr.port();
        let sender = HttpCallbacks::new(Duration::from_secs(5), ReceiverPolicy::default()).unwrap();
        for url in [
            format!("http://127.0.0.1:{port}/refused"),
            format!("http://127.1:{port}/refused"),
            format!("http://2130706433:{port}/refused"),
            format!("http://[::ffff:127.0.0.1]:{port}/refused"),
            format!("http://[::1]:{port}/refused"),
            format!("http://[fd00:ec2::254]:{port}/refused"),
            format!("http://[64:ff9b::a9fe:a9fe]:{port}/refused"),
            "http://169.254.169.254/latest/meta-data".to_owned(),
        ] {
            let err = sender.post(&url, &[], b"{}").await.unwrap_err();
            assert_eq!(err.kind, CallbackFailure::Refused, "{url}: {err:?}");
            assert!(!err.detail.contains("refused/"), "{err:?}");
        }
        // The receiver's first (and only) request is this one: none of the above reached it.
        let allowed = format!("http://127.0.0.1:{port}/allowed");
        assert_eq!(loopback_allowed().post(&allowed, &[], b"{}").await, Ok(204));
        assert!(seen.await.unwrap().starts_with("POST /allowed "));
    }

    /// Issue 32.3: a name is judged by the addresses it resolves to when connecting.
    #[tokio::test]
    async fn names_resolving_inside_the_network_are_refused() {
        let lookup = Arc::new(StubLookup::default())
            .answer("metadata.example.test", &[&["169.254.169.254"]])
            .answer("mixed.example.test", &[&["93.184.216.34", "127.0.0.1"]])
            .answer("ula.example.test", &[&["fd00:ec2::254"]])
            .answer("nat64.example.test", &[&["64:ff9b::a9fe:a9fe"]])
            .answer("mapped.example.test", &[&["::ffff:127.0.0.1"]])
            .answer("localhost", &[&["127.0.0.1", "::1"]]);
        let sender = stubbed(&lookup, "");
        for host in [
            "metadata.example.test",
            "mixed.example.test",
            "ula.example.test",
            "nat64.example.test",
            "mapped.example.test",
            "localhost",
        ] {
            let err = sender.post(&format!("http://{host}/latest/meta-data?token=t"), &[], b"{}").await.unwrap_err();
            assert_eq!(err.kind, CallbackFailure::Refused, "{host}: {err:?}");
            assert!(err.detail.contains("receiver policy refuses"), "{err:?}");
            assert!(!err.detail.contains("token"), "{err:?}");
        }
        assert!(lookup.asked().contains(&"metadata.example.test".to_owned()), "resolved through the stub");
        let err = sender.post("http://nowhere.example.test/", &[], b"{}").await.unwrap_err();
        assert_eq!(err.kind, CallbackFailure::Failed, "a name that does not resolve is a plain failure: {err:?}");
    }

    /// Issue 32.3: DNS rebinding. A name that answered a public address to an earlier
    /// look-up (a validation, a previous attempt) and answers loopback now is refused: the
    /// addresses checked are the ones connected to.
    #[tokio::test]
    async fn a_rebinding_name_is_refused_at_connect_time() {
        let (addr, seen) = receiver(NO_CONTENT).await;
        let lookup =
            Arc::new(StubLookup::default()).answer("rebind.example.test", &[&["93.184.216.34"], &["127.0.0.1"]]);
        let earlier = lookup.lookup("rebind.example.test").await.unwrap();
        assert!(earlier.iter().all(|ip| ReceiverPolicy::default().permits(*ip)), "looked public before");
        let url = format!("http://rebind.example.test:{}/rebound", addr.port());
        let err = stubbed(&lookup, "").post(&url, &[], b"{}").await.unwrap_err();
        assert_eq!(err.kind, CallbackFailure::Refused, "{err:?}");
        assert_eq!(lookup.asked().len(), 2, "looked up again when connecting");
        let allowed = format!("http://127.0.0.1:{}/allowed", addr.port());
        assert_eq!(loopback_allowed().post(&allowed, &[], b"{}").await, Ok(204));
        assert!(seen.await.unwrap().starts_with("POST /allowed "), "the rebound request never arrived");
    }

    /// With the operator's allow-list, a name resolving into an allowed range is delivered
    /// to (through the stub, on the URL's port).
    #[tokio::test]
    async fn a_name_resolving_into_an_allowed_range_is_delivered() {
        let (addr, seen) = receiver(NO_CONTENT).await;
        let lookup = Arc::new(StubLookup::default()).answer("receiver.example.test", &[&["127.0.0.1"]]);
        let url = format!("http://receiver.example.test:{}/hook", addr.port());
        assert_eq!(stubbed(&lookup, "127.0.0.0/8").post(&url, &[], b"{}").await, Ok(204));
        let seen = seen.await.unwrap();
        assert!(seen.starts_with("POST /hook "), "{seen}");
        assert!(seen.to_ascii_lowercase().contains(&format!("host: receiver.example.test:{}", addr.port())), "{seen}");
    }
}
