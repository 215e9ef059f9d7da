#!/usr/bin/env python3
"""Build plan for prototypes/dense_winograd_tf32: Winograd F(2x2,3x3) rows and 1x1 GEMM v2 rows (+ ragged tests).

  gen2.py BUILD      writes BUILD/Makefile, BUILD/<row>/table.cpp, BUILD/rows.txt
  gen2.py summary RESULTS.txt [SPILLS]   best per row vs cuDNN
"""
import os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
NVCC = 'nvcc -arch=sm_90 -O3 -std=c++17'


def row(name, n, c, co, h, w, k, pad, epi, act, test=False):
    if isinstance(pad, int):
        pad = (pad, pad, pad, pad)
    pt, pb, pl, pr = pad
    return dict(name=name, n=n, c=c, co=co, h=h, w=w, kh=k, kw=k, sh=1, sw=1, pt=pt, pb=pb, pl=pl, pr=pr,
                dh=1, dw=1, epi=epi, act=act, test=test)


# epi: 0 none, 1 bias, 2 scale_shift; act: 0 none, 1 relu, 2 relu6
WINO_ROWS = [
    row('14_resnet_c64_64_56', 32, 64, 64, 56, 56, 3, 1, 2, 1),
    row('15_resnet_c128_128_28', 32, 128, 128, 28, 28, 3, 1, 2, 1),
    row('16_resnet_c256_256_14', 32, 256, 256, 14, 14, 3, 1, 2, 1),
    row('17_resnet_c512_512_7', 32, 512, 512, 7, 7, 3, 1, 2, 1),
    row('03_seed002_c128_64', 1, 128, 128, 64, 64, 3, 1, 0, 0),
    row('04_seed002_c256_64', 1, 256, 256, 64, 64, 3, 1, 0, 0),
    row('t1_wino_c13_21_19x23_same', 2, 13, 21, 19, 23, 3, 1, 2, 1, True),
    row('t2_wino_c10_19_17x30_valid', 3, 10, 19, 17, 30, 3, 0, 1, 2, True),
    row('t3_wino_c7_37_9x8_asym', 2, 7, 37, 9, 8, 3, (1, 0, 2, 1), 2, 0, True),
    row('t4_wino_c33_50_7x7_same', 3, 33, 50, 7, 7, 3, 1, 0, 1, True),
]
GEMM_ROWS = [
    row('10_mnv2_c384_64_14', 64, 384, 64, 14, 14, 1, 0, 2, 0),
    row('11_mnv2_c96_576_14', 64, 96, 576, 14, 14, 1, 0, 2, 2),
    row('12_mnv2_c960_160_7', 64, 960, 160, 7, 7, 1, 0, 2, 0),
    row('13_mnv2_c320_1280_7', 64, 320, 1280, 7, 7, 1, 0, 2, 2),
    row('t5_gemm_c13_22_7x9', 3, 13, 22, 7, 9, 1, 0, 2, 2, True),
    row('t6_gemm_c20_37_10x10', 2, 20, 37, 10, 10, 1, 0, 1, 0, True),
    row('t7_gemm_c70_150_16x16', 2, 70, 150, 16, 16, 1, 0, 2, 1, True),
]

# The FMA Winograd (winograd.cu) became convgen's winograd algorithm; its
# variants are gone from this plan (git show 2510dd3:prototypes/dense_winograd_tf32).
# 3xTF32 tensor-core Winograd (winograd_tc.cu): (BM, BN, BK, WARPS, MIN_BLOCKS)
WINO_TC = [(32, 32, 8, 16, 1), (32, 32, 8, 8, 1), (64, 32, 8, 8, 1), (32, 16, 8, 8, 2), (16, 32, 8, 8, 2)]
# (BM, BN, BK, VM, VN, MIN_BLOCKS); x SPLITK
# run 1 also had 128x128 (mb 1, 2), 64x128 and 128x64 (8x8 per thread), split 4: never best, dropped.
GEMM_TILES = [(64, 64, 16, 2, 1, 3), (32, 128, 16, 1, 2, 3), (128, 128, 8, 2, 2, 2), (64, 128, 16, 2, 2, 2)]
GEMM_SPLIT = [1, 2]
# 3xTF32 tensor-core GEMM: (BM, BN, BK, WM, WN, MIN_BLOCKS, SPLITK)
TC_SCHED = [(64, 128, 16, 2, 2, 2, 1), (64, 128, 16, 2, 2, 2, 2), (128, 128, 16, 2, 4, 1, 1), (128, 128, 16, 2, 4, 1, 2),
            (64, 64, 16, 2, 2, 3, 1), (64, 64, 16, 2, 2, 3, 2), (32, 128, 16, 1, 4, 2, 1), (32, 128, 16, 1, 4, 2, 2),
            (64, 128, 32, 2, 2, 2, 1)]
# previous prototype's best schedule per row (run 2), timed in the same run
OLD_BEST = {'10': (16, 64, 16, 1, 1), '11': (32, 128, 8, 2, 2), '12': (32, 128, 16, 2, 1), '13': (64, 64, 16, 2, 1)}


def probflags(p, epi, res, act):
    return ('-DCG_C=%d -DCG_C_OUT=%d -DCG_H=%d -DCG_W=%d -DCG_PT=%d -DCG_PB=%d -DCG_PL=%d -DCG_PR=%d '
            '-DCG_EPI=%d -DCG_RES=%d -DCG_ACT=%d' % (p['c'], p['co'], p['h'], p['w'], p['pt'], p['pb'], p['pl'],
                                                   p['pr'], epi, res, act))


def plan():
    out = []
    for p in WINO_ROWS:
        vs = []
        for i, s in enumerate(WINO_TC):
            fl = '-DCG_BM=%d -DCG_BN=%d -DCG_BK=%d -DCG_WARPS=%d -DCG_MIN_BLOCKS=%d' % s
            vs.append(('x%s_%d' % (p['name'][:2], i), 'winograd_tc.cu', fl, 'wtc3_bm%d_bn%d_bk%d_w%d_mb%d' % s,
                       p['epi'], 0, p['act']))
        vs.append(('x%s_f' % p['name'][:2], 'winograd_tc.cu', vs[-5][2] + ' -DCG_FILTER_ONCE', 'once_' + vs[-5][3],
                   p['epi'], 0, p['act']))
        vs.append(('x%s_r' % p['name'][:2], 'winograd_tc.cu', vs[-6][2], vs[-6][3] + '_res', p['epi'], 1, p['act']))
        out.append((p, vs))
    for p in GEMM_ROWS:
        vs = []
        i = 0
        for t in GEMM_TILES:
            for sk in GEMM_SPLIT:
                bm, bn, bk, vm, vn, mb = t
                ksteps = -(-p['c'] // bk)
                if sk > 1 and ksteps < 2 * sk:
                    continue
                fl = '-DCG_BM=%d -DCG_BN=%d -DCG_BK=%d -DCG_VM=%d -DCG_VN=%d -DCG_MIN_BLOCKS=%d -DCG_SPLITK=%d' % (t + (sk,))
                desc = 'g2_bm%d_bn%d_bk%d_vm%d_vn%d_mb%d_sk%d' % (t + (sk,))
                vs.append(('g%s_%d' % (p['name'][:2], i), 'gemm1x1v2.cu', fl, desc, p['epi'], 0, p['act']))
                i += 1
        vs.append(('g%s_r' % p['name'][:2], 'gemm1x1v2.cu', vs[-1][2], vs[-1][3] + '_res', p['epi'], 1, p['act']))
        for j, s in enumerate(TC_SCHED):
            ksteps = -(-p['c'] // s[2])
            if s[6] > 1 and ksteps < 2 * s[6]:
                continue
            fl = '-DCG_BM=%d -DCG_BN=%d -DCG_BK=%d -DCG_WM=%d -DCG_WN=%d -DCG_MIN_BLOCKS=%d -DCG_SPLITK=%d' % s
            vs.append(('t%s_%d' % (p['name'][:2], j), 'gemm1x1tc.cu', fl, 'tc3_bm%d_bn%d_bk%d_wm%d_wn%d_mb%d_sk%d' % s,
                       p['epi'], 0, p['act']))
        vs.append(('t%s_r' % p['name'][:2], 'gemm1x1tc.cu', vs[-1][2], vs[-1][3] + '_res', p['epi'], 1, p['act']))
        old = OLD_BEST.get(p['name'][:2])
        if old:
            vs.append(('g%s_old' % p['name'][:2], 'gemm1x1_v1.cu', '-DCG_BM=%d -DCG_BN=%d -DCG_BK=%d -DCG_VM=%d -DCG_VN=%d' % old,
                       'old_gemm_bm%d_bn%d_bk%d_vm%d_vn%d' % old, p['epi'], 0, p['act']))
        out.append((p, vs))
    return out


def write(build):
    os.makedirs(build, exist_ok=True)
    pl = plan()
    mk = ['NVCC=%s' % NVCC, 'INC=-I/usr/include/x86_64-linux-gnu',
          'all: ' + ' '.join('%s/bench' % p['name'] for p, _ in pl), '',
          'bench.o: %s/bench.cu\n\t$(NVCC) $(INC) -c $< -o $@' % HERE, '']
    lines = []
    for p, vs in pl:
        d = os.path.join(build, p['name'])
        os.makedirs(d, exist_ok=True)
        tab = ['#include <cuda_runtime.h>',
               'typedef cudaError_t (*LaunchFn)(const float*, const float*, const float*, const float*, const float*, float*, int, cudaStream_t);',
               'struct Variant { const char* name; const char* schedule; int epi, res, act; LaunchFn fn; };']
        ents, objs = [], []
        for vname, kf, sfl, desc, epi, res, act in vs:
            o = '%s/%s.o' % (p['name'], vname)
            objs.append(o)
            mk.append('%s: %s/%s\n\t$(NVCC) -c $< -o $@ -DCG_NAME=%s %s %s -Xptxas -v > %s/%s.ptxas 2>&1 || (cat %s/%s.ptxas; false)' % (
                o, HERE, kf, vname, probflags(p, epi, res, act), sfl, p['name'], vname, p['name'], vname))
            tab.append('cudaError_t launch_%s(const float*, const float*, const float*, const float*, const float*, float*, int, cudaStream_t);' % vname)
            ents.append('  {"%s", "%s", %d, %d, %d, launch_%s},' % (vname, desc, epi, res, act, vname))
        tab.append('Variant g_variants[] = {\n%s\n};' % '\n'.join(ents))
        tab.append('int g_num_variants = %d;' % len(ents))
        open(os.path.join(d, 'table.cpp'), 'w').write('\n'.join(tab) + '\n')
        mk.append('%s/bench: bench.o %s/table.cpp %s\n\t$(NVCC) -o $@ bench.o %s/table.cpp %s -lcudnn' % (
            p['name'], p['name'], ' '.join(objs), p['name'], ' '.join(objs)))
        env = 'NO_CUDNN=1 ' if p['test'] else ''
        env += 'TOL=1e-4 ' if p['kh'] == 3 else 'TOL=1e-5 '
        lines.append("env %s%s/bench %s %s" % (env, p['name'], p['name'], ' '.join(str(p[k]) for k in (
            'n', 'c', 'co', 'h', 'w', 'kh', 'kw', 'sh', 'sw', 'pt', 'pb', 'pl', 'pr', 'dh', 'dw'))))
    open(os.path.join(build, 'Makefile'), 'w').write('\n'.join(mk) + '\n')
    open(os.path.join(build, 'rows.txt'), 'w').write('\n'.join(lines) + '\n')


def summary(fn, spills=None):
    bad = set()
    if spills and os.path.exists(spills):
        for ln in open(spills):
            m = re.search(r'/([^/]+)\.ptxas', ln)
            if m:
                bad.add(m.group(1))
    print('spilling variants (excluded): %s' % ' '.join(sorted(bad)))
    best, cud, fails, allr = {}, {}, [], {}
    for ln in open(fn):
        kv = dict(x.split('=', 1) for x in ln.split()[1:] if '=' in x)
        if ln.startswith('RESULT'):
            r = kv['row']
            allr.setdefault(r, []).append(kv)
            if kv['ok'] != '1':
                fails.append(ln.strip())
                continue
            if kv['res'] == '1' or kv['sched'].startswith('old') or kv['sched'].startswith('once') or kv['variant'] in bad:
                continue
            if r not in best or float(kv['us']) < float(best[r]['us']):
                best[r] = kv
        elif ln.startswith('CUDNN ') and kv['ok'] == '1':
            r = kv['row']
            if r not in cud or float(kv['us']) < float(cud[r][0]):
                cud[r] = (kv['us'], kv['algo'])
    print('%-30s %9s %9s %6s %9s %8s  %s' % ('row', 'best_us', 'cudnn_us', 'ratio', 'maxrel', 'old/once', 'schedule'))
    for r in sorted(allr):
        b = best.get(r)
        old = [kv['us'] for kv in allr[r] if kv['sched'].startswith('old') and kv['ok'] == '1']
        once = sorted((float(kv['us']), kv['sched']) for kv in allr[r] if kv['sched'].startswith('once') and kv['ok'] == '1')
        if once:
            old = ['%.3f' % once[0][0]]
        mr = max(float(kv['maxrel']) for kv in allr[r] if kv['ok'] == '1') if b else float('nan')
        c = cud.get(r, ('nan', '-'))
        print('%-30s %9s %9s %6.2f %9.2e %8s  %s [cudnn algo %s]' % (
            r, b['us'] if b else '-', c[0], float(b['us']) / float(c[0]) if b and c[0] != 'nan' else float('nan'),
            mr, old[0] if old else '-', b['sched'] if b else 'NONE', c[1]))
    print('best per family (fmaV2=g2_, tc=tc3_, old=old_, wino=wino_, once=once_):')
    for r in sorted(allr):
        fam = {}
        for kv in allr[r]:
            if kv['ok'] != '1' or kv['res'] == '1' or kv['variant'] in bad:
                continue
            f = kv['sched'].split('_')[0]
            if f not in fam or float(kv['us']) < float(fam[f][0]):
                fam[f] = (kv['us'], kv['sched'], kv['maxrel'])
        print('  %-28s %s' % (r, '  '.join('%s=%s(%s)' % (f, v[0], v[2]) for f, v in sorted(fam.items()))))
    print('failures: %d' % len(fails))
    for f in fails[:20]:
        print(f)


if __name__ == '__main__':
    if sys.argv[1] == 'summary':
        summary(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        write(sys.argv[1])
