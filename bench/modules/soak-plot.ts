/**
 * The soak's plots: each series drawn as a small SVG line chart, rasterised to PNG by headless
 * Chromium (playwright-core driving /usr/bin/chromium, or $CHROMIUM).
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { SoakSample } from './soak.js';

type Series = { label: string; values: number[] };

const W = 640;
const H = 280;
const PAD = { l: 70, r: 20, t: 48, b: 40 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf'];

const esc = (s: string) => s.replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]!);

/** One chart: minutes on x, the series on a shared y from 0. */
export function chartSvg(title: string, minutes: number[], series: Series[]): string {
  const maxX = Math.max(1, ...minutes);
  const maxY = Math.max(1, ...series.flatMap((s) => s.values)) * 1.1;
  const x = (m: number) => PAD.l + (m / maxX) * (W - PAD.l - PAD.r);
  const y = (v: number) => H - PAD.b - (v / maxY) * (H - PAD.t - PAD.b);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * maxY);
  const fmt = (v: number) => (v >= 100 ? Math.round(v).toString() : v.toFixed(1));
  const lines = series.map((s, i) => {
    const pts = s.values.map((v, j) => `${x(minutes[j]).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const c = COLOURS[i % COLOURS.length];
    return (
      `<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts}"/>` +
      `<text x="${PAD.l + 8 + i * 130}" y="${PAD.t - 12}" fill="${c}" font-size="12">${esc(s.label)}</text>`
    );
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="16" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`,
    ...ticks.map(
      (t) =>
        `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${y(t)}" y2="${y(t)}" stroke="#ddd"/>` +
        `<text x="${PAD.l - 6}" y="${y(t) + 4}" text-anchor="end" font-size="11">${fmt(t)}</text>`,
    ),
    `<line x1="${PAD.l}" x2="${PAD.l}" y1="${PAD.t}" y2="${H - PAD.b}" stroke="#333"/>`,
    `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${H - PAD.b}" y2="${H - PAD.b}" stroke="#333"/>`,
    `<text x="${W / 2}" y="${H - 8}" text-anchor="middle" font-size="12">minutes</text>`,
    `<text x="${W - PAD.r}" y="${H - PAD.b + 16}" text-anchor="end" font-size="11">${fmt(maxX)}</text>`,
    ...lines,
    '</svg>',
  ].join('\n');
}

/** The charts of a soak, as [file stem, svg]. */
export function soakCharts(samples: SoakSample[]): [string, string][] {
  const m = samples.map((s) => s.minute);
  const kinds = [...new Set(samples.flatMap((s) => Object.keys(s.rows)))].filter((k) =>
    ['Event', 'Notification', 'AgentSession', 'Evaluation', 'Decision'].includes(k),
  );
  const col = (f: (s: SoakSample) => number) => samples.map(f);
  return [
    [
      'memory',
      chartSvg('Controller memory (MB)', m, [
        { label: 'RSS', values: col((s) => s.rssMB) },
        { label: 'V8 heap used', values: col((s) => s.heapUsedMB) },
      ]),
    ],
    [
      'store',
      chartSvg('Store (MB) and change-log rows (thousands)', m, [
        { label: 'state.db + WAL MB', values: col((s) => s.storeBytes / 2 ** 20) },
        { label: 'change rows (k)', values: col((s) => s.changeRows / 1000) },
        { label: 'event logs MB', values: col((s) => s.eventLogBytes / 2 ** 20) },
      ]),
    ],
    [
      'rows',
      chartSvg(
        'Store rows per kind',
        m,
        kinds.map((k) => ({ label: k, values: col((s) => s.rows[k] ?? 0) })),
      ),
    ],
    [
      'process',
      chartSvg('Open fds, tmux sessions, run dirs (÷10), queue depth', m, [
        { label: 'fds', values: col((s) => s.fds) },
        { label: 'tmux sessions', values: col((s) => s.tmuxSessions) },
        { label: 'run dirs ÷10', values: col((s) => s.runDirs / 10) },
        { label: 'queue depth', values: col((s) => s.queueDepth) },
      ]),
    ],
  ];
}

/** Writes docs/img/soak-<chart>.png for each chart; returns the files. */
export async function renderSoakPlots(samples: SoakSample[], outDir: string): Promise<string[]> {
  fs.mkdirSync(outDir, { recursive: true });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium' });
  const files: string[] = [];
  try {
    const page = await browser.newPage({ viewport: { width: W, height: H } });
    for (const [stem, svg] of soakCharts(samples)) {
      await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
      const file = path.join(outDir, `soak-${stem}.png`);
      await page.screenshot({ path: file, clip: { x: 0, y: 0, width: W, height: H } });
      files.push(file);
    }
  } finally {
    await browser.close();
  }
  return files;
}
