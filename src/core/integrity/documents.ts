// Documents and their kept history against their state_committed events, as verify checks them: each
// document's version, content hash and times against its latest event; each kept history entry against the
// event of its version (a no-op entry against a no-op event); each body against its content hash; and the
// kept history running without a gap up to the current version (retention removes the oldest only).
import type { DocumentRowDump, HistoryRowDump, StoredEvent } from '../backend.js';
import {
  DOCUMENT_EVENT_CODECS,
  type DocumentEventCodec,
  type DocumentLog,
  docKey,
  noopKey,
} from '../codecs/documents.js';
import { contentHash } from '../json.js';
import type { Json, JsonObject } from '../types.js';
import { type Problems, when } from './problems.js';

type StoredDocument = Omit<DocumentRowDump, 'body'> & { body_hash: string };
type StoredHistory = Omit<HistoryRowDump, 'body'> & { body_hash: string | null };

/**
 * The documents' check: feed it their state_committed events in position order and their rows, then
 * `checkDocuments`.
 */
export class DocumentCheck {
  readonly #p: Problems;
  readonly #docs = new Map<string, DocumentLog>();
  readonly #docRows: StoredDocument[] = [];
  readonly #historyRows: StoredHistory[] = [];

  /** `problems`: where the check reports. */
  constructor(problems: Problems) {
    this.#p = problems;
  }

  /** Document rows added so far. */
  get rows(): number {
    return this.#docRows.length;
  }

  /** History rows added so far. */
  get historyRows(): number {
    return this.#historyRows.length;
  }

  /** One document row (its body kept as its hash). */
  row(row: DocumentRowDump): void {
    const { body, ...rest } = row;
    this.#docRows.push({ ...rest, body_hash: contentHash(body) });
  }

  /** One history row (its body, if kept, as its hash). */
  historyRow(row: HistoryRowDump): void {
    const { body, ...rest } = row;
    this.#historyRows.push({ ...rest, body_hash: body === null ? null : contentHash(body) });
  }

  /** One state_committed event (`d` its parsed data), in position order: its codec's fold. */
  event(e: StoredEvent, d: JsonObject): void {
    // verify routes only state_committed here, which has its codec.
    (DOCUMENT_EVENT_CODECS.get(e.type) as DocumentEventCodec).fold(this.#docs, e, d, (message) =>
      this.#p.report('event_malformed', 'events', `#${e.position}`, message),
    );
  }

  /** Every document row against its events, with its kept history; every document the log has against a row. */
  checkDocuments(): void {
    const history = new Map<string, StoredHistory[]>();
    for (const h of this.#historyRows) {
      const k = docKey(h.kind, h.id);
      const list = history.get(k);
      if (list) list.push(h);
      else history.set(k, [h]);
    }
    const seen = new Set<string>();
    for (const r of this.#docRows) {
      const key = docKey(r.kind, r.id);
      seen.add(key);
      if (r.body_hash !== r.content_hash) {
        this.#p.report(
          'content_hash_mismatch',
          'documents',
          key,
          `documents ${key}: the body hashes to ${r.body_hash.slice(0, 16)}…, not to its content_hash ${r.content_hash.slice(0, 16)}…`,
          { field: 'body', expected: r.content_hash, actual: r.body_hash },
        );
      }
      const log = this.#docs.get(key);
      const latest = log?.versions.get(log.latest);
      if (!log || !latest) {
        this.#p.report('event_missing', 'documents', key, `document ${key} has no state_committed event`);
        continue;
      }
      const d = (field: string, expected: Json | undefined, actual: Json | undefined) =>
        this.#p.differs('documents', key, field, expected, actual);
      d('version', log.latest, r.version);
      d('content_hash', latest.content_hash, r.content_hash);
      d('updated_at', when(latest.created_at), when(r.updated_at));
      const first = log.versions.get(1);
      if (first) d('created_at', when(first.created_at), when(r.created_at));
      this.#checkHistory(key, log, log.latest, history.get(key) ?? []);
    }
    for (const key of this.#docs.keys()) {
      if (!seen.has(key))
        this.#p.report('row_missing', 'documents', key, `document ${key} is in the log but has no row`);
    }
    for (const key of history.keys()) {
      if (!seen.has(key) && !this.#docs.has(key)) {
        this.#p.report(
          'event_missing',
          'document_history',
          key,
          `history of ${key} has no document and no event`,
        );
      }
    }
  }

  #checkHistory(key: string, log: DocumentLog, current: number, rows: StoredHistory[]): void {
    const kept = new Set<number>();
    for (const h of rows) {
      const hk = `${key}@${h.seq}`;
      if (h.body_hash !== null && h.body_hash !== h.content_hash) {
        this.#p.report(
          'content_hash_mismatch',
          'document_history',
          hk,
          `document_history ${hk} (v${h.version}): the body hashes to ${h.body_hash.slice(0, 16)}…, not to its content_hash ${h.content_hash.slice(0, 16)}…`,
          { field: 'body', expected: h.content_hash, actual: h.body_hash },
        );
      }
      const ev = log.versions.get(h.version);
      if (h.noop) {
        const k = noopKey(h.version, h.parent_version, h.actor, h.actor_kind, h.reason, h.created_at);
        const left = log.noops.get(k) ?? 0;
        if (left === 0) {
          this.#p.report(
            'event_missing',
            'document_history',
            hk,
            `document_history ${hk}: no state_committed no-op event records this no-op at v${h.version} (by ${h.actor}, ${when(h.created_at)})`,
          );
        } else log.noops.set(k, left - 1);
        if (ev) this.#p.differs('document_history', hk, 'content_hash', ev.content_hash, h.content_hash);
        continue;
      }
      kept.add(h.version);
      if (!ev) {
        this.#p.report(
          'event_missing',
          'document_history',
          hk,
          `document_history ${hk}: no state_committed event records v${h.version}`,
        );
        continue;
      }
      if (h.body_hash === null) {
        this.#p.report(
          'row_differs',
          'document_history',
          hk,
          `document_history ${hk} (v${h.version}) has no body`,
          {
            field: 'body',
          },
        );
      }
      const d = (field: string, expected: Json | undefined, actual: Json | undefined) =>
        this.#p.differs('document_history', hk, field, expected, actual);
      for (const f of [
        'content_hash',
        'actor',
        'actor_kind',
        'parent_version',
        'write_id',
        'reason',
      ] as const)
        d(f, ev[f], h[f]);
      d('created_at', when(ev.created_at), when(h.created_at));
    }
    // Retention removes the oldest versions only: what is kept runs without a gap up to the current one.
    let oldest = current;
    for (const v of kept) if (v < oldest) oldest = v;
    for (let v = oldest; v <= current; v++) {
      if (!kept.has(v)) {
        this.#p.report(
          'history_gap',
          'document_history',
          `${key}@v${v}`,
          `document_history of ${key} lacks v${v}, though ${v === current ? 'it is the current version' : `v${oldest} is kept`}`,
        );
      }
    }
    for (const h of rows) {
      if (h.noop && h.version < oldest) {
        this.#p.report(
          'history_gap',
          'document_history',
          `${key}@${h.seq}`,
          `document_history ${key}@${h.seq}: a no-op at v${h.version} is kept, but v${h.version} itself is gone`,
        );
      }
    }
  }
}
