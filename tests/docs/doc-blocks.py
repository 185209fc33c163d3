#!/usr/bin/env python3
"""The code blocks of the README and docs/, for tests/docs/recipes-test.sh.

  doc-blocks.py list SOURCE_DIR FILES_DIR   one record per line on stdout, tab-separated:
      run    FILE:LINE  COMMAND  BLOCK    a command line of a sh block (continuations joined), or a
                                          gpu-preflight line of a yaml block (after `run:` / `- `);
                                          BLOCK: the block's number (lines of one block share it)
      skip   FILE:LINE  REASON            a block marked <!-- recipe: skip (REASON) -->
      output FILE:LINE  COMMAND  EXPECTED a text block marked <!-- recipe: output of: COMMAND -->;
                                          its lines are written to the file EXPECTED
      file   FILE:LINE  NAME              a block marked <!-- recipe: file NAME -->, written to
                                          FILES_DIR/NAME
      error  FILE:LINE  WHY               a block the test cannot account for
  doc-blocks.py match EXPECTED ACTUAL     exit 0 when every line of EXPECTED, in order, is a line
                                          of ACTUAL ("..." in a line matches anything; a line of
                                          only "..." is skipped); otherwise names the first line
                                          that is not there.

A marker is the last non-blank line before the block's opening fence. A text or unlabelled block
(documented output) needs one: `output of:` or `skip (why)`; nothing is left out silently.
"""
import glob
import os
import re
import sys

MARKER = re.compile(r"^<!--\s*recipe:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")
YAML_COMMAND = re.compile(r"^\s*(?:-\s+)?(?:run:\s+)?((?:gpu-preflight|eval)\s.*)$")


def doc_files(src):
    files = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=src)) + \
        sorted(glob.glob("docs/integrations/*.md", root_dir=src))
    return files


def blocks(path):
    """(opening line number, language, marker or None, lines) of each fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = MARKER.match(lines[k]) if k >= 0 else None
        yield start + 1, lang, marker.group(1) if marker else None, lines[start + 1:j]
        i = j + 1


def logical_lines(body, first):
    """Shell lines with backslash continuations joined, as (line number, text)."""
    out, acc, at = [], "", None
    for n, line in enumerate(body, first):
        if at is None:
            at = n
        if line.endswith("\\"):
            acc += line[:-1] + " "
            continue
        acc += line
        if acc.strip() and not acc.strip().startswith("#"):
            out.append((at, acc.strip()))
        acc, at = "", None
    return out


def list_blocks(src, files_dir):
    n_out = n_block = 0
    for rel in doc_files(src):
        for line, lang, marker, body in blocks(os.path.join(src, rel)):
            where = f"{rel}:{line}"
            n_block += 1
            if marker is not None:
                if m := re.fullmatch(r"skip \((.+)\)", marker):
                    print(f"skip\t{where}\t{m.group(1)}")
                elif m := re.fullmatch(r"output of: (.+)", marker):
                    n_out += 1
                    expected = os.path.join(files_dir, f".expected-{n_out}")
                    with open(expected, "w", encoding="utf-8") as f:
                        f.write("\n".join(body) + "\n")
                    print(f"output\t{where}\t{m.group(1)}\t{expected}")
                elif m := re.fullmatch(r"file ([\w.-]+)", marker):
                    with open(os.path.join(files_dir, m.group(1)), "w", encoding="utf-8") as f:
                        f.write("\n".join(body) + "\n")
                    print(f"file\t{where}\t{m.group(1)}")
                else:
                    print(f"error\t{where}\tunknown recipe marker: {marker}")
                continue
            if lang == "sh":
                for n, cmd in logical_lines(body, line + 1):
                    print(f"run\t{rel}:{n}\t{cmd}\t{n_block}")
            elif lang == "yaml":
                for n, text in enumerate(body, line + 1):
                    if m := YAML_COMMAND.match(text):
                        print(f"run\t{rel}:{n}\t{m.group(1)}\t{n_block}")
            elif lang in ("", "text"):
                print(f"error\t{where}\tan output block with no <!-- recipe: output of: CMD --> "
                      "or <!-- recipe: skip (why) --> before it")
            # json blocks are data (reports, snapshot files, rules files): only a `file` marker
            # makes the test use one.


def match(expected_path, actual_path):
    expected = open(expected_path, encoding="utf-8").read().rstrip("\n").split("\n")
    actual = [a.rstrip() for a in open(actual_path, encoding="utf-8", errors="replace")]
    pos = 0
    for e in expected:
        e = e.rstrip()
        if e.strip() == "...":
            continue
        pattern = re.compile(".*".join(re.escape(p) for p in e.split("...")) + r"\Z")
        while pos < len(actual) and not pattern.match(actual[pos]):
            pos += 1
        if pos == len(actual):
            print(f"not in the output (in this order): {e}")
            return 1
        pos += 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "list":
        list_blocks(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "match":
        sys.exit(match(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
