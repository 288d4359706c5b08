//! Audit log exports (`services::audit::Encoder`): records with arbitrary text in every
//! free-form field (commas, quotes, CR/LF, control characters, any Unicode), arbitrary
//! `details` JSON, any finite risk score, encoded in two pages as the export stream does.
//!
//! Invariants, with the `csv` crate and serde_json as the oracles:
//! - CSV: header + pages + footer parse back (RFC 4180, strict field count) to the column
//!   header and, per record, exactly the fields the exporter documents (`None` as empty);
//!   cells are written verbatim: the exporter does not neutralise spreadsheet formulas
//!   (a cell may start with `=`, `+`, `-` or `@`), which this target pins;
//! - JSONL: one line per record (no raw CR/LF inside a line), each parsing back with
//!   serde_json to the record's values, `details` equal to its own JSON;
//! - JSON: the whole file parses to an array of the same objects.
#![no_main]

use agentgov_domain::ids::{AuditId, TenantId};
use agentgov_domain::model::{Actor, ActorType, AuditHash, AuditOrigin, AuditRecord, ExportFormat, JsonText};
use agentgov_domain::services::audit::{CSV_COLUMNS, Encoder};
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the years RFC 3339 can write.
const FIRST_SECOND: i64 = -62_135_596_800;
const LAST_SECOND: i64 = 253_402_300_799;

struct Input {
    records: Vec<AuditRecord>,
    /// Records in the first page; the rest in the second.
    split: usize,
}

fn json_value(u: &mut Unstructured<'_>, depth: u32) -> arbitrary::Result<Value> {
    let leaf = depth == 0 || u.is_empty();
    Ok(match u.int_in_range(0..=if leaf { 3 } else { 5 })? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => {
            let f: f64 = u.arbitrary()?;
            if u.arbitrary()? { Value::from(u.arbitrary::<i64>()?) } else { serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number) }
        }
        3 => Value::String(u.arbitrary()?),
        4 => Value::Array((0..u.int_in_range(0..=4)?).map(|_| json_value(u, depth - 1)).collect::<Result<_, _>>()?),
        _ => Value::Object(json_object(u, depth - 1)?),
    })
}

fn json_object(u: &mut Unstructured<'_>, depth: u32) -> arbitrary::Result<Map<String, Value>> {
    let mut map = Map::new();
    for _ in 0..u.int_in_range(0..=4)? {
        map.insert(u.arbitrary()?, json_value(u, depth)?);
    }
    Ok(map)
}

/// The text fields of a record, in the order they are taken from the input.
const TEXTS: usize = 6;

fn record(u: &mut Unstructured<'_>, texts: &[String]) -> arbitrary::Result<AuditRecord> {
    let text = |i: usize| texts.get(i).cloned().unwrap_or_default();
    let seconds = u.int_in_range(FIRST_SECOND..=LAST_SECOND)?;
    let nanos = u.int_in_range(0..=999_999_999u32)?;
    let timestamp = OffsetDateTime::from_unix_timestamp(seconds)
        .map_err(|_| arbitrary::Error::IncorrectFormat)?
        .replace_nanosecond(nanos)
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    let raw = text(5);
    let details = match u.int_in_range(0..=2u8)? {
        0 => JsonText::from_value(&Value::Object(json_object(u, 3)?)),
        // Stored details were written by `JsonText::from_value`: compact (no raw line breaks),
        // and JSON a `Value` holds (`from_stored` alone also takes numbers out of `f64`'s
        // range, such as `4E444`, which no `Value` serialises to).
        1 => {
            let stored = raw.replace(['\n', '\r'], " ");
            match serde_json::from_str::<Value>(&stored).ok().and(JsonText::from_stored(stored).ok()) {
                Some(text) => text,
                None => JsonText::from_value(&serde_json::json!({ "text": raw })),
            }
        }
        _ => JsonText::from_value(&serde_json::json!({ "text": raw, "steps": [raw, raw] })),
    };
    let risk_score = match u.arbitrary::<Option<f64>>()? {
        Some(r) if !r.is_finite() => Some(f64::from(u.int_in_range(0..=1000u16)?) / 1000.0),
        other => other,
    };
    let mut optional = |i: usize| -> arbitrary::Result<Option<String>> {
        Ok(if u.ratio(1, 5)? { None } else { Some(text(i)) })
    };
    let (action, resource, decision) = (optional(2)?, optional(3)?, optional(4)?);
    Ok(AuditRecord {
        id: AuditId(uuid::Uuid::from_u128(u.arbitrary()?)),
        tenant_id: TenantId(uuid::Uuid::from_u128(u.arbitrary()?)),
        seq: u.arbitrary()?,
        timestamp,
        actor: Actor { kind: *u.choose(&ActorType::ALL)?, id: text(0) },
        origin: AuditOrigin::of(&text(1)),
        event_type: text(1),
        agent_id: u.arbitrary::<Option<u128>>()?.map(uuid::Uuid::from_u128),
        action,
        resource,
        decision,
        risk_score,
        details,
        session_id: None,
        prev_hash: AuditHash(u.arbitrary()?),
        hash: AuditHash(u.arbitrary()?),
    })
}

impl Input {
    /// The input is chunks separated by 0xFF (never in UTF-8): the first drives the numbers
    /// and choices, each following one is a text field, six per record (actor id, event
    /// type, action, resource, decision, details), so seeds can be written by hand.
    fn read(data: &[u8]) -> arbitrary::Result<Self> {
        let mut chunks = data.split(|&b| b == 0xFF);
        let control = chunks.next().unwrap_or_default();
        let texts: Vec<String> = chunks.map(|c| String::from_utf8_lossy(c).into_owned()).collect();
        let mut u = Unstructured::new(control);
        let n = texts.len().div_ceil(TEXTS).clamp(1, 8);
        let records = (0..n)
            .map(|i| record(&mut u, texts.get(i * TEXTS..).unwrap_or_default()))
            .collect::<Result<Vec<_>, _>>()?;
        let split = u.int_in_range(0..=n)?;
        Ok(Self { records, split })
    }
}

fn encode(format: ExportFormat, input: &Input) -> Vec<u8> {
    let mut encoder = Encoder::new(format);
    let Ok(mut file) = encoder.header() else { panic!("header") };
    let (first, second) = input.records.split_at(input.split);
    for page in [first, second] {
        let mut piece = Vec::new();
        if let Err(e) = encoder.encode(page, &mut piece) {
            panic!("encoding {format:?}: {e:?}");
        }
        file.extend(piece);
    }
    file.extend(encoder.footer());
    file
}

fn timestamp(r: &AuditRecord) -> String {
    match r.timestamp.format(&Rfc3339) {
        Ok(t) => t,
        Err(e) => panic!("{:?}: {e}", r.timestamp),
    }
}

/// The CSV fields of `r` as the exporter documents them.
fn csv_fields(r: &AuditRecord) -> Vec<String> {
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    vec![
        r.id.0.to_string(),
        r.seq.to_string(),
        timestamp(r),
        r.actor.kind.as_str().to_owned(),
        r.actor.id.clone(),
        r.event_type.clone(),
        r.agent_id.map(|a| a.to_string()).unwrap_or_default(),
        text(&r.action),
        text(&r.resource),
        text(&r.decision),
        r.risk_score.map(|s| Value::from(s).to_string()).unwrap_or_default(),
        r.details.as_str().to_owned(),
        r.prev_hash.to_hex(),
        r.hash.to_hex(),
        r.origin.as_str().to_owned(),
    ]
}

/// `r` as the JSON formats must read back.
fn json_object_of(r: &AuditRecord) -> Value {
    let text = |s: &Option<String>| s.clone().map_or(Value::Null, Value::String);
    let Ok(details) = serde_json::from_str::<Value>(r.details.as_str()) else { panic!("details are JSON") };
    serde_json::json!({
        "id": r.id.0.to_string(),
        "seq": r.seq,
        "timestamp": timestamp(r),
        "actor": {"type": r.actor.kind.as_str(), "id": r.actor.id},
        "event_type": r.event_type,
        "origin": r.origin.as_str(),
        "agent_id": r.agent_id.map(|a| a.to_string()),
        "action": text(&r.action),
        "resource": text(&r.resource),
        "decision": text(&r.decision),
        "risk_score": r.risk_score,
        "details": details,
        "prev_hash": r.prev_hash.to_hex(),
        "hash": r.hash.to_hex(),
    })
}

fn check_csv(input: &Input) {
    let file = encode(ExportFormat::Csv, input);
    let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(file.as_slice());
    let headers = match reader.headers() {
        Ok(h) => h.iter().map(str::to_owned).collect::<Vec<_>>(),
        Err(e) => panic!("CSV header: {e}"),
    };
    assert_eq!(headers, CSV_COLUMNS);
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|row| match row {
            Ok(row) => row.iter().map(str::to_owned).collect(),
            Err(e) => panic!("CSV does not parse back: {e}\n{}", String::from_utf8_lossy(&file)),
        })
        .collect();
    assert_eq!(rows.len(), input.records.len(), "{}", String::from_utf8_lossy(&file));
    for (row, r) in rows.iter().zip(&input.records) {
        assert_eq!(row, &csv_fields(r), "{}", String::from_utf8_lossy(&file));
        if let Some(score) = r.risk_score {
            assert_eq!(row[10].parse::<f64>().ok(), Some(score), "risk_score {}", row[10]);
        }
    }
}

fn check_jsonl(input: &Input) {
    let file = encode(ExportFormat::Jsonl, input);
    let Ok(text) = std::str::from_utf8(&file) else { panic!("JSONL is UTF-8") };
    assert!(!text.contains('\r'));
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    assert_eq!(lines.len(), input.records.len(), "{text}");
    for (line, r) in lines.iter().zip(&input.records) {
        match serde_json::from_str::<Value>(line) {
            Ok(v) => assert_eq!(v, json_object_of(r), "{line}"),
            Err(e) => panic!("a JSONL line does not parse back: {e}: {line}"),
        }
    }
}

fn check_json(input: &Input) {
    let file = encode(ExportFormat::Json, input);
    match serde_json::from_slice::<Value>(&file) {
        Ok(Value::Array(items)) => {
            let expected: Vec<Value> = input.records.iter().map(json_object_of).collect();
            assert_eq!(items, expected);
        }
        other => panic!("the JSON export is not an array: {other:?}: {}", String::from_utf8_lossy(&file)),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = Input::read(data) else { return };
    check_csv(&input);
    check_jsonl(&input);
    check_json(&input);
});
