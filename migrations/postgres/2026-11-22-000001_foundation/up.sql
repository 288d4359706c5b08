CREATE TABLE tenants (
    id          UUID PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE users (
    id             UUID PRIMARY KEY,
    tenant_id      UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    email          TEXT NOT NULL UNIQUE,
    name           TEXT,
    role           TEXT NOT NULL CHECK (role IN ('viewer', 'analyst', 'admin', 'super_admin')),
    status         TEXT NOT NULL CHECK (status IN ('active', 'blocked')),
    password_hash  TEXT,
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    last_login_at  TIMESTAMPTZ
);
CREATE INDEX users_tenant_id_idx ON users (tenant_id, id DESC);

CREATE TABLE sessions (
    id          UUID PRIMARY KEY,
    tenant_id   UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id     UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    revoked_at  TIMESTAMPTZ
);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);

CREATE TABLE api_keys (
    id            UUID PRIMARY KEY,
    tenant_id     UUID NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id       UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id    UUID REFERENCES sessions (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    prefix        TEXT NOT NULL UNIQUE,
    key_hash      BYTEA NOT NULL,
    permissions   JSONB NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('standard', 'session')),
    created_at    TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ,
    last_used_at  TIMESTAMPTZ,
    revoked_at    TIMESTAMPTZ
);
CREATE INDEX api_keys_tenant_id_idx ON api_keys (tenant_id, id DESC);
CREATE INDEX api_keys_session_id_idx ON api_keys (session_id);
CREATE INDEX api_keys_user_id_idx ON api_keys (user_id);
