// What the dashboard's browser tests share: Debian's chromium driven by playwright-core (skipped, saying why,
// on a machine without it; required in CI), the screenshots folder, signing in, and an axe-core pass.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOKEN } from './helpers.js';

export const CHROMIUM = process.env.AGENTSTATE_CHROMIUM ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
// CI installs chromium (.ci/run); a developer machine without it skips, saying why.
if (!HAVE_CHROMIUM && process.env.CI)
  throw new Error(`browser tests need ${CHROMIUM} (apt-get install chromium)`);
/** Where the tests leave their screenshots (git-ignored), to be looked at. */
export const SHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url));

type Browser = import('playwright-core').Browser;
type Page = import('playwright-core').Page;

/**
 * Headless Chromium, ready for pages. It runs with a HOME of its own (removed when it closes): Chromium keeps
 * its crash reports under ~/.config/chromium, and tests write only into their own temp folders.
 */
export async function launchChromium(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  const { chromium } = await import('playwright-core');
  const home = mkdtempSync(join(tmpdir(), 'agentstate-chromium-'));
  const browser = await chromium.launch({
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config') },
    executablePath: CHROMIUM,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-dev-shm-usage',
    ],
  });
  browser.on('disconnected', () => rmSync(home, { recursive: true, force: true }));
  return browser;
}

/** A page at `width` signed in to the server at `url` as Ada; any request elsewhere fails the test. */
export async function signedIn(browser: Browser, url: string, width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  return signIn(page, url);
}

/**
 * `page` (any request from it elsewhere than `url` fails the test), signed in as Ada. Sign-ins are
 * rate-limited per address: a file with many pages signs in once and opens the rest in that context.
 */
export async function signIn(page: Page, url: string): Promise<Page> {
  page.on('request', (r) => {
    if (!r.url().startsWith(url) && !r.url().startsWith('data:'))
      throw new Error(`external request ${r.url()}`);
  });
  await page.goto(`${url}/login`);
  await page.getByLabel('Your name').fill('Ada');
  await page.getByLabel('Server token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${url}/`);
  return page;
}

let axeSource: string | undefined;

/**
 * The serious and critical axe-core violations of the page (their rule ids). axe is evaluated, not added as a
 * script tag: the dashboard's CSP (script-src 'self') refuses inline scripts.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  return (await page.evaluate(
    'axe.run().then((r) => r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id + ": " + v.help))',
  )) as string[];
}
