//! Spec 4.11: API keys.

use actix_web::{HttpResponse, delete, get, post, web};
use agentgov_domain::ids::ApiKeyId;
use agentgov_domain::model::ApiKey;
use agentgov_domain::page::Page;
use agentgov_domain::services::{CreatedApiKey, NewApiKey};

use crate::AppState;
use crate::extract::{Json, Jwt, ListQuery};
use crate::problem::{ApiResult, Problem};

/// Create a key. The full key is in `api_key` of this response only.
#[utoipa::path(
    tag = "api-keys",
    security(("bearer" = [])),
    request_body = NewApiKey,
    responses((status = 201, description = "Created", body = CreatedApiKey))
)]
#[post("")]
pub async fn create(state: web::Data<AppState>, auth: Jwt, body: Json<NewApiKey>) -> ApiResult<HttpResponse> {
    let created = state.services.api_keys.create(&auth.0, body.0).await?;
    Ok(HttpResponse::Created().json(created))
}

/// List keys that are not revoked: all of the tenant's for admins, one's own otherwise.
#[utoipa::path(
    tag = "api-keys",
    security(("bearer" = [])),
    params(ListQuery),
    responses((status = 200, description = "A page of keys (never the secrets)", body = Page<ApiKey>))
)]
#[get("")]
pub async fn list(
    state: web::Data<AppState>,
    auth: Jwt,
    q: web::Query<ListQuery>,
) -> ApiResult<web::Json<Page<ApiKey>>> {
    Ok(web::Json(state.services.api_keys.list(&auth.0, &q.page()?).await?))
}

/// Revoke a key at once.
#[utoipa::path(
    tag = "api-keys",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 204, description = "Revoked"),
        (status = 404, description = "No such key in this tenant, or already revoked", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Another user's key, by a non-admin or of a role above the caller's", body = Problem, content_type = "application/problem+json"),
    )
)]
#[delete("/{id}")]
pub async fn revoke(state: web::Data<AppState>, auth: Jwt, id: web::Path<ApiKeyId>) -> ApiResult<HttpResponse> {
    state.services.api_keys.revoke(&auth.0, *id).await?;
    Ok(HttpResponse::NoContent().finish())
}
