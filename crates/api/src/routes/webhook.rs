//! Spec 4.15: the inbound webhook, outside `/api/v1`.

use actix_web::{HttpRequest, post, web};
use agentgov_domain::services::{Delivery, WebhookAck};

use crate::AppState;
use crate::extract::header_str;
use crate::problem::ApiResult;

/// Inbound agent events (`agent.action`, `agent.heartbeat`), signed with `WEBHOOK_SECRET`,
/// or with the tenant's own webhook secret when it has one (which then replaces the
/// server's): `X-Webhook-Signature: sha256=<hex of HMAC-SHA256 over the exact body bytes>`,
/// or the timestamped `t=<unix seconds>,v1=<hex of HMAC-SHA256 over "<t>." and the body>`,
/// refused when `t` is more than 300 s from the server's clock. Answered once the event is
/// durably stored; a repeated `X-Webhook-Id`, or a repeated timestamped signature, is
/// answered again and stored once.
#[utoipa::path(
    tag = "webhook",
    security(("api_key" = [])),
    params(
        ("X-Webhook-Signature" = String, Header, description = "`sha256=<hex>`, or `t=<unix seconds>,v1=<hex>` (up to four `v1`)"),
        ("X-Webhook-Id" = Option<String>, Header, description = "A delivery id (1-200 visible ASCII characters) for idempotent retries"),
    ),
    request_body(content = Object, description = "`{\"event\": \"agent.action\" | \"agent.heartbeat\", \"payload\": {...}}` (spec 2.6)"),
    responses(
        (status = 200, description = "Stored", body = WebhookAck),
        (status = 400, description = "Not JSON, or an unknown event type", body = crate::problem::Problem),
        (status = 401, description = "`Invalid webhook signature`; a stale timestamped signature; `sha256=` for a tenant that requires timestamps; or a missing or bad API key", body = crate::problem::Problem),
        (status = 404, description = "`agent.heartbeat` for an agent the tenant does not have", body = crate::problem::Problem),
        (status = 422, description = "A payload without `agent_id`, or with fields of the wrong shape", body = crate::problem::Problem),
    )
)]
#[post("/webhooks/agent")]
pub async fn receive(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> ApiResult<web::Json<WebhookAck>> {
    let (signature, api_key, delivery_id) =
        (header_str(&req, "x-webhook-signature"), header_str(&req, "x-api-key"), header_str(&req, "x-webhook-id"));
    let delivery = Delivery {
        body: &body,
        signature: signature.as_deref(),
        api_key: api_key.as_deref(),
        delivery_id: delivery_id.as_deref(),
    };
    Ok(web::Json(state.services.webhook.receive(delivery).await?))
}
