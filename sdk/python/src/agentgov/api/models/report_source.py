from enum import Enum


class ReportSource(str, Enum):
    GUARD = "guard"
    MANUAL = "manual"

    def __str__(self) -> str:
        return str(self.value)
