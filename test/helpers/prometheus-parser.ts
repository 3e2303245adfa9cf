// The official Prometheus Python client's exposition-format parser (Debian's python3-prometheus-client, which
// .ci/run installs), for tests that read /metrics back with it. Where it is missing its checks are skipped
// with a line saying how to install it, and under CI=true a failing test says it is required (as
// pgbouncer.ts does for PgBouncer): never a check that passes by not running.
import { spawnSync } from 'node:child_process';
import { it } from 'vitest';

const PYTHON = '/usr/bin/python3';
const isCI = process.env.CI === 'true';

/** One sample as the official parser reads it. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses exposition text with the official parser; throws when the parser refuses it. */
export type OfficialParse = (text: string) => Sample[];

const SCRIPT =
  'import json,sys\nfrom prometheus_client.parser import text_string_to_metric_families as p\n' +
  'print(json.dumps([{"name":s.name,"labels":s.labels,"value":s.value} for f in p(sys.stdin.read()) for s in f.samples]))';

/**
 * The official parser, or null when this machine lacks it (skipped with a line saying so; under CI=true a
 * test that fails says it is required). Call once, at the top level of a test file; give the tests that use
 * it `it.skipIf(parser === null)`, so a run without it reports them skipped.
 */
export function officialPrometheusParserForThisFile(): OfficialParse | null {
  const probe = spawnSync(PYTHON, ['-c', 'import prometheus_client.parser'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    const why = probe.error?.message ?? probe.stderr.trim().split('\n').at(-1);
    if (isCI) {
      it('the official Prometheus parser is installed (CI=true requires it)', () => {
        throw new Error(
          `${PYTHON} cannot import prometheus_client (${why}): .ci/run installs Debian's "python3-prometheus-client" package`,
        );
      });
    } else {
      console.warn(
        `skipping the official Prometheus parser checks: ${PYTHON} cannot import prometheus_client (${why}); install it (Debian: apt-get install python3-prometheus-client)`,
      );
    }
    return null;
  }
  return (text) => {
    const r = spawnSync(PYTHON, ['-c', SCRIPT], { input: text, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`the official Prometheus parser refused the text: ${r.stderr}`);
    return JSON.parse(r.stdout) as Sample[];
  };
}
