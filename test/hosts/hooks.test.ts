// `agentstate hook <event>` as Claude Code runs it: the hook commands `setup claude-code` wrote into
// .claude/settings.json, run through a shell with CLAUDE_PROJECT_DIR set and the host's hook JSON on stdin.
// A scripted session (fixtures/claude-session.jsonl, made by fixtures/make-claude-session.ts): 40 todos
// changed over time through TodoWrite, TaskCreate and TaskUpdate, one change only the transcript holds,
// 3 compactions, 2 sub-agents claiming in parallel. After each SessionStart(compact) the context lists every
// open todo and decision the script expects, within 1.5k tokens; the sub-agents never hold the same item.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTEXT_TOKENS, estimateTokens } from '../../src/hosts/hooks/context.js';
import { HOST_EVENT_NAMES } from '../../src/hosts/hooks/input.js';
import { openInstance } from '../../src/instance/instance.js';
import type { WorkflowSessions } from '../../src/kinds/workflow-sessions/model.js';
import { CLI, cleanEnv, type RunResult, runCli, runCliAsync } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('agentstate-hooks-');
let n = 0;
const SESSION = '5e7c2a10-9b1d-4c3e-8f00-a1b2c3d4e5f6';
const DOC = `claude-${SESSION}`;

interface Step {
  hook?: string;
  payload?: Record<string, unknown>;
  expect?: { open: string[]; done: string[]; decisions: string[] };
  cli?: string[];
  transcript?: Array<{ content: string; status: string }>;
  parallel_claims?: string[];
}

const STEPS = readFileSync(join(import.meta.dirname, 'fixtures', 'claude-session.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Step);

/** A project set up for Claude Code, and the hook command of each event as settings.json has it. */
function claudeProject(): { dir: string; commands: Record<string, string> } {
  const dir = join(root, `p${++n}`);
  mkdirSync(dir, { recursive: true });
  const r = runCli([
    '--project',
    dir,
    'setup',
    'claude-code',
    '--command',
    JSON.stringify([process.execPath, CLI]),
  ]);
  expect(r.code, r.stderr).toBe(0);
  const settings = JSON.parse(readFileSync(join(dir, '.claude', 'settings.json'), 'utf8')) as {
    hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ command: string }> }>>;
  };
  const commands: Record<string, string> = {};
  for (const [event, groups] of Object.entries(settings.hooks))
    commands[event] = groups[0]!.hooks[0]!.command;
  return { dir, commands };
}

/** Runs a hook command the way Claude Code does: `sh -c`, the project dir in the environment, JSON on stdin. */
function runHook(
  command: string,
  dir: string,
  stdin: string,
  env: Record<string, string> = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], {
      cwd: dir,
      env: cleanEnv({ CLAUDE_PROJECT_DIR: dir, ...env }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? -1, stdout, stderr, json, errorJson: undefined });
    });
  });
}

/** The host's event name of each `agentstate hook` event. */
const EVENT: Record<string, string> = HOST_EVENT_NAMES;

async function readPlan(dir: string, doc = DOC) {
  const inst = await openInstance({ dir: join(dir, '.agentstate'), create: false });
  try {
    const d = await inst.docs.find('workflow-sessions', doc);
    return d ? (d.body as unknown as WorkflowSessions) : null;
  } finally {
    await inst.close();
  }
}

describe('a scripted Claude Code session through the hooks setup wrote', () => {
  it('keeps every open todo and decision across 3 compactions; sub-agents never share a claim', async () => {
    const { dir, commands } = claudeProject();
    const transcript = join(dir, 'transcript.jsonl');
    writeFileSync(transcript, '');
    const store = ['--dir', join(dir, '.agentstate')];
    const claimed: Record<string, string[]> = {};
    let compactions = 0;
    for (const [i, step] of STEPS.entries()) {
      const where = `step ${i}`;
      if (step.cli) {
        // In the project: a session command also writes the plan's state file (.copilot/state/) there.
        const r = runCli([...store, '--project', dir, ...step.cli]);
        expect(r.code, `${where}: ${r.stderr}`).toBe(0);
        continue;
      }
      if (step.transcript) {
        // The transcript as Claude Code writes it: one JSON object a line, tool calls in message.content.
        const line = {
          type: 'assistant',
          sessionId: SESSION,
          timestamp: new Date().toISOString(),
          message: {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: `toolu_t${i}`, name: 'TodoWrite', input: { todos: step.transcript } },
            ],
          },
        };
        writeFileSync(
          transcript,
          `${readFileSync(transcript, 'utf8')}${JSON.stringify(line)}\n{"type":"summary"}\nnot json\n`,
        );
        continue;
      }
      if (step.parallel_claims) {
        // Each sub-agent claims until nothing is ready, both at once, with the worker id SubagentStart gave it.
        await Promise.all(
          step.parallel_claims.map(async (agent) => {
            const worker = `claude-${SESSION.slice(0, 8)}/${agent.slice(0, 8)}`;
            claimed[worker] = [];
            for (;;) {
              const r = await runCliAsync([...store, 'claim', '--worker', worker, '--lease', '1h', '--json']);
              expect(r.code, r.stderr).toBe(0);
              if (r.json === null) break;
              claimed[worker]!.push((r.json as { id: string }).id);
            }
            // And a file, held by name: one of the two gets it, the other is told who holds it.
            const file = await runCliAsync([
              ...store,
              'claim',
              '--key',
              'path:src/db/schema.sql',
              '--worker',
              worker,
            ]);
            expect([0, 4], file.stderr).toContain(file.code);
            if (file.code === 4) expect(file.stderr).toMatch(/is held by claude-5e7c2a10\//);
            else claimed[worker]!.push('path:src/db/schema.sql');
          }),
        );
        continue;
      }
      const payload = JSON.parse(
        JSON.stringify(step.payload).replaceAll('$PROJECT', dir).replaceAll('$TRANSCRIPT', transcript),
      ) as Record<string, unknown>;
      const r = await runHook(commands[EVENT[step.hook!]!]!, dir, JSON.stringify(payload));
      expect(r.code, `${where}: ${r.stderr}`).toBe(0);
      expect(r.stderr, where).toBe('');
      if (step.hook === 'session-start') {
        const out = r.json as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
        expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
        const context = out.hookSpecificOutput.additionalContext;
        expect(estimateTokens(context), context).toBeLessThanOrEqual(CONTEXT_TOKENS);
        expect(context).toContain(`Your worker id is claude-${SESSION.slice(0, 8)}`);
        if (step.expect) {
          compactions++;
          const lines = context.split('\n');
          for (const todo of step.expect.open) {
            expect(
              lines.some((l) => /^\[[ ~]\] /.test(l) && l.slice(4) === todo),
              `compaction ${compactions}: open todo "${todo}" in\n${context}`,
            ).toBe(true);
          }
          for (const todo of step.expect.done) {
            expect(
              lines.some((l) => l.slice(4) === todo),
              `done todo "${todo}" listed as open`,
            ).toBe(false);
          }
          expect(context).toContain(`${step.expect.open.length} open, ${step.expect.done.length} done`);
          for (const d of step.expect.decisions) expect(context).toContain(d);
        }
      }
      if (step.hook === 'subagent-start') {
        const out = r.json as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
        expect(out.hookSpecificOutput.hookEventName).toBe('SubagentStart');
        expect(out.hookSpecificOutput.additionalContext).toMatch(
          /your worker id is claude-5e7c2a10\/[0-9a-f]{8}/,
        );
      }
    }
    expect(compactions).toBe(3);

    // The sub-agents: six items between them, none twice, the file held by one.
    const all = Object.values(claimed).flat();
    expect(new Set(all).size).toBe(all.length);
    expect(all.filter((x) => x.startsWith('wi_'))).toHaveLength(6);
    expect(all.filter((x) => x === 'path:src/db/schema.sql')).toHaveLength(1);

    const plan = (await readPlan(dir))!;
    const s = plan.sessions.find((x) => x.status === 'active')!;
    // The plan at the end is the script's: 39 todos (40 made, 1 deleted), in the order they were made.
    expect(s.todos).toHaveLength(39);
    expect(s.todos.map((t) => String(t.id))).toEqual([
      ...Array.from({ length: 22 }, (_, k) => String(k + 1)),
      '23',
      '24',
      ...Array.from({ length: 15 }, (_, k) => String(k + 26)),
    ]);
    // Gates F and G: a delegation per sub-agent, opened at SubagentStart and closed with its last message.
    expect(s.delegations!.map((d) => [d.id, d.status, d.resultSummary])).toEqual([
      ['a7f3e91c2b', 'completed', 'Explore done: migrated its tables'],
      ['b04d5c6e7f', 'completed', 'general-purpose done: migrated its tables'],
    ]);
    // The sub-agent's own list is its own document; the parent's plan never held it.
    const sub = (await readPlan(dir, `${DOC}--a7f3e91c2b`))!;
    expect(sub.sessions[0]!.todos.map((t) => t.title)).toEqual(['Read the schema']);
    expect(s.todos.some((t) => t.title === 'Read the schema')).toBe(false);
    // SubagentStop released what the sub-agents still held; Stop wrote the dashboard.
    const held = runCli([...store, 'list', '--status', 'in_flight', '--json']);
    expect(held.json).toEqual([]);
    expect(existsSync(join(dir, '.agentstate', 'dashboard.md'))).toBe(true);
  }, 240_000);

  it('parallel PostToolUse hooks of one session lose no task (CAS, re-run on conflict)', async () => {
    const { dir, commands } = claudeProject();
    const base = {
      session_id: SESSION,
      cwd: dir,
      hook_event_name: 'PostToolUse',
      transcript_path: '/nonexistent.jsonl',
    };
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, k) =>
        runHook(
          commands.PostToolUse!,
          dir,
          JSON.stringify({
            ...base,
            tool_name: 'TaskCreate',
            tool_input: { subject: `parallel task ${k}`, description: '' },
            tool_response: { task: { id: String(k + 1), subject: `parallel task ${k}` } },
          }),
        ),
      ),
    );
    for (const r of results) expect([r.code, r.stderr]).toEqual([0, '']);
    const s = (await readPlan(dir))!.sessions.find((x) => x.status === 'active')!;
    expect(s.todos.map((t) => t.title).sort()).toEqual(
      Array.from({ length: 8 }, (_, k) => `parallel task ${k}`),
    );
  }, 120_000);
});

/** The event log's head position of the project's store (what any write moves). */
async function head(dir: string): Promise<number> {
  const inst = await openInstance({ dir: join(dir, '.agentstate'), create: false });
  try {
    return (await inst.events.head())?.position ?? 0;
  } finally {
    await inst.close();
  }
}

describe('hooks on hostile stdin: a warning, exit 0, nothing written', () => {
  const ok = { session_id: SESSION, hook_event_name: 'PostToolUse', tool_name: 'TodoWrite' };
  const todo = (t: unknown) => JSON.stringify({ ...ok, tool_input: { todos: [t] } });
  const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
  it.for([
    ['truncated JSON', 'post-tool-use', '{"session_id": "5e7c2a10", "tool_name": "TodoWr'],
    ['empty stdin', 'session-start', ''],
    ['a list', 'session-start', '[1,2]'],
    [
      '5 MiB',
      'post-tool-use',
      JSON.stringify({ ...ok, tool_input: { todos: [], pad: 'x'.repeat(5 << 20) } }),
    ],
    ['a number as session_id', 'session-start', JSON.stringify({ session_id: 42 })],
    ['a path as session_id', 'session-start', JSON.stringify({ session_id: '../../etc/passwd' })],
    ['tool_input a list', 'post-tool-use', JSON.stringify({ ...ok, tool_input: [] })],
    ['todos not a list', 'post-tool-use', JSON.stringify({ ...ok, tool_input: { todos: 'all of them' } })],
    ['a status the host has not', 'post-tool-use', todo({ content: 'x', status: 'doing' })],
    ['a todo of numbers', 'post-tool-use', todo({ content: 7, status: 'pending' })],
    [
      'a __proto__ key',
      'post-tool-use',
      `{"session_id":"${SESSION}","tool_name":"TodoWrite","tool_input":{"__proto__":{"x":1},"todos":[]}}`,
    ],
    [
      '10,000 levels deep',
      'post-tool-use',
      `{"session_id":"${SESSION}","tool_name":"TodoWrite","tool_input":${deep}}`,
    ],
    ['another event than the hook', 'pre-compact', JSON.stringify({ ...ok, tool_input: { todos: [] } })],
    ['a NUL in a title', 'post-tool-use', todo({ content: 'a\u0000b', status: 'pending' })],
    [
      'TaskUpdate without a task id',
      'post-tool-use',
      JSON.stringify({ ...ok, tool_name: 'TaskUpdate', tool_input: { status: 'completed' } }),
    ],
  ] as Array<[string, string, string]>)('%s', async ([, event, stdin]) => {
    const { dir, commands } = claudeProject();
    const before = await head(dir);
    const hostEvent = Object.entries(EVENT).find(([k]) => k === event)![1];
    const r = await runHook(commands[hostEvent]!, dir, stdin);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`^agentstate hook ${event}: .+ \\[INVALID_INPUT\\]\\n$`));
    // Claude Code shows the user a systemMessage; the session goes on.
    expect((r.json as { systemMessage: string }).systemMessage).toContain('the session goes on');
    expect(await head(dir)).toBe(before);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('a PreCompact whose transcript is not a transcript writes nothing', async () => {
    const { dir, commands } = claudeProject();
    const before = await head(dir);
    for (const path of ['/etc/passwd', join(dir, 'missing.jsonl'), dir]) {
      const r = await runHook(
        commands.PreCompact!,
        dir,
        JSON.stringify({
          session_id: SESSION,
          hook_event_name: 'PreCompact',
          trigger: 'auto',
          transcript_path: path,
        }),
      );
      expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    }
    expect(await head(dir)).toBe(before);
  });

  it('--strict fails with the documented exit code; a project without a store is told to run setup', () => {
    const { dir } = claudeProject();
    const strict = runCli(['hook', 'session-start', '--dir', join(dir, '.agentstate'), '--strict'], {}, '{');
    expect(strict.code).toBe(2);
    expect(strict.stdout).toBe('');
    const bare = join(root, `bare${++n}`);
    mkdirSync(bare);
    const none = runCli(['hook', 'session-start'], {}, JSON.stringify({ session_id: SESSION, cwd: bare }));
    expect(none.code).toBe(0);
    expect(none.stderr).toMatch(/no agentstate store .+ run `agentstate setup claude-code`.+\[NOT_FOUND\]/);
    expect(existsSync(join(bare, '.agentstate'))).toBe(false);
    const unknown = runCli(['hook', 'teardown'], {}, '{}');
    expect([unknown.code, unknown.stderr]).toEqual([
      0,
      expect.stringMatching(/the event must be one of session-start/),
    ]);
  });
});

describe('Codex', () => {
  it('setup codex writes its hooks, and leaves a [features] table of the user alone', () => {
    const dir = join(root, `codex${++n}`);
    mkdirSync(join(dir, '.codex'), { recursive: true });
    const mine = '[features]\nweb_search = true\n';
    writeFileSync(join(dir, '.codex', 'config.toml'), mine);
    const r = runCli([
      '--project',
      dir,
      'setup',
      'codex',
      '--command',
      JSON.stringify([process.execPath, CLI]),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const toml = readFileSync(join(dir, '.codex', 'config.toml'), 'utf8');
    expect(toml.match(/^\[features\]/gm)).toHaveLength(1);
    const hooks = JSON.parse(readFileSync(join(dir, '.codex', 'hooks.json'), 'utf8')) as {
      hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>>;
    };
    expect(Object.keys(hooks.hooks)).toEqual(['SessionStart', 'Stop']);
    expect(hooks.hooks.SessionStart![0]!.hooks[0]!.command).toMatch(/ hook session-start --format codex$/);
  });

  it("SessionStart finds the project's store from a sub-folder; Stop mirrors update_plan from the rollout", async () => {
    const dir = join(root, `codex${++n}`);
    mkdirSync(join(dir, 'src', 'deep'), { recursive: true });
    expect(
      runCli(['--project', dir, 'setup', 'codex', '--command', JSON.stringify([process.execPath, CLI])]).code,
    ).toBe(0);
    const rollout = join(dir, 'rollout.jsonl');
    const call = (plan: unknown) =>
      JSON.stringify({
        timestamp: new Date().toISOString(),
        type: 'response_item',
        payload: {
          type: 'function_call',
          name: 'update_plan',
          arguments: JSON.stringify({ plan }),
          call_id: 'c1',
        },
      });
    writeFileSync(
      rollout,
      `${call([{ step: 'old', status: 'pending' }])}\n${call([
        { step: 'Read the code', status: 'completed' },
        { step: 'Fix the bug', status: 'in_progress' },
        { step: 'Add a test', status: 'pending' },
      ])}\n`,
    );
    const cwd = join(dir, 'src', 'deep');
    const base = {
      session_id: 'c0dex000-1111-2222-3333-444455556666',
      cwd,
      transcript_path: rollout,
      model: 'gpt-5',
    };
    const stop = runCli(
      ['hook', 'stop', '--format', 'codex'],
      {},
      JSON.stringify({ ...base, hook_event_name: 'Stop', stop_hook_active: false }),
    );
    expect([stop.code, stop.stderr]).toEqual([0, '']);
    const start = runCli(
      ['hook', 'session-start', '--format', 'codex'],
      {},
      JSON.stringify({ ...base, hook_event_name: 'SessionStart', source: 'resume' }),
    );
    expect([start.code, start.stderr]).toEqual([0, '']);
    const context = (start.json as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
      .additionalContext;
    expect(context).toContain('[~] 2 Fix the bug');
    expect(context).toContain('[ ] 3 Add a test');
    expect(context).not.toContain('Read the code');
    expect(context).toContain('Your worker id is codex-c0dex000');
    // The store is the project's, found above the session's cwd; nothing was made in the sub-folder.
    expect(existsSync(join(cwd, '.agentstate'))).toBe(false);
  });
});

describe("a transcript is read only in the host's own folder or the project (issue 38)", () => {
  const plan = [
    { content: 'Read the secrets', status: 'in_progress' },
    { content: 'Leak them', status: 'pending' },
  ];
  /** A Claude Code transcript at `path` whose last line is a TodoWrite of `plan`. */
  function claudeTranscript(path: string): string {
    mkdirSync(dirname(path), { recursive: true });
    const line = {
      type: 'assistant',
      sessionId: SESSION,
      timestamp: new Date(Date.now() + 60_000).toISOString(),
      message: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_x', name: 'TodoWrite', input: { todos: plan } }],
      },
    };
    writeFileSync(path, `${JSON.stringify(line)}\n`);
    return path;
  }
  /** A fresh HOME (so ~/.claude and ~/.codex are the test's own) and a folder outside project and home. */
  function places(): { home: string; away: string } {
    const home = join(root, `home${++n}`);
    const away = join(root, `away${++n}`);
    mkdirSync(home, { recursive: true });
    mkdirSync(away, { recursive: true });
    return { home, away };
  }
  const preCompact = (transcript: string) =>
    JSON.stringify({
      session_id: SESSION,
      hook_event_name: 'PreCompact',
      trigger: 'auto',
      transcript_path: transcript,
    });

  it.for([
    ['a link in the project to a transcript outside', 'project-link'],
    ['a link in ~/.claude/projects to a transcript outside', 'home-link'],
    ['a transcript outside, named directly', 'direct'],
  ] as Array<[string, string]>)(
    '%s: ignored with a warning and a systemMessage, exit 0, plan untouched',
    async ([, how]) => {
      const { dir, commands } = claudeProject();
      const { home, away } = places();
      const real = claudeTranscript(join(away, 'session.jsonl'));
      let path = real;
      if (how !== 'direct') {
        path =
          how === 'project-link'
            ? join(dir, 'session.jsonl')
            : join(home, '.claude', 'projects', 'p', 'session.jsonl');
        mkdirSync(dirname(path), { recursive: true });
        symlinkSync(real, path);
      }
      const before = await head(dir);
      const r = await runHook(commands.PreCompact!, dir, preCompact(path), { HOME: home });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(
        new RegExp(
          `^agentstate hook pre-compact: transcript_path ${path.replaceAll('.', '\\.')}.* is outside .+ \\[INVALID_INPUT\\]\\n$`,
        ),
      );
      expect((r.json as { systemMessage: string }).systemMessage).toContain('the session goes on');
      expect(await head(dir)).toBe(before);
      expect(await readPlan(dir)).toBeNull();
      const strict = await runHook(`${commands.PreCompact!} --strict`, dir, preCompact(path), { HOME: home });
      expect([strict.code, strict.stdout]).toEqual([2, '']);
    },
  );

  it.for([
    [
      '~/.claude/projects',
      (home: string) => ({ env: { HOME: home }, folder: join(home, '.claude', 'projects') }),
    ],
    [
      'CLAUDE_CONFIG_DIR/projects',
      (home: string) => ({
        env: { HOME: home, CLAUDE_CONFIG_DIR: join(home, 'cfg') },
        folder: join(home, 'cfg', 'projects'),
      }),
    ],
  ] as Array<[string, (home: string) => { env: Record<string, string>; folder: string }]>)(
    'a transcript in %s is read, through a link in the project too',
    async ([, where]) => {
      const { dir, commands } = claudeProject();
      const { home } = places();
      const { env, folder } = where(home);
      const real = claudeTranscript(join(folder, '-work-app', `${SESSION}.jsonl`));
      const link = join(dir, 'here.jsonl');
      symlinkSync(real, link);
      for (const path of [real, link]) {
        const r = await runHook(commands.PreCompact!, dir, preCompact(path), env);
        expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
      }
      const todos = (await readPlan(dir))!.sessions[0]!.todos.map((t) => t.title);
      expect(todos).toEqual(['Read the secrets', 'Leak them']);
    },
  );

  it('Codex: a rollout in CODEX_HOME/sessions is read; one linked out of it is ignored with a warning', async () => {
    const dir = join(root, `codex${++n}`);
    mkdirSync(dir, { recursive: true });
    expect(
      runCli(['--project', dir, 'setup', 'codex', '--command', JSON.stringify([process.execPath, CLI])]).code,
    ).toBe(0);
    const { home, away } = places();
    const codexHome = join(home, 'codex-home');
    const rollout = (path: string, step: string) => {
      mkdirSync(dirname(path), { recursive: true });
      const payload = {
        type: 'function_call',
        name: 'update_plan',
        arguments: JSON.stringify({ plan: [{ step, status: 'pending' }] }),
      };
      writeFileSync(
        path,
        `${JSON.stringify({ timestamp: new Date(Date.now() + 60_000).toISOString(), type: 'response_item', payload })}\n`,
      );
      return path;
    };
    const stop = (transcript: string, session: string) =>
      runCli(
        ['hook', 'stop', '--format', 'codex'],
        { HOME: home, CODEX_HOME: codexHome },
        JSON.stringify({
          session_id: session,
          cwd: dir,
          hook_event_name: 'Stop',
          transcript_path: transcript,
        }),
      );
    const inside = rollout(
      join(codexHome, 'sessions', '2025', '01', '02', 'rollout-a.jsonl'),
      'From the rollout',
    );
    const ok = stop(inside, 'c0dex000-aaaa');
    expect([ok.code, ok.stderr]).toEqual([0, '']);
    expect((await readPlan(dir, 'codex-c0dex000-aaaa'))!.sessions[0]!.todos.map((t) => t.title)).toEqual([
      'From the rollout',
    ]);
    const link = join(codexHome, 'sessions', '2025', '01', '02', 'rollout-b.jsonl');
    symlinkSync(rollout(join(away, 'elsewhere.jsonl'), 'From elsewhere'), link);
    const before = await head(dir);
    const out = stop(link, 'c0dex000-bbbb');
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(
      /^agentstate hook stop: transcript_path .+ \(a link to .+elsewhere\.jsonl\) is outside .+\[INVALID_INPUT\]\n$/,
    );
    expect(await readPlan(dir, 'codex-c0dex000-bbbb')).toBeNull();
    // Stop still did the rest of its work: nothing but the dashboard (no store write).
    expect(await head(dir)).toBe(before);
  });
});
