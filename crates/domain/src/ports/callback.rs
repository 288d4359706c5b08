//! Outbound HTTP callbacks: the HITL outcome POSTed to the `callback_url` a request gave.

use async_trait::async_trait;

/// How a callback attempt ended when the receiver could not be reached or did not answer
/// in time. The text names the cause (refused, timed out, TLS, …), never a secret.
pub type CallbackError = String;

#[async_trait]
pub trait CallbackSender: Send + Sync {
    /// POSTs the JSON `body` to `url` with `headers` (the signature among them), without
    /// following redirects; answers the receiver's status code.
    async fn post(&self, url: &str, headers: &[(&'static str, String)], body: &[u8]) -> Result<u16, CallbackError>;
}
