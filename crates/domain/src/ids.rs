//! Typed identifiers: a `UserId` cannot be passed where a `TenantId` is expected.

use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[serde(transparent)]
        #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
        pub struct $name(pub uuid::Uuid);

        impl $name {
            pub fn as_uuid(&self) -> uuid::Uuid {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<uuid::Uuid> for $name {
            fn from(id: uuid::Uuid) -> Self {
                Self(id)
            }
        }

        impl std::str::FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                uuid::Uuid::parse_str(s).map(Self)
            }
        }
    };
}

id_type!(
    /// A tenant: the unit of isolation.
    TenantId
);
id_type!(
    /// A user of one tenant.
    UserId
);
id_type!(
    /// An API key of one tenant.
    ApiKeyId
);
id_type!(
    /// A login session; also the `jti` of its JWT.
    SessionId
);
id_type!(
    /// A record of the audit log.
    AuditId
);
id_type!(
    /// An asynchronous export of the audit log.
    ExportJobId
);
id_type!(
    /// A registered agent of one tenant.
    AgentId
);
id_type!(
    /// A Rego policy of one tenant.
    PolicyId
);
id_type!(
    /// A training run of a tenant's Prompt Guard detector.
    GuardTaskId
);
id_type!(
    /// A labelled text given as feedback to a tenant's Prompt Guard.
    GuardFeedbackId
);
id_type!(
    /// An ingested observation of possible shadow-agent activity.
    DiscoveryEventId
);
id_type!(
    /// A shadow-agent candidate found by clustering.
    CandidateId
);
id_type!(
    /// An asynchronous clustering run over a tenant's shadow events.
    ClusterJobId
);
id_type!(
    /// An asynchronous replay of a policy version over past decisions.
    ReplayJobId
);
id_type!(
    /// A human-in-the-loop approval request.
    HitlId
);
id_type!(
    /// An anomaly report about one agent.
    AnomalyId
);
id_type!(
    /// A training run of a tenant's anomaly detector.
    AnomalyTaskId
);
