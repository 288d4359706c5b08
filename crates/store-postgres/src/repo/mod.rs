//! The repository ports, one file per aggregate.

/// Status values of the leased job tables (`export_jobs`, `guard_tasks`, `discovery_jobs`,
/// `anomaly_tasks`).
const QUEUED: &str = "queued";
const RUNNING: &str = "running";

/// The leased job `$id` of `$table` if it is `running` under `$token`.
macro_rules! held {
    ($table:ident, $id:expr, $token:expr) => {
        $table::table
            .filter($table::id.eq($id.as_uuid()))
            .filter($table::status.eq(crate::repo::RUNNING))
            .filter($table::lease_token.eq($token))
    };
}

/// Inside a transaction: the oldest job of `$table` that is queued, or running under a
/// lease that ran out before `$now`, locked; one another worker is claiming right now is
/// locked already, so it is skipped and the next one taken.
macro_rules! next_claimable {
    ($table:ident, $row:ty, $now:expr, $conn:expr) => {{
        let claimable = $table::status.eq(crate::repo::QUEUED).or($table::status
            .eq(crate::repo::RUNNING)
            .and($table::lease_until.is_null().or($table::lease_until.lt($now))));
        $table::table
            .filter(claimable)
            .order($table::id)
            .select(<$row>::as_select())
            .limit(1)
            .for_update()
            .skip_locked()
            .first::<$row>($conn)
            .await
            .optional()
    }};
}

mod agents;
mod anomaly;
mod api_keys;
pub(crate) mod audit;
mod discovery;
mod exports;
mod guard;
mod hitl;
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
