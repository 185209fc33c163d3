#!/usr/bin/env bash
# `summarize --format html` rendered by a real browser (ctest label fleet-html):
#   html-chromium.sh GPU_PREFLIGHT_BINARY SOURCE_DIR
# A small fleet (healthy nodes, nodes without nvidia-uvm, nodes with an excluded GPU, nodes on an
# old kernel (warn), an empty report, a report older than --max-age, a host name that is HTML)
# summarised as one page; headless Chromium takes a 1200x1200 screenshot (the whole page) and
# dumps the DOM. The screenshot must be a PNG of that size in which every GPU cell shows in its
# state's colour (counted against the cells in the page), the DOM must name the nodes and causes,
# and the hostile name must stay text. Installs Debian's chromium when missing; exits 77
# (skipped) when it cannot.
set -euo pipefail
bin=$(readlink -f "$1")
src=$(readlink -f "$2")
# shellcheck source-path=SCRIPTDIR source=../prometheus/install.sh
. "$src/tests/prometheus/install.sh"
gpf_need_packages chromium python3
chromium=$(command -v chromium)

tmp=$(mktemp -d /tmp/gpf-html-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# the fleet: real reports of the fixtures, given host names
mkdir -p "$tmp/reports"
report() { # FIXTURE HOST...
  local fx=$1 rc=0 host
  shift
  "$bin" check --root "$src/tests/fixtures/$fx" --format json >"$tmp/$fx.json" || rc=$?
  [ "$rc" -le 1 ] || fail "check on $fx exited $rc"
  for host in "$@"; do
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["host"]=sys.argv[2]; print(json.dumps(r))' \
      "$tmp/$fx.json" "$host" >"$tmp/reports/$(printf '%s' "$host" | tr -c 'a-z0-9-' '_').json"
  done
}
report healthy-4gpu gpu-n01 gpu-n02 gpu-n03 gpu-n04 gpu-n05 gpu-n06 gpu-n07 gpu-n08 gpu-n09 \
  gpu-n10 gpu-n11 '<img src=x onerror=alert(1)>'
report missing-uvm gpu-n13 gpu-n14 gpu-n15 gpu-n16
report excluded-gpu gpu-n17 gpu-n18
report old-kernel-4gpu gpu-n20 gpu-n21
: >"$tmp/reports/gpu-n19.json" # its check crashed before writing
# a node last checked long ago: stale under --max-age
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["host"]="gpu-n22"; r["checked_at"]="2020-01-01T00:00:00Z"; print(json.dumps(r))' \
  "$tmp/healthy-4gpu.json" >"$tmp/reports/gpu-n22.json"

rc=0
"$bin" summarize --format html --max-age 7d "$tmp/reports" >"$tmp/fleet.html" || rc=$?
[ "$rc" -eq 1 ] || fail "summarize exited $rc, expected 1 (nodes not ready)"
pattern='<(script|link|img|iframe|object)|(src|href)="|url\(|@import'
if grep -Eiq "$pattern" "$tmp/fleet.html"; then
  grep -Eio ".{0,40}($pattern).{0,40}" "$tmp/fleet.html" >&2
  fail "the page refers to something outside itself, or the report's name became markup"
fi

export HOME=$tmp # chromium writes its profile and caches there
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
  --disable-crash-reporter --user-data-dir="$tmp/profile" "--window-size=1200,1200")
timeout 120 "$chromium" "${flags[@]}" --screenshot="$tmp/shot.png" "file://$tmp/fleet.html" \
  >"$tmp/chromium.log" 2>&1 || { cat "$tmp/chromium.log" >&2; fail "chromium --screenshot"; }
timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$tmp/fleet.html" >"$tmp/dom.html" \
  2>"$tmp/chromium-dom.log" || { cat "$tmp/chromium-dom.log" >&2; fail "chromium --dump-dom"; }

python3 - "$tmp/shot.png" "$tmp/fleet.html" "$tmp/dom.html" <<'PY'
import html.parser, re, struct, sys, zlib

shot, page, dom = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3]).read()

def fail(msg):
    sys.exit(f"FAIL: {msg}")

# The PNG: signature, IHDR, IDAT inflated and unfiltered (8-bit RGB or RGBA).
data = open(shot, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    fail("the screenshot is not a PNG")
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]:
        fail(f"bad CRC in chunk {kind}")
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
width, height, depth, colour = ihdr[0], ihdr[1], ihdr[2], ihdr[3]
if (width, height) != (1200, 1200):
    fail(f"screenshot is {width}x{height}, not 1200x1200")
if depth != 8 or colour not in (2, 6):
    fail(f"unexpected PNG format: depth {depth}, colour type {colour}")
bpp = 3 if colour == 2 else 4
raw = zlib.decompress(idat)
stride = width * bpp
rows, prev = [], bytearray(stride)
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        for i in range(bpp, stride):
            line[i] = (line[i] + line[i - bpp]) & 255
    elif f == 2:
        for i in range(stride):
            line[i] = (line[i] + prev[i]) & 255
    elif f == 3:
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
    elif f == 4:
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    elif f != 0:
        fail(f"bad PNG filter {f}")
    rows.append(bytes(line))
    prev = line
counts = {}
for line in rows:
    for i in range(0, stride, bpp):
        px = line[i:i + 3]
        counts[px] = counts.get(px, 0) + 1
if len(counts) < 5:
    fail(f"the screenshot is blank: {len(counts)} distinct colours")

def near(rgb):
    return sum(n for px, n in counts.items() if all(abs(px[k] - rgb[k]) <= 3 for k in range(3)))

# Each GPU cell (a span with a title) is 14x14 px in its state's colour: the screenshot must hold
# at least most of that area per state, beyond the legend's one square.
colours = {"fail": (0xd6, 0x27, 0x28), "warn": (0xff, 0x9f, 0x1a), "none": (0x7f, 0x7f, 0x7f),
           "stale": (0x94, 0x67, 0xbd), "pass": (0x2c, 0xa0, 0x2c)}
for state, rgb in colours.items():
    cells = len(re.findall(rf'<span class="c {state}" title=', page))
    seen = near(rgb)
    print(f"{state}: {cells} cells, {seen} pixels of {rgb}")
    if cells == 0:
        fail(f"no {state} cell in the page")
    if seen < cells * 150:
        fail(f"{state}: {seen} pixels for {cells} cells of 14x14")

# The page as the browser built it: nodes, causes, hostlists; the hostile name as text.
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text, self.titles = set(), [], []
    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.titles += [v for k, v in attrs if k == "title"]
    def handle_data(self, data):
        self.text.append(data)
parsed = Page()
parsed.feed(dom)
text = " ".join(parsed.text)
for want in ["gpu-n01", "gpu-n16", "devnode.nvidia-uvm-missing", "gpu.excluded", "NO REPORT",
             "kernel.below-5.5-multi-gpu", "gpu-n[20-21]", "STALE", "gpu-n22",
             "gpu-n[13-16]", "gpu-n19", "scontrol update state=drain"]:
    if want not in text:
        fail(f"the DOM's text does not name {want!r}")
if parsed.tags & {"img", "script"} or "<img src=x onerror=alert(1)>" not in text:
    fail("the report's host name became markup")
if not any(t.startswith("gpu-n13 ") and "devnode.nvidia-uvm-missing" in t for t in parsed.titles):
    fail("a GPU cell of gpu-n13 does not name its finding on hover")
if not any(t.startswith("gpu-n17 0000:") and "gpu.excluded" in t for t in parsed.titles):
    fail("the excluded GPU's cell does not name its bus id and finding on hover")
print("ok: screenshot", width, "x", height, "with", len(counts), "colours; DOM names the fleet")
PY
