// What every state file's text must be before it is parsed: text, within the kind's size limit, and not
// binary (no control characters but tab, LF and CR). The three file views (STATE.md, .aios YAML, .copilot
// JSON) share these checks and the line/column they report.

/** The 1-based line and column of `index` in `text`. */
export function lineColumn(text: string, index: number): { line: number; column: number } {
  const before = text.slice(0, index);
  const line = (before.match(/\n/g)?.length ?? 0) + 1;
  return { line, column: index - before.lastIndexOf('\n') };
}

/**
 * The first control character that marks `text` as binary (C0 but tab, LF and CR; DEL), with its place,
 * or null. U+FFFD is a legal character: invalid UTF-8 is refused where bytes become text (readViewFile).
 */
export function binaryAt(text: string): { code: number; line: number; column: number } | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: binary detection is the point
  const m = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/.exec(text);
  return m ? { code: m[0].charCodeAt(0), ...lineColumn(text, m.index) } : null;
}

/**
 * Why `text` cannot be a state file of `maxBytes` at most (`what` names it in the message, e.g. "a YAML
 * state file"), or null when it can.
 */
export function fileTextProblem(
  text: unknown,
  maxBytes: number,
  what: string,
): { message: string; details: Record<string, unknown> } | null {
  if (typeof text !== 'string') return { message: 'expected text', details: {} };
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) {
    return { message: `${bytes} bytes is larger than the ${maxBytes} byte limit`, details: { bytes } };
  }
  const bin = binaryAt(text);
  if (!bin) return null;
  const { line, column } = bin;
  return {
    message: `line ${line}, column ${column}: control character U+${bin.code.toString(16).padStart(4, '0')}: this is binary data, not ${what}`,
    details: { line, column },
  };
}
