// The overview's charts of the queue over time (queue_history): items finished per span (done and failed,
// stacked) and unfinished items at each span's end. Server-rendered SVG, no script or external asset, each a
// figure with a caption, a text alternative and its numbers in a table for whoever cannot see it.
import type { QueueHistory } from '../../core/types.js';
import { span } from './common.js';
import { type Html, h } from './html.js';

const W = 480;
const H = 130;
const LEFT = 34;
const BOTTOM = 16;
const TOP = 6;

type Bucket = QueueHistory['buckets'][number];

/** `v` to a tenth of a unit: enough for an SVG coordinate, and short. */
const tenth = (v: number) => Math.round(v * 10) / 10;

/** The y of `v` on a chart whose top is `max`. */
const y = (v: number, max: number) => tenth(TOP + (H - TOP - BOTTOM) * (1 - v / max));

/** A round top for the y axis: 1, 2 or 5 times a power of ten, at least `v`. */
function niceMax(v: number): number {
  if (v <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].find((m) => m * p >= v) ?? 10) * p;
}

/** The axes: the top value and 0 on the left, the window's start and "now" below. */
function axes(hist: QueueHistory, max: number): Html {
  const base = H - BOTTOM;
  const ago = span(hist.bucket_ms * hist.buckets.length);
  return h`<line class="axis" x1="${LEFT}" y1="${base}" x2="${W}" y2="${base}"></line><line class="grid" x1="${LEFT}" y1="${TOP}" x2="${W}" y2="${TOP}"></line>
<text x="${LEFT - 4}" y="${TOP + 4}" text-anchor="end">${max}</text><text x="${LEFT - 4}" y="${base}" text-anchor="end">0</text>
<text x="${LEFT}" y="${H - 3}">${ago} ago</text><text x="${W}" y="${H - 3}" text-anchor="end">now</text>`;
}

/** The figure around a chart: caption, the SVG, and its numbers (the spans with anything in them). */
function figure(
  id: string,
  caption: string,
  label: string,
  svg: Html,
  h0: QueueHistory,
  cols: Array<[keyof Bucket, string]>,
): Html {
  const rows = h0.buckets.filter((b) => cols.some(([k]) => k !== 'start' && b[k] !== 0));
  return h`<figure class="chart" aria-labelledby="${id}"><figcaption id="${id}">${caption}</figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${label}">${svg}</svg>
<details><summary>Numbers</summary>${
    rows.length === 0
      ? h`<p class="muted">Nothing in this window.</p>`
      : h`<div class="wrap"><table><thead><tr><th>From</th>${cols.map(([, l]) => h`<th class="num">${l}</th>`)}</tr></thead><tbody>${rows.map(
          (b) =>
            h`<tr><td><time datetime="${b.start}">${b.start.replace('T', ' ').replace(/:\d\d\.\d+Z$/, 'Z')}</time></td>${cols.map(([k]) => h`<td class="num">${b[k]}</td>`)}</tr>`,
        )}</tbody></table></div>`
  }</details></figure>`;
}

/** Items that ended per span: done (below) and failed (stacked on top). */
export function throughputChart(hist: QueueHistory): Html {
  const n = hist.buckets.length;
  const busiest = Math.max(...hist.buckets.map((b) => b.done + b.failed));
  const max = niceMax(busiest);
  const bw = (W - LEFT) / n;
  const bars = hist.buckets.map((b, i) => {
    const x = tenth(LEFT + i * bw + 0.5);
    const w = Math.max(1, tenth(bw - 1));
    const yd = y(b.done, max);
    const yf = y(b.done + b.failed, max);
    return h`${b.done > 0 ? h`<rect class="o-done" x="${x}" y="${yd}" width="${w}" height="${tenth(H - BOTTOM - yd)}"></rect>` : ''}${b.failed > 0 ? h`<rect class="o-failed" x="${x}" y="${yf}" width="${w}" height="${tenth(yd - yf)}"></rect>` : ''}`;
  });
  const done = hist.buckets.reduce((s, b) => s + b.done, 0);
  const failed = hist.buckets.reduce((s, b) => s + b.failed, 0);
  const window = span(hist.bucket_ms * n);
  return figure(
    'chart-throughput',
    `Finished per ${span(hist.bucket_ms)}: ${done} done, ${failed} failed in the last ${window}`,
    `Bar chart of items finished per ${span(hist.bucket_ms)} over the last ${window}: ${done} done (green), ${failed} failed (red); the busiest span finished ${busiest}.`,
    h`${axes(hist, max)}${bars}`,
    hist,
    [
      ['done', 'Done'],
      ['failed', 'Failed'],
    ],
  );
}

/** Unfinished items (pending, in flight, waiting for a person) at the end of each span. */
export function depthChart(hist: QueueHistory): Html {
  const n = hist.buckets.length;
  const peak = Math.max(...hist.buckets.map((b) => b.open));
  const max = niceMax(peak);
  const bw = (W - LEFT) / n;
  const pts = hist.buckets.map((b, i) => `${tenth(LEFT + (i + 1) * bw)},${y(b.open, max)}`);
  const base = H - BOTTOM;
  const area = `${LEFT},${base} ${LEFT},${y(hist.buckets[0]!.open, max)} ${pts.join(' ')} ${W},${base}`;
  const window = span(hist.bucket_ms * n);
  return figure(
    'chart-depth',
    `Unfinished items: ${hist.open} now, at most ${peak} in the last ${window}`,
    `Area chart of unfinished items over the last ${window}: ${hist.open} now, at most ${peak}, ${hist.buckets[0]!.open} at the start.`,
    h`${axes(hist, max)}<polygon class="depth" points="${area}"></polygon><polyline class="depth-line" points="${pts.join(' ')}"></polyline>`,
    hist,
    [
      ['created', 'Created'],
      ['open', 'Unfinished at end'],
    ],
  );
}
