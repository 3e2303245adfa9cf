// Small Markdown helpers shared by the dashboard and the retro.

/** Escapes a value for a Markdown table cell (pipes, newlines) and shortens it. */
export function cell(value: unknown, max = 80): string {
  const s =
    value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  const flat = s.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function table(headers: string[], rows: unknown[][]): string {
  if (rows.length === 0) return '_none_\n';
  const head = `| ${headers.join(' | ')} |\n| ${headers.map(() => '---').join(' | ')} |\n`;
  return `${head + rows.map((r) => `| ${r.map((c) => cell(c)).join(' | ')} |`).join('\n')}\n`;
}

/** A duration in ms as `850ms`, `12s`, `4m 10s`, `3h 5m`, `2d 4h`. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  const neg = ms < 0 ? '-' : '';
  let v = Math.abs(ms);
  if (v < 1000) return `${neg}${Math.round(v)}ms`;
  if (v < 10_000) return `${neg}${(v / 1000).toFixed(1)}s`;
  v = Math.round(v / 1000);
  if (v < 60) return `${neg}${v}s`;
  const m = Math.floor(v / 60);
  if (m < 60) return `${neg}${m}m ${v % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${neg}${h}h ${m % 60}m`;
  return `${neg}${Math.floor(h / 24)}d ${h % 24}h`;
}
