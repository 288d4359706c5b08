//! The rows of the tables: those both stores share, expanded from
//! `agentgov_store_common::rows!` with the column types of `columns`, and the two SQLite
//! writes itself where Postgres inserts arrays (discovery events and candidates, with the
//! copies of their columns that SQL filters on).

use agentgov_domain::ids::TenantId;
use agentgov_domain::model::{DiscoveryCandidate, DiscoveryEvent};
use agentgov_domain::{DomainError, Result};
use diesel::prelude::*;

pub(crate) use agentgov_store_common::rows::{body_text, convert};

use crate::columns::Id;
pub(crate) use crate::columns::id_text;
use crate::schema::{discovery_candidates, discovery_events};

agentgov_store_common::rows!();

/// A discovery event: `body` is the JSON text of its `Serialize` form, which leaves out
/// `tenant_id` (the column).
#[derive(Debug, Insertable)]
#[diesel(table_name = discovery_events)]
pub(crate) struct NewDiscoveryEventRow {
    pub id: Id,
    pub tenant_id: Id,
    pub disposition: String,
    pub body: String,
}

impl TryFrom<&DiscoveryEvent> for NewDiscoveryEventRow {
    type Error = DomainError;
    fn try_from(e: &DiscoveryEvent) -> Result<Self> {
        Ok(Self {
            id: Id(e.id.as_uuid()),
            tenant_id: Id(e.tenant_id.as_uuid()),
            disposition: e.disposition.as_str().to_owned(),
            body: body_text(e, format_args!("discovery event {}", e.id))?,
        })
    }
}

/// A discovery candidate: `body` is the JSON text of its `Serialize` form (without
/// `tenant_id`, its own or its sample events'), `status` a copy of its status that SQL
/// filters on.
#[derive(Debug, Insertable)]
#[diesel(table_name = discovery_candidates)]
pub(crate) struct NewCandidateRow {
    pub id: Id,
    pub tenant_id: Id,
    pub status: String,
    pub body: String,
}

impl NewCandidateRow {
    /// `candidate` as a row of `tenant` (whatever its own `tenant_id`).
    pub(crate) fn new(tenant: TenantId, candidate: &DiscoveryCandidate) -> Result<Self> {
        Ok(Self {
            id: Id(candidate.id.as_uuid()),
            tenant_id: Id(tenant.as_uuid()),
            status: candidate.status.as_str().to_owned(),
            body: body_text(candidate, format_args!("discovery candidate {}", candidate.id))?,
        })
    }
}
