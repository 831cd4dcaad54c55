"""Plots of heuristic distributions (matplotlib, the optional ``bench`` extra, imported only here)."""

from __future__ import annotations

from ..errors import PdbtoolError


class PlotError(PdbtoolError):
    pass


def check_plotting() -> None:
    """Raise a one-line error when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise PlotError("--plot needs matplotlib: pip install 'pdbtool[bench]'") from None


def plot_distributions(distributions, path: str, title: str | None = None) -> None:
    """Draw the share of states per heuristic value, one line per distribution, into ``path``."""
    check_plotting()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    low, high = None, 0
    for dist in distributions:
        hist = dist.histogram
        ax.plot(range(hist.size), hist / dist.states, label=f"{dist.heuristic} (mean {dist.mean:.2f})")
        seen = hist.nonzero()[0]
        if seen.size:
            low = int(seen[0]) if low is None else min(low, int(seen[0]))
            high = max(high, int(seen[-1]))
    if low is not None:  # the values that occur, not 0 up to them
        ax.set_xlim(max(0, low - 2), high + 2)
    board = distributions[0].board
    ax.set_xlabel("h")
    ax.set_ylabel("share of states")
    ax.set_title(title or f"heuristic values over random solvable states, {board.dims}")
    ax.legend()
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except (OSError, ValueError) as exc:
        raise PlotError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None
    finally:
        plt.close(fig)


__all__ = ["check_plotting", "plot_distributions", "PlotError"]
