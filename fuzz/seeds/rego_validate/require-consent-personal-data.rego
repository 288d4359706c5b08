package agentgov.templates.require_consent_personal_data

import rego.v1

params := {"context_flags":["personal_data","contains_pii","pii"],"effect":"deny","resource_markers":["pii","personal","customer","customers","patient","patients","employee","employees","users"]}

personal_data if {
	some flag in params.context_flags
	object.get(input.context, flag, false) == true
}

resource_words := regex.split(`[^a-z0-9]+`, lower(input.resource))

personal_data if {
	some word in resource_words
	word in params.resource_markers
}

consented if object.get(input.context, "consent", false) == true

message := sprintf("%q touches personal data without the data subject's consent (context.consent)", [input.resource])

# Consent first: it is cheaper to read than personal data is to find.
deny contains message if {
	params.effect == "deny"
	not consented
	personal_data
}

require_approval contains message if {
	params.effect == "approval"
	not consented
	personal_data
}
