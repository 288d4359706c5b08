-- Ids are UUID text (lower-case, hyphenated: v7 ids sort by time as text); timestamps are
-- RFC 3339 text (diesel's TimestamptzSqlite); JSON is text.
CREATE TABLE tenants (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);

CREATE TABLE users (
    id             TEXT PRIMARY KEY NOT NULL,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    email          TEXT NOT NULL UNIQUE,
    name           TEXT,
    role           TEXT NOT NULL CHECK (role IN ('viewer', 'analyst', 'admin', 'super_admin')),
    status         TEXT NOT NULL CHECK (status IN ('active', 'blocked')),
    password_hash  TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    last_login_at  TEXT
);
CREATE INDEX users_tenant_id_idx ON users (tenant_id, id DESC);

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY NOT NULL,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    revoked_at  TEXT
);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);

CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY NOT NULL,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id    TEXT REFERENCES sessions (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    prefix        TEXT NOT NULL UNIQUE,
    key_hash      BLOB NOT NULL,
    permissions   TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('standard', 'session')),
    created_at    TEXT NOT NULL,
    expires_at    TEXT,
    last_used_at  TEXT,
    revoked_at    TEXT
);
CREATE INDEX api_keys_tenant_id_idx ON api_keys (tenant_id, id DESC);
CREATE INDEX api_keys_session_id_idx ON api_keys (session_id);
CREATE INDEX api_keys_user_id_idx ON api_keys (user_id);
