//! The real-time feed, `GET /api/v1/ws?token=<JWT>` (spec 4.14, docs/API.md "Real-time
//! feed").
//!
//! The process follows the event bus once (the server's bus follower hands every event to
//! [`Feed::publish`]); each event is serialised once and fanned out to every socket over a
//! bounded broadcast channel. A socket sees only its tenant's public events that match its
//! `subscribe` filter. A socket that falls behind (the channel overtook it, or one send
//! waited longer than `send_timeout`) is closed with 1013 rather than buffering without
//! bound; the client reconnects. The socket's session is checked again whenever its
//! tenant's credentials change (`auth.credentials_changed` on the bus, from any replica)
//! and at every ping; a revoked or expired session closes the socket with 1008.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, get, web};
use actix_ws::{CloseCode, CloseReason, Message, MessageStream, Session};
use agentgov_domain::events::CREDENTIALS_CHANGED;
use agentgov_domain::ids::TenantId;
use agentgov_domain::ports::Event;
use agentgov_domain::services::{Caller, Credential, Place, Services, Share};
use bytestring::ByteString;
use futures::StreamExt;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::AppState;
use crate::problem::{ApiError, ApiResult};

/// Tunables of the feed.
#[derive(Debug, Clone, Copy)]
pub struct FeedSettings {
    /// Events buffered for the slowest socket; one further behind is closed.
    pub capacity: usize,
    /// Open sockets per process; more are refused with 503.
    pub max_sockets: usize,
    /// Open sockets per tenant over every replica (places in the shared cache, renewed at
    /// each ping, expiring after three pings unrenewed); more are refused with 429.
    pub max_sockets_per_tenant: u64,
    /// How often the server pings (and checks the session again).
    pub ping_every: Duration,
    /// How long one send may wait for a slow client before it is closed.
    pub send_timeout: Duration,
    /// Largest message a client may send.
    pub max_frame: usize,
}

impl Default for FeedSettings {
    fn default() -> Self {
        Self {
            capacity: 1024,
            max_sockets: 10_000,
            max_sockets_per_tenant: 1000,
            ping_every: Duration::from_secs(20),
            send_timeout: Duration::from_secs(5),
            max_frame: 16 * 1024,
        }
    }
}

/// One event, serialised once for every socket.
#[derive(Debug)]
pub struct FeedItem {
    tenant: TenantId,
    event_type: String,
    public: bool,
    text: ByteString,
}

/// The process's fan-out of bus events to sockets. Clones share it.
#[derive(Clone)]
pub struct Feed {
    sender: broadcast::Sender<Arc<FeedItem>>,
    sockets: Arc<AtomicUsize>,
    settings: FeedSettings,
}

impl Feed {
    pub fn new(settings: FeedSettings) -> Self {
        let (sender, _) = broadcast::channel(settings.capacity.clamp(1, 1 << 20));
        Self { sender, sockets: Arc::default(), settings }
    }

    /// Hands an event from the bus (any replica's) to the sockets of its tenant.
    pub fn publish(&self, event: &Event) {
        if self.sender.receiver_count() == 0 {
            return;
        }
        let public = event.is_public();
        if !public && event.event_type != CREDENTIALS_CHANGED {
            return;
        }
        let text = if public {
            match serde_json::to_string(event) {
                Ok(text) => ByteString::from(text),
                Err(e) => {
                    tracing::error!(error = %e, event_type = %event.event_type, "could not serialise a feed event");
                    return;
                }
            }
        } else {
            ByteString::new()
        };
        let item = FeedItem { tenant: event.tenant_id, event_type: event.event_type.clone(), public, text };
        let _no_sockets = self.sender.send(Arc::new(item));
    }

    /// Counts a socket for as long as the guard lives; `None` when the process is full.
    fn admit(&self) -> Option<SocketGuard> {
        let admitted = self
            .sockets
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.settings.max_sockets).then_some(n + 1))
            .is_ok();
        admitted.then(|| {
            ::metrics::gauge!("agentgov_ws_connections").increment(1.0);
            SocketGuard(self.sockets.clone())
        })
    }
}

impl Default for Feed {
    fn default() -> Self {
        Self::new(FeedSettings::default())
    }
}

impl FeedSettings {
    fn tenant_share(&self) -> Share {
        Share {
            kind: "ws",
            what: "real-time feed sockets",
            setting: "AGENTGOV_WS_MAX_CONNECTIONS_PER_TENANT",
            cap: self.max_sockets_per_tenant,
        }
    }

    /// How long a socket's place lasts unrenewed: three pings.
    fn place_ttl(&self) -> Duration {
        self.ping_every.saturating_mul(3)
    }
}

struct SocketGuard(Arc<AtomicUsize>);

impl Drop for SocketGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
        ::metrics::gauge!("agentgov_ws_connections").decrement(1.0);
    }
}

/// The event types a socket wants: `*` wildcards anywhere (`hitl.*`, `*.approved`, `*`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Filter(Vec<String>);

const MAX_PATTERNS: usize = 64;
const MAX_PATTERN_LEN: usize = 100;

impl Filter {
    fn all() -> Self {
        Self(vec!["*".into()])
    }

    fn parse(patterns: Vec<String>) -> Result<Self, String> {
        if patterns.len() > MAX_PATTERNS {
            return Err(format!("at most {MAX_PATTERNS} patterns"));
        }
        for p in &patterns {
            if p.is_empty() || p.len() > MAX_PATTERN_LEN {
                return Err(format!("a pattern has 1 to {MAX_PATTERN_LEN} characters"));
            }
            if !p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '*')) {
                return Err(format!("pattern {p:?}: letters, digits, '.', '_', '-' and '*' only"));
            }
        }
        Ok(Self(patterns))
    }

    fn matches(&self, event_type: &str) -> bool {
        self.0.iter().any(|p| glob(p, event_type))
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else { return text.is_empty() };
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// What a client may send.
#[derive(Debug, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum ClientMessage {
    /// Replace the filter: only events whose type matches one of `events`.
    Subscribe { events: Vec<String> },
    /// Answered with `{"type": "pong"}`, for clients that cannot send WebSocket pings.
    Ping,
}

/// Query of `GET /ws`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WsQuery {
    /// The `access_token` of `POST /auth/login` (or send `Authorization: Bearer`).
    pub token: Option<String>,
}

/// Whether a browser opened the socket from this server's own pages: its `Origin` names the
/// host it asked for. The console's session cookie is taken only then (a page of another
/// origin must not ride on it: cross-site WebSocket hijacking).
fn same_origin(req: &HttpRequest) -> bool {
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    let (Some(origin), Some(host)) = (header(actix_web::http::header::ORIGIN), header(actix_web::http::header::HOST))
    else {
        return false;
    };
    let authority = origin.strip_prefix("https://").or_else(|| origin.strip_prefix("http://"));
    authority.is_some_and(|a| a.eq_ignore_ascii_case(host))
}

/// The real-time feed (WebSocket; any signed-in user of the tenant). Refused with 401
/// before the upgrade for a missing, expired or revoked token. Server messages are events
/// `{"id", "type", "tenant_id", "ts", "data"}` of the caller's tenant (from every replica)
/// and replies `{"type": "subscribed", "events": [...]}`, `{"type": "pong"}` and
/// `{"type": "error", "message"}`. A client sends `{"type": "subscribe", "events":
/// ["hitl.*"]}` to filter (`*` matches any characters; all events until it does). The
/// server pings every 20 s. Close codes: 1008 when the session is revoked or expires, 1013
/// when the client reads too slowly to keep up, 1001 when the server stops.
#[utoipa::path(
    operation_id = "ws_feed",
    tag = "feed",
    params(WsQuery),
    responses(
        (status = 101, description = "Switched to the WebSocket protocol"),
        (status = 400, description = "Not a WebSocket handshake", body = crate::problem::Problem),
        (status = 401, description = "Missing, invalid, expired or revoked token", body = crate::problem::Problem),
        (status = 429, description = "The tenant has as many sockets open as it may, over every server", body = crate::problem::Problem),
        (status = 503, description = "Too many sockets open on this server", body = crate::problem::Problem),
    )
)]
#[get("/ws")]
pub async fn ws(
    state: web::Data<AppState>,
    req: HttpRequest,
    q: web::Query<WsQuery>,
    body: web::Payload,
) -> ApiResult<HttpResponse> {
    let token = q
        .into_inner()
        .token
        .or_else(|| crate::extract::bearer(&req))
        .or_else(|| same_origin(&req).then(|| crate::extract::cookie(&req, crate::extract::SESSION_COOKIE)).flatten())
        .filter(|t| !t.is_empty());
    let Some(token) = token else {
        return Err(ApiError::unauthorized(
            "missing credentials: pass the access token as ?token=<JWT>",
            crate::problem::BEARER_CHALLENGE,
        ));
    };
    let caller = state.services.auth.authenticate_token(&token).await?;
    let feed = &state.feed;
    let Some(guard) = feed.admit() else {
        return Err(agentgov_domain::DomainError::Unavailable("the real-time feed (too many sockets)".into()).into());
    };
    // The tenant's share over every replica, before the upgrade: 429 past it.
    let shares = state.services.shares.clone();
    let place = shares.take(&feed.settings.tenant_share(), caller.tenant_id(), feed.settings.place_ttl()).await?;
    let (response, session, messages) = match actix_ws::handle(&req, body) {
        Ok(upgraded) => upgraded,
        Err(e) => {
            shares.give_back(&place).await;
            return Err(ApiError::bad_request(format!("not a WebSocket handshake: {e}")));
        }
    };
    // Subscribed before the handshake is answered: every event after it reaches the socket.
    let events = feed.sender.subscribe();
    let settings = feed.settings;
    let socket =
        Socket { services: state.services.clone(), caller, token, settings, filter: Filter::all(), session, place };
    actix_web::rt::spawn(async move {
        let place = socket.run(events, messages.max_frame_size(settings.max_frame)).await;
        shares.give_back(&place).await;
        drop(guard);
    });
    Ok(response)
}

struct Socket {
    services: Services,
    caller: Caller,
    token: String,
    settings: FeedSettings,
    filter: Filter,
    session: Session,
    /// The socket's place in its tenant's share, renewed at each ping.
    place: Place,
}

/// Why the server ends a socket.
enum End {
    /// The client closed or went away: nothing more to send.
    Gone,
    Close(CloseCode, &'static str),
}

impl Socket {
    /// Runs the socket until it ends; answers its place, to be given back.
    async fn run(mut self, mut events: broadcast::Receiver<Arc<FeedItem>>, mut messages: MessageStream) -> Place {
        let tenant = self.caller.tenant_id();
        let expires_in = match self.caller.credential {
            Credential::Session { expires_at, .. } => {
                let left = expires_at - time::OffsetDateTime::now_utc();
                Duration::try_from(left).unwrap_or(Duration::ZERO)
            }
            Credential::ApiKey { .. } => Duration::ZERO,
        };
        let expiry = actix_web::rt::time::sleep(expires_in);
        tokio::pin!(expiry);
        let mut ping = actix_web::rt::time::interval(self.settings.ping_every);
        ping.tick().await;
        let mut answered_ping = true;
        let end = loop {
            let step = tokio::select! {
                item = events.recv() => match item {
                    Ok(item) if item.tenant != tenant => Ok(()),
                    Ok(item) => self.deliver(&item).await,
                    Err(RecvError::Lagged(_)) => Err(End::Close(CloseCode::Again, "too slow: events were dropped; reconnect")),
                    Err(RecvError::Closed) => Err(End::Close(CloseCode::Away, "the server is stopping")),
                },
                message = messages.next() => match message {
                    Some(Ok(Message::Text(text))) => self.answer(&text).await,
                    Some(Ok(Message::Binary(_))) => self.reply_error("send JSON text messages").await,
                    Some(Ok(Message::Ping(bytes))) => self.session.pong(&bytes).await.map_err(|_| End::Gone),
                    Some(Ok(Message::Pong(_))) => {
                        answered_ping = true;
                        Ok(())
                    }
                    Some(Ok(Message::Close(_))) | None => Err(End::Gone),
                    Some(Ok(Message::Continuation(_) | Message::Nop)) => Ok(()),
                    Some(Err(_)) => Err(End::Close(CloseCode::Protocol, "malformed WebSocket frame")),
                },
                _ = ping.tick() => {
                    if answered_ping {
                        answered_ping = false;
                        match self.session_live().await {
                            Ok(()) => match self.keep_place().await {
                                Ok(()) => self.session.ping(b"").await.map_err(|_| End::Gone),
                                Err(end) => Err(end),
                            },
                            Err(end) => Err(end),
                        }
                    } else {
                        Err(End::Close(CloseCode::Away, "no answer to the last ping"))
                    }
                }
                () = &mut expiry => Err(End::Close(CloseCode::Policy, "the session expired")),
            };
            if let Err(end) = step {
                break end;
            }
        };
        if let End::Close(code, why) = end {
            // A slow client's close frame queues behind what it has not read yet; it gets
            // the frame if it reads within twice the send timeout, else the connection is
            // dropped. Either way the socket holds no more than that queue meanwhile.
            let reason = CloseReason { code, description: Some(why.to_owned()) };
            let grace = self.settings.send_timeout * 2;
            let _ = actix_web::rt::time::timeout(grace, self.session.close(Some(reason))).await;
        }
        self.place
    }

    /// Renews the socket's place in its tenant's share. One that expired (the cache was
    /// out of reach for three pings) and whose tenant filled its share since is closed.
    async fn keep_place(&self) -> Result<(), End> {
        let share = self.settings.tenant_share();
        match self.services.shares.renew(&share, &self.place, self.settings.place_ttl()).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(End::Close(CloseCode::Again, "the tenant has too many sockets open; reconnect later")),
            // The cache is down: keep the socket; the next ping tries again.
            Err(e) => {
                tracing::warn!(error = %e, "the feed could not renew a socket's place");
                Ok(())
            }
        }
    }

    /// Sends a public event that passes the filter; a change of credentials checks the
    /// session again.
    async fn deliver(&mut self, item: &FeedItem) -> Result<(), End> {
        if !item.public {
            return if item.event_type == CREDENTIALS_CHANGED { self.session_live().await } else { Ok(()) };
        }
        if !self.filter.matches(&item.event_type) {
            return Ok(());
        }
        self.send(item.text.clone()).await
    }

    /// Sends one text message, giving a client that does not read `send_timeout`.
    async fn send(&mut self, text: ByteString) -> Result<(), End> {
        match actix_web::rt::time::timeout(self.settings.send_timeout, self.session.text(text)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_closed)) => Err(End::Gone),
            Err(_slow) => Err(End::Close(CloseCode::Again, "too slow: a send timed out; reconnect")),
        }
    }

    /// `Ok` while the socket's session is still live (not revoked, user active).
    async fn session_live(&self) -> Result<(), End> {
        match self.services.auth.authenticate_token(&self.token).await {
            Ok(_) => Ok(()),
            Err(agentgov_domain::DomainError::Unauthorized(_)) => {
                Err(End::Close(CloseCode::Policy, "the session was revoked"))
            }
            // The store or cache is down: keep the socket; the next check decides.
            Err(e) => {
                tracing::warn!(error = %e, "the feed could not check a socket's session");
                Ok(())
            }
        }
    }

    async fn answer(&mut self, text: &str) -> Result<(), End> {
        let message: ClientMessage = match serde_json::from_str(text) {
            Ok(m) => m,
            Err(e) => {
                let why = e.to_string();
                let why = why.split(" at line ").next().unwrap_or(&why).to_owned();
                return self.reply_error(&format!("not a message this server takes: {why}")).await;
            }
        };
        match message {
            ClientMessage::Subscribe { events } => match Filter::parse(events) {
                Ok(filter) => {
                    let reply = serde_json::json!({"type": "subscribed", "events": filter.0});
                    self.filter = filter;
                    self.send_json(&reply).await
                }
                Err(why) => self.reply_error(&why).await,
            },
            ClientMessage::Ping => self.send_json(&serde_json::json!({"type": "pong"})).await,
        }
    }

    async fn reply_error(&mut self, message: &str) -> Result<(), End> {
        self.send_json(&serde_json::json!({"type": "error", "message": message})).await
    }

    async fn send_json(&mut self, value: &serde_json::Value) -> Result<(), End> {
        self.send(value.to_string().into()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        for (p, t) in [
            ("*", "hitl.requested"),
            ("hitl.*", "hitl.requested"),
            ("*.approved", "hitl.approved"),
            ("hitl.requested", "hitl.requested"),
            ("a*b*c", "abc"),
            ("a*b*c", "a-b-b-c"),
            ("*.*", "x.y"),
        ] {
            assert!(glob(p, t), "{p} ~ {t}");
        }
        for (p, t) in [
            ("hitl.*", "agent.registered"),
            ("hitl", "hitl.requested"),
            ("*.approved", "hitl.approved.x"),
            ("a*b*c", "acb"),
            ("ab*ba", "aba"),
        ] {
            assert!(!glob(p, t), "{p} !~ {t}");
        }
    }

    #[test]
    fn filters_are_bounded_and_checked() {
        assert!(Filter::parse(vec!["hitl.*".into(), "agent.registered".into()]).is_ok());
        assert!(Filter::parse(vec![String::new()]).is_err());
        assert!(Filter::parse(vec!["a b".into()]).is_err());
        assert!(Filter::parse(vec!["x".repeat(101)]).is_err());
        assert!(Filter::parse(vec!["x".into(); 65]).is_err());
        let none = Filter::parse(Vec::new()).unwrap();
        assert!(!none.matches("hitl.requested"), "an empty list mutes the socket");
    }

    #[test]
    fn client_messages() {
        let m: ClientMessage = serde_json::from_str(r#"{"type":"subscribe","events":["hitl.*"]}"#).unwrap();
        assert!(matches!(m, ClientMessage::Subscribe { events } if events == ["hitl.*"]));
        assert!(serde_json::from_str::<ClientMessage>(r#"{"type":"unsubscribe"}"#).is_err());
        assert!(serde_json::from_str::<ClientMessage>(r#"{"type":"subscribe"}"#).is_err());
    }
}
