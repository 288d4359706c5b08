//! The tables of `migrations/sqlite`, column for column. Ids are UUID text, timestamps
//! RFC 3339 text (`TimestamptzSqlite`), `permissions` a JSON array of permission strings.

diesel::table! {
    tenants (id) {
        id -> Text,
        name -> Text,
        created_at -> TimestamptzSqlite,
    }
}

diesel::table! {
    users (id) {
        id -> Text,
        tenant_id -> Text,
        email -> Text,
        name -> Nullable<Text>,
        role -> Text,
        status -> Text,
        password_hash -> Nullable<Text>,
        created_at -> TimestamptzSqlite,
        updated_at -> TimestamptzSqlite,
        last_login_at -> Nullable<TimestamptzSqlite>,
    }
}

diesel::table! {
    sessions (id) {
        id -> Text,
        tenant_id -> Text,
        user_id -> Text,
        created_at -> TimestamptzSqlite,
        expires_at -> TimestamptzSqlite,
        revoked_at -> Nullable<TimestamptzSqlite>,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Text,
        tenant_id -> Text,
        user_id -> Text,
        session_id -> Nullable<Text>,
        name -> Text,
        prefix -> Text,
        key_hash -> Binary,
        permissions -> Text,
        kind -> Text,
        created_at -> TimestamptzSqlite,
        expires_at -> Nullable<TimestamptzSqlite>,
        last_used_at -> Nullable<TimestamptzSqlite>,
        revoked_at -> Nullable<TimestamptzSqlite>,
    }
}

diesel::joinable!(users -> tenants (tenant_id));
diesel::joinable!(sessions -> users (user_id));
diesel::joinable!(api_keys -> users (user_id));
diesel::joinable!(api_keys -> sessions (session_id));

diesel::allow_tables_to_appear_in_same_query!(tenants, users, sessions, api_keys);
