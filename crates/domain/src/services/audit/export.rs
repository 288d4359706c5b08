//! Export files: encoding records as JSONL, a JSON array or CSV, and streaming them from the
//! store a page at a time, so memory stays flat whatever the number of rows.

use std::sync::Arc;

use futures::Stream;
use futures::stream::{self, StreamExt};

use crate::error::{DomainError, Result};
use crate::ids::TenantId;
use crate::model::{AuditFilter, AuditRecord, AuditScan, ExportFormat, SeqOrder};
use crate::ports::AuditRepo;

/// Columns of the CSV export, in order. `details` is the record's JSON text; `origin`
/// (`service` or `client`, derived from `event_type`, not hashed) comes last.
pub const CSV_COLUMNS: [&str; 16] = [
    "id",
    "seq",
    "timestamp",
    "actor_type",
    "actor_id",
    "event_type",
    "agent_id",
    "action",
    "resource",
    "decision",
    "risk_score",
    "details",
    "prev_hash",
    "hash",
    "origin",
    "session_id",
];

/// Turns records into the bytes of one export format.
#[derive(Debug)]
pub struct Encoder {
    format: ExportFormat,
    rows: u64,
    spreadsheet_safe: bool,
}

fn encode_error(e: impl std::fmt::Display) -> DomainError {
    DomainError::Internal(format!("encoding an export: {e}"))
}

impl Encoder {
    pub fn new(format: ExportFormat) -> Self {
        Self { format, rows: 0, spreadsheet_safe: false }
    }

    /// CSV only: a cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a
    /// `'` in front, so a spreadsheet opening the file shows it as text instead of running it
    /// as a formula (CSV injection). Opt-in: the cells are then no longer the records' exact
    /// text, and JSONL stays the evidence format.
    pub fn spreadsheet_safe(mut self, on: bool) -> Self {
        self.spreadsheet_safe = on;
        self
    }

    pub fn format(&self) -> ExportFormat {
        self.format
    }

    /// What the file starts with.
    pub fn header(&self) -> Result<Vec<u8>> {
        match self.format {
            ExportFormat::Jsonl => Ok(Vec::new()),
            ExportFormat::Json => Ok(b"[".to_vec()),
            ExportFormat::Csv => {
                let mut w = csv::Writer::from_writer(Vec::new());
                w.write_record(CSV_COLUMNS).map_err(encode_error)?;
                w.into_inner().map_err(encode_error)
            }
        }
    }

    /// Appends `records` to `out`.
    pub fn encode(&mut self, records: &[AuditRecord], out: &mut Vec<u8>) -> Result<()> {
        match self.format {
            ExportFormat::Jsonl => {
                for r in records {
                    serde_json::to_writer(&mut *out, r).map_err(encode_error)?;
                    out.push(b'\n');
                }
            }
            ExportFormat::Json => {
                for (i, r) in records.iter().enumerate() {
                    if self.rows > 0 || i > 0 {
                        out.push(b',');
                    }
                    out.push(b'\n');
                    serde_json::to_writer(&mut *out, r).map_err(encode_error)?;
                }
            }
            ExportFormat::Csv => {
                let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(std::mem::take(out));
                for r in records {
                    let mut row = csv_row(r);
                    if self.spreadsheet_safe {
                        row.iter_mut().for_each(defuse_cell);
                    }
                    w.write_record(row).map_err(encode_error)?;
                }
                *out = w.into_inner().map_err(encode_error)?;
            }
        }
        self.rows += records.len() as u64;
        Ok(())
    }

    /// What the file ends with.
    pub fn footer(&self) -> Vec<u8> {
        match self.format {
            ExportFormat::Jsonl | ExportFormat::Csv => Vec::new(),
            ExportFormat::Json if self.rows == 0 => b"]\n".to_vec(),
            ExportFormat::Json => b"\n]\n".to_vec(),
        }
    }
}

/// Prefixes `'` to a cell a spreadsheet would read as a formula (or, after a leading tab or
/// carriage return it strips, as one).
fn defuse_cell(cell: &mut String) {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        cell.insert(0, '\'');
    }
}

fn csv_row(r: &AuditRecord) -> [String; 16] {
    let opt = |s: &Option<String>| s.clone().unwrap_or_default();
    let timestamp = r.timestamp.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
    [
        r.id.to_string(),
        r.seq.to_string(),
        timestamp,
        r.actor.kind.as_str().to_owned(),
        r.actor.id.clone(),
        r.event_type.clone(),
        r.agent_id.map(|a| a.to_string()).unwrap_or_default(),
        opt(&r.action),
        opt(&r.resource),
        opt(&r.decision),
        // Same digits as the JSON formats.
        r.risk_score.map(|s| serde_json::Value::from(s).to_string()).unwrap_or_default(),
        r.details.as_str().to_owned(),
        r.prev_hash.to_hex(),
        r.hash.to_hex(),
        r.origin.as_str().to_owned(),
        opt(&r.session_id),
    ]
}

/// A piece of an export file and how many records it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportPiece {
    pub data: Vec<u8>,
    pub rows: u64,
}

struct Cursor {
    store: Arc<dyn AuditRepo>,
    tenant: TenantId,
    filter: AuditFilter,
    encoder: Encoder,
    page: u32,
    after_seq: Option<i64>,
    started: bool,
    done: bool,
}

/// The file of `filter`'s records, oldest first, as a stream of pieces: the header with the
/// first page, one piece per page of `page` records, the footer with the last. The filter
/// should carry `max_seq` so the file ends where the log ended when the export began.
pub fn export_stream(
    store: Arc<dyn AuditRepo>,
    tenant: TenantId,
    filter: AuditFilter,
    encoder: Encoder,
    page: u32,
) -> impl Stream<Item = Result<ExportPiece>> + Send + 'static {
    let cursor =
        Cursor { store, tenant, filter, encoder, page: page.max(1), after_seq: None, started: false, done: false };
    stream::try_unfold(cursor, |mut c| async move {
        if c.done {
            return Ok(None);
        }
        let scan = AuditScan { order: SeqOrder::Asc, after_seq: c.after_seq, limit: c.page };
        let records = c.store.scan_audit(c.tenant, &c.filter, scan).await?;
        let mut data = if c.started { Vec::new() } else { c.encoder.header()? };
        c.started = true;
        c.encoder.encode(&records, &mut data)?;
        c.after_seq = records.last().map(|r| r.seq).or(c.after_seq);
        if records.len() < c.page as usize {
            data.extend(c.encoder.footer());
            c.done = true;
        }
        Ok(Some((ExportPiece { data, rows: records.len() as u64 }, c)))
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::defuse_cell;

    #[test]
    fn cells_a_spreadsheet_would_run_are_prefixed_and_others_kept() {
        for (cell, expected) in [
            ("=1+1", "'=1+1"),
            ("+1", "'+1"),
            ("-1", "'-1"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("a=1", "a=1"),
            ("", ""),
            (" =1", " =1"),
        ] {
            let mut c = cell.to_owned();
            defuse_cell(&mut c);
            assert_eq!(c, expected, "{cell:?}");
        }
    }
}
