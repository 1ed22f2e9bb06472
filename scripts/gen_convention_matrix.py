"""The matrix of metrics x libraries, generated from the ``conventions=`` presets.

    python scripts/gen_convention_matrix.py          # print it

The documentation site shows it on the page "Conventions of other libraries": the
docs hook (``docs/_hooks/generate.py``) calls :func:`matrix` when the site is built,
from :data:`polars_rankeval.conventions.PRESETS` (one module per library), so it is
never out of date.
"""

from __future__ import annotations

import sys

from polars_rankeval.conventions import PRESETS


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def matrix() -> str:
    """The generated block: the matrix, what each preset refuses, and its rules."""
    presets = list(PRESETS.values())
    rows: dict[str, dict[str, list[str]]] = {}
    for preset in presets:
        for mapped in preset.metrics:
            if mapped.metric is None:
                continue
            shown = mapped.name + {"required": "@k", "optional": "[@k]", "none": ""}[mapped.cutoff]
            if mapped.entry != "evaluate":
                shown += f" ({mapped.entry})"
            rows.setdefault(mapped.metric, {}).setdefault(preset.name, []).append(shown)
    lines = [
        "| polars_rankeval | " + " | ".join(f"`{p.name}`" for p in presets) + " |",
        "| --- | " + " | ".join("---" for _ in presets) + " |",
    ]
    for metric in sorted(rows):
        cells = [", ".join(f"`{_cell(n)}`" for n in rows[metric].get(p.name, [])) or "—"
                 for p in presets]  # fmt: skip
        lines.append(f"| `{_cell(metric)}` | " + " | ".join(cells) + " |")
    lines += ["", "Rules and metrics refused per preset (the library's code, version named):", ""]
    for preset in presets:
        lines.append(
            f"- **`{preset.name}`** ({preset.library} {preset.version}): ties `{preset.ties}` "
            f"({preset.ties_note}); empty `{preset.empty}`; users `{preset.users}`"
            + (
                f"; rank positions `{preset.rank_positions}`."
                if preset.rank_positions != "relative"
                else "."
            )
        )
        refused = [m for m in preset.metrics if m.metric is None]
        if refused:
            lines.append(
                "  Not reproduced: " + "; ".join(f"`{m.name}` ({m.note})" for m in refused) + "."
            )
        for note in preset.notes:
            lines.append(f"  {note}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Print the block."""
    del argv
    print(matrix(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
