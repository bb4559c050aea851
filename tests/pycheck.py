"""The check helper of the Python tests that print only what fails
(test_bench_table.py, test_fwht_ab_table.py; imported from the test's own
folder, which Python puts first on sys.path when it runs a script):

    check(ok, what)   counts a failed check and prints "FAIL: what"
    finish(name)      prints "name: ok" or "name: N failed" and returns the
                      exit status (0: every check passed)"""
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)
    return ok


def finish(name):
    print(f"{name}: " + ("ok" if not failures else f"{len(failures)} failed"))
    return 1 if failures else 0
