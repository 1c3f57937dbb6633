"""Write one example of each input format that the shared data does not hold itself, so
every format in the README can be tried:

    python examples/format_examples.py --out fx [--data-root ../shared/data]

* ``fx/tau2-dir/``: a shared tau2 results file saved in tau2's directory layout;
* ``fx/chat.jsonl`` and ``fx/langfuse.jsonl``: the same runs as OpenAI chat JSONL and as
  Langfuse trace exports (read with ``--mapping openai-chat`` / ``langfuse-trace``);
* ``fx/inspect/a.eval``, ``fx/inspect/a.json``, ``fx/inspect/b.eval``: Inspect AI logs
  written by inspect_ai on its mock model (needs ``pip install 'toolaudit[inspect]'``;
  skipped with a note otherwise).

Run from the repository root (the writers live in ``tests/traces``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.traces._layouts import langfuse_jsonl, openai_chat_jsonl, save_dir  # noqa: E402

RETAIL = "retail__gpt-4.1__user-gpt-4.1__test40x1.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write into")
    parser.add_argument(
        "--data-root", type=Path, default=REPO.parent / "shared" / "data", help="shared data"
    )
    args = parser.parse_args()
    src = args.data_root / "tau2" / "simulations" / RETAIL
    if not src.is_file():
        parser.error(f"--data-root: {src} not found")
    args.out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(args.out / "tau2-dir", ignore_errors=True)
    save_dir(src, args.out / "tau2-dir")
    openai_chat_jsonl(src, args.out / "chat.jsonl")
    langfuse_jsonl(src, args.out / "langfuse.jsonl")
    written = ["tau2-dir/", "chat.jsonl", "langfuse.jsonl"]
    try:
        from tests.traces._inspect_logs import write_logs
    except ImportError:  # pragma: no cover
        write_logs = None  # type: ignore[assignment]
    try:
        import inspect_ai  # noqa: F401
    except ModuleNotFoundError:
        print(
            "inspect_ai is not installed: Inspect logs skipped (pip install 'toolaudit[inspect]')"
        )
    else:
        assert write_logs is not None
        (args.out / "inspect").mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            logs = write_logs(Path(tmp))
            for name, path in (
                ("a.eval", logs["a"]),
                ("b.eval", logs["b"]),
                ("a.json", logs["a_json"]),
            ):
                shutil.copy(path, args.out / "inspect" / name)
                written.append(f"inspect/{name}")
    print(f"wrote {', '.join(written)} under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
