//! Spec 4.3: login, logout, current user.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use agentgov_domain::model::User;
use agentgov_domain::services::LoginResult;

use crate::AppState;
use crate::extract::{Json, Jwt, client_ip};
use crate::problem::{ApiResult, Problem};

/// Spec 2.1.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub email: String,
    pub password: String,
}

/// Sign in with email and password. Failed attempts are limited per email and per client IP
/// (429 with `Retry-After`).
#[utoipa::path(
    tag = "auth",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Signed in", body = LoginResult),
        (status = 401, description = "Wrong email or password", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "The user is blocked", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Too many failed attempts", body = Problem, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[post("/auth/login")]
pub async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Json<LoginRequest>,
) -> ApiResult<web::Json<LoginResult>> {
    let ip = client_ip(&req);
    let body = body.0;
    Ok(web::Json(state.services.auth.login(&body.email, &body.password, ip.as_deref()).await?))
}

/// Sign out: the JWT and the API key issued with it stop working at once.
#[utoipa::path(
    tag = "auth",
    security(("bearer" = [])),
    responses((status = 204, description = "Signed out"))
)]
#[post("/auth/logout")]
pub async fn logout(state: web::Data<AppState>, auth: Jwt) -> ApiResult<HttpResponse> {
    state.services.auth.logout(&auth.0).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The signed-in user.
#[utoipa::path(
    tag = "auth",
    security(("bearer" = [])),
    responses((status = 200, description = "The current user", body = User))
)]
#[get("/auth/me")]
pub async fn me(auth: Jwt) -> web::Json<User> {
    web::Json(auth.0.user)
}
