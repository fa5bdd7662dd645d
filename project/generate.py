"""Generate the example project's data: orders (JSON lines) and customers (CSV).

Deterministic for a given seed. On purpose, a few records are defective, as real feeds are:
malformed JSON lines (they must land in quarantine, not vanish), null customer ids, negative
amounts, mixed-case statuses, and duplicated order events.

    python project/generate.py --orders 100000 --customers 2000          # first batch
    python project/generate.py --orders 1000 --append                    # one more file of orders
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATUSES = ["placed", "paid", "shipped", "cancelled", "PAID", " Shipped "]
COUNTRIES = ["FR", "DE", "ES", "IT", "NL", "BE", "PL", "SE"]
START = datetime(2026, 11, 1, tzinfo=UTC)


def write_customers(out: Path, n: int, rng: random.Random) -> int:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "customers.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["customer_id", "name", "email", "country", "signup_date"])
        for cid in range(1, n + 1):
            signup = (START - timedelta(days=rng.randint(1, 900))).date().isoformat()
            w.writerow([cid, f"Customer {cid}", f"customer{cid}@example.com", rng.choice(COUNTRIES), signup])
    return n


def write_orders(out: Path, n: int, customers: int, rng: random.Random, first_id: int, file_no: int,
                 defects: bool = True) -> tuple[int, int]:
    """Write one file of ``n`` order lines; return (lines written, malformed lines among them)."""
    out.mkdir(parents=True, exist_ok=True)
    malformed = 0
    path = out / f"orders-{file_no:04d}.json"
    with path.open("w") as fh:
        for i in range(n):
            oid = first_id + i
            ts = START + timedelta(days=file_no - 1, seconds=int(i * 86400 / max(n, 1)) + rng.randint(0, 59))
            rec = {"order_id": oid, "customer_id": rng.randint(1, customers),
                   "amount": round(rng.lognormvariate(3.5, 1.0), 2), "status": rng.choice(STATUSES),
                   "ts": ts.strftime("%Y-%m-%dT%H:%M:%S")}
            if defects and i % 997 == 13:
                fh.write('{"order_id": ' + str(oid) + ', "amount": 12.5, "status": "paid", "ts": \n')
                malformed += 1
                continue
            if defects and i % 1009 == 7:
                rec["customer_id"] = None
            if defects and i % 1013 == 11:
                rec["amount"] = -rec["amount"]
            fh.write(json.dumps(rec) + "\n")
            if defects and i % 1019 == 5:
                fh.write(json.dumps(rec) + "\n")  # the same event delivered twice
    return n, malformed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--orders", type=int, default=50_000, help="order lines per file")
    ap.add_argument("--customers", type=int, default=2_000)
    ap.add_argument("--files", type=int, default=1, help="number of order files to write")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--append", action="store_true", help="add new order file(s) after the existing ones")
    ap.add_argument("--out", type=Path, default=HERE / "data")
    args = ap.parse_args()
    orders_dir = args.out / "orders"
    existing = sorted(orders_dir.glob("orders-*.json")) if orders_dir.is_dir() else []
    if not args.append:
        for f in existing:
            f.unlink()
        existing = []
        write_customers(args.out / "customers", args.customers, random.Random(args.seed))
    first_file = len(existing) + 1
    total = bad = 0
    for k in range(args.files):
        file_no = first_file + k
        rng = random.Random(args.seed * 1000 + file_no)
        first_id = (file_no - 1) * 10_000_000 + 1  # each file owns an id range: appended files never collide
        n, m = write_orders(orders_dir, args.orders, args.customers, rng, first_id, file_no)
        total, bad = total + n, bad + m
    print(f"wrote {total} order lines ({bad} malformed) in {args.files} file(s) to {orders_dir}"
          + ("" if args.append else f", {args.customers} customers"))


if __name__ == "__main__":
    main()
