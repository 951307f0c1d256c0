"""A fake roamd with usage rows and budgets, shared by the `roam stats` and plain-mode usage
tests. We run as root (uid 0): the rows of user 0 are ours."""

MAIL = "org.example.Mail"
VIDEO = "org.example.Video"
# 2027-01-01 00:00 UTC and the month before it
JAN1 = 1_798_761_600
DEC1 = JAN1 - 31 * 86400

USAGE = {
    "manager": {"Version": "0.1.0-test", "State": "online", "BestLink": "/"},
    "links": [],
    "usage": {
        "rows": [["user:0/app:" + MAIL, "wwan0", False, 2_500_000, 400_000, 2000, 900],
                 ["user:0/app:" + MAIL, "wwan0", True, 1_000_000, 0, 800, 0],
                 ["user:0", "wlan0", False, 12_000, 3_000, 20, 10],
                 ["user:1000", "wlan0", False, 5, 5, 1, 1]],
        "history": [],
        "budgets": [[MAIL, "cellular", 500_000_000, 412_000_000, DEC1, JAN1, 80, "warning"],
                    [VIDEO, "roaming", 0, 0, DEC1, JAN1, 80, "ok"]],
    },
}
