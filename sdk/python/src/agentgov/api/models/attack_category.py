from enum import Enum


class AttackCategory(str, Enum):
    INJECTION = "injection"
    JAILBREAK = "jailbreak"
    LEAKAGE = "leakage"

    def __str__(self) -> str:
        return str(self.value)
