// The `.grid/STATE.md` codec of kind `grid-mission`: the seed's own example round-trips, the Markdown body
// is generated as in the seed (§6) or kept when supplied, comments and key order survive a re-render, the
// stamp is written and read back, and malformed files are refused with INVALID_INPUT naming the line.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FileStamp, ViewContext } from '../../src/core/kind.js';
import type { JsonObject } from '../../src/core/types.js';
import { isAgentStateError } from '../../src/errors.js';
import {
  GRID_DOC_ID,
  GRID_STATE_PATH,
  MAX_STATE_FILE_BYTES,
  markdownHash,
  progressBar,
} from '../../src/kinds/grid-mission/file.js';
import { gridMissionKind } from '../../src/kinds/grid-mission/kind.js';
import { validateSchema } from '../../src/kinds/registry.js';
import { clone, example, makeCtx, refusal } from './ctx.js';

const file = gridMissionKind.file!;
const SEED_TEXT = readFileSync(new URL('./examples/grid/seed-STATE.md.txt', import.meta.url), 'utf8');
const SEED_FRONTMATTER = SEED_TEXT.slice(0, SEED_TEXT.indexOf('\n---\n') + 5);
const SEED_MARKDOWN = SEED_TEXT.slice(SEED_FRONTMATTER.length + 1);
const seedBody = () => example('grid/seed');
const stamp = (version = 1): FileStamp => ({ kind: 'grid-mission', id: GRID_DOC_ID, version });
const view: ViewContext = { now: Date.parse('2026-01-24T16:46:00Z'), recentEvents: [] };

/** The text without its stamp line (line 2). */
const unstamped = (text: string) =>
  text
    .split('\n')
    .filter((_l, i) => i !== 1)
    .join('\n');

async function parseError(text: string) {
  const err = await refusal(() => file.parse(text));
  expect(err.code).toBe('INVALID_INPUT');
  return err;
}

describe("the seed's example STATE.md (§6)", () => {
  it('parses: frontmatter as the body, its Markdown kept as markdown_body, no stamp', () => {
    const { body, stamp: s } = file.parse(SEED_TEXT);
    expect(s).toBeNull();
    expect(SEED_MARKDOWN.startsWith('# THE GRID - Mission State\n')).toBe(true);
    expect(body).toEqual({ ...seedBody(), markdown_body: SEED_MARKDOWN });
  });

  it('validates clean (schema and check, as MC)', async () => {
    const { body } = file.parse(SEED_TEXT);
    validateSchema(gridMissionKind, body);
    const next = clone(body);
    const ctx = makeCtx({
      kind: 'grid-mission',
      id: 'mission',
      actor_kind: 'human',
      now: Date.parse('2026-01-24T16:45:32Z'),
    });
    await gridMissionKind.check!(next, null, ctx);
    expect(next).toEqual(body);
  });

  it('renders and re-parses to the same body; a second render is identical text', () => {
    const { body } = file.parse(SEED_TEXT);
    const first = file.render(body, stamp(), view);
    const again = file.parse(first);
    expect(again.body).toEqual(body);
    expect(again.stamp).toEqual(stamp());
    expect(file.render(again.body, stamp(), view)).toBe(first);
    expect(file.render(again.body, stamp(), view, first)).toBe(first);
  });

  it('re-rendered over itself, it is the seed text plus the stamp line: every comment, quote and blank line kept', () => {
    const { body } = file.parse(SEED_TEXT);
    const out = file.render(body, stamp(3), view, SEED_TEXT);
    expect(out.split('\n')[1]).toBe('# agentstate: kind=grid-mission id=mission version=3');
    expect(unstamped(out)).toBe(SEED_TEXT);
  });

  it('a fresh render (no previous file) writes the seed’s own frontmatter layout, byte for byte', () => {
    const out = file.render(seedBody(), stamp(), view);
    expect(unstamped(out).startsWith(SEED_FRONTMATTER)).toBe(true);
  });

  it('a change re-rendered over the previous file changes only its own line (and the stamp)', () => {
    const { body } = file.parse(SEED_TEXT);
    const b = clone(body);
    (b.position as JsonObject).thread = 3;
    (b.resume as JsonObject).last_commit = 'a1b2c3d';
    const out = unstamped(file.render(b, stamp(2), view, SEED_TEXT)).split('\n');
    const before = SEED_TEXT.split('\n');
    expect(out.length).toBe(before.length);
    const diff = out.flatMap((l, i) => (l === before[i] ? [] : [[before[i], l]]));
    expect(diff).toEqual([
      ['  thread: 2', '  thread: 3'],
      ['  last_commit: "f7e3a2b"', '  last_commit: "a1b2c3d"'],
    ]);
  });
});

describe('the generated Markdown body', () => {
  const events: ViewContext['recentEvents'] = [
    {
      position: 12,
      type: 'state_committed',
      created_at: '2026-01-24T16:45:32.000Z',
      actor: 'executor-003',
      data: { version: 12, reason: 'Implementing user endpoints', noop: false },
    },
    {
      position: 11,
      type: 'grid_status_changed',
      created_at: '2026-01-24T16:30:00.000Z',
      actor: 'mc',
      data: { from: 'planning', to: 'in_progress' },
    },
  ];

  it('is regenerated from the frontmatter as in §6 when no markdown_body is given', () => {
    const out = file.render(seedBody(), stamp(), { ...view, recentEvents: events });
    const md = out.slice(out.indexOf('\n---\n\n') + 6);
    expect(md).toBe(
      [
        '# THE GRID - Mission State',
        '',
        '## Mission: SaaS Dashboard MVP',
        '',
        '**Status:** in_progress',
        '**Mode:** autopilot',
        '**Progress:** [##########..................................................] 18.75%',
        '',
        '## Current Position',
        '',
        'Phase 1/3: Foundation',
        'Block 3: API Routes',
        'Thread 2/4',
        '',
        '## Recent Activity',
        '',
        '| Time | Agent | Action | Result |',
        '|------|-------|--------|--------|',
        '| 16:45 | executor-003 | Implementing user endpoints | success |',
        '| 16:30 | mc | grid status changed | — |',
        '',
        '## Active Agents',
        '',
        '- **executor-003**: Implementing user CRUD endpoints (01-03)',
        '',
        '## Session Summary',
        '',
        '- Started: 2026-01-24T14:00:00Z',
        '- Last Update: 2026-01-24T16:45:32Z',
        '- Session: sess-20260124T143000Z-abc123',
        '- Agents Spawned: 4',
        '- Cost: $1.87 this session, $1.87 total',
        '',
        '---',
        'End of Line.',
        '',
      ].join('\n'),
    );
    // The lines the seed's example shows are all there.
    for (const line of SEED_MARKDOWN.split('\n').filter((l) =>
      /^(\*\*|Phase|Block|Thread|- \*\*|- Started|- Last)/.test(l),
    )) {
      expect(md).toContain(line);
    }
  });

  it('is a view: parsing a generated file drops it, so the next export regenerates it', () => {
    const out = file.render(seedBody(), stamp(4), { ...view, recentEvents: events });
    const hash = /markdown=([0-9a-f]{16})/.exec(out.split('\n')[1]!)?.[1];
    expect(hash).toBe(markdownHash(out.slice(out.indexOf('\n---\n\n') + 6)));
    const { body, stamp: s } = file.parse(out);
    expect(body).toEqual(seedBody());
    expect(s).toEqual(stamp(4));
  });

  it('a hand edit of a generated Markdown body is kept as markdown_body', () => {
    const out = file.render(seedBody(), stamp(4), view).replace('End of Line.', 'End of Line. (edited)');
    const { body } = file.parse(out);
    expect(body.markdown_body).toMatch(/End of Line\. \(edited\)\n$/);
    // … and written back verbatim, without a markdown hash in the stamp.
    const again = file.render(body, stamp(5), view, out);
    expect(again.split('\n')[1]).toBe('# agentstate: kind=grid-mission id=mission version=5');
    expect(file.parse(again).body).toEqual(body);
  });

  it('blockers are listed; no activity and no agents are said plainly', () => {
    const b = seedBody() as JsonObject & { blockers: JsonObject[]; agents: { active: JsonObject[] } };
    b.blockers = [
      {
        id: 'blocker-001',
        type: 'missing_credential',
        description: 'No STRIPE_KEY',
        blocking_thread: '01-03-2',
        added_at: '2026-01-24T16:40:00Z',
      },
    ];
    b.agents.active = [];
    const out = file.render(b, stamp(), view);
    expect(out).toContain(
      '## Blockers\n\n- **blocker-001** [missing_credential]: No STRIPE_KEY (blocks thread 01-03-2)\n',
    );
    expect(out).toContain('## Recent Activity\n\nNo recent activity recorded.\n');
    expect(out).toContain('## Active Agents\n\n- none\n');
  });

  it('the progress bar fills by blocks complete (2/12 → 10 of 60), else by percent', () => {
    const p = {
      blocks_complete: 2,
      blocks_total: 12,
      threads_complete: 9,
      threads_total: 48,
      percent: 18.75,
    };
    expect(progressBar(p)).toBe(`[${'#'.repeat(10)}${'.'.repeat(50)}]`);
    expect(progressBar({ ...p, blocks_total: 0, percent: 50 })).toBe(`[${'#'.repeat(30)}${'.'.repeat(30)}]`);
    expect(progressBar({ ...p, blocks_complete: 12 })).toBe(`[${'#'.repeat(60)}]`);
  });
});

describe('render keeps comments and key order of the previous file', () => {
  it('comments on unchanged and changed lines survive; removed keys go; new keys are appended', () => {
    const previous = SEED_TEXT.replace('energy: 8500', 'energy: 8500 # over nine thousand, soon').replace(
      '  wave: 1\n',
      '  wave: 1 # waves run in parallel\n',
    );
    const b = clone(file.parse(previous).body) as JsonObject & { position: JsonObject; budget: JsonObject };
    b.position.wave = 2;
    delete b.position.block_name;
    b.budget.total_cost_usd = 2.1;
    const out = file.render(b, stamp(2), view, previous);
    expect(out).toContain('energy: 8500 # over nine thousand, soon\n');
    expect(out).toContain('  wave: 2 # waves run in parallel\n');
    expect(out).not.toContain('block_name');
    expect(out).toContain('  total_cost_usd: 2.1\n');
    expect(out).toContain('# GRID STATE - Machine Parseable Header\n');
    expect(file.parse(out).body).toEqual(b);
  });

  it('list items matched by id keep their comments when others are removed', () => {
    const previous = SEED_TEXT.replace(
      '    - id: "executor-002"\n',
      '    - id: "executor-002" # the auth one\n',
    );
    const b = clone(file.parse(previous).body) as JsonObject & { agents: { completed: JsonObject[] } };
    b.agents.completed.splice(1, 1); // drop executor-001
    const out = file.render(b, stamp(2), view, previous);
    expect(out).toContain('    - id: "executor-002" # the auth one\n');
    expect(out).not.toContain('- id: "executor-001"');
    expect(file.parse(out).body).toEqual(b);
  });

  it('a previous file that does not parse is ignored: the render is fresh', () => {
    const fresh = file.render(seedBody(), stamp(), view);
    expect(file.render(seedBody(), stamp(), view, '---\nnot: [valid\n---\n')).toBe(fresh);
    expect(file.render(seedBody(), stamp(), view, '\u0000\u0001binary')).toBe(fresh);
  });

  it('the stamp line is replaced, never duplicated', () => {
    const v1 = file.render(seedBody(), stamp(1), view);
    const v2 = file.render(seedBody(), stamp(2), view, v1);
    expect(v2.match(/# agentstate:/g)).toHaveLength(1);
    expect(file.parse(v2).stamp).toEqual(stamp(2));
  });
});

describe('path and id', () => {
  it('.grid/STATE.md belongs to document "mission"; other paths to none', () => {
    expect(GRID_STATE_PATH).toBe('.grid/STATE.md');
    expect(file.defaultPath(GRID_DOC_ID)).toBe('.grid/STATE.md');
    expect(file.idFromPath('.grid/STATE.md')).toBe('mission');
    expect(file.idFromPath('./.grid/STATE.md')).toBe('mission');
    expect(file.idFromPath('.grid\\STATE.md')).toBe('mission');
    for (const p of [
      '.grid/state.md',
      'STATE.md',
      '.grid/STATE.md.bak',
      'x/.grid/STATE.md',
      '.aios/x-state.yaml',
    ]) {
      expect(file.idFromPath(p)).toBeNull();
    }
  });

  it('an id that needs escaping round-trips through the stamp', () => {
    const out = file.render(seedBody(), { kind: 'grid-mission', id: 'my mission=1', version: 9 }, view);
    expect(file.parse(out).stamp).toEqual({ kind: 'grid-mission', id: 'my mission=1', version: 9 });
  });
});

describe('parse refuses malformed files with INVALID_INPUT naming the line', () => {
  const fm = (yaml: string, after = '\n# body\n') => `---\n${yaml}\n---\n${after}`;

  it('no opening fence', async () => {
    const err = await parseError('version: "1.0"\nstatus: planning\n');
    expect(err.details.line).toBe(1);
    expect(err.message).toMatch(/must start with a '---' line/);
  });

  it('a blank line before the opening fence', async () => {
    const err = await parseError(`\n${SEED_TEXT}`);
    expect(err.details).toMatchObject({ line: 1, hint: expect.stringMatching(/blank lines/) });
  });

  it('a wrong fence (`+++`, `----`, `--- yaml`)', async () => {
    for (const f of ['+++', '----', '--- yaml', '---yaml']) {
      const err = await parseError(SEED_TEXT.replace(/^---/, f));
      expect(err.details.line).toBe(1);
    }
  });

  it('no closing fence', async () => {
    const err = await parseError(SEED_TEXT.slice(0, SEED_TEXT.indexOf('\n---\n') + 1));
    expect(err.message).toMatch(/never closed/);
    expect(err.details.line).toBe(1);
  });

  it('an empty frontmatter', async () => {
    for (const t of ['---\n---\n', '---\n\n# just a comment\n---\nbody\n']) {
      const err = await parseError(t);
      expect(err.details.line).toBe(2);
    }
  });

  it('malformed YAML, with the line of the file (not of the frontmatter)', async () => {
    const broken = SEED_TEXT.replace('  thread_total: 4\n', '  thread_total: [4\n');
    const line = SEED_TEXT.split('\n').indexOf('  thread_total: 4') + 1;
    const err = await parseError(broken);
    expect(err.details.line).toBeGreaterThanOrEqual(line);
    expect(err.message).toMatch(/malformed YAML at line \d+, column \d+/);
    const tab = await parseError(fm('version: "1.0"\nphases:\n\ttotal: 3'));
    expect(tab.details.line).toBe(4);
    const unclosed = await parseError(fm('version: "1.0"\ncluster: "SaaS'));
    expect(unclosed.details.line).toBeGreaterThanOrEqual(3);
  });

  it('a duplicate key', async () => {
    const err = await parseError(fm('version: "1.0"\nstatus: planning\nstatus: complete'));
    expect(err.details.line).toBe(4);
    expect(err.details.yaml_code).toBe('DUPLICATE_KEY');
  });

  it('a frontmatter that is not a mapping', async () => {
    expect((await parseError(fm('- a\n- b'))).message).toMatch(/mapping.*a list/);
    expect((await parseError(fm('just text'))).message).toMatch(/mapping.*a scalar/);
  });

  it('values that are not JSON, unknown tags, alias bombs', async () => {
    expect((await parseError(fm('energy: .inf'))).details.pointer).toBe('/energy');
    expect((await parseError(fm('energy: !!binary aGVsbG8='))).details.line).toBe(2);
    expect((await parseError(fm('energy: !custom 5'))).details.line).toBe(2);
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 0; i < 8; i++) {
      const p = String.fromCharCode(97 + i);
      const n = String.fromCharCode(98 + i);
      bomb.push(`${n}: &${n} [*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p}]`);
    }
    await parseError(fm(bomb.join('\n')));
  });

  it('binary garbage', async () => {
    const nul = await parseError(SEED_TEXT.replace('cluster: "SaaS', 'cluster: "Sa\u0000aS'));
    expect(nul.details.line).toBe(SEED_TEXT.split('\n').findIndex((l) => l.startsWith('cluster:')) + 1);
    expect(nul.message).toMatch(/binary content \(U\+00\)/);
    for (let i = 0; i < 20; i++) {
      const bytes = randomBytes(2048);
      await parseError(`---\n${bytes.toString('latin1')}\n---\n`);
      await parseError(bytes.toString('utf8'));
    }
  });

  it('a huge file', async () => {
    const huge = `${SEED_FRONTMATTER}\n${'x'.repeat(MAX_STATE_FILE_BYTES)}`;
    const err = await parseError(huge);
    expect(err.message).toMatch(/larger than the 1048576 byte limit/);
    expect(err.details).toMatchObject({
      limit: MAX_STATE_FILE_BYTES,
      // the x line: after the frontmatter's lines and the blank line that follows it
      line: SEED_FRONTMATTER.split('\n').length + 1,
    });
    // Bytes, not characters: 400 000 three-byte characters on line 2 are over the limit there.
    expect((await parseError(`---\n${'═'.repeat(400_000)}\n---\n`)).details.line).toBe(2);
    const deep = await parseError(fm(`x: ${'['.repeat(100)}${']'.repeat(100)}`));
    expect(deep.message).toMatch(/nested deeper/);
    // Nesting deep enough to exhaust the YAML parser's stack is a refusal too, not a crash.
    await parseError(fm(`x: ${'['.repeat(20_000)}${']'.repeat(20_000)}`));
  });

  it('a frontmatter markdown_body field, a malformed stamp, a stamp of another kind', async () => {
    await parseError(fm('version: "1.0"\nmarkdown_body: "x"'));
    const lines = SEED_TEXT.split('\n');
    const withStamp = (s: string) => [lines[0], s, ...lines.slice(1)].join('\n');
    for (const s of [
      '# agentstate: kind=grid-mission id=mission',
      '# agentstate: kind=grid-mission id=mission version=0',
      '# agentstate: kind=grid-mission id=mission version=two',
      '# agentstate: kind=grid-mission version=1',
      '# agentstate: garbage',
      '# agentstate: kind=grid-mission id=mission version=1 markdown=xyz',
      '# agentstate: kind=aios-workflow id=mission version=1',
    ]) {
      const err = await parseError(withStamp(s));
      expect(err.details.line, s).toBe(2);
    }
    const twice = withStamp('# agentstate: kind=grid-mission id=mission version=1').replace(
      '\nversion:',
      '\n# agentstate: kind=grid-mission id=mission version=2\nversion:',
    );
    expect((await parseError(twice)).message).toMatch(/more than one agentstate stamp/);
  });

  it('CRLF line endings and a BOM are accepted', () => {
    const crlf = `\uFEFF${SEED_TEXT.replaceAll('\n', '\r\n')}`;
    expect(file.parse(crlf).body).toEqual(file.parse(SEED_TEXT).body);
  });

  it('never crashes: any text either parses or is refused with INVALID_INPUT', () => {
    const prefix = fc.constantFrom('', '---\n', `${SEED_FRONTMATTER}`, '---\nversion: "1.0"\n');
    fc.assert(
      fc.property(
        prefix,
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.string({ maxLength: 50 }),
        (p, s, t) => {
          for (const text of [p + s, `${p}${s}\n---\n${t}`]) {
            try {
              file.parse(text);
            } catch (err) {
              if (!isAgentStateError(err, 'INVALID_INPUT')) throw err;
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
