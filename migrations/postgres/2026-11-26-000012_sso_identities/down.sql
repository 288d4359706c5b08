DROP TABLE user_sso_identities;
