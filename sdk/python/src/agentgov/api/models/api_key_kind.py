from enum import Enum


class ApiKeyKind(str, Enum):
    SESSION = "session"
    STANDARD = "standard"

    def __str__(self) -> str:
        return str(self.value)
