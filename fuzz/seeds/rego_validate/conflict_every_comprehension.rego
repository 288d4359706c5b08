package t

import rego.v1

risk_adjustment := 0.1 if input.x
risk_adjustment := 0.2 if true

require_approval contains "big" if {
	some f in input.risk.factors
	every c in input.agent.capabilities { count(c) > 1 }
	x := [y | some y in [[1, [2, {"a": {3}}]]]]
	count(x) > 0
}
