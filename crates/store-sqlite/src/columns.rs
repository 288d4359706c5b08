//! What the kinds of column of the shared tables and rows (`agentgov_store_common::tables!`,
//! `rows!`) are in SQLite: ids are UUID text, lower-case and hyphenated (text order is id
//! order); instants that SQL compares are unix microseconds; JSON is text; a list of strings
//! is a JSON array's text. Reading a value SQLite holds but the domain cannot represent is a
//! deserialisation error, never a panic.

use agentgov_domain::model::audit::{from_unix_micros, unix_micros};
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::{Sqlite, SqliteValue};
use time::OffsetDateTime;
use uuid::Uuid;

/// The backend the rows' `check_for_backend` checks their field types against.
#[expect(dead_code, reason = "named only inside diesel's derived compile-time checks, which rustc counts as unused")]
pub(crate) type Backend = Sqlite;

/// The SQL types the shared tables' kinds of column stand for here.
pub(crate) mod sql {
    pub type Id = diesel::sql_types::Text;
    pub type Stamp = diesel::sql_types::TimestamptzSqlite;
    pub type Micros = diesel::sql_types::BigInt;
    pub type JsonDoc = diesel::sql_types::Json;
    pub type JsonIndexed = diesel::sql_types::Json;
    pub type TextList = diesel::sql_types::Text;
}

/// A UUID column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub(crate) struct Id(pub Uuid);

impl From<Uuid> for Id {
    fn from(id: Uuid) -> Self {
        Id(id)
    }
}

impl From<Id> for Uuid {
    fn from(id: Id) -> Self {
        id.0
    }
}

impl FromSql<Text, Sqlite> for Id {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        Uuid::parse_str(&text).map(Id).map_err(|_| format!("{text:?} is not a UUID").into())
    }
}

impl ToSql<Text, Sqlite> for Id {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(id_text(self.0));
        Ok(IsNull::No)
    }
}

/// Ids are stored lower-case and hyphenated, so that text order is id order.
pub(crate) fn id_text(id: Uuid) -> String {
    id.hyphenated().to_string()
}

/// An instant SQL compares exactly: unix microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = BigInt)]
pub(crate) struct Micros(pub OffsetDateTime);

impl From<OffsetDateTime> for Micros {
    fn from(t: OffsetDateTime) -> Self {
        Micros(t)
    }
}

impl From<Micros> for OffsetDateTime {
    fn from(t: Micros) -> Self {
        t.0
    }
}

impl FromSql<BigInt, Sqlite> for Micros {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let micros = <i64 as FromSql<BigInt, Sqlite>>::from_sql(value)?;
        from_unix_micros(micros).map(Micros).ok_or_else(|| format!("{micros} µs is not a representable instant").into())
    }
}

impl ToSql<BigInt, Sqlite> for Micros {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(unix_micros(self.0));
        Ok(IsNull::No)
    }
}

/// A list of strings: a JSON array's text.
#[derive(Debug, Clone, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub(crate) struct TextList(pub Vec<String>);

impl From<Vec<String>> for TextList {
    fn from(list: Vec<String>) -> Self {
        TextList(list)
    }
}

impl From<TextList> for Vec<String> {
    fn from(list: TextList) -> Self {
        list.0
    }
}

impl FromSql<Text, Sqlite> for TextList {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        let text = <String as FromSql<Text, Sqlite>>::from_sql(value)?;
        serde_json::from_str(&text).map(TextList).map_err(|e| format!("not a JSON array of strings: {e}").into())
    }
}

impl ToSql<Text, Sqlite> for TextList {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(serde_json::to_string(&self.0)?);
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use diesel::prelude::*;
    use diesel::sql_types::Nullable;

    use super::*;

    fn conn() -> SqliteConnection {
        SqliteConnection::establish(":memory:").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn columns_round_trip_through_sqlite() {
        let mut c = conn();
        let id = Uuid::now_v7();
        let back: Id = diesel::select(Id(id).into_sql::<Text>()).get_result(&mut c).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.0, id);
        let text: String =
            diesel::select(Id(id).into_sql::<Text>()).get_result(&mut c).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(text, id_text(id));
        let t = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap_or_else(|e| panic!("{e}"));
        let back: Micros =
            diesel::select(Micros(t).into_sql::<BigInt>()).get_result(&mut c).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.0, t);
        let list = TextList(vec!["a".into(), "b\"".into()]);
        let back: TextList =
            diesel::select(list.clone().into_sql::<Text>()).get_result(&mut c).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, list);
        let none: Option<Id> = diesel::select(None::<Id>.into_sql::<Nullable<Text>>())
            .get_result(&mut c)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(none, None);
    }

    #[test]
    fn unreadable_values_are_errors_not_panics() {
        let mut c = conn();
        assert!(diesel::select("not-a-uuid".into_sql::<Text>()).get_result::<Id>(&mut c).is_err());
        assert!(diesel::select(i64::MAX.into_sql::<BigInt>()).get_result::<Micros>(&mut c).is_err());
        assert!(diesel::select("{\"a\":1}".into_sql::<Text>()).get_result::<TextList>(&mut c).is_err());
    }
}
