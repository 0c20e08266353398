# W7.14 The grid
"""evidence-compare.py: a rerun of chapter 7's grid against the book's
intervals.

    evidence-compare.py BOOK_RESULTS RERUN_RESULTS
"""
import math
import sys

T975 = [math.nan, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
        2.262, 2.228]


def read(path):
    points = {}
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if cols[0] != "ppl":
                continue
            key = (cols[1], float(cols[2]), cols[4], cols[5], int(cols[6]))
            points.setdefault(key, {})[int(cols[3])] = float(cols[7])
    return points


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: evidence-compare.py BOOK_RESULTS RERUN_RESULTS")
    try:
        book, rerun = read(sys.argv[1]), read(sys.argv[2])
    except OSError as e:
        sys.exit("evidence-compare: %s" % e)
    inside = agree = total = 0
    print("pe base model method n: book mean [interval] seeds, rerun mean "
          "seeds, inside the interval, inside the interval of a rerun")
    for key in sorted(rerun):
        if key not in book or len(book[key]) < 2:
            continue
        if set(book[key]) & set(rerun[key]):
            sys.exit("evidence-compare: the rerun repeats a seed of the book")
        y = list(book[key].values())
        k = len(y)
        mean = sum(y) / k
        sd = math.sqrt(sum((v - mean) ** 2 for v in y) / (k - 1))
        half = (T975[k - 1] if k - 1 < len(T975) else 1.96) * sd / math.sqrt(k)
        m = len(rerun[key])
        r = sum(rerun[key].values()) / m
        wide = half * math.sqrt(k) * math.sqrt(1 / k + 1 / m)
        ok, fair = abs(r - mean) <= half, abs(r - mean) <= wide
        inside += ok
        agree += fair
        total += 1
        print("%s %g %s %s %d: %.4f [%.4f, %.4f] %d, %.4f %d, %s, %s"
              % (key + (mean, mean - half, mean + half, k, r, m,
                        "yes" if ok else "no", "yes" if fair else "NO")))
    if total == 0:
        sys.exit("evidence-compare: no point of the rerun is in the book")
    print("evidence-compare: %d of %d rerun means inside the book's 95%% "
          "intervals of the mean, %d inside the 95%% intervals of a rerun's "
          "mean (losses in nats per character)" % (inside, total, agree))


main()
