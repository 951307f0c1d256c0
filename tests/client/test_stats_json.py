"""`roam stats --json`: the usage rows and the data budgets, against fake_roamd.py."""
import json

from usage_scenario import DEC1, JAN1, MAIL, USAGE, VIDEO


def test_stats_json_has_budgets(roamd, roam):
    roamd(USAGE)
    r = roam("stats", "--json")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert sorted(doc) == ["budgets", "usage"]
    # our own rows only (uid 0), with bytes and packets
    assert {(x["owner"], x["link"], x["roaming"], x["bytes_in"], x["packets_out"])
            for x in doc["usage"]} == {
        ("user:0/app:" + MAIL, "wwan0", False, 2_500_000, 900),
        ("user:0/app:" + MAIL, "wwan0", True, 1_000_000, 0),
        ("user:0", "wlan0", False, 12_000, 10)}
    assert doc["budgets"] == [
        {"app": MAIL, "links": "cellular", "limit_bytes": 500_000_000,
         "used_bytes": 412_000_000, "period_start": DEC1, "period_end": JAN1,
         "warn_percent": 80, "state": "warning", "state_words": "warning: nearly used up"},
        {"app": VIDEO, "links": "roaming", "limit_bytes": 0, "used_bytes": 0,
         "period_start": DEC1, "period_end": JAN1, "warn_percent": 80, "state": "ok",
         "state_words": "within budget"}]


def test_stats_json_budgets_follow_app_and_state(roamd, roam):
    fake = roamd(USAGE)
    fake.send(op="budget", budgets=[[VIDEO, "roaming", 0, 1500, DEC1, JAN1, 80, "over"]])
    doc = json.loads(roam("stats", "--json").out)
    assert [(b["app"], b["state"], b["state_words"]) for b in doc["budgets"]] == \
        [(VIDEO, "over", "over budget: blocked")]
    # --app filters the budgets as it filters the rows
    r = roam("stats", "--json", "--app", MAIL)
    assert r.rc == 0, r.err
    assert json.loads(r.out)["budgets"] == []
    # the text form says the same in words
    text = roam("stats").out
    assert "over budget: blocked" in text and "2027-01-01 00:00" in text, text
