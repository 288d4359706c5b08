from enum import Enum


class Role(str, Enum):
    ADMIN = "admin"
    ANALYST = "analyst"
    SUPER_ADMIN = "super_admin"
    VIEWER = "viewer"

    def __str__(self) -> str:
        return str(self.value)
