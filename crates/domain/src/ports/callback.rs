//! Outbound HTTP callbacks: the HITL outcome POSTed to the `callback_url` a request gave.

use async_trait::async_trait;

/// How a callback attempt ended when no receiver answered it. Only the kind is shown to
/// the tenant ([`CallbackFailure::coarse`]): telling "connection refused" from "no route"
/// or a status code from another would make the callbacks a port scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackFailure {
    /// The receiver's address is not one the [`crate::net::ReceiverPolicy`] permits (an IP
    /// literal, or any address its name resolved to). Never retried.
    Refused,
    /// No answer within the attempt's time.
    TimedOut,
    /// Anything else: the name did not resolve, the connection or TLS failed, …
    Failed,
}

impl CallbackFailure {
    /// What the tenant sees as `callback.last_error`.
    pub fn coarse(self) -> &'static str {
        match self {
            CallbackFailure::Refused => "receiver refused by policy",
            CallbackFailure::TimedOut => "timed out",
            CallbackFailure::Failed => "delivery failed",
        }
    }
}

/// A failed attempt: its kind, and for the operator's log the cause in detail (never the
/// URL's path or query, which may carry a token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackError {
    pub kind: CallbackFailure,
    pub detail: String,
}

impl CallbackError {
    pub fn new(kind: CallbackFailure, detail: impl Into<String>) -> Self {
        Self { kind, detail: detail.into() }
    }
}

#[async_trait]
pub trait CallbackSender: Send + Sync {
    /// POSTs the JSON `body` to `url` with `headers` (the signature among them), without
    /// following redirects; answers the receiver's status code. Connects only to addresses
    /// its [`crate::net::ReceiverPolicy`] permits: every address the host resolves to is
    /// checked, at the time of the connection, and one refused address refuses the attempt.
    async fn post(&self, url: &str, headers: &[(&'static str, String)], body: &[u8]) -> Result<u16, CallbackError>;
}
