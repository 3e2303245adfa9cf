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
