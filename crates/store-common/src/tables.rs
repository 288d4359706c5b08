//! The tables of both SQL stores, written once: [`tables!`](crate::tables) expands diesel's
//! `table!` declarations in the store that invokes it.

/// Diesel's view of the schema both `migrations/sqlite` and `migrations/postgres` create,
/// column for column (keep it in step with the SQL by hand; the conformance suite runs every
/// query against both). Where the backends store a kind of value differently, the column
/// names the kind and the invoking crate's `columns::sql` module says what it is there:
///
/// | kind | meaning | SQLite | Postgres |
/// |---|---|---|---|
/// | `Id` | a UUID | `Text` (lower-case, hyphenated: text order is id order) | `Uuid` |
/// | `Stamp` | an instant the backend's time type keeps | `TimestamptzSqlite` (RFC 3339 text) | `Timestamptz` |
/// | `Micros` | an instant SQL compares and orders exactly | `BigInt` (unix microseconds) | `Timestamptz` |
/// | `JsonDoc` | a JSON document | `Json` (text) | `Json` (text kept as written, so an escaped NUL survives) |
/// | `JsonIndexed` | a JSON value queries may look into | `Json` (text) | `Jsonb` |
/// | `TextList` | a list of strings | `Text` (a JSON array) | `Array<Text>` |
#[macro_export]
#[expect(clippy::crate_in_macro_def, reason = "`crate` is meant: the invoking store's `schema` and `columns`")]
macro_rules! tables {
    () => {
        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            tenants (id) {
                id -> Id,
                name -> Text,
                created_at -> Stamp,
                settings -> Text,
                updated_at -> Stamp,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            tenant_secrets (tenant_id, purpose) {
                tenant_id -> Id,
                purpose -> Text,
                secret -> Text,
                previous -> Nullable<Text>,
                previous_until -> Nullable<Stamp>,
                require_timestamp -> Bool,
                created_at -> Stamp,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            users (id) {
                id -> Id,
                tenant_id -> Id,
                email -> Text,
                name -> Nullable<Text>,
                role -> Text,
                status -> Text,
                password_hash -> Nullable<Text>,
                created_at -> Stamp,
                updated_at -> Stamp,
                last_login_at -> Nullable<Stamp>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            user_sso_identities (tenant_id, issuer, subject) {
                tenant_id -> Id,
                issuer -> Text,
                subject -> Text,
                user_id -> Id,
                created_at -> Stamp,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            sessions (id) {
                id -> Id,
                tenant_id -> Id,
                user_id -> Id,
                created_at -> Stamp,
                expires_at -> Stamp,
                revoked_at -> Nullable<Stamp>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            api_keys (id) {
                id -> Id,
                tenant_id -> Id,
                user_id -> Id,
                session_id -> Nullable<Id>,
                name -> Text,
                prefix -> Text,
                key_hash -> Binary,
                permissions -> JsonIndexed,
                kind -> Text,
                created_at -> Stamp,
                expires_at -> Nullable<Stamp>,
                last_used_at -> Nullable<Stamp>,
                revoked_at -> Nullable<Stamp>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            audit_records (id) {
                id -> Id,
                tenant_id -> Id,
                seq -> BigInt,
                ts -> Micros,
                actor_type -> Text,
                actor_id -> Text,
                event_type -> Text,
                agent_id -> Nullable<Id>,
                action -> Nullable<Text>,
                resource -> Nullable<Text>,
                decision -> Nullable<Text>,
                risk_score -> Nullable<Double>,
                details -> Text,
                prev_hash -> Binary,
                hash -> Binary,
                session_id -> Nullable<Text>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            audit_heads (tenant_id) {
                tenant_id -> Id,
                seq -> BigInt,
                hash -> Binary,
                ts -> Micros,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            agents (id) {
                id -> Id,
                tenant_id -> Id,
                name -> Text,
                agent_type -> Text,
                description -> Nullable<Text>,
                capabilities -> TextList,
                permissions -> Text,
                status -> Text,
                predicted_type -> Text,
                risk -> Text,
                risk_score -> Double,
                metadata -> Text,
                last_seen_at -> Nullable<Micros>,
                created_at -> Micros,
                updated_at -> Micros,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            agent_embeddings (agent_id) {
                agent_id -> Id,
                tenant_id -> Id,
                model -> Text,
                model_version -> Integer,
                text -> Text,
                vector -> Binary,
                refreshed_at -> Micros,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            agent_index_versions (tenant_id) {
                tenant_id -> Id,
                version -> BigInt,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            policies (id) {
                id -> Id,
                tenant_id -> Id,
                name -> Text,
                description -> Nullable<Text>,
                rego -> Text,
                enabled -> Bool,
                version -> BigInt,
                created_by -> Nullable<Id>,
                created_at -> Micros,
                updated_at -> Micros,
                shadow -> Bool,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            guard_feedback (id) {
                id -> Id,
                tenant_id -> Id,
                kind -> Text,
                label -> Text,
                validation_id -> Nullable<Id>,
                text -> Text,
                created_by_type -> Text,
                created_by_id -> Text,
                created_at -> Micros,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            guard_stats (tenant_id, hour, verdict, bucket) {
                tenant_id -> Id,
                hour -> BigInt,
                verdict -> Text,
                bucket -> SmallInt,
                count -> BigInt,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            discovery_events (id) {
                id -> Id,
                tenant_id -> Id,
                disposition -> Text,
                body -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            discovery_candidates (id) {
                id -> Id,
                tenant_id -> Id,
                status -> Text,
                body -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            hitl_requests (id) {
                id -> Id,
                tenant_id -> Id,
                agent_id -> Id,
                status -> Text,
                expires_at -> Micros,
                callback_due_at -> Nullable<Micros>,
                body -> Text,
                callback_open -> Bool,
                grant_open -> Bool,
                escalate_at -> Nullable<Micros>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            anomaly_reports (id) {
                id -> Id,
                tenant_id -> Id,
                agent_id -> Id,
                anomaly_type -> Text,
                severity -> Text,
                status -> Text,
                created_at -> Micros,
                body -> Text,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            leases (name) {
                name -> Text,
                holder -> Id,
                lease_until -> Micros,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            siem_sinks (name) {
                name -> Text,
                created_at -> Micros,
                forwarded -> BigInt,
                failed -> BigInt,
                last_success_at -> Nullable<Micros>,
                last_error -> Nullable<Text>,
                last_error_at -> Nullable<Micros>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            siem_cursors (sink, tenant_id) {
                sink -> Text,
                tenant_id -> Id,
                last_seq -> BigInt,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            jobs (id) {
                id -> Id,
                tenant_id -> Id,
                kind -> Text,
                requested_by_type -> Text,
                requested_by_id -> Text,
                status -> Text,
                progress -> Double,
                error -> Nullable<Text>,
                params -> JsonDoc,
                state -> JsonDoc,
                created_at -> Micros,
                started_at -> Nullable<Micros>,
                finished_at -> Nullable<Micros>,
                expires_at -> Nullable<Micros>,
                attempts -> Integer,
                lease_token -> Nullable<Id>,
                lease_until -> Nullable<Micros>,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            job_chunks (job_id, idx) {
                job_id -> Id,
                idx -> Integer,
                data -> Binary,
            }
        }

        diesel::table! {
            use diesel::sql_types::*;
            use crate::columns::sql::*;

            model_versions (tenant_id, kind, version) {
                tenant_id -> Id,
                kind -> Text,
                version -> Integer,
                active -> Bool,
                info -> JsonDoc,
                model -> Binary,
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
            tenants, tenant_secrets, users, user_sso_identities, sessions, api_keys, audit_records,
            audit_heads, agents, agent_embeddings, agent_index_versions, policies, guard_feedback,
            guard_stats, discovery_events, discovery_candidates, hitl_requests, anomaly_reports,
            leases, siem_sinks, siem_cursors, jobs, job_chunks, model_versions,
        );
    };
}
