// `agentstate call <operation>`: every operation of the table from the command line, its flags generated from
// the operation's input schema (`--lease-ms 30000` for `lease_ms`), or its whole input as `--input <json>`.
// The table loads only when `call` runs, so the other commands do not pay for it.
import type { Command } from 'commander';
import { parseJsonInput } from '../core/input.js';
import type { JsonSchema } from '../core/json-schema.js';
import { InvalidInputError } from '../errors.js';
import type { Operation } from '../service/operation.js';
import { inputFromParams, types } from '../service/params.js';
import { runCommand } from './context.js';
import { readInputText } from './read-input.js';

const kebab = (field: string) => field.replaceAll('_', '-');

/**
 * The input `args` (what follows the operation's name) spell: `--<field> <value>` pairs (`--lease-ms` for
 * `lease_ms`; `--flag` alone is true), typed by the operation's schema as a query string is
 * (`inputFromParams`); a list is repeated or comma-separated, as every list flag of the CLI.
 */
function inputOf(args: string[], op: Operation<never, unknown>): Record<string, unknown> {
  const properties = op.input.properties;
  const params = new URLSearchParams();
  for (let k = 0; k < args.length; k++) {
    const arg = args[k]!;
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg);
    if (!m) {
      throw new InvalidInputError(
        `call ${op.name}: unexpected argument ${JSON.stringify(arg)}; give fields as --<field> <value>`,
        { field: 'args' },
      );
    }
    const field = m[1]!.replaceAll('-', '_');
    const schema = Object.hasOwn(properties, field) ? properties[field] : undefined;
    if (!schema) {
      const known = Object.keys(properties).map((f) => `--${kebab(f)}`);
      throw new InvalidInputError(
        `call ${op.name}: unknown flag --${m[1]} (its fields: ${known.join(', ') || 'none'})`,
        { field, operation: op.name },
      );
    }
    let text = m[2];
    if (text === undefined && args[k + 1] !== undefined && !args[k + 1]!.startsWith('--')) text = args[++k]!;
    if (text === undefined) {
      if (!types(schema).includes('boolean')) {
        throw new InvalidInputError(`--${m[1]} needs a value`, { field, operation: op.name });
      }
      text = 'true';
    }
    const parts = types(schema).includes('array')
      ? text
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [text];
    for (const part of parts) params.append(field, part);
  }
  return inputFromParams(op, params);
}

/** The help of one operation: its description and one line per field, generated from its input schema. */
function helpOf(op: { name: string; description: string; input: JsonSchema }): string {
  const required = new Set(op.input.required ?? []);
  const lines = Object.entries(op.input.properties ?? {}).map(([f, s]) => {
    const what = types(s).join(' | ').replace('json', 'JSON');
    return `  --${kebab(f)} <${what}>${required.has(f) ? ' (required)' : ''}${s.description ? `  ${s.description}` : ''}`;
  });
  return `Usage: agentstate call ${op.name} [--<field> <value> …] [--input <json>]\n\n${op.description}\n\n${
    lines.length > 0 ? `Fields:\n${lines.join('\n')}` : 'No fields.'
  }\n`;
}

export function addCallCommand(program: Command): void {
  program
    .command('call <operation> [fields...]')
    .description(
      'run any operation of the table by name, its fields as --<field> flags (from its input schema) or --input <json>; `call <operation> --help` lists them, `call list` the operations',
    )
    .option('--input <json>', 'the whole input as a JSON object (- reads stdin); flags add to it')
    .helpOption(false)
    .allowUnknownOption()
    .action(async (name: string, fields: string[], o: { input?: string }, cmd: Command) => {
      const { OPERATIONS, getOperation } = await import('../service/table.js');
      if (name === 'list') {
        const rows = OPERATIONS.filter((op) => op.streams !== true).map((op) => ({
          name: op.name,
          description: op.description,
        }));
        process.stdout.write(
          cmd.optsWithGlobals<{ json?: boolean }>().json
            ? `${JSON.stringify(rows)}\n`
            : `${rows.map((r) => `${r.name.padEnd(18)} ${r.description}`).join('\n')}\n`,
        );
        return;
      }
      const op = getOperation(name);
      if (fields.includes('--help') || fields.includes('-h')) {
        process.stdout.write(helpOf(op));
        return;
      }
      if (op.streams) {
        throw new InvalidInputError(`call ${name}: a stream; use \`agentstate events --follow\``, {
          operation: name,
        });
      }
      let base: Record<string, unknown> = {};
      if (o.input !== undefined) {
        const text = o.input === '-' ? await readInputText('-', '--input') : o.input;
        const parsed = parseJsonInput(text, '--input');
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          throw new InvalidInputError('--input must be a JSON object', { field: 'input' });
        }
        base = parsed as Record<string, unknown>;
      }
      const input = { ...base, ...inputOf(fields, op) };
      await runCommand(cmd, name, input, (r) => JSON.stringify(r, null, 2));
    });
}
