package agentgov.templates.capability_scope

import rego.v1

params := {"always_allowed":["read","list","get"],"effect":"deny"}

normalize(s) := trim_space(replace(replace(lower(s), "_", " "), "-", " "))

# Most actions name a capability exactly; only the others are normalized.
in_scope if input.action in input.agent.capabilities

in_scope if input.action in params.always_allowed

in_scope if {
	names := array.concat(params.always_allowed, input.agent.capabilities)
	normalize(input.action) in {normalize(n) | some n in names}
}

message := sprintf("action %q is not among the capabilities of agent %q", [input.action, input.agent.name])

deny contains message if {
	params.effect == "deny"
	not in_scope
}

require_approval contains message if {
	params.effect == "approval"
	not in_scope
}
