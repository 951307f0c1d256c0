"""`roam apps` with long app IDs (docs/client.md): the ID column is at most 40 columns, a
longer ID is cut in the middle so IDs sharing a long start stay apart, and --json and
`roam app ID` have the ID whole."""
import json

import pytest

from test_apps import APPS, roam_utc  # noqa: F401 (roam_utc is a fixture)
from fakebus import run_roam

PREFIX = "org.spam." + "A" * 190


def spam(n):
    return {"Id": f"{PREFIX}{n:04d}", "Access": "deny", "Source": "runtime",
            "State": "blocked: access denied"}


SPAM = dict(APPS, apps=APPS["apps"] + [spam(n) for n in range(200)])


@pytest.mark.parametrize("lang, ellipsis", [("C.UTF-8", "\u2026"), ("C", "...")])
def test_long_ids_cut_in_the_middle(roamd, bus, lang, ellipsis):
    roamd(SPAM)
    r = run_roam(dict(bus.env, TZ="UTC", LC_ALL=lang), "apps")
    assert r.rc == 0, r.err
    lines = r.out.rstrip("\n").split("\n")
    assert len(lines) == 1 + 205
    # The ID column is 40 columns (and the gap), not the IDs' 203.
    assert lines[0].index("ACCESS") == 42, lines[0]
    assert max(len(line) for line in lines) < 150, max(lines, key=len)
    ids = [line.split("  ")[0] for line in lines[1:]]
    spam_ids = [i for i in ids if i.startswith("org.spam.")]
    assert len(spam_ids) == 200
    assert len(set(spam_ids)) == 200  # every one tells itself apart
    # 40 columns: the start, the ellipsis, the end (the larger half)
    head = (40 - len(ellipsis)) // 2
    tail = 40 - len(ellipsis) - head
    for n, cell in enumerate(spam_ids):
        full = f"{PREFIX}{n:04d}"
        assert cell == full[:head] + ellipsis + full[-tail:], cell
        assert cell.endswith(f"{n:04d}")
    # Short IDs are as they were, the columns line up
    starts = {line.index("deny") for line in lines[1:] if " deny " in line}
    assert len(starts) == 1, starts
    assert any(line.startswith("org.example.Mail  ") for line in lines)


def test_long_ids_whole_in_json_and_app(roamd, roam):
    roamd(SPAM)
    doc = json.loads(roam("apps", "--json").out)
    assert [a["id"] for a in doc if a["id"].startswith("org.spam.")] == \
        [f"{PREFIX}{n:04d}" for n in range(200)]
    r = roam("app", f"{PREFIX}0042")
    assert r.rc == 0, r.err
    assert r.out.startswith(f"{PREFIX}0042\n")


def test_short_ids_unchanged(roamd, roam_utc):
    """A table whose IDs fit is as it always was (no cut, columns as wide as their values)."""
    roamd(APPS)
    lines = roam_utc("apps").out.split("\n")
    assert lines[0].startswith("ID                   ACCESS  ")
