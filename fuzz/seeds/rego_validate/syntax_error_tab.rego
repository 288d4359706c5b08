package t

import rego.v1

deny contains msg if {
	input.action == "delete"
	msg := sprintf("no %s", [input.resource]
}
