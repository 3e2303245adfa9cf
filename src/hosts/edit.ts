// Edits of files people also edit by hand, that keep every byte outside agentstate's own entries: a key in a
// JSON (with comments) file, a marked block in a TOML or Markdown file. Each edit can be undone exactly:
// removing what an edit added gives back the file as it was.
import {
  applyEdits,
  findNodeAtLocation,
  format,
  getNodeValue,
  modify,
  type ParseError,
  parseTree,
} from 'jsonc-parser';
import { InvalidInputError } from '../errors.js';

/** Sets (`value`) or removes (`undefined`) the key at `path` of a JSON file's text; null when nothing changes. */
export function editJson(text: string, path: string[], value: unknown, file: string): string | null {
  const source = text.trim() === '' ? '{}\n' : text;
  const errors: ParseError[] = [];
  const tree = parseTree(source, errors, { allowTrailingComma: true });
  if (!tree || errors.length > 0 || tree.type !== 'object') {
    throw new InvalidInputError(`${file} is not a JSON object: fix it by hand, then run setup again`, {
      field: file,
    });
  }
  const current = findNodeAtLocation(tree, path);
  if (value === undefined) {
    if (!current) return null;
    let out = applyEdits(source, modify(source, path, undefined, {}));
    // A parent this setup made and left empty goes too (a user's empty object stays only if it had more).
    const parent = path.slice(0, -1);
    const p = findNodeAtLocation(parseTree(out)!, parent);
    if (parent.length > 0 && p && p.type === 'object' && (p.children?.length ?? 0) === 0) {
      out = applyEdits(out, modify(out, parent, undefined, {}));
    }
    return out;
  }
  if (current && JSON.stringify(getNodeValue(current)) === JSON.stringify(value)) return null;
  // Inserted as compact text, then only the inserted property formatted: the rest of the file keeps its bytes.
  const inserted = applyEdits(source, modify(source, path, value, {}));
  if (text.trim() === '') {
    // A new file: all of it is ours, formatted whole.
    const whole = applyEdits(inserted, format(inserted, undefined, { insertSpaces: true, tabSize: 2 }));
    return whole.endsWith('\n') ? whole : `${whole}\n`;
  }
  const node = findNodeAtLocation(parseTree(inserted)!, path)?.parent;
  if (!node) return inserted;
  // From the end of the property before it (so the new one starts on a line of its own) to its own end.
  const siblings = node.parent?.children ?? [];
  const before = siblings[siblings.indexOf(node) - 1];
  const offset = before ? before.offset + before.length : node.offset;
  const indent = detectIndent(source);
  const edits = format(inserted, { offset, length: node.offset + node.length - offset }, indent);
  return applyEdits(inserted, edits);
}

function detectIndent(text: string): { insertSpaces: boolean; tabSize: number } {
  const m = /\n([ \t]+)\S/.exec(text);
  if (m?.[1]?.startsWith('\t')) return { insertSpaces: false, tabSize: 1 };
  return { insertSpaces: true, tabSize: m ? Math.min(m[1]!.length, 8) : 2 };
}

/**
 * The block between `begin` and `end` lines, or null: where it begins (`at`), where it ends (`stop`, after
 * its last newline), and where the blank line it was added after begins (`sep`).
 */
function findBlock(
  text: string,
  begin: string,
  end: string,
): { sep: number; at: number; stop: number } | null {
  const at = text.indexOf(begin);
  const close = at < 0 ? -1 : text.indexOf(end, at);
  if (close < 0) return null;
  const stop = close + end.length + (text[close + end.length] === '\n' ? 1 : 0);
  const sep = text.slice(0, at).endsWith('\n\n') ? at - 1 : at;
  return { sep, at, stop };
}

/**
 * Sets (`body`) or removes (`null`) a marked block at the end of a text file: `begin`, the body, `end`, each
 * on lines of their own, after a blank line. Null when nothing changes. Removing it gives the text back as it
 * was (a file that did not end with a newline gets one).
 */
export function editBlock(text: string, begin: string, end: string, body: string | null): string | null {
  const found = findBlock(text, begin, end);
  if (body === null) return found ? text.slice(0, found.sep) + text.slice(found.stop) : null;
  const block = `${begin}\n${body.endsWith('\n') ? body : `${body}\n`}${end}\n`;
  if (found) {
    if (text.slice(found.at, found.stop) === block) return null;
    return text.slice(0, found.at) + block + text.slice(found.stop);
  }
  if (text === '') return block;
  return `${text}${text.endsWith('\n') ? '' : '\n'}\n${block}`;
}

/**
 * Puts `value` into the JSON list at `path` in place of the elements `isOurs` picks (appended when there is
 * none), or with `value` undefined takes those elements out, and the list and its parent object when that
 * leaves them empty. The user's elements, and every byte around them, stay. Null when nothing changes.
 */
export function editJsonList(
  text: string,
  path: string[],
  isOurs: (element: unknown) => boolean,
  value: unknown,
  file: string,
): string | null {
  let source = text.trim() === '' ? '{}\n' : text;
  const tree = parse(source, file);
  const list = findNodeAtLocation(tree, path);
  if (list && list.type !== 'array') {
    throw new InvalidInputError(
      `${file}: ${path.join('.')} is not a list: fix it by hand, then run setup again`,
      {
        field: file,
      },
    );
  }
  const ours = (list?.children ?? []).flatMap((c, i) => (isOurs(getNodeValue(c)) ? [i] : []));
  if (value === undefined) {
    if (ours.length === 0) return null;
    for (const i of ours.reverse()) source = cutElement(source, path, i, file);
    // A list (and a parent object) setup leaves empty goes too.
    for (let depth = path.length; depth > 0; depth--) {
      const node = findNodeAtLocation(parse(source, file), path.slice(0, depth));
      if (!node || (node.children?.length ?? 0) > 0) break;
      source = applyEdits(source, modify(source, path.slice(0, depth), undefined, {}));
    }
    return source;
  }
  const first = ours[0];
  if (first !== undefined && ours.length === 1) {
    if (JSON.stringify(getNodeValue(list!.children![first]!)) === JSON.stringify(value)) return null;
  }
  for (const i of ours.slice(1).reverse()) source = cutElement(source, path, i, file);
  if (first !== undefined) {
    source = applyEdits(source, modify(source, [...path, first], value, {}));
    return formatAt(source, [...path, first], text);
  }
  if (!list) return editJson(text, path, [value], file);
  source = applyEdits(source, modify(source, [...path, -1], value, { isArrayInsertion: true }));
  return formatAt(source, [...path, list.children?.length ?? 0], text);
}

/**
 * The text without element `i` of the list at `path`: from the end of the element before it (its comma and
 * the line break setup added) to its own end, so what follows it, the list's closing line, keeps its bytes.
 */
function cutElement(source: string, path: string[], i: number, file: string): string {
  const list = findNodeAtLocation(parse(source, file), path)!;
  const items = list.children ?? [];
  const node = items[i]!;
  const before = items[i - 1];
  const after = items[i + 1];
  if (before) return source.slice(0, before.offset + before.length) + source.slice(node.offset + node.length);
  if (after) return source.slice(0, node.offset) + source.slice(after.offset);
  return applyEdits(source, modify(source, [...path, i], undefined, {}));
}

function parse(source: string, file: string) {
  const errors: ParseError[] = [];
  const tree = parseTree(source, errors, { allowTrailingComma: true });
  if (!tree || errors.length > 0 || tree.type !== 'object') {
    throw new InvalidInputError(`${file} is not a JSON object: fix it by hand, then run setup again`, {
      field: file,
    });
  }
  return tree;
}

/** Formats the value at `path` of `source` (and the gap before it) in the original text's indentation. */
function formatAt(source: string, path: (string | number)[], original: string): string {
  const node = findNodeAtLocation(parseTree(source)!, path);
  if (!node) return source;
  const siblings = node.parent?.children ?? [];
  const before = siblings[siblings.indexOf(node) - 1];
  const offset = before ? before.offset + before.length : node.offset;
  return applyEdits(
    source,
    format(source, { offset, length: node.offset + node.length - offset }, detectIndent(original)),
  );
}
