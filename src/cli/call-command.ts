// `agentstate call <operation>`: every operation of the table from the command line, its flags generated from
// the operation's input schema (`--lease-ms 30000` for `lease_ms`), or its whole input as `--input <json>`.
// The table loads only when `call` runs, so the other commands do not pay for it.
import type { Command } from 'commander';
import { parseJsonInput } from '../core/input.js';
import type { JsonSchema } from '../core/json-schema.js';
import { InvalidInputError } from '../errors.js';
import { runCommand } from './context.js';
import { readInputText } from './read-input.js';

const kebab = (field: string) => field.replaceAll('_', '-');

/** The JSON types a field's schema allows (none: any JSON value). */
function typesOf(schema: JsonSchema): string[] {
  return [schema.type, ...(schema.anyOf ?? []).map((s) => s.type)].flat().filter((t): t is string => !!t);
}

/**
 * How a flag's text becomes the field's value, from the field's schema: a number for an integer, true for a
 * bare boolean flag, a list for an array (repeated or comma-separated), JSON for an object or any-JSON field,
 * the text otherwise. What does not fit is passed on as text, for the operation's check to refuse by name.
 */
function fieldValue(flag: string, text: string | true, schema: JsonSchema, prev: unknown): unknown {
  const types = typesOf(schema);
  if (text === true) {
    if (types.includes('boolean')) return true;
    throw new InvalidInputError(`${flag} needs a value`, { field: flag });
  }
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  if (types.includes('integer') && /^-?\d+$/.test(text.trim())) return Number(text.trim());
  if (types.includes('array')) {
    const parts = text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const all = [...(Array.isArray(prev) ? prev : prev === undefined ? [] : [prev]), ...parts];
    // One value stays one where the field takes a single value too (a status, an event type).
    return all.length === 1 && types.includes('string') ? all[0] : all;
  }
  if (types.includes('string')) return text;
  if (types.includes('object') || types.length === 0) return parseJsonInput(text, flag);
  return text;
}

/** The input `args` (what follows the operation's name) spell, for the operation's input schema. */
function inputOf(
  args: string[],
  properties: Record<string, JsonSchema>,
  name: string,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (let k = 0; k < args.length; k++) {
    const arg = args[k]!;
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg);
    if (!m) {
      throw new InvalidInputError(
        `call ${name}: unexpected argument ${JSON.stringify(arg)}; give fields as --<field> <value>`,
        {
          field: 'args',
        },
      );
    }
    const field = m[1]!.replaceAll('-', '_');
    const schema = properties[field];
    if (!schema) {
      const known = Object.keys(properties).map((f) => `--${kebab(f)}`);
      throw new InvalidInputError(
        `call ${name}: unknown flag --${m[1]} (its fields: ${known.join(', ') || 'none'})`,
        { field, operation: name },
      );
    }
    let text: string | true;
    if (m[2] !== undefined) text = m[2];
    else if (args[k + 1] !== undefined && !args[k + 1]!.startsWith('--')) text = args[++k]!;
    else text = true;
    input[field] = fieldValue(`--${m[1]}`, text, schema, input[field]);
  }
  return input;
}

/** The help of one operation: its description and one line per field, generated from its input schema. */
function helpOf(op: { name: string; description: string; input: JsonSchema }): string {
  const required = new Set(op.input.required ?? []);
  const lines = Object.entries(op.input.properties ?? {}).map(([f, s]) => {
    const types = typesOf(s);
    const what = types.length > 0 ? types.join(' | ') : 'JSON';
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
      const input = { ...base, ...inputOf(fields, op.input.properties ?? {}, name) };
      await runCommand(cmd, name, input, (r) => JSON.stringify(r, null, 2));
    });
}
