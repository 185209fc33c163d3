#!/usr/bin/env python3
"""Extract the NVIDIA kernel modules' log messages from a driver source tree.

usage: extract-driver-messages.py TREE TAG [-o OUT] [--table ROWS]

TREE is a clone (or bare git dir) of github.com/NVIDIA/open-gpu-kernel-modules, TAG a
driver tag in it (e.g. 595.45.04). The files are read with `git -C TREE show TAG:path`,
so no checkout is needed. Writes tests/data/driver-messages/TAG.txt (or OUT): a short header,
then one message per line, tab-separated, sorted and de-duplicated:

    module  level  logged  file  format

module:  nvidia, nvidia-uvm, nvidia-modeset, nvidia-drm, or nvidia-rm (the resource
         manager's Linux glue: adapter set-up in osinit.c, osapi.c)
level:   error, warning, info, debug (as the call prints it)
logged:  yes when the message reaches the kernel log with default module options;
         no when a debug switch gates it (NVreg_ResmanDebugLevel for nv_printf below
         NV_DBG_WARNINGS, uvm_debug_prints for UVM_ERR_PRINT/UVM_DBG_PRINT, drm.debug)
format:  the printf format the kernel prints, with the print macro's fixed prefix
         ("NVRM: GPU %04x:%02x:%02x.%x: ", "nvidia-uvm: ", "[nvidia-drm] ", ...),
         adjacent literals joined, C escapes as written, one trailing \\n dropped.
         A string macro the script cannot expand stays as {NAME}.

--table ROWS (src/knowledge/driver_messages.inc) also rewrites the knowledge table's rows from
the same list: a message the rows already hold keeps its family (its meaning and judgement), a
new one gets F::unjudged until someone reads it; rows of messages the tag no longer prints go.

Only the kinds of messages the catalog covers are taken: the NVRM: lines of
kernel-open/nvidia and kernel-open/common, the nvidia-uvm, nvidia-modeset and
nvidia-drm print macros (UVM self-tests excluded: only test ioctls reach them), and the
resource manager's osinit.c (RmInitAdapter and its steps) and osapi.c (rm_init_adapter, API
mismatch, unsupported GPUs) in src/nvidia/arch/nvalloc/unix/src/. Stdlib only.
"""
import argparse
import os
import re
import subprocess
import sys

RM_GLUE = "src/nvidia/arch/nvalloc/unix/src/"
RM_FILES = (RM_GLUE + "osinit.c", RM_GLUE + "osapi.c")

# String macros spliced into formats, as the tag defines them.
STRING_MACROS = {
    "NV_PCI_DEV_FMT": "%04x:%02x:%02x.%x",
    "NVLINK_PCI_DEV_FMT": "%04x:%02x:%02x.%x",
    "NVKMS_LOG_PREFIX": "nvidia-modeset: ",
    "NVIDIA_UVM_PRETTY_PRINTING_PREFIX": "nvidia-uvm: ",
    "NvU64_fmtx": "llx",  # the length and conversion only: "%" NvU64_fmtx
    "NvU64_fmtX": "llX",
    "NvU64_fmtu": "llu",
    "NvU64_fmto": "llo",
    "NvP64_fmt": "%p",
    "KERN_CONT": "",
}
KERN_LEVELS = {
    "KERN_EMERG": "error", "KERN_ALERT": "error", "KERN_CRIT": "error", "KERN_ERR": "error",
    "KERN_WARNING": "warning", "KERN_NOTICE": "info", "KERN_INFO": "info",
    "KERN_DEBUG": "debug",
}
NV_DBG = {  # nv_printf prints a level only when >= (cur_debuglevel >> 4) & 3, i.e. 3 by default
    "NV_DBG_ERRORS": ("error", "yes"), "NV_DBG_WARNINGS": ("warning", "yes"),
    "NV_DBG_USERERRORS": ("error", "no"), "NV_DBG_SETUP": ("info", "no"),
    "NV_DBG_INFO": ("info", "no"), "NV_DBG_MEMINFO": ("info", "no"),
}
RM_LEVELS = {  # NV_PRINTF levels of the RM (nvlog): errors and warnings reach the log
    "LEVEL_ERROR": ("error", "yes"), "LEVEL_WARNING": ("warning", "yes"),
    "LEVEL_NOTICE": ("info", "no"), "LEVEL_INFO": ("info", "no"), "LEVEL_SILENT": ("debug", "no"),
}
UVM = {  # macro -> (level, logged, long prefix?)
    "UVM_ERR_PRINT_ALWAYS": ("error", "yes", True), "UVM_ERR_PRINT_ALWAYS_RL": ("error", "yes", True),
    "UVM_ERR_PRINT": ("error", "no", True), "UVM_ERR_PRINT_RL": ("error", "no", True),
    "UVM_DBG_PRINT": ("debug", "no", True), "UVM_DBG_PRINT_RL": ("debug", "no", True),
    "UVM_INFO_PRINT": ("info", "yes", False),
}
DRM = {  # macro -> (level, logged, per-device prefix?)
    "NV_DRM_LOG_ERR": ("error", "yes", False), "NV_DRM_LOG_WARN": ("warning", "yes", False),
    "NV_DRM_LOG_INFO": ("info", "yes", False), "NV_DRM_DEBUG_DRIVER": ("debug", "no", False),
    "NV_DRM_DEV_LOG_ERR": ("error", "yes", True), "NV_DRM_DEV_LOG_WARN": ("warning", "yes", True),
    "NV_DRM_DEV_LOG_INFO": ("info", "yes", True), "NV_DRM_DEV_DEBUG_DRIVER": ("debug", "no", True),
}
UVM_LONG_PREFIX = "%s:%u %s[pid:%d]"

TOKEN = re.compile(r'''
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<char>'(?:[^'\\\n]|\\.)*')
  | (?P<pp>^[ \t]*\#(?:[^\n\\]|\\.)*(?:\\\n(?:[^\n\\]|\\.)*)*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[(),])
  | (?P<other>[^\s])
''', re.VERBOSE | re.DOTALL | re.MULTILINE)


def git(tree, *args):
    return subprocess.run(["git", "-C", tree, *args], check=True, capture_output=True).stdout


def tokens(text):
    """(kind, value) tokens; comments and preprocessor lines (macro definitions) dropped."""
    text = text.replace("\\\n", "")  # line splices first, as the compiler does
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        if kind not in ("comment", "pp"):
            yield kind, m.group(kind)


def calls(text, names):
    """Yield (name, args) for each call of a name; args are lists of tokens."""
    toks = list(tokens(text))
    i = 0
    while i < len(toks):
        kind, val = toks[i]
        if kind == "ident" and val in names and i + 1 < len(toks) and toks[i + 1] == ("punct", "("):
            depth, args, cur, j = 0, [], [], i + 1
            while j < len(toks):
                tk = toks[j]
                if tk == ("punct", "("):
                    depth += 1
                    if depth == 1:
                        j += 1
                        continue
                elif tk == ("punct", ")"):
                    depth -= 1
                    if depth == 0:
                        args.append(cur)
                        break
                elif tk == ("punct", ",") and depth == 1:
                    args.append(cur)
                    cur = []
                    j += 1
                    continue
                cur.append(tk)
                j += 1
            yield val, args
            i = j
        i += 1


def literal(arg):
    """The joined string of a format argument, or None when it holds no string literal.
    Returns (text, kern_level) where kern_level is a KERN_* name found in it."""
    parts, level, seen = [], None, False
    for kind, val in arg:
        if kind == "string":
            parts.append(val[1:-1])
            seen = True
        elif kind == "ident" and val in KERN_LEVELS:
            level = val
        elif kind == "ident" and val in STRING_MACROS:
            parts.append(STRING_MACROS[val])
        elif kind == "ident":
            parts.append("{" + val + "}")
        else:
            return None, None  # an expression, not a literal format
    if not seen:
        return None, None
    text = "".join(parts)
    if text.endswith("\\n"):
        text = text[:-2]
    return text, level


def module_of(path):
    if path in RM_FILES:
        return "nvidia-rm"
    part = path.split("/")[1]
    return "nvidia" if part == "common" else part


def messages_of(path, text):
    module = module_of(path)
    out = []
    if module in ("nvidia", "nvidia-rm"):
        nv_calls = {"nv_printf", "NV_DEV_PRINTF", "NV_DEV_PRINTF_STATUS", "NV_DMA_DEV_PRINTF",
                    "NV_PRINTF"}
        for name, args in calls(text, nv_calls | {"printk", "pr_info", "pr_err", "pr_warn"}):
            if name in nv_calls:
                if len(args) < 2 or len(args[0]) != 1:
                    continue
                lvl_name = args[0][0][1]
                table = RM_LEVELS if name == "NV_PRINTF" else NV_DBG
                if lvl_name not in table:
                    continue
                level, logged = table[lvl_name]
                at = {"NV_DEV_PRINTF": 2, "NV_DMA_DEV_PRINTF": 2, "NV_DEV_PRINTF_STATUS": 3}.get(name, 1)
                if len(args) <= at:
                    continue
                fmt, _ = literal(args[at])
                if fmt is None:
                    continue
                if name == "NV_DEV_PRINTF":
                    fmt = "NVRM: GPU %04x:%02x:%02x.%x: " + fmt
                elif name == "NV_DEV_PRINTF_STATUS":
                    fmt = "NVRM: GPU %04x:%02x:%02x.%x: " + fmt + " (0x%x)"
                elif name == "NV_DMA_DEV_PRINTF":
                    fmt = "NVRM: %s: " + fmt  # the DMA device's name
                elif name == "NV_PRINTF":
                    fmt = "NVRM: %s: " + fmt  # nvlog puts the function's name first
            else:
                fmt, kern = literal(args[0])
                if fmt is None:
                    continue
                level = {"pr_info": "info", "pr_err": "error", "pr_warn": "warning"}.get(
                    name, KERN_LEVELS.get(kern, "info"))
                logged = "no" if level == "debug" else "yes"
            if module == "nvidia" and not fmt.startswith("NVRM"):
                continue  # nvswitch, nvlink and libspdm lines are not the catalog's kind
            out.append((module, level, logged, fmt))
    elif module == "nvidia-uvm":
        for name, args in calls(text, set(UVM) | {"UVM_ERR_PRINT_NV_STATUS"}):
            fmt, _ = literal(args[0])
            if fmt is None:
                continue
            if name == "UVM_ERR_PRINT_NV_STATUS":
                name, fmt = "UVM_ERR_PRINT", "ERROR: %s : " + fmt
            level, logged, long_prefix = UVM[name]
            out.append((module, level, logged,
                        "nvidia-uvm: " + (UVM_LONG_PREFIX if long_prefix else "") + " " + fmt))
    elif module == "nvidia-modeset":
        for name, args in calls(text, {"printk"}):
            if not args or ("ident", "NVKMS_LOG_PREFIX") not in args[0]:
                continue
            fmt, kern = literal(args[0])
            if fmt is not None:
                level = KERN_LEVELS.get(kern, "info")
                out.append((module, level, "no" if level == "debug" else "yes", fmt))
    elif module == "nvidia-drm":
        for name, args in calls(text, set(DRM)):
            dev = DRM[name][2]
            fmt, _ = literal(args[1] if dev else args[0])
            if fmt is None:
                continue
            level, logged, _ = DRM[name]
            out.append((module, level, logged,
                        "[nvidia-drm] " + ("[GPU ID 0x%08x] " if dev else "") + fmt))
    return out


def in_scope(path):
    if not path.endswith((".c", ".h")):
        return False
    if path in RM_FILES:
        return True
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != "kernel-open":
        return False
    if parts[1] not in ("nvidia", "common", "nvidia-uvm", "nvidia-modeset", "nvidia-drm"):
        return False
    base = parts[-1]
    return not (parts[1] == "nvidia-uvm" and ("_test" in base or "selftest" in base))


ROW = re.compile(r'^\s*\{"([^"]*)", L::\w+, (?:true|false), "([^"]*)", "((?:[^"\\]|\\.)*)", '
                 r'F::(\w+)\},$')


def write_table(path, rows):
    """Rewrite the C++ rows, keeping the family of each (module, file, format) already there."""
    known = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = ROW.match(line)
                if m:
                    known[m.group(1, 2, 3)] = m.group(4)
    new = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write("// Written by scripts/extract-driver-messages.py; families are kept on a refresh.\n")
        for module, level, logged, file, fmt in sorted(rows):
            family = known.get((module, file, fmt))
            if family is None:
                family, new = "unjudged", new + 1
            logged_cpp = "true" if logged == "yes" else "false"
            f.write(f'{{"{module}", L::{level}, {logged_cpp}, "{file}", "{fmt}", F::{family}}},\n')
    print(f"{len(rows)} rows -> {path} ({new} new, unjudged)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("tree")
    ap.add_argument("tag")
    ap.add_argument("-o", "--out")
    ap.add_argument("--table", help="the C++ rows to rewrite (src/knowledge/driver_messages.inc)")
    opt = ap.parse_args()
    commit = git(opt.tree, "rev-parse", opt.tag + "^{commit}").decode().strip()
    paths = git(opt.tree, "ls-tree", "-r", "--name-only", commit, "--", "kernel-open",
                *RM_FILES).decode().split("\n")
    rows = set()
    for path in filter(in_scope, paths):
        text = git(opt.tree, "show", f"{commit}:{path}").decode("utf-8", "replace")
        for module, level, logged, fmt in messages_of(path, text):
            if "\t" in fmt:
                sys.exit(f"{path}: a tab in a format: {fmt!r}")
            rows.add((module, level, logged, path, fmt))
    out = opt.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
                                  "driver-messages", opt.tag + ".txt")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write("# NVIDIA kernel-module log messages, written by scripts/extract-driver-messages.py\n")
        f.write(f"# source: https://github.com/NVIDIA/open-gpu-kernel-modules/tree/{opt.tag}\n")
        f.write(f"# tag: {opt.tag}\n# commit: {commit}\n# messages: {len(rows)}\n")
        f.write("# module\tlevel\tlogged\tfile\tformat\n")
        for row in sorted(rows):
            f.write("\t".join(row) + "\n")
    print(f"{len(rows)} messages -> {out}")
    if opt.table:
        write_table(opt.table, rows)


if __name__ == "__main__":
    main()
