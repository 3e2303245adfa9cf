// The file-safety helpers on their own: confinement to the project root (symlinks resolved), bounded
// reads of regular files only, strict UTF-8, and capped stream reads (issue 10, hole 2).
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeUtf8, readCapped } from '../../src/core/text-input.js';
import { confineToProject } from '../../src/fs/confine.js';
import { readRegularFile } from '../../src/fs/files.js';
import { readViewFile, writeViewFile } from '../../src/views/files.js';
import { tempDir } from '../helpers/tmp.js';

const base = realpathSync(tempDir('agentstate-safe-files-'));
const proj = join(base, 'proj');
const outside = join(base, 'outside');
mkdirSync(join(proj, '.copilot/state'), { recursive: true });
mkdirSync(join(proj, 'inner'), { recursive: true });
mkdirSync(outside, { recursive: true });
writeFileSync(join(outside, 'secret.json'), '{"secret":1}');
writeFileSync(join(proj, 'inner/real.json'), '{"ok":1}');
symlinkSync(outside, join(proj, '.grid'));
symlinkSync(join(outside, 'secret.json'), join(proj, '.copilot/state/leak.json'));
symlinkSync(join(proj, 'inner/real.json'), join(proj, '.copilot/state/inside.json'));
symlinkSync(join(base, 'nowhere'), join(proj, 'dangling'));
symlinkSync(proj, join(base, 'proj-link'));

function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

describe('confineToProject', () => {
  it('accepts paths inside, relative or absolute, existing or not; returns the real path', () => {
    expect(confineToProject(proj, '.copilot/state/x.json')).toBe(join(proj, '.copilot/state/x.json'));
    expect(confineToProject(proj, join(proj, 'a/b/c.json'))).toBe(join(proj, 'a/b/c.json'));
    expect(confineToProject(proj, '.copilot/state/inside.json')).toBe(join(proj, 'inner/real.json'));
    // A project given through a symlink is its real folder.
    expect(confineToProject(join(base, 'proj-link'), 'x.json')).toBe(join(proj, 'x.json'));
  });

  it.each([
    ['../outside/secret.json'],
    ['/etc/passwd'],
    ['.'],
    ['.grid/STATE.md'],
    ['.grid/new/deeper/file.md'],
    ['.copilot/state/leak.json'],
    ['dangling'],
    ['dangling/child'],
  ])('refuses %s with INVALID_INPUT', (p) => {
    expect(code(() => confineToProject(proj, p))).toBe('INVALID_INPUT');
  });
});

describe('readRegularFile and readViewFile', () => {
  it('refuses a FIFO and a device without blocking, and a directory', () => {
    const fifo = join(proj, 'fifo.json');
    spawnSync('mkfifo', [fifo]);
    expect(() => readRegularFile(fifo, 100)).toThrow(/FIFO/);
    expect(() => readRegularFile('/dev/zero', 100)).toThrow(/device/);
    expect(() => readRegularFile(proj, 100)).toThrow(/directory/);
    expect(code(() => readRegularFile(join(proj, 'missing'), 100))).toBe('NOT_FOUND');
  });

  it('never reads more than the limit + 1 bytes, even when the size on disk says 0', () => {
    // /proc files report size 0 but hold text: the cap, not stat, decides.
    expect(() => readRegularFile('/proc/self/status', 10)).toThrow(/larger than the 10 byte limit/);
    expect(readRegularFile('/proc/self/status', 1 << 20).length).toBeGreaterThan(10);
    const exact = join(proj, 'exact.txt');
    writeFileSync(exact, 'x'.repeat(100));
    expect(readRegularFile(exact, 100).length).toBe(100);
    expect(() => readRegularFile(exact, 99)).toThrow(/larger/);
  });

  it('noFollow refuses a final symlink; readViewFile with a root refuses one that leads out', () => {
    expect(() => readRegularFile(join(proj, '.copilot/state/inside.json'), 100, { noFollow: true })).toThrow(
      /symlink/,
    );
    expect(readViewFile(join(proj, '.copilot/state/inside.json'), proj)).toBe('{"ok":1}');
    expect(() => readViewFile(join(proj, '.copilot/state/leak.json'), proj)).toThrow(/outside the project/);
  });

  it('refuses invalid UTF-8 and NUL; keeps a BOM and a real U+FFFD', () => {
    const f = join(proj, 'text.json');
    writeFileSync(f, Buffer.from([0x7b, 0xc3, 0x28, 0x7d]));
    expect(() => readViewFile(f, proj)).toThrow(/not valid UTF-8/);
    writeFileSync(f, Buffer.from([0x7b, 0xed, 0xa0, 0x80, 0x7d])); // an encoded surrogate
    expect(() => readViewFile(f, proj)).toThrow(/not valid UTF-8/);
    writeFileSync(f, Buffer.from('{\u0000}'));
    expect(() => readViewFile(f, proj)).toThrow(/binary/);
    writeFileSync(f, '\uFEFF{"a":"\uFFFD"}');
    expect(readViewFile(f, proj)).toBe('\uFEFF{"a":"\uFFFD"}');
  });

  it('writeViewFile refuses targets outside the project and a directory in the way', () => {
    expect(code(() => writeViewFile(proj, '.grid/STATE.md', 'x'))).toBe('INVALID_INPUT');
    expect(code(() => writeViewFile(proj, '../outside/new.json', 'x'))).toBe('INVALID_INPUT');
    expect(code(() => writeViewFile(proj, 'inner', 'x'))).toBe('INVALID_INPUT');
    writeViewFile(proj, 'inner/deep/new.json', 'hello');
    expect(readViewFile(join(proj, 'inner/deep/new.json'), proj)).toBe('hello');
  });
});

describe('decodeUtf8 and readCapped', () => {
  it('decodeUtf8 is fatal on invalid bytes and names the field', () => {
    expect(decodeUtf8(Buffer.from('é \uFFFD'), 'x')).toBe('é \uFFFD');
    let err: { code?: string; details?: Record<string, unknown> } = {};
    try {
      decodeUtf8(Buffer.from([0xff]), 'body (stdin)', 'body');
    } catch (e) {
      err = e as typeof err;
    }
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'body' } });
  });

  it('readCapped stops an endless stream at the cap', async () => {
    const stream = createReadStream('/dev/zero');
    await expect(readCapped(stream, 'zero', { maxBytes: 1 << 20, field: 'body' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'body', limit: 1 << 20 },
    });
    expect(stream.destroyed).toBe(true);
    async function* chunks() {
      yield Buffer.from('ab');
      yield 'cd';
    }
    expect((await readCapped(chunks(), 'x', { maxBytes: 4 })).toString()).toBe('abcd');
    await expect(readCapped(chunks(), 'x', { maxBytes: 3 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
