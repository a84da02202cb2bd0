#!/usr/bin/env python3
"""Cut the repo into a `git am`-able patch series, and check it.

series.py export OUTDIR
    Builds a git history on top of the pristine 6.12 source, one commit per
    entry of patches/series-split.txt (the description of the split), and
    writes `git format-patch --cover-letter` output to OUTDIR.
series.py verify-split
    Checks that every overlay file and every patch of patches/series is
    used by exactly one entry of the split, in an order compatible with
    patches/series.

patches/series-split.txt format: entries start with a line "=== SUBJECT";
then "files:" and "patches:" lines (space-separated, may repeat), then
"body:" and the commit message body up to the next "===" line. A line
"without: PATH TEXT" adds PATH in that entry minus its lines equal to TEXT
(e.g. the #include of a KUnit file that a later entry adds); a later entry
then lists PATH again and adds it whole. The first
entry, "=== cover: SUBJECT", is the cover letter; "@@BENCH@@" in its body is
replaced by bench-results/latest/results.md when that exists.

MAINTAINERS grows with the series: the KMMSCAND section of patches/
maintainers-kmmscand.patch (MAINTAINERS_PATCH) is not an entry of its own;
each commit carries the section with the F: lines (file names or
patterns, MAINTAINERS' rules) that match a file added so far.  Every
overlay file must match one.  A later commit whose new files a pattern
covers already leaves MAINTAINERS alone; `series.py maintained` tells
`make series-check` so, which then accepts checkpatch's question.
mm/Makefile grows the same way: patches/mm-kmmscand-makefile.patch
(MAKEFILE_PATCH) only adds lines, each naming objects of mm/, and is in no
entry; each commit carries the lines whose sources (mm/NAME.c for NAME.o)
have all been added so far, so every file is built by the commit that adds
it.
The selftests' build files grow the same way: patches/
selftests-mm-kmmscand-build.patch (SELFTESTS_PATCH) only adds lines to
the .gitignore, Makefile, config and run_vmtests.sh of
tools/testing/selftests/mm; each commit carries the lines that name a
test it or an earlier commit added (kmmscand_NAME for
kmmscand_NAME.c), and the lines that name no test (patterns such as
kmmscand_*_test) from the first commit that adds a kmmscand_*.c on.
Adding a selftest kmmscand_NAME_test.c is that file and its entry.
"""
import difflib
import os
import re
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
PRISTINE = os.path.join(BUILD, "pristine")
SPLIT = os.path.join(TOP, "patches", "series-split.txt")
OVERLAY_DIRS = ["mm", "include", "kernel", "fs", "lib", "Documentation", "tools", "arch"]
MAINTAINERS_PATCH = "maintainers-kmmscand.patch"
MAKEFILE_PATCH = "mm-kmmscand-makefile.patch"
SELFTESTS_DIR = "tools/testing/selftests/mm"
SELFTESTS_PATCH = "selftests-mm-kmmscand-build.patch"
# Patches spread over the series instead of going into one entry, and the
# files each of them changes.
DISTRIBUTED = {MAINTAINERS_PATCH: ["MAINTAINERS"], MAKEFILE_PATCH: ["mm/Makefile"],
               SELFTESTS_PATCH: [f"{SELFTESTS_DIR}/{f}" for f in
                                 (".gitignore", "Makefile", "config", "run_vmtests.sh")]}
AUTHOR = os.environ.get("SERIES_AUTHOR", "kmmscand developers <linux-mm@kvack.org>")
DATE = "Thu, 3 Dec 2026 12:00:00 +0000"


def die(msg):
    print(f"[series] error: {msg}", file=sys.stderr)
    sys.exit(1)


def parse_split():
    entries = []
    cur = None
    in_body = False
    with open(SPLIT) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("=== "):
                cur = {"subject": line[4:].strip(), "files": [], "patches": [], "body": [],
                       "without": {}}
                entries.append(cur)
                in_body = False
            elif cur is None:
                continue
            elif in_body:
                cur["body"].append(line)
            elif line.startswith("files:"):
                cur["files"] += line[6:].split()
            elif line.startswith("without:"):
                path, _, text = line[8:].strip().partition(" ")
                if not text.strip():
                    die(f"'without:' needs a path and a line: {line}")
                cur["without"].setdefault(path, []).append(text.strip())
            elif line.startswith("patches:"):
                cur["patches"] += line[8:].split()
            elif line.startswith("body:"):
                in_body = True
            elif line.strip() and not line.startswith("#"):
                die(f"unexpected line in {SPLIT}: {line}")
    if not entries or not entries[0]["subject"].startswith("cover:"):
        die("the first entry of the split must be '=== cover: SUBJECT'")
    for e in entries:
        while e["body"] and not e["body"][-1].strip():
            e["body"].pop()
    return entries[0], entries[1:]


def overlay_files():
    out = subprocess.run(["git", "ls-files"] + OVERLAY_DIRS, cwd=TOP, check=True,
                         capture_output=True, text=True).stdout.split()
    return sorted(out)


def quilt_series():
    with open(os.path.join(TOP, "patches", "series")) as f:
        return [ln.split()[0] for ln in f if ln.strip() and not ln.startswith("#")]


def patch_files(p):
    """The files patch P of patches/ changes."""
    with open(os.path.join(TOP, "patches", p)) as f:
        return [ln[6:].split()[0] for ln in f if ln.startswith("+++ b/")]


def makefile_sources(lines):
    """The sources named by an added Makefile line: mm/PATH.c per PATH.o."""
    objs = re.findall(r"([A-Za-z0-9_/-]+)\.o\b", lines)
    d = os.path.dirname(DISTRIBUTED[MAKEFILE_PATCH][0])
    return [f"{d}/{o}.c" for o in objs]


def f_pattern_matches(pattern, path):
    """Whether a MAINTAINERS F: pattern covers PATH: a trailing / takes
    the directory and all below it; * and ? do not cross a /."""
    if pattern.endswith("/"):
        return path.startswith(pattern)
    rx = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c)
                 for c in pattern)
    return re.fullmatch(rx, path) is not None


def section_patterns(lines):
    """The F: patterns of the KMMSCAND section in MAINTAINERS LINES."""
    try:
        i = lines.index("KMMSCAND")
    except ValueError:
        return []
    out = []
    while i < len(lines) and lines[i].strip():
        if lines[i].startswith("F:"):
            out.append(lines[i].split(None, 1)[1].strip())
        i += 1
    return out


def selftest_sources(line):
    """The selftest sources named by an added build-file line."""
    return [f"{SELFTESTS_DIR}/{t}.c" for t in re.findall(r"\bkmmscand_[a-z0-9_]+\b", line)]


def added_lines(p):
    """The lines patch P of patches/ adds."""
    with open(os.path.join(TOP, "patches", p)) as f:
        return [ln[1:].rstrip("\n") for ln in f
                if ln.startswith("+") and not ln.startswith("+++")]


def verify_split():
    cover, entries = parse_split()
    problems = []
    files = overlay_files()
    quilt = quilt_series()
    used_f, used_p = {}, {}
    for i, e in enumerate(entries):
        if not re.match(r"^[A-Za-z0-9_/.-]+: \S", e["subject"]):
            problems.append(f"subject '{e['subject']}' is not 'subsystem: summary'")
        if not any(s.strip() for s in e["body"]):
            problems.append(f"'{e['subject']}' has no body saying why")
        for ln in e["body"]:
            if len(ln) > 75:
                problems.append(f"'{e['subject']}': body line longer than 75 "
                                f"characters, which checkpatch refuses: '{ln[:40]}...'")
            if ln.startswith("#"):
                problems.append(f"'{e['subject']}': body line '{ln}' starts with '#', "
                                "which git drops as a comment")
        for f in e["without"]:
            if f not in e["files"]:
                problems.append(f"'without: {f}' in '{e['subject']}' but {f} is not in its files")
        for f in e["files"]:
            if f in used_f and f not in entries[used_f[f]]["without"]:
                problems.append(f"{f} is added whole in two entries")
            used_f[f] = i
            if f not in files:
                problems.append(f"{f} (in '{e['subject']}') is not a tracked overlay file")
        for p in e["patches"]:
            if p in used_p:
                problems.append(f"{p} is in two entries")
            used_p[p] = i
            if p not in quilt:
                problems.append(f"{p} (in '{e['subject']}') is not in patches/series")
    for f, i in used_f.items():
        if f in entries[i]["without"]:
            problems.append(f"{f} is never added whole (last entry has 'without:')")
    for f in files:
        if f not in used_f:
            problems.append(f"overlay file {f} is in no entry of the split")
    last = -1
    distributed_files = [f for fs in DISTRIBUTED.values() for f in fs]
    for p, targets in DISTRIBUTED.items():
        if p in used_p:
            problems.append(f"{p} is spread over the series; list it in no entry")
        if p not in quilt:
            problems.append(f"{p} is not in patches/series")
        elif not set(patch_files(p)) <= set(targets):
            problems.append(f"{p} must change only {', '.join(targets)}")
    for p in quilt:
        if p in DISTRIBUTED:
            continue
        for f in patch_files(p):
            if f in distributed_files:
                problems.append(f"{p} changes {f}, which only its own patch may change")
        if p not in used_p:
            problems.append(f"patch {p} is in no entry of the split")
        elif used_p[p] < last:
            problems.append(f"patch {p} comes before an earlier patch of patches/series")
        else:
            last = used_p[p]
    if SELFTESTS_PATCH in quilt:
        for ln in added_lines(SELFTESTS_PATCH):
            for src in selftest_sources(ln):
                if src not in used_f:
                    problems.append(f"{SELFTESTS_PATCH}: {src} (for '{ln}') is in no entry")
    if MAINTAINERS_PATCH in quilt:
        pats = section_patterns(distributed_final(MAINTAINERS_PATCH))
        if not pats:
            problems.append(f"{MAINTAINERS_PATCH} has no KMMSCAND section with F: lines")
        for f in files:
            if pats and not any(f_pattern_matches(p, f) for p in pats):
                problems.append(f"{f} matches no F: line of {MAINTAINERS_PATCH}")
    if MAKEFILE_PATCH in quilt:
        for ln in added_lines(MAKEFILE_PATCH):
            srcs = makefile_sources(ln)
            if not srcs:
                problems.append(f"{MAKEFILE_PATCH} adds '{ln}', which names no object")
            for src in srcs:
                if src not in used_f:
                    problems.append(f"{MAKEFILE_PATCH}: {src} (for '{ln}') is in no entry")
    return cover, entries, problems


def git(repo, *args, **kw):
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          capture_output=True, text=True, **kw).stdout


def distributed_final(p, path=None):
    """The lines of PATH (default: the file patch P changes) in pristine + P."""
    path = path or DISTRIBUTED[p][0]
    tmp = os.path.join(BUILD, "series-distributed")
    shutil.rmtree(tmp, ignore_errors=True)
    for f in DISTRIBUTED[p]:
        os.makedirs(os.path.dirname(os.path.join(tmp, f)), exist_ok=True)
        shutil.copyfile(os.path.join(PRISTINE, f), os.path.join(tmp, f))
    r = subprocess.run(["patch", "-p1", "--fuzz=0", "--batch", "-s", "-i",
                        os.path.join(TOP, "patches", p)],
                       cwd=tmp, capture_output=True, text=True)
    if r.returncode:
        die(f"{p} does not apply:\n{r.stdout}{r.stderr}")
    with open(os.path.join(tmp, path)) as f:
        lines = f.read().split("\n")
    shutil.rmtree(tmp)
    return lines


def maintainers_final(repo):
    """MAINTAINERS of pristine + MAINTAINERS_PATCH, split around the section."""
    lines = distributed_final(MAINTAINERS_PATCH)
    start = lines.index("KMMSCAND")
    end = start
    while lines[end].strip():
        end += 1
    return lines[:start], lines[start:end], lines[end + 1:]


def write_maintainers(repo, final, added):
    """Write MAINTAINERS with the section's F: lines limited to ADDED."""
    before, section, after = final
    keep = [ln for ln in section
            if not ln.startswith("F:") or
            any(f_pattern_matches(ln.split(None, 1)[1].strip(), f) for f in added)]
    if not any(ln.startswith("F:") for ln in keep):
        text = before + after
    else:
        text = before + keep + [""] + after
    with open(os.path.join(repo, "MAINTAINERS"), "w") as f:
        f.write("\n".join(text))


def lines_final(p, path, sources):
    """PATH of pristine + patch P, which may only add lines there, as
    (line, None) for a line of pristine and (line, SOURCES(line)) for an
    added one."""
    with open(os.path.join(PRISTINE, path)) as f:
        old = f.read().split("\n")
    new = distributed_final(p, path)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op not in ("equal", "insert"):
            die(f"{p} may only add lines to {path}")
        out += [(ln, sources(ln) if op == "insert" else None) for ln in new[j1:j2]]
    return out


def makefile_final():
    """mm/Makefile of pristine + MAKEFILE_PATCH: (line, sources or None)."""
    return lines_final(MAKEFILE_PATCH, DISTRIBUTED[MAKEFILE_PATCH][0], makefile_sources)


def write_makefile(repo, final, added):
    """Write mm/Makefile with the added lines whose sources are in ADDED."""
    keep = [ln for ln, srcs in final if srcs is None or all(s in added for s in srcs)]
    with open(os.path.join(repo, DISTRIBUTED[MAKEFILE_PATCH][0]), "w") as f:
        f.write("\n".join(keep))


def selftests_final():
    """{path: [(line, sources or None)]} of the selftests' build files."""
    return {path: lines_final(SELFTESTS_PATCH, path, selftest_sources)
            for path in DISTRIBUTED[SELFTESTS_PATCH]}


def write_selftests(repo, final, added):
    """Write the selftests' build files: an added line that names tests
    once they are all in ADDED, one that names none once any test is."""
    anytest = any(re.fullmatch(rf"{SELFTESTS_DIR}/kmmscand_\w+\.c", f) for f in added)
    for path, fl in final.items():
        keep = [ln for ln, srcs in fl
                if srcs is None or (all(s in added for s in srcs) if srcs else anytest)]
        with open(os.path.join(repo, path), "w") as f:
            f.write("\n".join(keep))


def export(outdir):
    outdir = os.path.abspath(outdir)
    cover, entries, problems = verify_split()
    if problems:
        for p in problems:
            print(f"[series] {p}", file=sys.stderr)
        die("patches/series-split.txt does not describe the repo")
    repo = os.path.join(BUILD, "series-git")
    if not os.path.isdir(os.path.join(repo, ".git")):
        print("[series] creating a git repository of the pristine source (once)", file=sys.stderr)
        tmp = repo + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["cp", "-a", PRISTINE, tmp], check=True)
        env = dict(os.environ, GIT_AUTHOR_DATE=DATE, GIT_COMMITTER_DATE=DATE)
        for args in (["init", "-q"], ["add", "-A", "-f"],
                     ["-c", "user.name=base", "-c", "user.email=base@localhost",
                      "commit", "-q", "-m", "Debian linux-source-6.12"]):
            subprocess.run(["git", "-C", tmp] + args, check=True, env=env)
        git(tmp, "tag", "base")
        os.rename(tmp, repo)
    # No automatic gc: a detached `git gc --auto` after the commits below
    # repacks while `make series-check` clones the repository.
    git(repo, "config", "gc.auto", "0")
    git(repo, "checkout", "-q", "-f", "base")
    git(repo, "clean", "-q", "-fdx")
    git(repo, "checkout", "-q", "-B", "kmmscand")
    final_maint = maintainers_final(repo)
    final_make = makefile_final()
    final_st = selftests_final() if SELFTESTS_PATCH in quilt_series() else {}
    added = set()
    name, _, email = AUTHOR.partition(" <")
    email = email.rstrip(">")
    env = dict(os.environ, GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email,
               GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email,
               GIT_AUTHOR_DATE=DATE, GIT_COMMITTER_DATE=DATE)
    for e in entries:
        for f in e["files"]:
            dst = os.path.join(repo, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(os.path.join(TOP, f)) as src:
                lines = src.read().split("\n")
            drop = e["without"].get(f, [])
            missing = [t for t in drop if t not in (ln.strip() for ln in lines)]
            if missing:
                die(f"'without: {f} {missing[0]}': no such line in {f}")
            text = "\n".join(ln for ln in lines if ln.strip() not in drop)
            if drop:
                text = text.rstrip("\n") + "\n"
            with open(dst, "w") as out:
                out.write(text)
        for p in e["patches"]:
            r = subprocess.run(["patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch",
                                "-s", "-i", os.path.join(TOP, "patches", p)],
                               cwd=repo, capture_output=True, text=True)
            if r.returncode:
                die(f"patch {p} does not apply in series order:\n{r.stdout}{r.stderr}")
        for f in e["files"]:
            if not os.path.exists(os.path.join(PRISTINE, f)):
                added.add(f)
        write_maintainers(repo, final_maint, added)
        write_makefile(repo, final_make, added)
        if final_st:
            write_selftests(repo, final_st, added)
        git(repo, "add", "-A", "-f")
        msg = e["subject"] + "\n\n" + "\n".join(e["body"]) + f"\n\nSigned-off-by: {AUTHOR}\n"
        subprocess.run(["git", "-C", repo, "commit", "-q", "-F", "-"], input=msg,
                       text=True, check=True, env=env)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    git(repo, "format-patch", "-q", "--cover-letter", "--no-signature",
        "-o", outdir, "base..kmmscand", env=env)
    cl = [f for f in os.listdir(outdir) if f.startswith("0000-")][0]
    path = os.path.join(outdir, cl)
    with open(path) as f:
        text = f.read()
    body = "\n".join(cover["body"])
    bench = os.path.join(TOP, "bench-results", "latest", "results.md")
    # The measured summary is in the cover body; a local `make bench` run,
    # when there is one, is appended in full.
    table = ("Full results of the last `make bench` run:\n\n" + open(bench).read().strip()) \
        if os.path.exists(bench) else ""
    body = body.replace("@@BENCH@@", table)
    text = text.replace("*** SUBJECT HERE ***", cover["subject"][len("cover:"):].strip())
    text = text.replace("*** BLURB HERE ***", body)
    with open(path, "w") as f:
        f.write(text)
    for fn in sorted(os.listdir(outdir)):
        print(os.path.join(outdir, fn))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "export":
        export(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "verify-split":
        _, _, problems = verify_split()
        for p in problems:
            print(f"not ok series-split: {p}")
        if not problems:
            print("ok series-split")
        return 1 if problems else 0
    elif len(sys.argv) >= 4 and sys.argv[1] == "maintained":
        with open(sys.argv[2]) as f:
            pats = section_patterns(f.read().split("\n"))
        bare = [p for p in sys.argv[3:] if not any(f_pattern_matches(x, p) for x in pats)]
        for p in bare:
            print(f"{p}: no F: line of the KMMSCAND section in {sys.argv[2]}")
        return 1 if bare else 0
    else:
        print("usage: series.py export OUTDIR | series.py verify-split | "
              "series.py maintained MAINTAINERS FILE...", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
