//! What the kinds of column of the shared tables and rows (`agentgov_store_common::tables!`,
//! `rows!`) are in Postgres: its own types, read and written by diesel as they are.

use time::OffsetDateTime;
use uuid::Uuid;

/// The backend the rows' `check_for_backend` checks their field types against.
#[expect(dead_code, reason = "named only inside diesel's derived compile-time checks, which rustc counts as unused")]
pub(crate) type Backend = diesel::pg::Pg;

/// The SQL types the shared tables' kinds of column stand for here.
pub(crate) mod sql {
    pub type Id = diesel::sql_types::Uuid;
    pub type Stamp = diesel::sql_types::Timestamptz;
    pub type Micros = diesel::sql_types::Timestamptz;
    /// `JSON`, not `JSONB`: the text is kept as written, so an escaped NUL (which `JSONB`
    /// refuses) survives.
    pub type JsonDoc = diesel::sql_types::Json;
    pub type JsonIndexed = diesel::sql_types::Jsonb;
    pub type TextList = diesel::sql_types::Array<diesel::sql_types::Text>;
}

/// A UUID column.
pub(crate) type Id = Uuid;
/// An instant (`TIMESTAMPTZ`, to the microsecond).
pub(crate) type Micros = OffsetDateTime;
/// A list of strings (`TEXT[]`).
pub(crate) type TextList = Vec<String>;
