//! Diesel's view of `migrations/postgres`; keep it in step with the SQL by hand.

diesel::table! {
    tenants (id) {
        id -> Uuid,
        name -> Text,
        created_at -> Timestamptz,
        settings -> Text,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    tenant_secrets (tenant_id, purpose) {
        tenant_id -> Uuid,
        purpose -> Text,
        secret -> Text,
        previous -> Nullable<Text>,
        previous_until -> Nullable<Timestamptz>,
        require_timestamp -> Bool,
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
    user_sso_identities (tenant_id, issuer, subject) {
        tenant_id -> Uuid,
        issuer -> Text,
        subject -> Text,
        user_id -> Uuid,
        created_at -> Timestamptz,
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

diesel::table! {
    audit_records (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        seq -> Int8,
        ts -> Timestamptz,
        actor_type -> Text,
        actor_id -> Text,
        event_type -> Text,
        agent_id -> Nullable<Uuid>,
        action -> Nullable<Text>,
        resource -> Nullable<Text>,
        decision -> Nullable<Text>,
        risk_score -> Nullable<Float8>,
        details -> Text,
        prev_hash -> Bytea,
        hash -> Bytea,
    }
}

diesel::table! {
    audit_heads (tenant_id) {
        tenant_id -> Uuid,
        seq -> Int8,
        hash -> Bytea,
        ts -> Timestamptz,
    }
}

diesel::table! {
    agents (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        name -> Text,
        agent_type -> Text,
        description -> Nullable<Text>,
        capabilities -> Array<Text>,
        permissions -> Text,
        status -> Text,
        predicted_type -> Text,
        risk -> Text,
        risk_score -> Float8,
        metadata -> Text,
        last_seen_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    agent_embeddings (agent_id) {
        agent_id -> Uuid,
        tenant_id -> Uuid,
        model -> Text,
        model_version -> Int4,
        text -> Text,
        vector -> Bytea,
        refreshed_at -> Timestamptz,
    }
}

diesel::table! {
    agent_index_versions (tenant_id) {
        tenant_id -> Uuid,
        version -> Int8,
    }
}

diesel::table! {
    policies (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        name -> Text,
        description -> Nullable<Text>,
        rego -> Text,
        enabled -> Bool,
        version -> Int8,
        created_by -> Nullable<Uuid>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    guard_feedback (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        kind -> Text,
        label -> Text,
        validation_id -> Nullable<Uuid>,
        text -> Text,
        created_by_type -> Text,
        created_by_id -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    guard_stats (tenant_id, hour, verdict, bucket) {
        tenant_id -> Uuid,
        hour -> Int8,
        verdict -> Text,
        bucket -> Int2,
        count -> Int8,
    }
}

diesel::table! {
    discovery_events (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        disposition -> Text,
        body -> Text,
    }
}

diesel::table! {
    discovery_candidates (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        status -> Text,
        body -> Text,
    }
}

diesel::table! {
    hitl_requests (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        agent_id -> Uuid,
        status -> Text,
        expires_at -> Timestamptz,
        callback_due_at -> Nullable<Timestamptz>,
        body -> Text,
        callback_open -> Bool,
    }
}

diesel::table! {
    anomaly_reports (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        agent_id -> Uuid,
        anomaly_type -> Text,
        severity -> Text,
        status -> Text,
        created_at -> Timestamptz,
        body -> Text,
    }
}

diesel::table! {
    leases (name) {
        name -> Text,
        holder -> Uuid,
        lease_until -> Timestamptz,
    }
}

diesel::table! {
    siem_sinks (name) {
        name -> Text,
        created_at -> Timestamptz,
        forwarded -> BigInt,
        failed -> BigInt,
        last_success_at -> Nullable<Timestamptz>,
        last_error -> Nullable<Text>,
        last_error_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    siem_cursors (sink, tenant_id) {
        sink -> Text,
        tenant_id -> Uuid,
        last_seq -> BigInt,
    }
}

diesel::table! {
    jobs (id) {
        id -> Uuid,
        tenant_id -> Uuid,
        kind -> Text,
        requested_by_type -> Text,
        requested_by_id -> Text,
        status -> Text,
        progress -> Float8,
        error -> Nullable<Text>,
        params -> Json,
        state -> Json,
        created_at -> Timestamptz,
        started_at -> Nullable<Timestamptz>,
        finished_at -> Nullable<Timestamptz>,
        expires_at -> Nullable<Timestamptz>,
        attempts -> Int4,
        lease_token -> Nullable<Uuid>,
        lease_until -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    job_chunks (job_id, idx) {
        job_id -> Uuid,
        idx -> Int4,
        data -> Bytea,
    }
}

diesel::table! {
    model_versions (tenant_id, kind, version) {
        tenant_id -> Uuid,
        kind -> Text,
        version -> Int4,
        active -> Bool,
        info -> Json,
        model -> Bytea,
    }
}

diesel::joinable!(users -> tenants (tenant_id));
diesel::joinable!(sessions -> tenants (tenant_id));
diesel::joinable!(sessions -> users (user_id));
diesel::joinable!(user_sso_identities -> users (user_id));
diesel::joinable!(api_keys -> tenants (tenant_id));
diesel::joinable!(api_keys -> users (user_id));
diesel::joinable!(api_keys -> sessions (session_id));

diesel::joinable!(audit_records -> tenants (tenant_id));
diesel::joinable!(audit_heads -> tenants (tenant_id));
diesel::joinable!(jobs -> tenants (tenant_id));
diesel::joinable!(job_chunks -> jobs (job_id));
diesel::joinable!(model_versions -> tenants (tenant_id));

diesel::joinable!(agents -> tenants (tenant_id));
diesel::joinable!(agent_embeddings -> agents (agent_id));
diesel::joinable!(agent_index_versions -> tenants (tenant_id));

diesel::joinable!(policies -> tenants (tenant_id));

diesel::joinable!(guard_feedback -> tenants (tenant_id));
diesel::joinable!(guard_stats -> tenants (tenant_id));

diesel::joinable!(discovery_events -> tenants (tenant_id));
diesel::joinable!(discovery_candidates -> tenants (tenant_id));
diesel::joinable!(hitl_requests -> tenants (tenant_id));
diesel::joinable!(anomaly_reports -> tenants (tenant_id));

diesel::joinable!(siem_cursors -> tenants (tenant_id));

diesel::allow_tables_to_appear_in_same_query!(
    jobs,
    job_chunks,
    model_versions,
    tenants,
    tenant_secrets,
    users,
    user_sso_identities,
    sessions,
    api_keys,
    audit_records,
    audit_heads,
    agents,
    agent_embeddings,
    agent_index_versions,
    policies,
    guard_feedback,
    guard_stats,
    discovery_events,
    discovery_candidates,
    hitl_requests,
    anomaly_reports,
    leases,
    siem_sinks,
    siem_cursors,
);
