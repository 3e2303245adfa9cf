// The docs runner itself (test/docs/runnable.ts): the marker, console steps, and a matcher that can fail —
// ids and hashes bound once per file, times matched by shape, `…` as the only wildcard.
import { describe, expect, it } from 'vitest';
import { fencedBlocks, matchOutput, steps, substitute } from './runnable.js';

const ID = 'wi_01M8NDBG01EDWDNCF8Z7VG9VMM';
const REAL = 'wi_01KBEX5X8Q0H7M9VZT3R6W2YJN';
const OTHER = 'wi_01KBEX5X8Q0H7M9VZT3R6W2YJP';

describe('fenced blocks', () => {
  it('reads the language, the runnable and output words, and the line of the fence', () => {
    const md = [
      'text',
      '```console runnable',
      '$ agentstate list',
      'no items',
      '```',
      '```js',
      'x()',
      '```',
      '```text output',
      '1',
      '```',
    ].join('\n');
    expect(fencedBlocks(md)).toEqual([
      { lang: 'console', runnable: true, output: false, line: 2, code: '$ agentstate list\nno items' },
      { lang: 'js', runnable: false, output: false, line: 6, code: 'x()' },
      { lang: 'text', runnable: false, output: true, line: 9, code: '1' },
    ]);
  });

  it('splits a console block into commands (with continued lines) and their shown output', () => {
    const [block] = fencedBlocks(
      '```console runnable\n$ a \\\n    --flag\nout 1\nout 2\n\n$ b; echo $?\n3\n```\n',
    );
    expect(steps(block!)).toEqual([
      { command: 'a \\\n    --flag', expected: ['out 1', 'out 2'], line: 2 },
      { command: 'b; echo $?', expected: ['3'], line: 7 },
    ]);
    const [commented] = fencedBlocks('```console runnable\n$ a\nout\n\n# then b\n$ b\n```\n');
    expect(steps(commented!).map((s) => s.expected)).toEqual([['out'], []]);
  });
});

describe('matching what a command printed', () => {
  it('binds an id the first time, then holds the doc to it', () => {
    const b = matchOutput([`${ID}  pending`], [`${REAL}  pending`], new Map());
    expect(b?.get(ID)).toBe(REAL);
    expect(substitute(`agentstate get ${ID}`, b!)).toBe(`agentstate get ${REAL}`);
    expect(matchOutput([`${ID}  done`], [`${REAL}  done`], b!)).not.toBeNull();
    expect(matchOutput([`${ID}  done`], [`${OTHER}  done`], b!)).toBeNull();
  });

  it('fails on any other difference, an extra line or a missing one', () => {
    expect(matchOutput(['no items'], ['nothing ready'], new Map())).toBeNull();
    expect(matchOutput(['a'], ['a', 'b'], new Map())).toBeNull();
    expect(matchOutput(['a', 'b'], ['a'], new Map())).toBeNull();
    expect(matchOutput(['exit 3'], ['exit 2'], new Map())).toBeNull();
  });

  it('matches times by shape, and … within a line or as whole lines', () => {
    expect(
      matchOutput(
        ['#1  2026-11-30T05:03:20.937Z  note  …', '…', 'last'],
        ['#1  2031-01-02T03:04:05.678Z  note  instance#1 by x', 'one', 'two', 'last'],
        new Map(),
      ),
    ).not.toBeNull();
    expect(matchOutput(['#1  2026-11-30T05:03:20.937Z'], ['#1  yesterday'], new Map())).toBeNull();
    expect(matchOutput(['…', 'x'], ['x'], new Map())).not.toBeNull();
  });
});
