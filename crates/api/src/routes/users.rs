//! Spec 4.10: users. Admin operations act only within the caller's tenant, and never on a
//! user whose role is above the caller's.

use actix_web::{HttpResponse, delete, get, post, put, web};
use agentgov_domain::ids::UserId;
use agentgov_domain::model::{Role, User};
use agentgov_domain::page::Page;
use agentgov_domain::services::{NewUser, UpdateUser};

use crate::AppState;
use crate::extract::{Json, Jwt, ListQuery};
use crate::problem::{ApiResult, Problem};

/// `PUT /users/{id}/role`.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleChange {
    pub role: Role,
}

/// `POST /users/me/change-password`.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordChange {
    pub current_password: String,
    /// At least 12 characters.
    #[schema(min_length = 12, max_length = 1024)]
    pub new_password: String,
}

/// Own profile.
#[utoipa::path(tag = "users", security(("bearer" = [])), responses((status = 200, description = "The caller", body = User)))]
#[get("/me")]
pub async fn get_me(auth: Jwt) -> web::Json<User> {
    web::Json(auth.0.user)
}

/// Update own profile (name, email).
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    request_body = UpdateUser,
    responses(
        (status = 200, description = "Updated", body = User),
        (status = 409, description = "Email taken", body = Problem, content_type = "application/problem+json"),
    )
)]
#[put("/me")]
pub async fn update_me(state: web::Data<AppState>, auth: Jwt, body: Json<UpdateUser>) -> ApiResult<web::Json<User>> {
    Ok(web::Json(state.services.users.update_me(&auth.0, body.0).await?))
}

/// Change own password; the caller's other sessions are signed out. Attempts are limited
/// per user (429 with `Retry-After`).
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    request_body = PasswordChange,
    responses(
        (status = 204, description = "Changed"),
        (status = 429, description = "Too many attempts", body = Problem, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[post("/me/change-password")]
pub async fn change_password(
    state: web::Data<AppState>,
    auth: Jwt,
    body: Json<PasswordChange>,
) -> ApiResult<HttpResponse> {
    state.services.users.change_password(&auth.0, &body.0.current_password, &body.0.new_password).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Create a user in the caller's tenant (role defaults to `viewer`, at most the caller's).
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    request_body = NewUser,
    responses(
        (status = 201, description = "Created", body = User),
        (status = 409, description = "Email taken", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("")]
pub async fn create(state: web::Data<AppState>, auth: Jwt, body: Json<NewUser>) -> ApiResult<HttpResponse> {
    let user = state.services.users.create(&auth.0, body.0).await?;
    Ok(HttpResponse::Created().json(user))
}

/// List the tenant's users, newest first.
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    params(ListQuery),
    responses((status = 200, description = "A page of users", body = Page<User>))
)]
#[get("")]
pub async fn list(state: web::Data<AppState>, auth: Jwt, q: web::Query<ListQuery>) -> ApiResult<web::Json<Page<User>>> {
    Ok(web::Json(state.services.users.list(&auth.0, &q.page()?).await?))
}

/// A user of the caller's tenant.
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The user", body = User),
        (status = 404, description = "No such user in this tenant", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/{id}")]
pub async fn get(state: web::Data<AppState>, auth: Jwt, id: web::Path<UserId>) -> ApiResult<web::Json<User>> {
    Ok(web::Json(state.services.users.get(&auth.0, *id).await?))
}

/// Update a user's name or email.
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body = UpdateUser,
    responses(
        (status = 200, description = "Updated", body = User),
        (status = 404, description = "No such user in this tenant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Email taken", body = Problem, content_type = "application/problem+json"),
    )
)]
#[put("/{id}")]
pub async fn update(
    state: web::Data<AppState>,
    auth: Jwt,
    id: web::Path<UserId>,
    body: Json<UpdateUser>,
) -> ApiResult<web::Json<User>> {
    Ok(web::Json(state.services.users.update(&auth.0, *id, body.0).await?))
}

/// Change a user's role; takes effect on their existing tokens and keys at once.
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body = RoleChange,
    responses(
        (status = 200, description = "Updated", body = User),
        (status = 404, description = "No such user in this tenant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Would leave the tenant without an admin", body = Problem, content_type = "application/problem+json"),
    )
)]
#[put("/{id}/role")]
pub async fn set_role(
    state: web::Data<AppState>,
    auth: Jwt,
    id: web::Path<UserId>,
    body: Json<RoleChange>,
) -> ApiResult<web::Json<User>> {
    Ok(web::Json(state.services.users.set_role(&auth.0, *id, body.0.role).await?))
}

/// Block a user: their tokens and keys stop working at once. Idempotent.
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "Blocked", body = User),
        (status = 404, description = "No such user in this tenant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Would leave the tenant without an admin", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/block")]
pub async fn block(state: web::Data<AppState>, auth: Jwt, id: web::Path<UserId>) -> ApiResult<web::Json<User>> {
    Ok(web::Json(state.services.users.block(&auth.0, *id).await?))
}

/// Unblock a user. Idempotent. Tokens from before the block stay revoked.
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "Active", body = User),
        (status = 404, description = "No such user in this tenant", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/{id}/unblock")]
pub async fn unblock(state: web::Data<AppState>, auth: Jwt, id: web::Path<UserId>) -> ApiResult<web::Json<User>> {
    Ok(web::Json(state.services.users.unblock(&auth.0, *id).await?))
}

/// Delete a user with their API keys and sessions.
#[utoipa::path(
    tag = "users",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such user in this tenant", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The tenant's last admin", body = Problem, content_type = "application/problem+json"),
    )
)]
#[delete("/{id}")]
pub async fn remove(state: web::Data<AppState>, auth: Jwt, id: web::Path<UserId>) -> ApiResult<HttpResponse> {
    state.services.users.delete(&auth.0, *id).await?;
    Ok(HttpResponse::NoContent().finish())
}
