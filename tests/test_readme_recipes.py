"""README.md's "Reproduce each seed by hand", run exactly as written.

Each seed's recipe is three kinds of fenced block in the README, each marked
with an HTML comment the reader does not see: ``<!-- recipe: seed-NNN serve -->``
holds the two ``tether serve`` lines (the one with ``--emulate-bug`` is
"upstream", the other "tether"), ``<!-- recipe: seed-NNN steps -->`` the
commands a person types (written for upstream; for tether, ``/tmp/seed-NNN/upstream``
reads ``/tmp/seed-NNN/tether``, as the README says), and
``<!-- recipe: seed-NNN upstream -->`` / ``<!-- recipe: seed-NNN tether -->``
what they print. The test starts both clouds from the README's own lines (only
``--port`` and ``--data-dir`` are its own), runs the steps in ``bash`` against
each at once, and requires what they print, line by line, to be what the README
shows (but the ``$ COMMAND`` lines, which show what was typed, and blank lines),
ids, neutron's MAC addresses, ports and host names aside (``...`` in a shown
line stands for anything).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from uuid import uuid4

import pytest

from tests.live import LiveCloud, start

README = Path(__file__).resolve().parent.parent / "README.md"
BIN = Path(sys.executable).parent
SEEDS = ("seed-000", "seed-001", "seed-003", "seed-004")
FLAVOURS = ("upstream", "tether")
BLOCK = re.compile(r"<!-- recipe: (seed-\d{3}) (serve|steps|upstream|tether) -->\n```[a-z]*\n(.*?)```", re.S)
# `tether serve`'s own defaults: the README's flags come after these, and the last one given wins.
SERVE_DEFAULTS = {"deploy_seconds": 5.0, "clean_seconds": 2.0}
IDS = (
    (re.compile(r"\btap[0-9a-f]{8}-[0-9a-f]{2}\b"), "<tap>"),
    (re.compile(r"\b127\.0\.0\.1:\d+"), "<host>"),
    (re.compile(r"\b(compute|node)-\d+\b"), r"\1-<n>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<id>"),
    # Neutron's MACs are random; the fake NICs' (52:54:00:...) are not, and tell which port holds one.
    (re.compile(r"\bfa:16:3e(?::[0-9a-f]{2}){3}\b"), "<mac>"),
)


def recipes() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for seed, kind, text in BLOCK.findall(README.read_text()):
        assert kind not in found.setdefault(seed, {}), f"README: two '{seed} {kind}' blocks"
        found[seed][kind] = text
    return found


def normal(text: str) -> str:
    for pattern, stand_in in IDS:
        text = pattern.sub(stand_in, text)
    return " ".join(text.split())


def serve_args(line: str, seed: str) -> tuple[str, list[str]]:
    """The flavour a README ``tether serve`` line starts, and its flags but ``--port`` and ``--data-dir``."""
    words = shlex.split(line)
    assert words[:2] == ["tether", "serve"], line
    flags, data_dir, rest = words[2:], None, []
    while flags:
        flag = flags.pop(0)
        if flag in ("--port", "--data-dir"):
            value = flags.pop(0)
            data_dir = value if flag == "--data-dir" else data_dir
        else:
            rest.append(flag)
    flavour = "upstream" if "--emulate-bug" in rest else "tether"
    assert data_dir == f"/tmp/{seed}/{flavour}", line
    return flavour, rest


def run_steps(steps: str, seed: str, flavour: str, cloud: LiveCloud) -> str:
    script = steps.replace(f"/tmp/{seed}/upstream", f"/tmp/{seed}/{flavour}")
    script = script.replace(f"/tmp/{seed}/{flavour}", str(cloud.data_dir))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("OS_CLOUD", None)
    env.pop("OS_CLIENT_CONFIG_FILE", None)
    done = subprocess.run(["bash", "-c", script], env=env, cwd=cloud.data_dir, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    return done.stdout


def unlike(shown: str, printed: str) -> str | None:
    """Where what was printed differs from what the README shows, or None.

    Blank lines aside, every line printed must be the line shown in its place
    (a shown line ``$ COMMAND`` is what was typed, and is left out; ``...``
    in a shown line stands for anything).
    """
    lines = [normal(line) for line in printed.splitlines() if line.strip()]
    expected = [normal(line) for line in shown.splitlines() if line.strip() and not line.startswith("$ ")]
    for at, (want, got) in enumerate(zip(expected, lines, strict=False)):
        if not re.fullmatch(".*".join(map(re.escape, want.split("..."))), got):
            return f"line {at + 1}: shown {want!r}, printed {got!r}"
    if len(expected) != len(lines):
        return f"{len(expected)} lines shown, {len(lines)} printed"
    return None


def test_the_readme_has_a_recipe_for_every_seed() -> None:
    found = recipes()
    assert sorted(found) == list(SEEDS)
    for seed, blocks in found.items():
        assert sorted(blocks) == sorted(["serve", "steps", *FLAVOURS]), (seed, sorted(blocks))
        assert sorted(serve_args(line, seed)[0] for line in blocks["serve"].splitlines()) == sorted(FLAVOURS)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_readme_recipe_reproduces_the_seed(seed: str, tmp_path: Path) -> None:
    blocks = recipes()[seed]
    flags = dict(serve_args(line, seed) for line in blocks["serve"].splitlines())
    with ThreadPoolExecutor(max_workers=2) as pool:
        started = {flavour: pool.submit(start, tmp_path / flavour, *flags[flavour], **SERVE_DEFAULTS)
                   for flavour in FLAVOURS}
        try:
            clouds = {flavour: future.result() for flavour, future in started.items()}
            printed = dict(zip(FLAVOURS, pool.map(lambda f: run_steps(blocks["steps"], seed, f, clouds[f]),
                                                  FLAVOURS), strict=True))
        finally:
            for future in started.values():
                if future.exception() is None:
                    future.result().stop()
    for flavour in FLAVOURS:
        differs = unlike(blocks[flavour], printed[flavour])
        assert differs is None, (f"[{seed} {flavour}] not as the README shows: {differs}:\n"
                                 f"{printed[flavour]}\n--- tether serve log ---\n"
                                 f"{clouds[flavour].log.read_text()[-2000:]}")


def test_a_recipe_printing_other_than_the_readme_shows_fails() -> None:
    shown = "$ openstack server show x -f value -c status\nACTIVE\n$ tether check\nno violations\n"
    assert unlike(shown, "ACTIVE\n\nno violations\n") is None
    assert unlike(shown, "ERROR\nno violations\n") == "line 1: shown 'ACTIVE', printed 'ERROR'"
    assert unlike(shown, "ACTIVE\nNotFound: 404\nno violations\n") is not None  # an error the README hides
    assert unlike(shown, "ACTIVE\n") == "2 lines shown, 1 printed"
    assert unlike("port ... of fa:16:3e:00:00:01 on node-1", f"port {uuid4()} of fa:16:3e:9a:bc:de on node-1") is None
