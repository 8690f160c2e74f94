"""Seeds derived from stable inputs, never from Python's salted hash() (PIPE-2)."""

from __future__ import annotations

import hashlib
import random


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from the given parts; the same parts give the same seed in any process."""
    joined = "\x1f".join(str(part) for part in parts).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "big")


def rng_for(*parts: object) -> random.Random:
    """A private random stream for one effect (noise, latency, faults) of one turn or call."""
    return random.Random(derive_seed(*parts))


def content_hash(text: str | bytes) -> str:
    """A short content hash for versioned things (prompts, suites, rubrics)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:16]
