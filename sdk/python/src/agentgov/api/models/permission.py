from enum import Enum


class Permission(str, Enum):
    AGENTSREAD = "agents:read"
    AGENTSWRITE = "agents:write"
    ANOMALIESREAD = "anomalies:read"
    ANOMALIESWRITE = "anomalies:write"
    AUDITREAD = "audit:read"
    AUDITWRITE = "audit:write"
    DISCOVERYREAD = "discovery:read"
    DISCOVERYWRITE = "discovery:write"
    GUARDMANAGE = "guard:manage"
    GUARDREAD = "guard:read"
    GUARDVALIDATE = "guard:validate"
    HITLREAD = "hitl:read"
    HITLREQUEST = "hitl:request"
    POLICIESCHECK = "policies:check"
    POLICIESREAD = "policies:read"
    POLICIESWRITE = "policies:write"
    STATSREAD = "stats:read"

    def __str__(self) -> str:
        return str(self.value)
