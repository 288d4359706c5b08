-- Single sign-on identities (issue 32, point 7): the ID token's `iss` and `sub` a user
-- signed in with, stored at their first SSO sign-in and matched on afterwards, so that an
-- e-mail address registered again at the provider under another account signs nobody in.
-- One link per identity in a tenant, one per issuer for a user.
CREATE TABLE user_sso_identities (
    tenant_id   TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    issuer      TEXT NOT NULL,
    subject     TEXT NOT NULL,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (tenant_id, issuer, subject)
);
CREATE UNIQUE INDEX user_sso_identities_user_key ON user_sso_identities (user_id, issuer);
