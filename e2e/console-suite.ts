import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { ADMIN_KEY, startStack, type Stack } from '@inferq/test-utils';
import { launchBrowser, newConsolePage } from './browser.ts';

/** What a console test drives: the real stack (the API serving the built console), headless Chromium and a page in it. */
export interface ConsoleSuite {
  readonly stack: Stack;
  readonly browser: Browser;
  readonly page: Page;
  /** The page's title (its one `h1`). */
  heading(name: string): Locator;
  /** Opens `path` signed out, signs in with the admin key and waits for the page titled `heading` (the overview at `/`). */
  signIn(path?: string, heading?: string): Promise<void>;
  /** Follows the navigation's link `name` and waits for the page it opens (titled the same). */
  openPage(name: string): Promise<void>;
}

/**
 * The prologue every console test file shares, as hooks of the file that calls it: before its tests the real stack
 * starts, `setup` prepares it (models, workers, data), then the browser and a page open; after them both close.
 * `suite.stack` holds from `setup` on (so the file's helpers can use it there), the browser and page from the first
 * test on; read before that, they throw.
 */
export function useConsoleSuite(setup: (stack: Stack) => Promise<void> = async () => {}): ConsoleSuite {
  let stack: Stack | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  beforeAll(async () => {
    stack = await startStack();
    await setup(stack);
    browser = await launchBrowser();
    page = await newConsolePage(browser);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the console suite's ${what} is not started yet: read it in a test or a later hook`);
    return value;
  };
  const suite: ConsoleSuite = {
    get stack() {
      return started(stack, 'stack');
    },
    get browser() {
      return started(browser, 'browser');
    },
    get page() {
      return started(page, 'page');
    },
    heading: (name) => suite.page.getByRole('heading', { level: 1, name }),
    async signIn(path = '/', heading = 'Overview') {
      await suite.page.goto(`${suite.stack.baseUrl}${path}`);
      await suite.page.getByLabel('API key', { exact: true }).fill(ADMIN_KEY);
      await suite.page.getByRole('button', { name: 'Sign in' }).click();
      await suite.heading(heading).waitFor();
    },
    async openPage(name) {
      await suite.page.getByRole('navigation').getByRole('link', { name, exact: true }).first().click();
      await suite.heading(name).waitFor();
    },
  };
  return suite;
}
