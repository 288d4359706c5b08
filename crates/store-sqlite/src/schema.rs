//! The tables of `migrations/sqlite`, column for column. Ids are UUID text, timestamps
//! RFC 3339 text (`TimestamptzSqlite`), `permissions` a JSON array of permission strings.
//! The audit and export tables keep timestamps as unix microseconds (`BigInt`), so SQL
//! compares them exactly, and hashes as 32-byte blobs. So do the agent tables, whose JSON
//! columns are text and whose vectors are little-endian `f32` blobs, the policies table and
//! the Prompt Guard's tables (models, feedback, tasks, stats), the discovery tables
//! (events, candidates, jobs), whose records are JSON text beside the columns queried, the
//! anomaly tables (reports, detector versions, training tasks), and the lease and SIEM
//! tables.

diesel::table! {
    tenants (id) {
        id -> Text,
        name -> Text,
        created_at -> TimestamptzSqlite,
        settings -> Text,
        updated_at -> TimestamptzSqlite,
    }
}

diesel::table! {
    tenant_secrets (tenant_id, purpose) {
        tenant_id -> Text,
        purpose -> Text,
        secret -> Text,
        previous -> Nullable<Text>,
        previous_until -> Nullable<TimestamptzSqlite>,
        require_timestamp -> Bool,
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
    user_sso_identities (tenant_id, issuer, subject) {
        tenant_id -> Text,
        issuer -> Text,
        subject -> Text,
        user_id -> Text,
        created_at -> TimestamptzSqlite,
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

diesel::table! {
    audit_records (id) {
        id -> Text,
        tenant_id -> Text,
        seq -> BigInt,
        ts -> BigInt,
        actor_type -> Text,
        actor_id -> Text,
        event_type -> Text,
        agent_id -> Nullable<Text>,
        action -> Nullable<Text>,
        resource -> Nullable<Text>,
        decision -> Nullable<Text>,
        risk_score -> Nullable<Double>,
        details -> Text,
        prev_hash -> Binary,
        hash -> Binary,
    }
}

diesel::table! {
    audit_heads (tenant_id) {
        tenant_id -> Text,
        seq -> BigInt,
        hash -> Binary,
        ts -> BigInt,
    }
}

diesel::table! {
    agents (id) {
        id -> Text,
        tenant_id -> Text,
        name -> Text,
        agent_type -> Text,
        description -> Nullable<Text>,
        capabilities -> Text,
        permissions -> Text,
        status -> Text,
        predicted_type -> Text,
        risk -> Text,
        risk_score -> Double,
        metadata -> Text,
        last_seen_at -> Nullable<BigInt>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    agent_embeddings (agent_id) {
        agent_id -> Text,
        tenant_id -> Text,
        model -> Text,
        model_version -> Integer,
        text -> Text,
        vector -> Binary,
        refreshed_at -> BigInt,
    }
}

diesel::table! {
    agent_index_versions (tenant_id) {
        tenant_id -> Text,
        version -> BigInt,
    }
}

diesel::table! {
    policies (id) {
        id -> Text,
        tenant_id -> Text,
        name -> Text,
        description -> Nullable<Text>,
        rego -> Text,
        enabled -> Bool,
        version -> BigInt,
        created_by -> Nullable<Text>,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    guard_feedback (id) {
        id -> Text,
        tenant_id -> Text,
        kind -> Text,
        label -> Text,
        validation_id -> Nullable<Text>,
        text -> Text,
        created_by_type -> Text,
        created_by_id -> Text,
        created_at -> BigInt,
    }
}

diesel::table! {
    guard_stats (tenant_id, hour, verdict, bucket) {
        tenant_id -> Text,
        hour -> BigInt,
        verdict -> Text,
        bucket -> SmallInt,
        count -> BigInt,
    }
}

diesel::table! {
    discovery_events (id) {
        id -> Text,
        tenant_id -> Text,
        disposition -> Text,
        body -> Text,
    }
}

diesel::table! {
    discovery_candidates (id) {
        id -> Text,
        tenant_id -> Text,
        status -> Text,
        body -> Text,
    }
}

diesel::table! {
    hitl_requests (id) {
        id -> Text,
        tenant_id -> Text,
        agent_id -> Text,
        status -> Text,
        expires_at -> BigInt,
        callback_due_at -> Nullable<BigInt>,
        body -> Text,
        callback_open -> Bool,
    }
}

diesel::table! {
    anomaly_reports (id) {
        id -> Text,
        tenant_id -> Text,
        agent_id -> Text,
        anomaly_type -> Text,
        severity -> Text,
        status -> Text,
        created_at -> BigInt,
        body -> Text,
    }
}

diesel::table! {
    leases (name) {
        name -> Text,
        holder -> Text,
        lease_until -> BigInt,
    }
}

diesel::table! {
    siem_sinks (name) {
        name -> Text,
        created_at -> BigInt,
        forwarded -> BigInt,
        failed -> BigInt,
        last_success_at -> Nullable<BigInt>,
        last_error -> Nullable<Text>,
        last_error_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    siem_cursors (sink, tenant_id) {
        sink -> Text,
        tenant_id -> Text,
        last_seq -> BigInt,
    }
}

diesel::table! {
    jobs (id) {
        id -> Text,
        tenant_id -> Text,
        kind -> Text,
        requested_by_type -> Text,
        requested_by_id -> Text,
        status -> Text,
        progress -> Double,
        error -> Nullable<Text>,
        params -> Text,
        state -> Text,
        created_at -> BigInt,
        started_at -> Nullable<BigInt>,
        finished_at -> Nullable<BigInt>,
        expires_at -> Nullable<BigInt>,
        attempts -> Integer,
        lease_token -> Nullable<Text>,
        lease_until -> Nullable<BigInt>,
    }
}

diesel::table! {
    job_chunks (job_id, idx) {
        job_id -> Text,
        idx -> Integer,
        data -> Binary,
    }
}

diesel::table! {
    model_versions (tenant_id, kind, version) {
        tenant_id -> Text,
        kind -> Text,
        version -> Integer,
        active -> Bool,
        info -> Text,
        model -> Binary,
    }
}

diesel::joinable!(users -> tenants (tenant_id));
diesel::joinable!(sessions -> users (user_id));
diesel::joinable!(user_sso_identities -> users (user_id));
diesel::joinable!(api_keys -> users (user_id));
diesel::joinable!(api_keys -> sessions (session_id));

diesel::joinable!(job_chunks -> jobs (job_id));
diesel::joinable!(agent_embeddings -> agents (agent_id));

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
    siem_cursors
);
