// The dashboard's pages, mounted on the serve app: server-rendered HTML from the operation table (the same
// runOperation every edge calls), paginated, with a small script for live regions. Writes go through a
// confirmation page and are recorded as the signed-in human's (actor_kind human).
import type { Hono } from 'hono';
import type { AppContext, AppEnv } from '../context.js';
import { APP_CSS, APP_JS } from './assets.js';
import { mountDocumentPages } from './documents.js';
import { mountEvents } from './events.js';
import { mountItems } from './items.js';
import { mountOverview } from './overview.js';
import { mountRuns } from './runs.js';

/** Mounts the dashboard at /. */
export function mountDashboard(app: Hono<AppEnv>, ctx: AppContext): void {
  app.get('/assets/app.js', (c) =>
    c.body(APP_JS, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'max-age=300' }),
  );
  app.get('/assets/app.css', (c) =>
    c.body(APP_CSS, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'max-age=300' }),
  );
  mountOverview(app, ctx);
  mountItems(app, ctx);
  mountRuns(app, ctx);
  mountEvents(app, ctx);
  mountDocumentPages(app, ctx);
}
