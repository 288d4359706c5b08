from enum import Enum


class AnomalySource(str, Enum):
    DETECTOR = "detector"
    GUARD = "guard"
    MANUAL = "manual"

    def __str__(self) -> str:
        return str(self.value)
