"""Parse `nvdisasm -hex` output for sm_70..sm_90 and decode the control bits.
Layout of the high 64-bit word (bits 105..125 of the 128-bit instruction):
  stall  = bits 105-108 (4), yield = 109, wbar = 110-112 (7 = none), rbar = 113-115 (7 = none),
  wait mask = 116-121 (6 bits, one per scoreboard SB0..SB5), reuse = 122-125."""
import re, sys
pat = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s+/\* 0x([0-9a-f]{16}) \*/")
hi_pat = re.compile(r"^\s+/\* 0x([0-9a-f]{16}) \*/\s*$")
def parse(path):
    ins = []; cur = None
    for line in open(path):
        m = pat.search(line)
        if m:
            cur = [int(m.group(1), 16), m.group(2).strip(), int(m.group(3), 16), None]; ins.append(cur); continue
        m = hi_pat.match(line)
        if m and cur is not None and cur[3] is None:
            cur[3] = int(m.group(1), 16)
    out = []
    for a, t, lo, hi in ins:
        c = hi >> 41
        out.append(dict(addr=a, text=t, stall=c & 0xf, yld=(c >> 4) & 1, wbar=(c >> 5) & 7, rbar=(c >> 8) & 7,
                        wait=(c >> 11) & 0x3f, reuse=(c >> 17) & 0xf, lo=lo, hi=hi))
    return out
def ctl(d):
    w = "-" if d["wbar"] == 7 else str(d["wbar"])
    r = "-" if d["rbar"] == 7 else str(d["rbar"])
    wm = "".join(str(i) for i in range(6) if d["wait"] >> i & 1) or "-"
    return f"W{w} R{r} wait[{wm:6s}] S{d['stall']:<2d} Y{d['yld']} reuse{d['reuse']:x}"
if __name__ == "__main__":
    for d in parse(sys.argv[1])[: int(sys.argv[2]) if len(sys.argv) > 2 else 40]:
        print(f"{d['addr']:6x} {ctl(d)}  {d['text']}")
