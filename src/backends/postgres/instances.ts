// The instances a PostgreSQL schema holds: every instance ever opened there has its event head row, so
// one scan of event_heads (one row per instance) joined to each head event by primary key lists them. Each
// head is the InstanceHead SQLite's instances.ts reads of its one file (see ../shared.ts).
import type { InstanceSummary } from '../../core/types.js';
import { instanceHeadOf } from '../shared.js';
import { checkSchema, names, type PostgresPoolOptions, withPool } from './connection.js';

/** Where to list: the database URL and pool settings (an open store with equal ones lends its pool), and the schema. */
export interface PostgresListOptions extends PostgresPoolOptions {
  /** The schema to list. @default 'agentstate' */
  schema?: string;
}

/**
 * The instances in one schema, by key, with their head position and newest event time; creates nothing (a
 * schema or database agentstate never used lists none). Item counts are left out on purpose: they cost a
 * pass over every work item of every instance, while this is one small indexed query.
 * @example const list = await listInstances({ url: 'postgres://me@db/agents', schema: 'team_a' })
 */
export async function listInstances(opts: PostgresListOptions): Promise<InstanceSummary[]> {
  const t = names(checkSchema(opts.schema));
  return withPool(opts, async (pool) => {
    let rows: Array<{ instance: string; position: number; created_at: number | null }>;
    try {
      const res = await pool.query<{ instance: string; position: number; created_at: number | null }>(
        `SELECT h.instance, h.position, e.created_at FROM ${t.event_heads} AS h
         LEFT JOIN ${t.events} AS e ON e.instance = h.instance AND e.position = h.position`,
        true,
      );
      rows = res.rows;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      // 42P01 undefined_table, 3F000 invalid_schema_name: nothing was ever opened in this schema.
      if (code === '42P01' || code === '3F000') return [];
      throw err;
    }
    return rows
      .map((r) => {
        const parts = r.instance.split('/');
        const split = parts.length === 2 && parts[0] !== '' && parts[1] !== '';
        return {
          instance: r.instance,
          host: split ? (parts[0] as string) : null,
          name: split ? (parts[1] as string) : null,
          ...instanceHeadOf(r),
        };
      })
      .sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0));
  });
}
