// The document pages: the state files as the store renders them, the documents of each kind, one document at
// any version with its history, and the diff of two versions.
import type { Hono } from 'hono';
import type { DocumentRecord } from '../../core/types.js';
import type { Instance } from '../../instance/instance.js';
import { getKind, kindNames } from '../../kinds/registry.js';
import type { AppContext, AppEnv } from '../context.js';
import {
  type C,
  docPath,
  filters,
  frame,
  guarded,
  opened,
  PAGE,
  pageLimit,
  run,
  runAs,
  short,
  when,
} from './common.js';
import { type Html, h, href, pretty } from './html.js';
import { page } from './layout.js';

interface HistoryEntry {
  version: number;
  parent_version: number;
  noop: boolean;
  content_hash: string;
  actor: string;
  actor_kind: string;
  provenance?: unknown;
  created_at: string;
  reason?: string | null;
}

/** The kinds whose documents have a human-readable state file. */
const fileKinds = () => kindNames().filter((k) => getKind(k).file !== undefined);

type FileView = { path: string; text: string; valid: boolean; problem?: string };

/** A document's state file as its kind renders it, and whether the stored body passes the kind's rules. */
async function fileView(inst: Instance, kind: string, id: string, version: number): Promise<FileView | null> {
  if (!getKind(kind).file) return null;
  return run<FileView>(inst, 'render_file', { kind, id, version });
}

/** The document a page's path names, and that page's own path. */
function docOf(c: C): { kind: string; id: string; base: string } {
  const kind = c.req.param('kind') ?? '';
  const id = c.req.param('id') ?? '';
  return { kind, id, base: docPath(kind, id) };
}

/** Mounts the document pages: state files, documents, a document at any version, diffs. */
export function mountDocumentPages(app: Hono<AppEnv>, ctx: AppContext): void {
  app.get(
    '/files',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'files', 'State files');
      const rows: Html[] = [];
      for (const kind of fileKinds()) {
        const docs = await run<Array<{ id: string; version: number }>>(inst, 'list_documents', {
          kind,
          limit: PAGE,
        });
        for (const d of docs) {
          const v = await fileView(inst, kind, d.id, d.version);
          if (!v) continue;
          rows.push(
            h`<tr><td>${kind}</td><td><a href="${href(docPath(kind, d.id), { instance: key })}">${d.id}</a></td><td><code>${v.path}</code></td><td class="num">${d.version}</td><td>${v.valid ? h`<span class="badge st-done">valid</span>` : h`<span class="badge st-failed">invalid</span> ${v.problem}`}</td></tr>`,
          );
        }
      }
      const body = h`<h1>State files</h1><p class="muted">The human-readable files (${fileKinds().join(', ')}) as the store renders them, each checked against its kind’s current rules.</p>
${rows.length === 0 ? h`<p class="muted">No documents with a state file.</p>` : h`<div class="wrap"><table><thead><tr><th>Kind</th><th>Id</th><th>File</th><th>Version</th><th>Validation</th></tr></thead><tbody>${rows}</tbody></table></div>`}`;
      return c.html(page(f, body).value);
    }),
  );

  app.get(
    '/documents',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'documents', 'Documents');
      const filter = filters(c, 'kind');
      const { kind } = filter;
      const limit = pageLimit(c);
      const docs = await run<Array<{ kind: string; id: string; version: number; updated_at: string }>>(
        inst,
        'list_documents',
        { ...filter, limit: limit + 1 },
      );
      const body = h`<h1>Documents</h1><form class="filters" method="get" action="/documents"><input type="hidden" name="instance" value="${key}"><div><label for="f-kind">Kind</label><input id="f-kind" name="kind" value="${kind ?? ''}"></div><button type="submit">Filter</button></form>
${docs.length === 0 ? h`<p class="muted">No documents.</p>` : h`<div class="wrap"><table><thead><tr><th>Kind</th><th>Id</th><th>Version</th><th class="opt">Updated</th></tr></thead><tbody>${docs.slice(0, limit).map((d) => h`<tr><td>${d.kind}</td><td><a href="${href(docPath(d.kind, d.id), { instance: key })}">${d.id}</a></td><td class="num">${d.version}</td><td class="opt">${when(d.updated_at)}</td></tr>`)}</tbody></table></div>`}
${docs.length > limit ? h`<div class="pager"><a href="${href('/documents', { instance: key, kind, limit: Math.min(limit + PAGE, 1000) })}">Show more</a></div>` : ''}`;
      return c.html(page(f, body).value);
    }),
  );

  app.get(
    '/documents/:kind/:id',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'documents', 'Document');
      const { kind, id, base } = docOf(c);
      const v = c.req.query('version');
      const doc = await run<DocumentRecord>(inst, 'get_document', {
        kind,
        id,
        ...(v ? { version: Number(v) } : {}),
      });
      const hist = await run<{ entries: HistoryEntry[] }>(inst, 'history', {
        kind,
        id,
        reverse: true,
        limit: 100,
      });
      const view = await fileView(inst, kind, id, doc.version).catch(() => null);
      const versions = hist.entries.map((e) => e.version);
      // Where a fork came from is the document's own record, not the URL's.
      const from = doc.forked_from;
      const source = from
        ? h`<a href="${href(docPath(from.kind, from.id), { instance: key, version: from.version })}">${from.id} version ${from.version}</a>`
        : '';
      const notice =
        from && c.req.query('forked') === '1'
          ? h`<p class="notice" role="status">Forked: ${id} starts as a copy of ${source}, recorded as yours.</p>`
          : '';
      const body = h`<h1>${kind} / ${id}</h1>${notice}${from ? h`<p class="muted">Forked from ${source}.</p>` : ''}
<form class="filters" method="get" action="${base}/diff"><input type="hidden" name="instance" value="${key}">
<div><label for="d-from">Diff from version</label><select id="d-from" name="from">${versions.map((x) => h`<option${x === Math.max(1, doc.version - 1) ? h` selected` : ''}>${x}</option>`)}</select></div>
<div><label for="d-to">to version</label><select id="d-to" name="to">${versions.map((x) => h`<option${x === doc.version ? h` selected` : ''}>${x}</option>`)}</select></div><button type="submit">Show diff</button></form>
<h2>Version ${doc.version}</h2><pre>${pretty(doc.body, 100_000)}</pre>
<form class="filters" method="get" action="${base}/fork"><input type="hidden" name="instance" value="${key}"><input type="hidden" name="version" value="${doc.version}">
<div><label for="fork-id">Fork version ${doc.version} as a new ${kind} document, id</label><input id="fork-id" name="new_id" required maxlength="200"></div><button type="submit">Fork…</button></form>
${
  view
    ? h`<h2>State file <code>${view.path}</code> ${view.valid ? h`<span class="badge st-done">valid</span>` : h`<span class="badge st-failed">invalid</span>`}</h2>${view.valid ? '' : h`<p class="problem">${view.problem}</p>`}<pre>${view.text}</pre>`
    : ''
}
<h2>History</h2><div class="wrap"><table><thead><tr><th>Version</th><th>Actor</th><th>Actor kind</th><th class="opt">Time</th><th>Provenance</th><th class="opt">Reason</th></tr></thead><tbody>${hist.entries.map(
        (e) =>
          h`<tr><td class="num"><a href="${href(base, { instance: key, version: e.version })}">${e.version}</a>${e.noop ? h` <span class="badge">no-op</span>` : ''}</td><td>${e.actor}</td><td>${e.actor_kind}</td><td class="opt">${when(e.created_at)}</td><td><code>${e.provenance ? short(e.provenance, 200) : ''}</code></td><td class="opt">${e.reason ?? ''}</td></tr>`,
      )}</tbody></table></div>`;
      return c.html(page({ ...f, title: `${kind}/${id}` }, body).value);
    }),
  );

  // Fork: a confirmation of the source version and the new id, then one fork as the signed-in person.
  app.get(
    '/documents/:kind/:id/fork',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'documents', 'Fork');
      const { kind, id, base } = docOf(c);
      const version = Number(c.req.query('version'));
      const newId = (c.req.query('new_id') ?? '').trim();
      // The source version must exist (NOT_FOUND, or INVALID_INPUT for a version that is no number).
      const doc = await run<{ version: number }>(inst, 'get_document', { kind, id, version });
      const back = href(base, { instance: key, version: doc.version });
      const body = h`<h1>Fork ${kind} / ${id}?</h1>${
        newId === ''
          ? h`<p class="problem" role="alert">Name the new document first.</p><p><a href="${back}">Back to the document</a></p>`
          : h`<p>A new ${kind} document <b>${newId}</b> starts as a copy of version ${doc.version} of ${id}; ${id} itself does not change. Its history records where it came from and that you made it.</p>
<form method="post" action="${href(`${base}/fork`, { instance: key })}"><input type="hidden" name="_csrf" value="${f.csrf ?? ''}"><input type="hidden" name="version" value="${doc.version}"><input type="hidden" name="new_id" value="${newId}">
<label for="reason">Reason (optional)</label><input id="reason" name="reason" maxlength="2000">
<div class="actions"><button type="submit" class="primary">Yes, fork as ${newId}</button><a href="${back}">No, go back</a></div></form>`
      }`;
      return c.html(page(f, body).value);
    }),
  );
  app.post(
    '/documents/:kind/:id/fork',
    guarded(async (c) => {
      const { inst, key } = await opened(c, ctx);
      const { kind, id } = docOf(c);
      const form = await c.req.parseBody();
      const field = (name: string) => (typeof form[name] === 'string' ? (form[name] as string).trim() : '');
      const version = Number(field('version'));
      const reason = field('reason');
      const input = { kind, id, version, new_id: field('new_id'), ...(reason ? { reason } : {}) };
      // A new id already taken is STATE_CONFLICT (the fork is a commit at expected version 0): nothing written.
      await runAs(c, inst, 'fork', input);
      return c.redirect(
        href(docPath(kind, input.new_id), {
          instance: key,
          forked: 1,
        }),
        303,
      );
    }),
  );

  app.get(
    '/documents/:kind/:id/diff',
    guarded(async (c) => {
      const { inst, key, f } = await frame(c, ctx, 'documents', 'Diff');
      const { kind, id, base } = docOf(c);
      const from = Number(c.req.query('from'));
      const to = Number(c.req.query('to'));
      const diff = await run<{ patch: Array<{ op: string; path: string; value?: unknown; from?: string }> }>(
        inst,
        'diff',
        { kind, id, from, to },
      );
      const [a, b] = await Promise.all([
        run<{ body: unknown }>(inst, 'get_document', { kind, id, version: from }),
        run<{ body: unknown }>(inst, 'get_document', { kind, id, version: to }),
      ]);
      const body = h`<h1>${kind} / ${id}: version ${from} → ${to}</h1><p><a href="${href(base, { instance: key })}">Back to the document</a></p>
<h2>Changes (${diff.patch.length})</h2>${
        diff.patch.length === 0
          ? h`<p class="muted">No changes.</p>`
          : h`<div class="wrap"><table aria-label="Changes"><thead><tr><th>Change</th><th>Field</th><th>New value</th></tr></thead><tbody>${diff.patch.map(
              (p) =>
                h`<tr class="diff-${p.op}"><td>${p.op}</td><td><code>${p.path}</code></td><td><code>${p.op === 'remove' ? '' : short(p.value ?? p.from, 400)}</code></td></tr>`,
            )}</tbody></table></div>`
      }
<div class="grid"><section><h2>Version ${from}</h2><pre>${pretty(a.body, 50_000)}</pre></section><section><h2>Version ${to}</h2><pre>${pretty(b.body, 50_000)}</pre></section></div>`;
      return c.html(page(f, body).value);
    }),
  );
}
