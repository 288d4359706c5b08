//! Diesel's view of `migrations/postgres`; keep it in step with the SQL by hand.

diesel::table! {
    tenants (id) {
        id -> Uuid,
        name -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    users (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        email -> Text,
        name -> Nullable<Text>,
        role -> Text,
        status -> Text,
        password_hash -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        last_login_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    sessions (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        user_id -> Uuid,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        user_id -> Uuid,
        session_id -> Nullable<Uuid>,
        name -> Text,
        prefix -> Text,
        key_hash -> Bytea,
        permissions -> Jsonb,
        kind -> Text,
        created_at -> Timestamptz,
        expires_at -> Nullable<Timestamptz>,
        last_used_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::joinable!(users -> tenants (tenant_id));
diesel::joinable!(sessions -> tenants (tenant_id));
diesel::joinable!(sessions -> users (user_id));
diesel::joinable!(api_keys -> tenants (tenant_id));
diesel::joinable!(api_keys -> users (user_id));
diesel::joinable!(api_keys -> sessions (session_id));

diesel::allow_tables_to_appear_in_same_query!(tenants, users, sessions, api_keys);
