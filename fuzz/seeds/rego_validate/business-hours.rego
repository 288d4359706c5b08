package agentgov.templates.business_hours

import rego.v1

params := {"days":["Monday","Tuesday","Wednesday","Thursday","Friday"],"effect":"deny","end_hour":18,"start_hour":9,"timezone":"UTC"}

clock := time.clock([input.time.now_ns, params.timezone])

weekday := time.weekday([input.time.now_ns, params.timezone])

within_hours if {
	weekday in params.days
	clock[0] >= params.start_hour
	clock[0] < params.end_hour
}

message := sprintf("outside business hours (%v %02d:%02d in %s)", [weekday, clock[0], clock[1], params.timezone])

deny contains message if {
	params.effect == "deny"
	not within_hours
}

require_approval contains message if {
	params.effect == "approval"
	not within_hours
}
