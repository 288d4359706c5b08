//! Roles (ordered) and the permissions an API key may carry.

use std::fmt;
use std::str::FromStr;

/// A user's role, ordered lowest to highest: `viewer < analyst < admin < super_admin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Viewer,
    Analyst,
    Admin,
    SuperAdmin,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Analyst, Role::Admin, Role::SuperAdmin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Analyst => "analyst",
            Role::Admin => "admin",
            Role::SuperAdmin => "super_admin",
        }
    }

    /// Whether this role counts as an administrator of its tenant.
    pub fn is_admin(self) -> bool {
        self >= Role::Admin
    }

    /// The permissions this role holds; an API key never carries more than its owner's role.
    pub fn permissions(self) -> &'static [Permission] {
        use Permission::*;
        const VIEWER: &[Permission] =
            &[AgentsRead, PoliciesRead, AuditRead, AnomaliesRead, HitlRead, DiscoveryRead, GuardRead, StatsRead];
        const ANALYST: &[Permission] = &[
            AgentsRead,
            PoliciesRead,
            AuditRead,
            AnomaliesRead,
            HitlRead,
            DiscoveryRead,
            GuardRead,
            StatsRead,
            AgentsWrite,
            PoliciesCheck,
            AuditWrite,
            AnomaliesWrite,
            HitlRequest,
            DiscoveryWrite,
            GuardValidate,
        ];
        match self {
            Role::Viewer => VIEWER,
            Role::Analyst => ANALYST,
            Role::Admin | Role::SuperAdmin => &Permission::ALL,
        }
    }

    pub fn holds(self, permission: Permission) -> bool {
        self.permissions().contains(&permission)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown role `{s}`; expected one of viewer, analyst, admin, super_admin"))
    }
}

/// A permission carried by an API key. Strings are `area:verb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Permission {
    #[cfg_attr(feature = "openapi", schema(rename = "agents:read"))]
    AgentsRead,
    #[cfg_attr(feature = "openapi", schema(rename = "agents:write"))]
    AgentsWrite,
    #[cfg_attr(feature = "openapi", schema(rename = "policies:read"))]
    PoliciesRead,
    #[cfg_attr(feature = "openapi", schema(rename = "policies:check"))]
    PoliciesCheck,
    #[cfg_attr(feature = "openapi", schema(rename = "policies:write"))]
    PoliciesWrite,
    #[cfg_attr(feature = "openapi", schema(rename = "audit:read"))]
    AuditRead,
    #[cfg_attr(feature = "openapi", schema(rename = "audit:write"))]
    AuditWrite,
    #[cfg_attr(feature = "openapi", schema(rename = "anomalies:read"))]
    AnomaliesRead,
    #[cfg_attr(feature = "openapi", schema(rename = "anomalies:write"))]
    AnomaliesWrite,
    #[cfg_attr(feature = "openapi", schema(rename = "hitl:read"))]
    HitlRead,
    #[cfg_attr(feature = "openapi", schema(rename = "hitl:request"))]
    HitlRequest,
    #[cfg_attr(feature = "openapi", schema(rename = "discovery:read"))]
    DiscoveryRead,
    #[cfg_attr(feature = "openapi", schema(rename = "discovery:write"))]
    DiscoveryWrite,
    #[cfg_attr(feature = "openapi", schema(rename = "guard:read"))]
    GuardRead,
    #[cfg_attr(feature = "openapi", schema(rename = "guard:validate"))]
    GuardValidate,
    #[cfg_attr(feature = "openapi", schema(rename = "guard:manage"))]
    GuardManage,
    #[cfg_attr(feature = "openapi", schema(rename = "stats:read"))]
    StatsRead,
}

impl Permission {
    pub const ALL: [Permission; 17] = [
        Permission::AgentsRead,
        Permission::AgentsWrite,
        Permission::PoliciesRead,
        Permission::PoliciesCheck,
        Permission::PoliciesWrite,
        Permission::AuditRead,
        Permission::AuditWrite,
        Permission::AnomaliesRead,
        Permission::AnomaliesWrite,
        Permission::HitlRead,
        Permission::HitlRequest,
        Permission::DiscoveryRead,
        Permission::DiscoveryWrite,
        Permission::GuardRead,
        Permission::GuardValidate,
        Permission::GuardManage,
        Permission::StatsRead,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Permission::AgentsRead => "agents:read",
            Permission::AgentsWrite => "agents:write",
            Permission::PoliciesRead => "policies:read",
            Permission::PoliciesCheck => "policies:check",
            Permission::PoliciesWrite => "policies:write",
            Permission::AuditRead => "audit:read",
            Permission::AuditWrite => "audit:write",
            Permission::AnomaliesRead => "anomalies:read",
            Permission::AnomaliesWrite => "anomalies:write",
            Permission::HitlRead => "hitl:read",
            Permission::HitlRequest => "hitl:request",
            Permission::DiscoveryRead => "discovery:read",
            Permission::DiscoveryWrite => "discovery:write",
            Permission::GuardRead => "guard:read",
            Permission::GuardValidate => "guard:validate",
            Permission::GuardManage => "guard:manage",
            Permission::StatsRead => "stats:read",
        }
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Permission {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Permission::ALL.into_iter().find(|p| p.as_str() == s).ok_or_else(|| format!("unknown permission `{s}`"))
    }
}

impl serde::Serialize for Permission {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Permission {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_and_round_trip() {
        assert!(Role::Viewer < Role::Analyst && Role::Analyst < Role::Admin && Role::Admin < Role::SuperAdmin);
        for r in Role::ALL {
            assert_eq!(r.as_str().parse::<Role>().unwrap(), r);
        }
        assert!("root".parse::<Role>().is_err());
    }

    #[test]
    #[cfg(feature = "openapi")]
    fn the_documented_permissions_are_the_wire_names() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_value(Permission::schema()).unwrap();
        let names: Vec<&str> = Permission::ALL.iter().map(|p| p.as_str()).collect();
        assert_eq!(schema["enum"], serde_json::json!(names));
        assert_eq!(<Permission as utoipa::ToSchema>::name(), "Permission");
    }

    #[test]
    fn higher_roles_hold_every_permission_of_lower_roles() {
        for pair in Role::ALL.windows(2) {
            for p in pair[0].permissions() {
                assert!(pair[1].holds(*p), "{} lacks {p}", pair[1]);
            }
        }
        assert!(!Role::Analyst.holds(Permission::GuardManage));
        assert!(Role::Admin.holds(Permission::GuardManage));
    }

    #[test]
    fn permissions_round_trip() {
        for p in Permission::ALL {
            assert_eq!(p.as_str().parse::<Permission>().unwrap(), p);
        }
    }
}
