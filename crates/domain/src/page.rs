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
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(n) if (1..=i64::from(MAX_LIMIT)).contains(&n) => n as u32,
            Some(_) => {
                return Err(DomainError::invalid("limit", format!("must be between 1 and {MAX_LIMIT}")));
            }
        };
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

fn decode_cursor(cursor: &str) -> Result<Uuid> {
    let bad = || DomainError::invalid("cursor", "is not a cursor returned by this list");
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad())?;
    Uuid::from_slice(&bytes).map_err(|_| bad())
}

pub fn encode_cursor(id: Uuid) -> String {
    URL_SAFE_NO_PAD.encode(id.as_bytes())
}

/// One page of a list: `{"items": [...], "next_cursor": "..." | null}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Pass as `cursor` to get the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// Builds a page from up to `fetch_limit()` rows ordered newest first.
    pub fn from_rows(mut rows: Vec<T>, req: &PageRequest, id_of: impl Fn(&T) -> Uuid) -> Self {
        let more = rows.len() > req.limit as usize;
        rows.truncate(req.limit as usize);
        let next_cursor = if more { rows.last().map(|r| encode_cursor(id_of(r))) } else { None };
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
    fn cursor_round_trips_and_garbage_is_rejected() {
        let id = Uuid::now_v7();
        let req = PageRequest::parse(None, Some(&encode_cursor(id))).unwrap();
        assert_eq!(req.after, Some(id));
        assert!(PageRequest::parse(None, Some("not-a-cursor!")).is_err());
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
