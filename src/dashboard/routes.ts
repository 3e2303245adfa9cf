// The dashboard's pages, mounted on the serve app: server-rendered HTML, a little script for live updates.
import type { Hono } from 'hono';
import type { AppContext, AppEnv } from '../http/context.js';

/** Mounts the dashboard at /. */
export function mountDashboard(app: Hono<AppEnv>, _ctx: AppContext): void {
  app.get('/', (c) => c.html('<!doctype html><title>agentstate</title><h1>agentstate</h1>'));
}
