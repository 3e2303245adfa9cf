// The instances one `agentstate serve` serves: every instance of a PostgreSQL store (one shared pool), the
// instances under an embedded root, or the one `--dir` names; each opened once, on first use, and kept open.
import type { InstanceSummary } from '../core/types.js';
import { NotFoundError } from '../errors.js';
import { type Instance, type OpenInstanceOptions, openInstance } from '../instance/instance.js';
import { listInstances } from '../instance/list.js';
import { checkName, instanceRoot } from '../instance/paths.js';
import { callOperation } from '../service/edge.js';
import { inEdgeTerms } from '../service/instance-resolver.js';
import { dirTokenFile, TOKEN_FILE } from './auth.js';

/** What the server serves; the instance resolver's options (flags over the environment). */
export interface ServeTarget extends Omit<OpenInstanceOptions, 'create'> {
  /** PostgreSQL pool size shared by every served instance. @default the backend's */
  poolSize?: number;
}

/** The instances of a served store, opened on demand. */
export class InstanceRegistry {
  readonly #target: ServeTarget;
  readonly #open = new Map<string, Promise<Instance>>();
  #closed = false;

  constructor(target: ServeTarget) {
    this.#target = target;
  }

  /** Whether one `--dir` is served (the registry then holds exactly that instance). */
  get single(): boolean {
    return this.#target.dir !== undefined;
  }

  /**
   * The folder the server's own files (the token) live in: the root, also when one `--dir` is served, so no
   * secret is ever kept inside an instance folder.
   */
  get root(): string {
    return instanceRoot(this.#target.root);
  }

  /** The token file's name in `root`: one per served folder, else one for the root (or URL). */
  get tokenFile(): string {
    return this.#target.dir === undefined ? TOKEN_FILE : dirTokenFile(this.#target.dir);
  }

  /** The served instances, sorted by key. */
  async list(): Promise<InstanceSummary[]> {
    if (this.single) {
      const inst = await this.open(undefined);
      const head = (await callOperation(inst, 'event_head', {})) as { position: number } | null;
      return [
        {
          instance: `${inst.host}/${inst.name}`,
          host: inst.host,
          name: inst.name,
          events: head?.position ?? 0,
          last_event_at: null,
        },
      ];
    }
    const t = this.#target;
    return listInstances({
      ...(t.url ? { url: t.url } : { root: instanceRoot(t.root) }),
      ...(t.schema ? { schema: t.schema } : {}),
      ...(t.postgres ? { postgres: t.postgres } : {}),
    });
  }

  /** The key served when a request names none: the named instance, the `--dir` one, else the first listed. */
  async defaultKey(): Promise<string> {
    const t = this.#target;
    if (t.name !== undefined && t.dir === undefined)
      return `${t.host ?? (await this.open(undefined)).host}/${t.name}`;
    if (this.single) {
      const inst = await this.open(undefined);
      return `${inst.host}/${inst.name}`;
    }
    const first = (await this.list()).find((i) => i.error === undefined);
    if (!first) throw new NotFoundError('no agentstate instance to serve: run `agentstate init` first');
    return first.instance;
  }

  /**
   * The open instance `key` (`host/name`) names, or the default one. A key that is malformed or names no
   * existing instance is NOT_FOUND; nothing is ever created.
   */
  async open(key: string | undefined): Promise<Instance> {
    if (this.#closed) throw new NotFoundError('the server is shutting down');
    const k = key ?? (this.single ? '' : await this.defaultKey());
    let p = this.#open.get(k);
    if (!p) {
      p = this.#openKey(k);
      this.#open.set(k, p);
      p.catch(() => this.#open.delete(k));
    }
    return p;
  }

  async #openKey(key: string): Promise<Instance> {
    const t = this.#target;
    if (this.single) {
      const inst = await openInstance({ ...t, create: false }).catch((err: unknown) => {
        throw inEdgeTerms(err);
      });
      const own = `${inst.host}/${inst.name}`;
      if (key !== '' && key !== own) {
        await inst.close();
        throw new NotFoundError(`this server serves only the instance ${own}`, { instance: key });
      }
      if (key !== own) this.#open.set(own, Promise.resolve(inst));
      return inst;
    }
    const m = /^([^/]+)\/([^/]+)$/.exec(key);
    if (!m)
      throw new NotFoundError(`no instance ${JSON.stringify(key)}: name one as host/name`, { instance: key });
    let host: string;
    let name: string;
    try {
      host = checkName(m[1], 'host');
      name = checkName(m[2], 'name');
    } catch {
      throw new NotFoundError(`no instance ${JSON.stringify(key)}`, { instance: key });
    }
    const { dir: _dir, name: _name, host: _host, poolSize, ...rest } = t;
    return openInstance({
      ...rest,
      host,
      name,
      create: false,
      ...(poolSize === undefined ? {} : { postgres: { ...t.postgres, poolSize } }),
    }).catch((err: unknown) => {
      throw inEdgeTerms(err);
    });
  }

  /** Closes every instance opened. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#open.values()];
    this.#open.clear();
    const opened = new Set(
      (await Promise.allSettled(all)).flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    );
    await Promise.all([...opened].map((i) => i.close().catch(() => {})));
  }
}
