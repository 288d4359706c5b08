package agentgov.templates.deny_destructive_production

import rego.v1

params := {"destructive_actions":["delete","drop","truncate","destroy","purge","wipe","erase","terminate"],"production_markers":["prod","production","live"]}

destructive if {
	action := lower(input.action)
	some word in params.destructive_actions
	contains(action, word)
}

resource_words := regex.split(`[^a-z0-9]+`, lower(input.resource))

production if {
	some word in resource_words
	word in params.production_markers
}

production if lower(object.get(input.context, "environment", "")) in params.production_markers

deny contains msg if {
	destructive
	production
	msg := sprintf("destructive action %q on production resource %q is not allowed", [input.action, input.resource])
}
