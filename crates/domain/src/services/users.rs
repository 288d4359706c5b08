//! User management: admins manage their tenant's users; everyone manages their own profile.

use serde_json::json;

use super::audit::caller_actor;
use super::validate::{check_email, check_name, check_password, normalize_email};
use super::{AuditEvent, AuditLog, AuthService, Caller, Ports};
use crate::error::{DomainError, Result, Violations};
use crate::ids::UserId;
use crate::model::{Actor, Role, User, UserStatus};
use crate::page::{Page, PageRequest};

/// `POST /users`.
#[derive(Debug, Clone, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 254,
            pattern = r"^[^@\s\u0000-\u001f\u007f-\u009f]+@[^@\s.\u0000-\u001f\u007f-\u009f][^@\s\u0000-\u001f\u007f-\u009f]*\.[^@\s\u0000-\u001f\u007f-\u009f]*[^@\s.\u0000-\u001f\u007f-\u009f]$"
        )
    )]
    pub email: String,
    /// At least 12 characters.
    #[cfg_attr(feature = "openapi", schema(min_length = 12, max_length = 1024))]
    pub password: String,
    /// Defaults to `viewer`. At most the creating admin's own role.
    pub role: Option<Role>,
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub name: Option<String>,
}

/// `PUT /users/me` and `PUT /users/{id}`: fields left out stay as they are.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateUser {
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 254,
            pattern = r"^[^@\s\u0000-\u001f\u007f-\u009f]+@[^@\s.\u0000-\u001f\u007f-\u009f][^@\s\u0000-\u001f\u007f-\u009f]*\.[^@\s\u0000-\u001f\u007f-\u009f]*[^@\s.\u0000-\u001f\u007f-\u009f]$"
        )
    )]
    pub email: Option<String>,
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
        )
    )]
    pub name: Option<String>,
}

super::ports::repos!(Repos { users: UserRepo });
#[derive(Clone)]
pub struct UserService {
    repos: Repos,
    ports: Ports,
    audit: AuditLog,
    passwords: super::passwords::Passwords,
    auth: AuthService,
}

impl UserService {
    pub fn new(
        ports: Ports,
        repos: Repos,
        audit: AuditLog,
        passwords: super::passwords::Passwords,
        auth: AuthService,
    ) -> Self {
        Self { ports, repos, audit, passwords, auth }
    }

    /// Records an admin change to `user`, made by `caller`.
    async fn audited(&self, caller: &Caller, event_type: &str, user: &User, details: serde_json::Value) {
        let event = AuditEvent::new(caller.tenant_id(), caller_actor(caller), event_type)
            .action(event_type.rsplit('.').next().unwrap_or(event_type))
            .resource(format!("users/{}", user.id))
            .details(details);
        self.audit.record_after(event).await;
    }

    pub async fn create(&self, caller: &Caller, req: NewUser) -> Result<User> {
        caller.require_role(Role::Admin)?;
        let email = normalize_email(&req.email);
        let mut v = Violations::new();
        check_email(&mut v, "email", &req.email);
        check_password(&mut v, "password", &req.password);
        if let Some(name) = &req.name {
            check_name(&mut v, "name", name);
        }
        v.into_result()?;
        let role = req.role.unwrap_or(Role::Viewer);
        Self::may_grant(caller, role)?;
        let now = self.ports.clock.now();
        let user = User {
            id: UserId(self.ports.ids.new_id()),
            tenant_id: caller.tenant_id(),
            email,
            name: req.name.map(|n| n.trim().to_owned()),
            role,
            status: UserStatus::Active,
            password_hash: Some(self.passwords.hash(caller.tenant_id(), &req.password).await?),
            created_at: now,
            updated_at: now,
            last_login_at: None,
        };
        self.repos.users.insert_user(&user).await.map_err(unusable_email)?;
        self.audited(caller, "user.created", &user, json!({"email": user.email, "role": user.role})).await;
        Ok(user)
    }

    pub async fn list(&self, caller: &Caller, page: &PageRequest) -> Result<Page<User>> {
        caller.require_role(Role::Admin)?;
        self.repos.users.list_users(caller.tenant_id(), page).await
    }

    pub async fn get(&self, caller: &Caller, id: UserId) -> Result<User> {
        caller.require_role(Role::Admin)?;
        self.find(caller, id).await
    }

    pub async fn update(&self, caller: &Caller, id: UserId, req: UpdateUser) -> Result<User> {
        caller.require_role(Role::Admin)?;
        let user = self.find_manageable(caller, id).await?;
        self.apply_update(caller, user, req).await
    }

    pub async fn update_me(&self, caller: &Caller, req: UpdateUser) -> Result<User> {
        self.apply_update(caller, caller.user.clone(), req).await
    }

    async fn apply_update(&self, caller: &Caller, mut user: User, req: UpdateUser) -> Result<User> {
        let mut v = Violations::new();
        if let Some(email) = &req.email {
            check_email(&mut v, "email", email);
        }
        if let Some(name) = &req.name {
            check_name(&mut v, "name", name);
        }
        v.into_result()?;
        if let Some(email) = req.email {
            user.email = normalize_email(&email);
        }
        if let Some(name) = req.name {
            user.name = Some(name.trim().to_owned());
        }
        let before = (user.email.clone(), user.name.clone());
        let user = self.save(user).await?;
        let details = json!({"email": user.email, "name": user.name, "previous_email": before.0});
        self.audited(caller, "user.updated", &user, details).await;
        Ok(user)
    }

    pub async fn set_role(&self, caller: &Caller, id: UserId, role: Role) -> Result<User> {
        caller.require_role(Role::Admin)?;
        let mut user = self.find_manageable(caller, id).await?;
        Self::may_grant(caller, role)?;
        let previous = user.role;
        user.role = role;
        let user = self.save(user).await?;
        self.audited(caller, "user.role_changed", &user, json!({"previous_role": previous, "role": role})).await;
        Ok(user)
    }

    /// The platform operator (the command line, `by`) sets any user's role, `super_admin`
    /// included: the only way to make the first Super Admin, since nobody may grant a role
    /// above their own. A demotion keeps the tenant's last active admin, as `set_role` does.
    pub async fn set_role_as_operator(&self, email: &str, role: Role, by: &str) -> Result<User> {
        let email = normalize_email(email);
        let mut user =
            self.repos.users.find_user_by_email(&email).await?.ok_or_else(|| DomainError::not_found("user", &email))?;
        let previous = user.role;
        if previous == role {
            return Ok(user);
        }
        user.role = role;
        let user = self.save(user).await?;
        let event = AuditEvent::new(user.tenant_id, Actor::system(by), "user.role_changed")
            .action("role_changed")
            .resource(format!("users/{}", user.id))
            .details(json!({"previous_role": previous, "role": role}));
        self.audit.record_after(event).await;
        Ok(user)
    }

    /// Blocks a user: their tokens and keys stop working at once, and their sessions are
    /// revoked so unblocking does not bring old tokens back.
    pub async fn block(&self, caller: &Caller, id: UserId) -> Result<User> {
        caller.require_role(Role::Admin)?;
        let mut user = self.find_manageable(caller, id).await?;
        if user.status == UserStatus::Blocked {
            return Ok(user);
        }
        user.status = UserStatus::Blocked;
        let user = self.save(user).await?;
        self.auth.revoke_user_sessions(user.tenant_id, user.id, None).await?;
        self.audited(caller, "user.blocked", &user, json!({"email": user.email})).await;
        Ok(user)
    }

    pub async fn unblock(&self, caller: &Caller, id: UserId) -> Result<User> {
        caller.require_role(Role::Admin)?;
        let mut user = self.find_manageable(caller, id).await?;
        if user.status == UserStatus::Active {
            return Ok(user);
        }
        user.status = UserStatus::Active;
        let user = self.save(user).await?;
        self.audited(caller, "user.unblocked", &user, json!({"email": user.email})).await;
        Ok(user)
    }

    pub async fn delete(&self, caller: &Caller, id: UserId) -> Result<()> {
        caller.require_role(Role::Admin)?;
        let user = self.find_manageable(caller, id).await?;
        self.repos.users.delete_user(user.tenant_id, user.id).await?;
        self.auth.credentials_changed(user.tenant_id).await;
        self.audited(caller, "user.deleted", &user, json!({"email": user.email, "role": user.role})).await;
        // Their sessions are gone with them; mark the tokens revoked for the fast path.
        self.auth.revoke_user_sessions(user.tenant_id, user.id, None).await
    }

    /// Changes the caller's own password; their other sessions are signed out. Attempts are
    /// limited per user (429), so a stolen session cannot guess the current password.
    pub async fn change_password(&self, caller: &Caller, current: &str, new: &str) -> Result<()> {
        let mut v = Violations::new();
        check_password(&mut v, "new_password", new);
        v.into_result()?;
        // Before the current password is looked at: guessing it here is limited too.
        self.auth.reserve_password_change(caller.user.id).await?;
        if current.chars().count() > crate::secrets::MAX_PASSWORD_LEN
            || !self.passwords.verify(Some(caller.tenant_id()), current, caller.user.password_hash.as_deref()).await?
        {
            return Err(DomainError::invalid("current_password", "is incorrect"));
        }
        let mut user = caller.user.clone();
        user.password_hash = Some(self.passwords.hash(caller.tenant_id(), new).await?);
        let user = self.save(user).await?;
        self.audited(caller, "user.password_changed", &user, json!({})).await;
        self.auth.revoke_user_sessions(caller.tenant_id(), caller.user.id, caller.session_id()).await
    }

    async fn save(&self, mut user: User) -> Result<User> {
        user.updated_at = self.ports.clock.now();
        self.repos.users.update_user(&user).await.map_err(unusable_email)?;
        self.auth.credentials_changed(user.tenant_id).await;
        Ok(user)
    }

    async fn find(&self, caller: &Caller, id: UserId) -> Result<User> {
        self.repos.users.get_user(caller.tenant_id(), id).await?.ok_or_else(|| DomainError::not_found("user", id))
    }

    /// A user the caller may change: in their tenant, with a role no higher than theirs.
    async fn find_manageable(&self, caller: &Caller, id: UserId) -> Result<User> {
        let user = self.find(caller, id).await?;
        if user.role > caller.role() {
            return Err(DomainError::Forbidden(format!(
                "cannot manage a user whose role ({}) is above yours",
                user.role
            )));
        }
        Ok(user)
    }

    fn may_grant(caller: &Caller, role: Role) -> Result<()> {
        if role > caller.role() {
            Err(DomainError::Forbidden(format!("cannot grant the {role} role, which is above yours")))
        } else {
            Ok(())
        }
    }
}

/// The store's conflict on the platform-wide unique e-mail, as a tenant's admin sees it.
/// E-mails are unique across tenants (login names no tenant), so "already registered"
/// would tell an admin that another tenant has a user with that address. The answer is
/// the same whether the address is taken in the caller's tenant or in another, and names
/// neither.
pub(crate) const EMAIL_UNUSABLE: &str = "this e-mail cannot be used; choose another";

fn unusable_email(e: DomainError) -> DomainError {
    match e {
        DomainError::Conflict(m) if m == "email already registered" => DomainError::Conflict(EMAIL_UNUSABLE.into()),
        other => other,
    }
}
