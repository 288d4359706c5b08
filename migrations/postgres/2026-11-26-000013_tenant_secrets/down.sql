DROP TABLE tenant_secrets;
