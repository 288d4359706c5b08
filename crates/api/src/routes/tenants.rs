//! Spec 4.12: tenants, managed by the platform operator with `X-Admin-Key`.

use actix_web::{HttpResponse, get, post, web};
use agentgov_domain::model::Tenant;
use agentgov_domain::page::Page;
use agentgov_domain::services::{CreatedTenant, NewTenant};

use crate::AppState;
use crate::extract::{AdminKey, Json, ListQuery};
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
    Ok(HttpResponse::Created().json(created))
}

/// List tenants, newest first.
#[utoipa::path(
    tag = "tenants",
    security(("admin_key" = [])),
    params(ListQuery),
    responses((status = 200, description = "A page of tenants", body = Page<Tenant>))
)]
#[get("/tenants")]
pub async fn list(
    state: web::Data<AppState>,
    _: AdminKey,
    q: web::Query<ListQuery>,
) -> ApiResult<web::Json<Page<Tenant>>> {
    Ok(web::Json(state.services.tenants.list(&q.page()?).await?))
}
