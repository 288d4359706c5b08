package agentgov.templates.deny_critical_risk

import rego.v1

params := {"ceiling":0.85}

deny contains msg if {
	input.risk.score >= params.ceiling
	msg := sprintf("risk score %v is at or above the ceiling %v", [input.risk.score, params.ceiling])
}
