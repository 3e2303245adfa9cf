// The frame of every dashboard page: instance picker, navigation, sign-out, the live status.
import type { InstanceSummary } from '../../core/types.js';
import { type Html, h, href } from './html.js';

/** The navigation's entries, each a page group. */
export type Section = 'overview' | 'items' | 'runs' | 'events' | 'documents' | 'files';

export interface PageFrame {
  title: string;
  /** Which navigation entry is current. */
  section: Section;
  instance: string;
  instances: InstanceSummary[];
  actor: string | null;
  csrf: string | null;
  /** The event stream this page follows (enables the live region). */
  live?: string;
  /** The path the instance picker reloads. */
  path: string;
}

export function page(f: PageFrame, body: Html): Html {
  const nav = (s: PageFrame['section'], path: string, label: string) =>
    h`<a href="${href(path, { instance: f.instance })}"${f.section === s ? h` aria-current="page"` : ''}>${label}</a>`;
  return h`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${f.title} · ${f.instance} · agentstate</title><link rel="stylesheet" href="/assets/app.css"></head>
<body${f.live ? h` data-live="${f.live}"` : ''}><header><strong>agentstate</strong>
<form method="get" action="${f.path}"><label for="instance-picker" class="sr">Instance</label><select id="instance-picker" name="instance" aria-label="Instance">${f.instances.map(
    (i) =>
      h`<option value="${i.instance}"${i.instance === f.instance ? h` selected` : ''}>${i.instance}</option>`,
  )}</select><button type="submit">Open</button></form>
<nav aria-label="Sections">${nav('overview', '/', 'Overview')}${nav('items', '/items', 'Work items')}${nav('runs', '/runs', 'Runs')}${nav('events', '/events', 'Events')}${nav('documents', '/documents', 'Documents')}${nav('files', '/files', 'State files')}</nav>
<span class="spacer"></span><span id="live-status" class="muted" role="status" aria-live="polite">${f.live ? 'connecting…' : ''}</span>
${f.actor ? h`<span class="muted">signed in as <b>${f.actor}</b></span><form method="post" action="/logout"><input type="hidden" name="_csrf" value="${f.csrf ?? ''}"><button type="submit">Sign out</button></form>` : ''}
</header><main>${body}</main><script src="/assets/app.js" defer></script></body></html>`;
}
