#!/usr/bin/env python3
"""Print CUDA's error enumerations as the sorted code list gpu-preflight keeps.

usage: scripts/extract-cuda-errors.py CUDA_H DRIVER_TYPES_H > tests/data/cuda-errors-X.Y.tsv

Reads `enum cudaError_enum` (CUresult) from cuda.h and `enum cudaError` (cudaError_t) from
driver_types.h of one CUDA toolkit, with the value of every enumerator (an enumerator without
`= value` is one more than the one before, as in C). Writes one line per enumerator, tab-separated
enum, value, name, sorted by enum then value, so that a refresh to a new CUDA is a diff of the list:
new rows then need a row each in src/knowledge/cuda_errors.cpp (a test compares the two).
"""
import re
import sys

ENUMS = (("CUresult", "cudaError_enum"), ("cudaError_t", "cudaError"))


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def enumerators(text, tag):
    """[(name, value)] of `enum TAG { ... }` in text; exits naming the tag when it is absent."""
    pattern = r"\benum\s+(?:__device_builtin__\s+)?" + re.escape(tag) + r"\s*\{(.*?)\}"
    match = re.search(pattern, strip_comments(text), re.S)
    if not match:
        sys.exit(f"extract-cuda-errors: no 'enum {tag} {{...}}' found")
    out = []
    following = 0
    for item in match.group(1).split(","):
        item = item.strip()
        if not item:
            continue
        name, _, value = (part.strip() for part in item.partition("="))
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            sys.exit(f"extract-cuda-errors: enum {tag}: cannot read {item!r}")
        number = int(value, 0) if value else following
        out.append((name, number))
        following = number + 1
    return out


def cuda_version(text):
    match = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", text)
    if not match:
        return "unknown"
    number = int(match.group(1))
    return f"{number // 1000}.{number % 1000 // 10}"


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    texts = []
    for path in argv[1:]:
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.append(f.read())
    print(f"# CUDA {cuda_version(texts[0])} error codes: CUresult (cuda.h, enum cudaError_enum) and")
    print("# cudaError_t (driver_types.h, enum cudaError); enum, value, name (tab-separated).")
    print("# Written by scripts/extract-cuda-errors.py; src/knowledge/cuda_errors.cpp names the source.")
    for (enum, tag), text in zip(ENUMS, texts):
        for name, value in sorted(enumerators(text, tag), key=lambda nv: (nv[1], nv[0])):
            print(f"{enum}\t{value}\t{name}")


if __name__ == "__main__":
    main(sys.argv)
