//! Keyset pagination: `limit` and an opaque `cursor`, newest first.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use uuid::Uuid;

use crate::error::{DomainError, Result};

pub const DEFAULT_LIMIT: u32 = 50;
pub const MAX_LIMIT: u32 = 500;

/// A validated page request. Lists are ordered by id descending (ids are UUID v7, so
/// newest first); `after` is the last id of the previous page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub limit: u32,
    pub after: Option<Uuid>,
}

impl Default for PageRequest {
    fn default() -> Self {
        Self { limit: DEFAULT_LIMIT, after: None }
    }
}

impl PageRequest {
    /// Validates the raw query values of a list endpoint.
    pub fn parse(limit: Option<i64>, cursor: Option<&str>) -> Result<Self> {
        let limit = parse_limit(limit)?;
        let after = match cursor {
            None | Some("") => None,
            Some(c) => Some(decode_cursor(c)?),
        };
        Ok(Self { limit, after })
    }

    pub fn first(limit: u32) -> Self {
        Self { limit, after: None }
    }

    /// How many rows an adapter fetches: one more than the page, to know if another follows.
    pub fn fetch_limit(&self) -> i64 {
        i64::from(self.limit) + 1
    }
}

/// Validates a list's `limit` (default 50, 1 to 500).
pub fn parse_limit(limit: Option<i64>) -> Result<u32> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if (1..=i64::from(MAX_LIMIT)).contains(&n) => Ok(n as u32),
        Some(_) => Err(DomainError::invalid("limit", format!("must be between 1 and {MAX_LIMIT}"))),
    }
}

/// The OpenAPI `pattern` of a list's `cursor` (an id, 16 bytes in unpadded base64url), or
/// empty for the first page.
pub const CURSOR_PATTERN: &str = r"^([A-Za-z0-9_-]{21}[AQgw])?$";
/// The OpenAPI `pattern` of the audit log's `cursor` (a sequence number, 8 bytes).
pub const SEQ_CURSOR_PATTERN: &str = r"^([A-Za-z0-9_-]{10}[AEIMQUYcgkosw048])?$";

fn bad_cursor() -> DomainError {
    DomainError::invalid("cursor", "is not a cursor returned by this list")
}

fn decode_cursor(cursor: &str) -> Result<Uuid> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad_cursor())?;
    Uuid::from_slice(&bytes).map_err(|_| bad_cursor())
}

/// The cursor of a list ordered by a sequence number (the audit log): the last `seq` seen.
pub fn encode_seq_cursor(seq: i64) -> String {
    URL_SAFE_NO_PAD.encode(seq.to_be_bytes())
}

/// Reads a cursor made by [`encode_seq_cursor`]; an absent or empty one is `None`.
pub fn decode_seq_cursor(cursor: Option<&str>) -> Result<Option<i64>> {
    let Some(cursor) = cursor.filter(|c| !c.is_empty()) else { return Ok(None) };
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad_cursor())?;
    let bytes = <[u8; 8]>::try_from(bytes.as_slice()).map_err(|_| bad_cursor())?;
    Ok(Some(i64::from_be_bytes(bytes)))
}

pub fn encode_cursor(id: Uuid) -> String {
    URL_SAFE_NO_PAD.encode(id.as_bytes())
}

/// One page of a list: `{"items": [...], "next_cursor": "..." | null}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Pass as `cursor` to get the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// Builds a page from up to `fetch_limit()` rows ordered newest first.
    pub fn from_rows(rows: Vec<T>, req: &PageRequest, id_of: impl Fn(&T) -> Uuid) -> Self {
        Self::from_rows_by(rows, req.limit, |r| encode_cursor(id_of(r)))
    }

    /// Builds a page from up to `limit + 1` rows; `cursor_of` makes the cursor of the last.
    pub fn from_rows_by(mut rows: Vec<T>, limit: u32, cursor_of: impl Fn(&T) -> String) -> Self {
        let more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next_cursor = if more { rows.last().map(cursor_of) } else { None };
        Self { items: rows, next_cursor }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_bounds_are_enforced() {
        assert_eq!(PageRequest::parse(None, None).unwrap().limit, DEFAULT_LIMIT);
        assert_eq!(PageRequest::parse(Some(500), None).unwrap().limit, 500);
        assert!(PageRequest::parse(Some(0), None).is_err());
        assert!(PageRequest::parse(Some(501), None).is_err());
    }

    #[test]
    fn cursor_patterns_accept_exactly_the_cursors() {
        let ids = regex::Regex::new(CURSOR_PATTERN).unwrap();
        let seqs = regex::Regex::new(SEQ_CURSOR_PATTERN).unwrap();
        for n in [0u128, 1, 0xff, u128::MAX, 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef] {
            assert!(ids.is_match(&encode_cursor(Uuid::from_u128(n))));
        }
        for n in [0i64, 1, 255, i64::MAX, -1] {
            assert!(seqs.is_match(&encode_seq_cursor(n)));
        }
        // Every last character the pattern allows decodes; the others do not.
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        for last in alphabet.chars() {
            let id = format!("{}{last}", "A".repeat(21));
            assert_eq!(ids.is_match(&id), PageRequest::parse(None, Some(&id)).is_ok(), "{id}");
            let seq = format!("{}{last}", "A".repeat(10));
            assert_eq!(seqs.is_match(&seq), decode_seq_cursor(Some(&seq)).is_ok(), "{seq}");
        }
        assert!(ids.is_match("") && seqs.is_match(""));
    }

    #[test]
    fn cursor_round_trips_and_garbage_is_rejected() {
        let id = Uuid::now_v7();
        let req = PageRequest::parse(None, Some(&encode_cursor(id))).unwrap();
        assert_eq!(req.after, Some(id));
        assert!(PageRequest::parse(None, Some("not-a-cursor!")).is_err());
    }

    #[test]
    fn seq_cursors_round_trip_and_uuid_cursors_are_not_seq_cursors() {
        assert_eq!(decode_seq_cursor(Some(&encode_seq_cursor(42))).unwrap(), Some(42));
        assert_eq!(decode_seq_cursor(Some("")).unwrap(), None);
        assert!(decode_seq_cursor(Some(&encode_cursor(Uuid::now_v7()))).is_err());
        assert!(decode_seq_cursor(Some("%%%")).is_err());
    }

    #[test]
    fn from_rows_sets_next_cursor_only_when_more_rows_exist() {
        let ids: Vec<Uuid> = (0..3).map(|_| Uuid::now_v7()).collect();
        let req = PageRequest::first(2);
        let page = Page::from_rows(ids.clone(), &req, |id| *id);
        assert_eq!(page.items.len(), 2);
        assert_eq!(page.next_cursor, Some(encode_cursor(ids[1])));
        let page = Page::from_rows(ids[..2].to_vec(), &req, |id| *id);
        assert_eq!(page.next_cursor, None);
    }
}
