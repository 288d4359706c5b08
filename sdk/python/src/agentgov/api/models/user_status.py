from enum import Enum


class UserStatus(str, Enum):
    ACTIVE = "active"
    BLOCKED = "blocked"

    def __str__(self) -> str:
        return str(self.value)
