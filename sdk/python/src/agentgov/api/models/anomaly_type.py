from enum import Enum


class AnomalyType(str, Enum):
    DENIED_BURST = "denied_burst"
    GUARD_ATTACK = "guard_attack"
    MANUAL = "manual"
    OFF_HOURS = "off_hours"
    RATE_SPIKE = "rate_spike"
    UNUSUAL_ACTION = "unusual_action"
    UNUSUAL_RESOURCE = "unusual_resource"

    def __str__(self) -> str:
        return str(self.value)
