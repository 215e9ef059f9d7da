#!/usr/bin/env python3
"""Variant generator and summarizer for the dense conv prototypes.

  gen.py sweep BUILD [--max N]        schedule sweep of every dense.csv row (row's epilogue)
  gen.py fused BUILD RESULTS...       best schedule per row in 3 modes: plain, epilogue, epilogue+residual
  gen.py summary RESULTS...           table of best per row

Writes BUILD/Makefile, BUILD/rowNN/table.cpp and BUILD/rows.txt (one command line per row).
"""
import csv, itertools, os, random, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, '..', '..', '..', 'shared', 'bench', 'dense.csv')
if not os.path.exists(CSV):
    CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'dense.csv')
NVCC = 'nvcc -arch=sm_90 -O3 -std=c++17'
SMS = 132


def rows():
    out = []
    recs = list(csv.DictReader(open(os.path.join(HERE, 'dense.csv') if os.path.exists(os.path.join(HERE, 'dense.csv')) else CSV)))
    if os.environ.get('TESTS'):
        recs += list(csv.DictReader(open(os.path.join(HERE, 'tests.csv'))))
    if True:
        for i, r in enumerate(recs):
            n, c, co, h, w, kh, kw, s = (int(r[k]) for k in ('n', 'c_in', 'c_out', 'h', 'w', 'kh', 'kw', 'stride'))
            dil = int(r.get('dil') or 1)
            if r['pad'] == 'same':
                pt = pb = dil * (kh - 1) // 2; pl = pr = dil * (kw - 1) // 2
            elif r['pad'] == 'valid':
                pt = pb = pl = pr = 0
            else:
                pt = pb = pl = pr = int(r['pad'])
            oh = (h + pt + pb - dil * (kh - 1) - 1) // s + 1
            ow = (w + pl + pr - dil * (kw - 1) - 1) // s + 1
            e = r['epilogue']
            epi = 2 if e.startswith('scale_shift') else (1 if e.startswith('bias') else 0)
            act = 2 if e.endswith('relu6') else (1 if e.endswith('relu') else 0)
            out.append(dict(idx=i, suite=r['suite'], n=n, c=c, co=co, h=h, w=w, kh=kh, kw=kw, sh=s, sw=s,
                            pt=pt, pb=pb, pl=pl, pr=pr, dh=dil, dw=dil, oh=oh, ow=ow, epi=epi, act=act,
                            name='%02d_%s_c%d_%d_%dx%d_k%d_s%d' % (i, r['suite'], c, co, h, w, kh, s)))
    return out


def is_gemm(p):
    return p['kh'] == 1 and p['kw'] == 1 and p['sh'] == 1 and p['sw'] == 1 and p['pt'] == 0 and p['pl'] == 0


def cdiv(a, b):
    return (a + b - 1) // b


# ---------------- direct schedule space ----------------
def direct_ok(p, s):
    rco, tz, roh, ty, row, vow, tx, ci = s
    acc = rco * roh * vow * row
    thr = tx * ty * tz
    if not (16 <= acc <= (128 if p['n'] * p['co'] * p['oh'] * p['ow'] >= 4e6 else 64) and 64 <= thr <= 512):
        return False
    tco, th, tw = rco * tz, roh * ty, row * vow * tx
    if tco > max(p['co'], 8) * 1 or tco > 2 * p['co']:
        return False
    waste = (cdiv(p['ow'], tw) * tw / p['ow']) * (cdiv(p['oh'], th) * th / p['oh']) * (cdiv(p['co'], tco) * tco / p['co'])
    if waste > 1.3 and p['suite'] != 'test':
        return False
    inh = (th - 1) * p['sh'] + (p['kh'] - 1) * p['dh'] + 1
    inw = (tw - 1) * p['sw'] + (p['kw'] - 1) * p['dw'] + 1
    smem = 2 * 4 * (ci * inh * (inw + 32) + ci * p['kh'] * p['kw'] * tco)
    return smem <= 46 * 1024


def direct_score(p, s):
    # crude: fraction of the chip the grid fills times arithmetic intensity of the tile
    rco, tz, roh, ty, row, vow, tx, ci = s
    tco, th, tw = rco * tz, roh * ty, row * vow * tx
    thr = tx * ty * tz
    blocks = cdiv(p['ow'], tw) * cdiv(p['oh'], th) * cdiv(p['co'], tco) * p['n']
    bpsm = max(1, min(2048 // thr, 65536 // (thr * 128)))
    waves = blocks / (SMS * bpsm)
    fill = waves / cdiv(blocks, SMS * bpsm) if waves >= 1 else waves
    waste = (cdiv(p['ow'], tw) * tw / p['ow']) * (cdiv(p['oh'], th) * th / p['oh']) * (cdiv(p['co'], tco) * tco / p['co'])
    return fill * (rco * roh * row * vow) ** 0.5 / waste ** 2


HAND_DIRECT = [
    (8, 4, 2, 4, 4, 1, 8, 4), (8, 4, 2, 4, 4, 1, 8, 8), (4, 4, 2, 4, 4, 1, 8, 8), (8, 8, 2, 2, 4, 1, 8, 4),
    (8, 2, 2, 8, 4, 1, 8, 4), (4, 2, 2, 4, 4, 1, 8, 8), (4, 4, 2, 4, 4, 1, 4, 8), (4, 8, 4, 2, 4, 1, 8, 4),
    (8, 4, 2, 4, 2, 2, 8, 4), (8, 4, 1, 8, 7, 1, 8, 4), (8, 4, 2, 4, 7, 1, 4, 4), (8, 8, 1, 7, 7, 1, 1, 8),
    (8, 4, 2, 7, 2, 1, 7, 4), (8, 4, 2, 4, 4, 1, 7, 4), (4, 8, 2, 4, 4, 1, 7, 8), (8, 16, 1, 7, 7, 1, 1, 4),
]


def direct_space(p, maxn):
    rows_ = [(4, 1, 8), (4, 1, 4), (2, 2, 8), (2, 2, 4), (4, 2, 4), (7, 1, 8), (7, 1, 4), (7, 1, 2), (7, 1, 1),
             (4, 1, 7), (2, 1, 7), (2, 1, 14)]
    allc = []
    for rco, tz, roh, ty, (row, vow, tx), ci in itertools.product((4, 8), (2, 4, 8, 16), (1, 2, 4), (1, 2, 4, 7, 8),
                                                                  rows_, (4, 8)):
        s = (rco, tz, roh, ty, row, vow, tx, ci)
        if direct_ok(p, s):
            allc.append(s)
    chosen = [s for s in HAND_DIRECT if direct_ok(p, s)]
    rest = sorted((s for s in allc if s not in chosen), key=lambda s: -direct_score(p, s))
    chosen += rest[:max(0, maxn - len(chosen))]
    return chosen[:maxn]


def direct_flags(p, s):
    rco, tz, roh, ty, row, vow, tx, ci = s
    return ('-DCG_RCO=%d -DCG_TZ=%d -DCG_ROH=%d -DCG_TY=%d -DCG_ROW=%d -DCG_VOW=%d -DCG_TX=%d -DCG_CI_STEP=%d'
            % s), 'direct rco%d tz%d roh%d ty%d row%d vow%d tx%d ci%d tile%dx%dx%d' % (
                s + (rco * tz, roh * ty, row * vow * tx))


# ---------------- gemm schedule space ----------------
def gemm_ok(p, s):
    bm, bn, bk, vm, vn = s
    if bm % (4 * vm) or bn % (4 * vn):
        return False
    thr = (bm // (4 * vm)) * (bn // (4 * vn))
    if not (64 <= thr <= 384):
        return False
    xvec = 4 if (p['h'] * p['w']) % 4 == 0 else 1
    if thr % (bn // xvec):
        return False
    if 2 * (bk * (bm + 4) + bk * bn) * 4 > 48 * 1024:
        return False
    if bm > cdiv(p['co'], 8) * 8 * 1.0 + 0 and bm != p['co']:
        if bm > 32 and bm >= 2 * p['co']:
            return False
        if cdiv(p['co'], bm) * bm / p['co'] > 1.35 and p['suite'] != 'test':
            return False
    if bk > max(8, p['c']):
        return False
    return True


def gemm_space(p, maxn):
    m = p['co']
    bms = {32, 64, 128}
    if cdiv(m, 8) * 8 <= 192:
        bms.add(cdiv(m, 8) * 8)
    for k in range(1, 8):
        if m % k == 0 and (m // k) % 4 == 0 and m // k <= 192:
            bms.add(m // k)
    allc = [s for s in itertools.product(sorted(bms), (32, 64, 128, 256), (8, 16), (1, 2), (1, 2)) if gemm_ok(p, s)]

    def score(s):
        bm, bn, bk, vm, vn = s
        waste = cdiv(m, bm) * bm / m
        thr = (bm // (4 * vm)) * (bn // (4 * vn))
        blocks = cdiv(m, bm) * cdiv(p['n'] * p['h'] * p['w'], bn)
        return (vm * vn) ** 0.5 / waste * min(1.0, blocks / (2 * SMS)) + (0.1 if bk == 16 and p['c'] % 16 == 0 else 0)

    allc.sort(key=score, reverse=True)
    return allc[:maxn]


def gemm_flags(p, s):
    return '-DCG_BM=%d -DCG_BN=%d -DCG_BK=%d -DCG_VM=%d -DCG_VN=%d' % s, 'gemm bm%d bn%d bk%d vm%d vn%d' % s


def problem_flags(p, epi, res, act):
    f = '-DCG_C=%d -DCG_C_OUT=%d -DCG_H=%d -DCG_W=%d -DCG_EPI=%d -DCG_RES=%d -DCG_ACT=%d' % (
        p['c'], p['co'], p['h'], p['w'], epi, res, act)
    if not is_gemm(p):
        f += ' -DCG_KH=%d -DCG_KW=%d -DCG_SH=%d -DCG_SW=%d -DCG_PT=%d -DCG_PL=%d -DCG_DH=%d -DCG_DW=%d -DCG_OH=%d -DCG_OW=%d' % (
            p['kh'], p['kw'], p['sh'], p['sw'], p['pt'], p['pl'], p['dh'], p['dw'], p['oh'], p['ow'])
    return f


def write_build(build, plan):
    """plan: list of (row, [(vname, kernel_file, sched_flags, desc, epi, res, act)])"""
    os.makedirs(build, exist_ok=True)
    mk = ['NVCC=%s' % NVCC, 'INC=-I/usr/include/x86_64-linux-gnu', 'all: ' + ' '.join(
        '%s/bench' % p['name'] for p, _ in plan), '',
          'bench.o: %s/bench.cu\n\t$(NVCC) $(INC) -c $< -o $@' % HERE, '']
    lines = []
    for p, vs in plan:
        d = os.path.join(build, p['name'])
        os.makedirs(d, exist_ok=True)
        objs = []
        tab = ['#include <cuda_runtime.h>',
               'typedef cudaError_t (*LaunchFn)(const float*, const float*, const float*, const float*, const float*, float*, int, cudaStream_t);',
               'struct Variant { const char* name; const char* schedule; int epi, res, act; LaunchFn fn; };']
        ents = []
        for vname, kfile, sflags, desc, epi, res, act in vs:
            o = '%s/%s.o' % (p['name'], vname)
            objs.append(o)
            mk.append('%s: %s/%s\n\t$(NVCC) -c $< -o $@ -DCG_NAME=%s %s %s -Xptxas -v > %s/%s.ptxas 2>&1 || (cat %s/%s.ptxas; false)' % (
                o, HERE, kfile, vname, problem_flags(p, epi, res, act), sflags, p['name'], vname, p['name'], vname))
            tab.append('cudaError_t launch_%s(const float*, const float*, const float*, const float*, const float*, float*, int, cudaStream_t);' % vname)
            ents.append('  {"%s", "%s", %d, %d, %d, launch_%s},' % (vname, desc.replace(' ', '_'), epi, res, act, vname))
        tab.append('Variant g_variants[] = {\n%s\n};' % '\n'.join(ents))
        tab.append('int g_num_variants = %d;' % len(ents))
        open(os.path.join(d, 'table.cpp'), 'w').write('\n'.join(tab) + '\n')
        mk.append('%s/bench: bench.o %s/table.cpp %s\n\t$(NVCC) -o $@ bench.o %s/table.cpp %s -lcudnn' % (
            p['name'], p['name'], ' '.join(objs), p['name'], ' '.join(objs)))
        lines.append('%s %s %s' % (p['name'], p['name'], ' '.join(str(p[k]) for k in (
            'n', 'c', 'co', 'h', 'w', 'kh', 'kw', 'sh', 'sw', 'pt', 'pb', 'pl', 'pr', 'dh', 'dw'))))
    open(os.path.join(build, 'Makefile'), 'w').write('\n'.join(mk) + '\n')
    open(os.path.join(build, 'rows.txt'), 'w').write('\n'.join(lines) + '\n')


def sweep(build, maxn, only=None):
    plan = []
    for p in rows():
        if only and not re.search(only, p['name']):
            continue
        if is_gemm(p):
            space = [('gemm1x1.cu',) + gemm_flags(p, s) for s in gemm_space(p, maxn)]
        else:
            space = [('direct.cu',) + direct_flags(p, s) for s in direct_space(p, maxn)]
        for dflt in {default_schedule(p), default_schedule(p, True)}:
            if dflt not in space:
                space = [dflt] + space[:maxn - 1]
        vs = [('v%02d_%02d' % (p['idx'], i), kf, fl, desc, p['epi'], 0, p['act']) for i, (kf, fl, desc) in enumerate(space)]
        plan.append((p, vs))
    write_build(build, plan)


def parse(files):
    res, dnn = [], {}
    spilled = set()
    for fn in files:
        if fn.endswith('spills.txt'):
            spilled |= {l.split('/')[1].split('.')[0] for l in open(fn) if '/' in l}
    files = [f for f in files if not f.endswith('spills.txt')]
    for fn in files:
        for line in open(fn):
            if line.startswith('RESULT ') or line.startswith('CUDNN '):
                kv = dict(t.split('=', 1) for t in line.split()[1:])
                if line.startswith('RESULT'):
                    if kv['variant'] in spilled:
                        kv['ok'] = 'spill'
                    res.append(kv)
                elif kv.get('ok') == '1':
                    r = kv['row']
                    if r not in dnn or float(kv['us']) < float(dnn[r]['us']):
                        dnn[r] = kv
                    if kv['algo'] in ('0', '1', '2'):  # cuDNN's implicit/explicit GEMM (no Winograd/FFT)
                        g = dnn.setdefault(r + '#gemm', kv)
                        if float(kv['us']) < float(g['us']):
                            dnn[r + '#gemm'] = kv
    return res, dnn


def best_per_row(res):
    best = {}
    for r in res:
        if r['ok'] != '1' or r['res'] != '0':
            continue
        if r['row'] not in best or float(r['us']) < float(best[r['row']]['us']):
            best[r['row']] = r
    return best


def sched_from_desc(desc):
    toks = desc.split('_')
    kind = toks[0]
    vals = {re.match(r'([a-z]+)', t).group(1): t for t in toks[1:]}
    if kind == 'gemm':
        nums = tuple(int(re.sub(r'[a-z]+', '', vals[k])) for k in ('bm', 'bn', 'bk', 'vm', 'vn'))
        return 'gemm1x1.cu', gemm_flags(None, nums)
    nums = tuple(int(re.sub(r'^[a-z]+', '', vals[k])) for k in ('rco', 'tz', 'roh', 'ty', 'row', 'vow', 'tx', 'ci'))
    return 'direct.cu', direct_flags(None, nums)


def fused(build, files, topk=1):
    res, _ = parse(files)
    plan = []
    for p in rows():
        rr = sorted([r for r in res if r['row'] == p['name'] and r['ok'] == '1' and r['res'] == '0'],
                    key=lambda r: float(r['us']))
        seen, picks = set(), []
        for r in rr:
            if r['sched'] not in seen:
                seen.add(r['sched']); picks.append(r['sched'])
            if len(picks) >= topk:
                break
        if not picks:
            continue
        epi, act = (p['epi'], p['act']) if p['epi'] else (2, 1)
        vs = []
        for j, desc in enumerate(picks):
            kf, (fl, d) = sched_from_desc(desc)
            for mode, (e, rs, a) in enumerate(((0, 0, 0), (epi, 0, act), (epi, 1, act))):
                vs.append(('f%02d_%d_%d' % (p['idx'], j, mode), kf, fl, d, e, rs, a))
        plan.append((p, vs))
    write_build(build, plan)


def roofline_us(p):
    hw = p['oh'] * p['ow']
    flops = 2.0 * p['n'] * p['co'] * hw * p['c'] * p['kh'] * p['kw']
    byts = 4.0 * (p['n'] * p['c'] * p['h'] * p['w'] + p['n'] * p['co'] * hw + p['co'] * p['c'] * p['kh'] * p['kw'])
    return max(byts / 3.0e12, flops / 51.6e12) * 1e6, flops


def summary(files):
    res, dnn = parse(files)
    best = best_per_row(res)
    print('%-40s %9s %7s %9s %7s %6s %7s %s' % ('row', 'best_us', 'TFLOPs', 'cudnn_us', 'ratio', 'roof%', 'nvar', 'schedule'))
    for p in rows():
        b = best.get(p['name'])
        d = dnn.get(p['name'])
        roof, _ = roofline_us(p)
        nv = sum(1 for r in res if r['row'] == p['name'])
        nbad = sum(1 for r in res if r['row'] == p['name'] and r['ok'] != '1')
        if not b:
            print('%-40s  no passing variant (%d run, %d bad)' % (p['name'], nv, nbad)); continue
        du = float(d['us']) if d else float('nan')
        dg = dnn.get(p['name'] + '#gemm')
        if dg:
            b = dict(b); b['sched'] += '  [cudnn best algo %s; its GEMM algo %s: %.2f us, ours/that %.2f]' % (
                d['algo'], dg['algo'], float(dg['us']), float(b['us']) / float(dg['us']))
        print('%-40s %9.2f %7.2f %9.2f %7.2f %6.0f %3d/%-3d %s' % (
            p['name'], float(b['us']), float(b['tflops']), du, float(b['us']) / du, 100 * roof / float(b['us']),
            nv, nbad, b['sched']))
    # fused ratios
    fr = [r for r in res if r['variant'].startswith('f')]
    if fr:
        print('\nfused: row, schedule, plain_us, epi_us, epi+res_us, epi/plain, epi+res/plain')
        for p in rows():
            rr = [r for r in fr if r['row'] == p['name']]
            for j in sorted({r['variant'].split('_')[1] for r in rr}):
                m = {r['variant'].split('_')[2]: r for r in rr if r['variant'].split('_')[1] == j}
                if len(m) < 3:
                    continue
                u = [float(m[k]['us']) for k in '012']
                ok = all(m[k]['ok'] == '1' for k in '012')
                print('%-40s %-60s %8.2f %8.2f %8.2f %6.3f %6.3f %s' % (p['name'], m['0']['sched'], u[0], u[1], u[2],
                                                                        u[1] / u[0], u[2] / u[0], '' if ok else 'FAIL'))


# ---------------- proposed default rule ----------------
def default_schedule(p, small=False):
    """The schedule convgen should pick with no tuning (see README/notes)."""
    if is_gemm(p):
        m, k, hw = p['co'], p['c'], p['h'] * p['w']
        bk = 16 if (k % 16 == 0 and (k >= 128 or k == 16)) else 8
        vn = 2 if hw % 4 == 0 else 1           # scalar X loads need threads % BN == 0
        if m <= 24:
            bm, vm = cdiv(m, 8) * 8, 1           # one block row covers M: X read once
        elif k <= 16:
            bm, vm = 64, 2                       # one K stage: bigger M tile (BM 32 spills here)
        elif m <= 64 and k >= 128:
            bm, vm = 16, 1                       # few outputs, long K: more blocks
        else:
            bm, vm = 32, 2                       # 8x8 outputs per thread, 64 threads
        return ('gemm1x1.cu',) + gemm_flags(p, (bm, 128, bk, vm, vn))
    ow, oh = p['ow'], p['oh']
    work = p['n'] * p['co'] * oh * ow
    if ow <= 7:
        row, tx = ow, 1
    elif ow <= 16:
        row, tx = 4, cdiv(ow, 4)
    elif p['sw'] > 1 and ow % 7 == 0:
        row, tx = 7, ow // 7 if ow // 7 <= 8 else 4
    else:
        row, tx = 4, min(8, cdiv(ow, 4))
    if p['n'] == 1 or small:  # batch 1: many small blocks, 16 outputs a thread
        rco, tz, roh, ty, ci = 4, 2, 1, min(8, oh), 8
    elif ow <= 7:
        rco, tz, roh, ty, ci = 4, 8, 1, 8, 8
    elif ow <= 16:
        rco, tz, roh, ty, ci = 4, 4, 2, 7 if oh % 14 == 0 else 8, 4
    elif p['sw'] > 1:
        rco, tz, roh, ty, ci = 8, 8, 1, 4, 4
    else:
        rco, tz, roh, ty, ci = 8, 4, 2, 7 if (oh % 14 == 0 and oh % 8 != 0) else 4, 4
    def smem(ci_):  # bytes of the two stages, as direct.cu lays them out (pitch padding bounded by 32)
        inh = (roh * ty - 1) * p['sh'] + (p['kh'] - 1) * p['dh'] + 1
        inw = (row * tx - 1) * p['sw'] + (p['kw'] - 1) * p['dw'] + 1
        return 2 * 4 * (ci_ * inh * (inw + 32) + ci_ * p['kh'] * p['kw'] * rco * tz)
    while ci > 1 and smem(ci) > 46 * 1024:
        ci //= 2
    return ('direct.cu',) + direct_flags(p, (rco, tz, roh, ty, row, 1, tx, ci))


def rule_eval(files):
    res, _ = parse(files)
    for p in rows():
        kf, fl, desc = default_schedule(p)
        d = desc.replace(' ', '_')
        rr = [r for r in res if r['row'] == p['name']]
        okr = [float(r['us']) for r in rr if r['ok'] == '1']
        hit = [r for r in rr if r['sched'] == d]
        best = min(okr) if okr else float('nan')
        print('%-40s %-62s %s best %.2f' % (p['name'], d, ('%.2f (%.3f) %s' % (float(hit[0]['us']), float(hit[0]['us']) / best, hit[0]['ok'])) if hit else 'not swept', best))


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'sweep':
        maxn = int(sys.argv[3]) if len(sys.argv) > 3 else 20
        only = sys.argv[4] if len(sys.argv) > 4 else None
        sweep(sys.argv[2], maxn, only)
    elif cmd == 'fused':
        fused(sys.argv[2], sys.argv[3:])
    elif cmd == 'summary':
        summary(sys.argv[2:])
    elif cmd == 'rule':
        rule_eval(sys.argv[2:])
