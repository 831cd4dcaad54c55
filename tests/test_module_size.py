"""Every module of the package and of the benchmarks stays under 700 lines (CONTRIBUTING.md): a longer one
is split by what its parts do."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 700


def test_every_module_is_under_the_limit():
    long = {str(path.relative_to(ROOT)): n for folder in ("pdbtool", "bench") for path in (ROOT / folder).rglob("*.py")
            if (n := len(path.read_text().splitlines())) >= LIMIT}
    assert not long, long
