# Usage: nvdisasm -hex -c K.cubin > K.sass; python scripts/sass_waits.py K.sass [EXCH]
"""CFG over `nvdisasm -hex -c` output (sm_90): for each ATOMG with a register result, the first
instructions on every path that wait on its write scoreboard, whether they touch the result
registers, and whether the path crossed a backward branch."""
import re, sys
from sass_decode import ctl  # noqa: E402
ins_pat = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?);\s+/\* 0x([0-9a-f]{16}) \*/")
hi_pat = re.compile(r"^\s+/\* 0x([0-9a-f]{16}) \*/\s*$")
lab_pat = re.compile(r"^(\.L_x_\d+):")
def parse(path):
    ins, labels, pend = [], {}, []
    for line in open(path):
        m = lab_pat.match(line)
        if m: pend.append(m.group(1)); continue
        m = ins_pat.search(line)
        if m:
            d = dict(addr=int(m.group(1), 16), text=re.sub(r"\s+", " ", m.group(2).strip()), lo=int(m.group(3), 16), hi=None)
            for l in pend: labels[l] = d["addr"]
            pend = []; ins.append(d); continue
        m = hi_pat.match(line)
        if m and ins and ins[-1]["hi"] is None: ins[-1]["hi"] = int(m.group(1), 16)
    for d in ins:
        c = d["hi"] >> 41
        d.update(stall=c & 0xf, yld=(c >> 4) & 1, wbar=(c >> 5) & 7, rbar=(c >> 8) & 7, wait=(c >> 11) & 0x3f, reuse=(c >> 17) & 0xf)
    return ins, labels
def succs(ins, labels, idx):
    d = ins[idx]; t = d["text"]; pred = t.startswith("@")
    op = t.split()[1] if pred else t.split()[0]
    nxt = [idx + 1] if idx + 1 < len(ins) else []
    m = re.search(r"\(\.L_x_\d+\)", t)
    tgt = []
    if m:
        a = labels[m.group(0)[1:-1]]; tgt = [a // 16]
    if op.startswith("BRA"):
        cond = pred or re.match(r"BRA(\.\w+)* !?U?P\d", op + " " + " ".join(t.split()[1:] if not pred else t.split()[2:]))
        return tgt + (nxt if cond else [])
    if op.startswith("EXIT") or op.startswith("RET") or op.startswith("BRX") or op.startswith("JMX"):
        return nxt if pred else []
    return nxt
def regs_of(dest, wide):
    n = int(dest[1:]); return {f"R{n}", f"R{n+1}"} if wide else {f"R{n}"}
def touches(t, regs):
    toks = set(re.findall(r"\bR\d+\b", t)); return bool(toks & regs)
def analyse(path, only=None):
    ins, labels = parse(path)
    assert all(d["addr"] == 16 * k for k, d in enumerate(ins))
    out = []
    for k, d in enumerate(ins):
        t = d["text"]
        if "ATOMG" not in t or (only and only not in t): continue
        m = re.search(r"ATOMG\S* PT, (R\w+),", t)
        if not m or d["wbar"] == 7: continue
        sb = d["wbar"]; regs = regs_of(m.group(1), ".64" in t) if m.group(1) != "RZ" else set()
        seen = set(); found = []
        stack = [(j, j <= k, ()) for j in succs(ins, labels, k)]
        while stack:
            j, back, preds = stack.pop()
            key = (j, back, preds)
            if key in seen or len(seen) > 200000: continue
            seen.add(key)
            e = ins[j]; t = e["text"]
            if e["wait"] >> sb & 1:
                found.append((e["addr"], back, touches(t, regs), e)); continue
            if j == k: continue
            pd = dict(preds)
            m = re.match(r"PLOP3\.LUT (P\d), PT, PT, PT, PT, 0x(\w+), 0x0$", t)
            if m:
                pd[m.group(1)] = int(m.group(2), 16) & 0x80 != 0
            else:
                for pw in re.findall(r"(?:ISETP|PLOP3|FSETP|DSETP|LOP3|R2P|P2R|VOTE|ISETP)\S* (P\d)", t):
                    pd.pop(pw, None)
                m2 = re.match(r"\S*(?:SETP|LOP3)\S* (P\d), (P\d)", t)
                if m2: pd.pop(m2.group(2), None)
            nxt = succs(ins, labels, j)
            m = re.match(r"@(!?)(P\d) BRA", t)
            if m and m.group(2) in pd and len(nxt) == 2:
                taken = pd[m.group(2)] != (m.group(1) == "!")
                nxt = [nxt[0]] if taken else [nxt[1]]
            np_ = tuple(sorted(pd.items()))
            for s_ in nxt:
                stack.append((s_, back or s_ <= j, np_))
        out.append((d, sb, sorted(set((a, b, tt) for a, b, tt, _ in found)), {a: e for a, _, _, e in found}))
    return ins, out
if __name__ == "__main__":
    ins, out = analyse(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "EXCH")
    for d, sb, found, es in out:
        print(f"{d['addr']:6x} {ctl(d)}  {d['text']}")
        for a, back, tt in found:
            print(f"     waits SB{sb} at {a:6x} {'after a back-edge' if back else 'same pass      '} {'uses result' if tt else 'NOT using result'}: {es[a]['text']}")

def first_touch(path, addr, limit=400000):
    """From the ATOMG at addr, every feasible path's first instruction that names one of its
    result registers (ignoring waits): (addr, 'write'|'read', crossed back-edge, text)."""
    ins, labels = parse(path)
    k = addr // 16; d = ins[k]; t = d["text"]
    m = re.search(r"ATOMG\S* PT, (R\w+),", t); regs = regs_of(m.group(1), ".64" in t)
    seen = set(); res = set(); stack = [(j, j <= k, ()) for j in succs(ins, labels, k)]
    while stack:
        j, back, preds = stack.pop()
        key = (j, back, preds)
        if key in seen or len(seen) > limit: continue
        seen.add(key); e = ins[j]; tx = e["text"]
        body = tx.split(" ", 1)[1] if tx.startswith("@") else tx
        parts = body.split(" ", 1)
        ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
        dst = set(re.findall(r"\bR\d+\b", ops[0])) if ops and not parts[0].startswith(("ST", "RED", "BRA", "BSSY", "BSYNC")) else set()
        if parts[0].startswith("ATOMG"): dst = set(re.findall(r"\bR\d+\b", ops[1]))
        srcs = set(re.findall(r"\bR\d+\b", ",".join(ops[1:] if dst else ops)))
        if parts[0].startswith(("IMAD.WIDE", "LDG.E.64", "LDC.64", "ATOMG.E.EXCH.64", "ATOMG.E.CAS.64", "ATOMG.E.ADD.64", "ATOMG.E.OR.64", "CS2R", "LDG.E.64.STRONG")) and dst:
            n = int(next(iter(dst))[1:]); dst = {f"R{n}", f"R{n+1}"}
        if srcs & regs:
            res.add((e["addr"], "read", back, tx)); continue
        if dst & regs:
            res.add((e["addr"], "write", back, tx)); continue
        if j == k: continue
        pd = dict(preds)
        mm = re.match(r"PLOP3\.LUT (P\d), PT, PT, PT, PT, 0x(\w+), 0x0$", tx)
        if mm: pd[mm.group(1)] = int(mm.group(2), 16) & 0x80 != 0
        else:
            for pw in re.findall(r"(?:SETP|PLOP3|LOP3|R2P|VOTE)\S* (P\d)", tx): pd.pop(pw, None)
        nxt = succs(ins, labels, j)
        mm = re.match(r"@(!?)(P\d) BRA", tx)
        if mm and mm.group(2) in pd and len(nxt) == 2:
            taken = pd[mm.group(2)] != (mm.group(1) == "!"); nxt = [nxt[0]] if taken else [nxt[1]]
        np_ = tuple(sorted(pd.items()))
        for s_ in nxt: stack.append((s_, back or s_ <= j, np_))
    return sorted(res)
