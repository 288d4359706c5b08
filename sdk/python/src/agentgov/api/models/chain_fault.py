from enum import Enum


class ChainFault(str, Enum):
    HASH_MISMATCH = "hash_mismatch"
    MISSING = "missing"
    PREV_HASH_MISMATCH = "prev_hash_mismatch"

    def __str__(self) -> str:
        return str(self.value)
