//! Spec 4.12: tenants, managed by the platform operator with `X-Admin-Key`; and (beyond the
//! spec) a tenant's view of itself, whose settings its admins may change.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use agentgov_domain::ids::TenantId;
use agentgov_domain::page::Page;
use agentgov_domain::services::{
    CreatedTenant, IssuedSecret, NewTenant, NewWebhookSecret, TenantSecrets, TenantView, UpdateTenant,
};

use crate::AppState;
use crate::extract::{AdminKey, ApiKeyOrJwt, Json, Jwt, ListQuery};
use crate::problem::{ApiResult, Problem};

/// Create a tenant with its first admin user and an API key (shown only in this response).
#[utoipa::path(
    tag = "tenants",
    security(("admin_key" = [])),
    request_body = NewTenant,
    responses(
        (status = 201, description = "Created", body = CreatedTenant),
        (status = 409, description = "Tenant name or admin email taken", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/tenants")]
pub async fn create(state: web::Data<AppState>, _: AdminKey, body: Json<NewTenant>) -> ApiResult<HttpResponse> {
    let created = state.services.tenants.create(body.0, "admin_key").await?;
    Ok(HttpResponse::Created()
        .insert_header(("Location", format!("/api/v1/tenants/{}", created.tenant.tenant.id)))
        .json(created))
}

/// List tenants, newest first.
#[utoipa::path(
    tag = "tenants",
    security(("admin_key" = [])),
    params(ListQuery),
    responses((status = 200, description = "A page of tenants", body = Page<TenantView>))
)]
#[get("/tenants")]
pub async fn list(
    state: web::Data<AppState>,
    _: AdminKey,
    q: web::Query<ListQuery>,
) -> ApiResult<web::Json<Page<TenantView>>> {
    Ok(web::Json(state.services.tenants.list(&q.page()?).await?))
}

/// Get a tenant.
#[utoipa::path(
    tag = "tenants",
    security(("admin_key" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses((status = 200, description = "The tenant", body = TenantView))
)]
#[get("/tenants/{id}")]
pub async fn get(state: web::Data<AppState>, _: AdminKey, id: web::Path<TenantId>) -> ApiResult<web::Json<TenantView>> {
    Ok(web::Json(state.services.tenants.get(id.into_inner()).await?))
}

/// Change a tenant's name or settings; a setting given as `null` returns to the server's
/// default. Changed risk levels re-level the tenant's agents at once.
#[utoipa::path(
    tag = "tenants",
    security(("admin_key" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body = UpdateTenant,
    responses(
        (status = 200, description = "Updated", body = TenantView),
        (status = 409, description = "Tenant name taken", body = Problem, content_type = "application/problem+json"),
    )
)]
#[patch("/tenants/{id}")]
pub async fn update(
    state: web::Data<AppState>,
    _: AdminKey,
    id: web::Path<TenantId>,
    body: Json<UpdateTenant>,
) -> ApiResult<web::Json<TenantView>> {
    Ok(web::Json(state.services.tenants.update(id.into_inner(), body.0, "admin_key").await?))
}

/// The caller's own tenant, with the settings in force.
#[utoipa::path(
    tag = "tenants",
    security(("api_key" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The caller's tenant", body = TenantView),
        (status = 403, description = "An API key without `stats:read`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/tenant")]
pub async fn get_own(state: web::Data<AppState>, auth: ApiKeyOrJwt) -> ApiResult<web::Json<TenantView>> {
    Ok(web::Json(state.services.tenants.own(&auth.0).await?))
}

/// Change the caller's own tenant (an admin): its name, approval threshold or risk levels.
#[utoipa::path(
    tag = "tenants",
    security(("bearer" = [])),
    request_body = UpdateTenant,
    responses(
        (status = 200, description = "Updated", body = TenantView),
        (status = 409, description = "Tenant name taken", body = Problem, content_type = "application/problem+json"),
    )
)]
#[patch("/tenant")]
pub async fn update_own(
    state: web::Data<AppState>,
    auth: Jwt,
    body: Json<UpdateTenant>,
) -> ApiResult<web::Json<TenantView>> {
    Ok(web::Json(state.services.tenants.update_own(&auth.0, body.0).await?))
}

/// The caller's tenant's signing secrets (an admin): when each was made and until when the
/// key it replaced stays valid; never their values.
#[utoipa::path(
    tag = "tenants",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The tenant's signing secrets", body = TenantSecrets),
        (status = 403, description = "Not an admin", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/tenant/secrets")]
pub async fn secrets(state: web::Data<AppState>, auth: Jwt) -> ApiResult<web::Json<TenantSecrets>> {
    Ok(web::Json(state.services.tenants.secrets(&auth.0).await?))
}

/// A new key for the tenant's HITL callbacks, shown only in this response. The key it
/// replaces keeps signing beside it (a second `v1` of `X-Webhook-Timestamp-Signature`) for
/// 24 hours.
#[utoipa::path(
    tag = "tenants",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The new secret", body = IssuedSecret),
        (status = 403, description = "Not an admin", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/tenant/callback-secret")]
pub async fn rotate_callback_secret(state: web::Data<AppState>, auth: Jwt) -> ApiResult<web::Json<IssuedSecret>> {
    Ok(web::Json(state.services.tenants.rotate_callback_secret(&auth.0).await?))
}

/// Makes or replaces the tenant's own key for `POST /webhooks/agent`, shown only in this
/// response. From then on the server's `WEBHOOK_SECRET` is refused for the tenant's keys;
/// a replaced key is still accepted for 24 hours. Send `{}` for the defaults.
#[utoipa::path(
    tag = "tenants",
    security(("bearer" = [])),
    request_body = NewWebhookSecret,
    responses(
        (status = 200, description = "The new secret", body = IssuedSecret),
        (status = 403, description = "Not an admin", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/tenant/webhook-secret")]
pub async fn rotate_webhook_secret(
    state: web::Data<AppState>,
    auth: Jwt,
    body: Json<NewWebhookSecret>,
) -> ApiResult<web::Json<IssuedSecret>> {
    Ok(web::Json(state.services.tenants.rotate_webhook_secret(&auth.0, body.0).await?))
}

/// Removes the tenant's own webhook key: its senders sign with the server's
/// `WEBHOOK_SECRET` again.
#[utoipa::path(
    tag = "tenants",
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Removed"),
        (status = 403, description = "Not an admin", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "The tenant has no webhook secret of its own", body = Problem, content_type = "application/problem+json"),
    )
)]
#[delete("/tenant/webhook-secret")]
pub async fn delete_webhook_secret(state: web::Data<AppState>, auth: Jwt) -> ApiResult<HttpResponse> {
    state.services.tenants.delete_webhook_secret(&auth.0).await?;
    Ok(HttpResponse::NoContent().finish())
}
