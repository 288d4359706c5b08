from enum import Enum


class AnomalyStatus(str, Enum):
    ACKNOWLEDGED = "acknowledged"
    FALSE_POSITIVE = "false_positive"
    OPEN = "open"
    RESOLVED = "resolved"

    def __str__(self) -> str:
        return str(self.value)
