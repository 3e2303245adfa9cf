// @modelcontextprotocol/conformance against `agentstate mcp --http` on localhost (issue 14): its generic server
// scenarios must pass; the fixture scenarios of the SDK's "everything" server are listed, each with why, in
// conformance-expected-failures.yml. The conformance CLI needs Node 22 (it imports fs.globSync), so it runs
// under Bun, a dev dependency (`npx bun`), on this Node 20 project; it works offline.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openInstance } from '../../src/instance/instance.js';
import { createAgentStateMcp, serveMcpHttp } from '../../src/mcp/index.js';
import { BUN, ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir();
const CONFORMANCE = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

function run(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(BUN, [CONFORMANCE, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      out += d;
    });
    p.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

describe('MCP conformance over Streamable HTTP', () => {
  it('passes every generic server scenario; fixture-only scenarios are the listed expected failures', async () => {
    const inst = await openInstance({ dir: join(dir, 'inst') });
    const served = await serveMcpHttp(createAgentStateMcp({ instance: inst, model: 'conformance' }), {
      port: 0,
    });
    try {
      const r = await run([
        'server',
        '--url',
        served.url.replace('127.0.0.1', 'localhost'),
        '--expected-failures',
        join(ROOT, 'test', 'mcp', 'conformance-expected-failures.yml'),
      ]);
      expect(r.code, r.out).toBe(0);
      for (const s of [
        'server-initialize',
        'ping',
        'tools-list',
        'resources-list',
        'dns-rebinding-protection',
      ]) {
        expect(r.out, s).toMatch(new RegExp(`✓ ${s}: [1-9]\\d* passed, 0 failed`));
      }
    } finally {
      await served.close();
      await inst.close();
    }
  }, 120_000);
});
