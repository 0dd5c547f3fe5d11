#!/usr/bin/env python3
"""Fails when a commit subject on the current branch is longer than 72 characters.

A subject says what a change does in one line that `git log --oneline` shows whole; the detail
(why, what was measured and where) goes in the body. The rule holds for every commit after
RULE_SINCE; in a checkout without that commit (a shallow clone) only HEAD's subject is checked,
and outside a git checkout there is nothing to check.

    check_commit_subjects.py [--repo DIR]
"""
import argparse
import subprocess
import sys

MAX_SUBJECT = 72
# The last commit before the rule: its ancestors keep the subjects they were written with.
RULE_SINCE = "151ab054011f5eebf0747bacb698d7703e11cbc6"


def git(repo: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=".", help="the repository (default: the current directory)")
    args = parser.parse_args()
    try:
        inside = git(args.repo, "rev-parse", "--is-inside-work-tree")
    except FileNotFoundError:
        print("no git: no commits to check")
        return 0
    if inside.returncode != 0:
        print("not a git checkout: no commits to check")
        return 0
    if git(args.repo, "cat-file", "-e", RULE_SINCE + "^{commit}").returncode == 0:
        revisions = [f"{RULE_SINCE}..HEAD"]
    else:
        revisions = ["-1", "HEAD"]
    log = git(args.repo, "log", "--format=%h%x00%s", *revisions)
    if log.returncode != 0:
        print(f"git log failed: {log.stderr.strip()}")
        return 1
    long_ones = []
    for line in log.stdout.splitlines():
        commit, _, subject = line.partition("\0")
        if len(subject) > MAX_SUBJECT:
            long_ones.append(f"{commit} ({len(subject)} characters): {subject[:MAX_SUBJECT]}...")
    if long_ones:
        print(f"commit subjects over {MAX_SUBJECT} characters (put the detail in the body):")
        print("\n".join(long_ones))
        return 1
    print(f"every subject checked is at most {MAX_SUBJECT} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
