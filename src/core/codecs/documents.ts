// The document events: state_committed, one codec defined once here — how its data is built for a commit and
// for a no-op (`committedData`, `noopData`, which the commit path appends on both backends; PostgreSQL chains
// it in SQL from this data's text) and how verify folds it into the versions each document's log tells
// (`DOCUMENT_EVENT_CODECS`). test/core/event-codecs.test.ts holds the builders and the fold together on
// generated commits, and the stored events to the builders' bytes on both backends.
import type { ActorKind, Json, JsonObject } from '../types.js';

/** What a commit's state_committed names: the document, the version it was built on, who and why. */
export interface CommittedSource {
  kind: string;
  id: string;
  /** The version the commit was built on (its new version is the next one). */
  expected_version: number;
  write_id?: string;
  reason?: string;
}

/** The data of a commit's state_committed: the version it made and the content it holds. */
export function committedData(i: CommittedSource, actorKind: ActorKind, contentHash: string): JsonObject {
  return {
    kind: i.kind,
    id: i.id,
    version: i.expected_version + 1,
    parent_version: i.expected_version,
    actor_kind: actorKind,
    noop: false,
    content_hash: contentHash,
    write_id: i.write_id ?? null,
    reason: i.reason ?? null,
  };
}

/** The data of a no-op's state_committed: the version it leaves as it is, and why. */
export function noopData(i: CommittedSource, version: number, actorKind: ActorKind): JsonObject {
  return {
    kind: i.kind,
    id: i.id,
    version,
    parent_version: i.expected_version,
    actor_kind: actorKind,
    noop: true,
    reason: i.reason ?? null,
  };
}

/** What a non-noop state_committed event says about one version: what its history entry must say. */
export interface VersionEvent {
  content_hash: Json | undefined;
  actor: string | null;
  actor_kind: Json | undefined;
  parent_version: Json | undefined;
  write_id: Json;
  reason: Json;
  created_at: number;
}

/** One document as its events tell it. */
export interface DocumentLog {
  versions: Map<number, VersionEvent>;
  /** No-op events not yet matched to a history row, by their recorded fields (`noopKey`). */
  noops: Map<string, number>;
  latest: number;
}

/** The key of a document in a fold: `kind/id`. */
export const docKey = (kind: string, id: string): string => `${kind}/${id}`;

/** A no-op's recorded fields as one key, the same from its event and from its history entry. */
export function noopKey(
  version: Json | undefined,
  parent: Json | undefined,
  actor: string | null,
  actorKind: Json | undefined,
  reason: Json | undefined,
  createdAt: number,
): string {
  return JSON.stringify([
    version ?? null,
    parent ?? null,
    actor,
    actorKind ?? null,
    reason ?? null,
    createdAt,
  ]);
}

/** What a fold knows of a document event besides its data. */
export interface FoldedDocumentEvent {
  type: string;
  position: number;
  actor: string | null;
  /** Epoch ms. */
  created_at: number;
}

/** One document event type: what it does to the documents folded so far (by `docKey`, changed in place). */
export interface DocumentEventCodec {
  type: string;
  /** Folds `d`, the event's data; `report` says why it cannot be folded (verify: event_malformed). */
  fold(
    docs: Map<string, DocumentLog>,
    e: FoldedDocumentEvent,
    d: JsonObject,
    report: (message: string) => void,
  ): void;
}

const stateCommitted: DocumentEventCodec = {
  type: 'state_committed',
  fold(docs, e, d, report) {
    if (typeof d.kind !== 'string' || typeof d.id !== 'string' || !Number.isSafeInteger(d.version)) {
      report(`event #${e.position} (state_committed) names no document version`);
      return;
    }
    const key = docKey(d.kind, d.id);
    let doc = docs.get(key);
    if (!doc) {
      doc = { versions: new Map(), noops: new Map(), latest: 0 };
      docs.set(key, doc);
    }
    const version = d.version as number;
    if (d.noop === true) {
      const k = noopKey(version, d.parent_version, e.actor, d.actor_kind, d.reason, e.created_at);
      doc.noops.set(k, (doc.noops.get(k) ?? 0) + 1);
      return;
    }
    doc.versions.set(version, {
      content_hash: d.content_hash,
      actor: e.actor,
      actor_kind: d.actor_kind,
      parent_version: d.parent_version,
      write_id: d.write_id ?? null,
      reason: d.reason ?? null,
      created_at: e.created_at,
    });
    doc.latest = Math.max(doc.latest, version);
  },
};

/** The document event types, by name. */
export const DOCUMENT_EVENT_CODECS: ReadonlyMap<string, DocumentEventCodec> = new Map([
  [stateCommitted.type, stateCommitted],
]);
