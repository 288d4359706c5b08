package agentgov.templates.block_inactive_agents

import rego.v1

params := {"statuses":["suspended","inactive"]}

deny contains msg if {
	input.agent.status in params.statuses
	msg := sprintf("agent %q is %s", [input.agent.name, input.agent.status])
}
