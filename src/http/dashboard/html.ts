// Escaped HTML by construction: `h` escapes every interpolated value unless it is already `Html`, so a
// document body, an event's data or an item's title can never inject markup.

/** Markup that is already safe. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Escapes text for HTML content and quoted attributes. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function part(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(part).join('');
  return esc(String(v));
}

/** A template whose values are escaped (arrays joined, null/undefined/false dropped). */
export function h(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** A URL path with query parameters (empty ones left out). */
export function href(path: string, params: Record<string, string | number | undefined | null> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** JSON shown readably (2-space indent), cut at `max` characters. */
export function pretty(v: unknown, max = 20_000): string {
  const s = JSON.stringify(v, null, 2) ?? 'null';
  return s.length > max ? `${s.slice(0, max)}\n… (${s.length - max} more characters)` : s;
}
