package agentgov.templates.bulk_operation_cap

import rego.v1

params := {"count_keys":["record_count","count","records","batch_size"],"effect":"deny","max_records":1000}

counts := [n | some key in params.count_keys; n := input.context[key]; is_number(n)]

too_many if {
	some n in counts
	n > params.max_records
}

message := sprintf("affects %v records; at most %v are allowed at once", [max(counts), params.max_records])

deny contains message if {
	params.effect == "deny"
	too_many
}

require_approval contains message if {
	params.effect == "approval"
	too_many
}
