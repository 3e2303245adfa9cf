// Racing test processes behind one start gate (fixtures call startGate() from test/fixtures/start-gate.mjs):
// each says "ready" when set up, and all get "go" once every one has, so no racer finishes alone because
// the others were slow to start. A condition, not a start time guessed from the clock.
import { spawn } from 'node:child_process';

export interface Racer {
  /** The script to run under node. */
  script: string;
  args: string[];
  /** Names the racer in errors. */
  label: string;
  env?: NodeJS.ProcessEnv;
}

const READY = 'ready\n';

/** Starts every racer, opens the gate when all are ready, and resolves with each one's JSON output. */
export function race<T>(racers: Racer[]): Promise<T[]> {
  let waiting = racers.length;
  const gates: Array<() => void> = [];
  const openGate = () => {
    for (const go of gates) go();
  };
  return Promise.all(
    racers.map(
      (r) =>
        new Promise<T>((resolve, reject) => {
          const child = spawn(process.execPath, [r.script, ...r.args], {
            env: { ...process.env, ...r.env },
            stdio: ['pipe', 'pipe', 'pipe'],
          });
          let out = '';
          let err = '';
          let ready = false;
          gates.push(() => child.stdin.end('go\n'));
          child.stdin.on('error', () => {});
          child.stdout.on('data', (d) => {
            out += d;
            if (!ready && out.startsWith(READY)) {
              ready = true;
              if (--waiting === 0) openGate();
            }
          });
          child.stderr.on('data', (d) => (err += d));
          child.on('error', reject);
          child.on('close', (code) => {
            if (code !== 0 || !ready) {
              // A racer that died before the gate must not leave the others waiting for it.
              openGate();
              reject(new Error(`${r.label} exited ${code}: ${err}`));
              return;
            }
            try {
              resolve(JSON.parse(out.slice(READY.length)) as T);
            } catch {
              reject(new Error(`${r.label} printed no JSON result: ${out}${err}`));
            }
          });
        }),
    ),
  );
}
