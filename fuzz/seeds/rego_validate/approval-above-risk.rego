package agentgov.templates.approval_above_risk

import rego.v1

params := {"threshold":0.6}

require_approval contains msg if {
	input.risk.score >= params.threshold
	msg := sprintf("risk score %v is at or above %v", [input.risk.score, params.threshold])
}
