//! The repository ports, one file per aggregate.

/// Status values of the job queue.
const QUEUED: &str = "queued";
const RUNNING: &str = "running";

mod agents;
mod anomaly;
mod api_keys;
pub(crate) mod audit;
mod discovery;
pub(crate) mod guard;
mod hitl;
pub(crate) mod jobs;
mod policies;
mod sessions;
mod siem;
mod tenants;
mod users;

use agentgov_domain::Result;
use agentgov_domain::page::{Page, PageRequest};
use uuid::Uuid;

/// Converts rows fetched with `PageRequest::fetch_limit()` (newest first) into a page.
fn page_of<R, T>(rows: Vec<R>, req: &PageRequest, id_of: impl Fn(&T) -> Uuid) -> Result<Page<T>>
where
    T: TryFrom<R, Error = agentgov_domain::DomainError>,
{
    let items = rows.into_iter().map(T::try_from).collect::<Result<Vec<T>>>()?;
    Ok(Page::from_rows(items, req, id_of))
}
