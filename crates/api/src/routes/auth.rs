//! Spec 4.3: login, logout, current user, and single sign-on with OpenID Connect.

use actix_web::{HttpRequest, HttpResponse, get, post, web};
use agentgov_domain::model::User;
use agentgov_domain::services::LoginResult;
use agentgov_domain::services::sso::{ExchangeRequest, ProviderView};

use crate::AppState;
use crate::extract::{Json, Jwt, client_ip, cookie, set_cookie};
use crate::problem::{ApiResult, Problem};

/// Spec 2.1.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub email: String,
    pub password: String,
}

/// Sign in with email and password. Attempts are limited per email from one client address
/// (held back progressively), per client address and per email (429 with `Retry-After`),
/// counted before the password is checked (docs/API.md, "Credentials").
#[utoipa::path(
    tag = "auth",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Signed in", body = LoginResult),
        (status = 401, description = "Wrong email or password, or a blocked user (the same answer)", body = Problem, content_type = "application/problem+json"),
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

/// The configured single sign-on providers (no credentials; no secrets).
#[utoipa::path(
    operation_id = "sso_providers",
    tag = "auth",
    responses((status = 200, description = "The providers", body = Vec<ProviderView>))
)]
#[get("/auth/sso/providers")]
pub async fn sso_providers(state: web::Data<AppState>) -> web::Json<Vec<ProviderView>> {
    web::Json(state.services.sso.providers())
}

/// `GET /auth/sso/login`.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SsoLoginQuery {
    /// The provider's `id`.
    pub provider: String,
    /// Where the provider sends the user back: one of the provider's configured redirect
    /// URIs (default: its first).
    pub redirect_uri: Option<String>,
}

/// The cookie that binds a sign-in to the browser that started it (login CSRF).
pub const SSO_BINDING_COOKIE: &str = "agentgov_sso";
/// The only path the cookie is sent to: the SSO routes.
pub const SSO_COOKIE_PATH: &str = "/api/v1/auth/sso";

/// Start an OpenID Connect sign-in: 302 to the provider's authorization endpoint, with
/// `state`, `nonce` and PKCE (S256). The provider sends the user back to `redirect_uri`
/// with `code` and `state`, which `POST /auth/sso/exchange` takes within 10 minutes, from
/// the same browser: the answer sets the cookie `agentgov_sso` (random, `HttpOnly`,
/// `Secure`, `SameSite=Lax`, `Path=/api/v1/auth/sso`, `Max-Age` the state's lifetime) that
/// the exchange must carry.
#[utoipa::path(
    operation_id = "sso_login",
    tag = "auth",
    params(SsoLoginQuery),
    responses(
        (status = 302, description = "To the provider", headers(
            ("Location" = String, description = "The authorization URL"),
            ("Set-Cookie" = String, description = "`agentgov_sso`: binds the sign-in to this browser; the exchange must carry it"),
        )),
        (status = 400, description = "`redirect_uri` is not one of the provider's", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such provider", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The provider cannot be reached", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/auth/sso/login")]
pub async fn sso_login(
    state: web::Data<AppState>,
    req: HttpRequest,
    q: web::Query<SsoLoginQuery>,
) -> ApiResult<HttpResponse> {
    let sso = &state.services.sso;
    let presented = cookie(&req, SSO_BINDING_COOKIE);
    let started = sso.login(&q.provider, q.redirect_uri.as_deref(), presented.as_deref()).await?;
    let binding = (SSO_BINDING_COOKIE, started.binding.as_str());
    let set_cookie = set_cookie(&req, binding, SSO_COOKIE_PATH, sso.state_ttl().as_secs(), "Lax", true);
    Ok(HttpResponse::Found()
        .insert_header((actix_web::http::header::LOCATION, started.url))
        .insert_header((actix_web::http::header::SET_COOKIE, set_cookie))
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .finish())
}

/// Finish an OpenID Connect sign-in, from the browser that started it (its `agentgov_sso`
/// cookie): the code is exchanged and the ID token verified (signature, issuer, audience,
/// expiry, nonce); `email_verified` must be true (unless the provider trusts unverified
/// addresses). The identity `(iss, sub)` linked at the first sign-in signs its user in; else
/// the verified e-mail signs in a user of the provider's tenant, who is linked to it then.
/// Answers exactly as `/auth/login`. A state works once.
#[utoipa::path(
    operation_id = "sso_exchange",
    tag = "auth",
    request_body = ExchangeRequest,
    responses(
        (status = 200, description = "Signed in", body = LoginResult),
        (status = 401, description = "Unknown, expired or used state; no or another browser's `agentgov_sso` cookie; a refused code or token; an unverified e-mail", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "E-mail domain not allowed, no account, another tenant's account, an account linked to another identity at this provider, or a blocked user", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "The provider cannot be reached", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/auth/sso/exchange")]
pub async fn sso_exchange(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Json<ExchangeRequest>,
) -> ApiResult<web::Json<LoginResult>> {
    let ip = client_ip(&req);
    let binding = cookie(&req, SSO_BINDING_COOKIE);
    Ok(web::Json(state.services.sso.exchange(body.0, binding.as_deref(), ip.as_deref()).await?))
}
