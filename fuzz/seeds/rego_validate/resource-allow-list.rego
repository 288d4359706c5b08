package agentgov.templates.resource_allow_list

import rego.v1

params := {"allow":{},"allow_unlisted":true}

patterns := object.get(params.allow, input.agent.id, object.get(params.allow, input.agent.name, null))

listed if patterns != null

permitted if {
	some pattern in patterns
	glob.match(pattern, ["/"], input.resource)
}

deny contains msg if {
	listed
	not permitted
	msg := sprintf("agent %q may not use resource %q (not in its allow-list)", [input.agent.name, input.resource])
}

deny contains msg if {
	not listed
	not params.allow_unlisted
	msg := sprintf("agent %q has no resource allow-list", [input.agent.name])
}
