"""Shared test helpers: the seed's example block, the bundled examples and templates."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ai_context.adapters.templates import Templates

# No timing in tests (these machines are shared and noisy): hypothesis's per-example deadline
# and its too-slow health check are timed assertions, so they are off for every property test.
settings.register_profile("house", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("house")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# The bundled templates' environment, which the rules' renders take as an argument.
BUNDLED = Templates().env

SEED_BLOCK = """\
## AI Context (updated by Claude — do not edit manually)

- **Active actor:** cc-ariel-laptop (Claude Code on Ariel's laptop)
- **Phase:** implementing (chunk 3 of 5)
- **Last updated:** 2026-05-26T14:32:00Z
- **Plan:**
  1. Add UserBookingRepository (done)
  2. Wire into BookingService (done)
  3. Add unit tests for repository (in progress)
  4. Add integration test (pending)
  5. Open PR (pending)
- **Files touched:** apps/api/src/booking/{repository,service,booking.module}.ts, plus 4 test files
- **Decisions:**
  - Chose Mongo over Aurora for booking history (volume + write patterns)
  - Single-document booking model with embedded changes array
- **Blockers:** none
- **Next step:** Finish unit tests in booking.repository.spec.ts"""


@pytest.fixture
def seed_block() -> str:
    return SEED_BLOCK
