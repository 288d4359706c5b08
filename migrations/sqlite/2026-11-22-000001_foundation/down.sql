DROP TABLE api_keys;
DROP TABLE sessions;
DROP TABLE users;
DROP TABLE tenants;
