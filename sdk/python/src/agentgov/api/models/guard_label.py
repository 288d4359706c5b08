from enum import Enum


class GuardLabel(str, Enum):
    BENIGN = "benign"
    INJECTION = "injection"
    JAILBREAK = "jailbreak"
    LEAKAGE = "leakage"

    def __str__(self) -> str:
        return str(self.value)
