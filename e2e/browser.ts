import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { CHROMIUM, createExecutableFinder, resolveDebianBinary } from '@inferq/dev-stack';
import { optionalTestVar } from '@inferq/test-utils';

/** Screenshots of every page land here; CI keeps the folder as an artifact of the run. */
const SCREENSHOT_DIR = resolve(import.meta.dirname, '../test-results/screenshots');

/** Headless Chromium from the system (Debian's `chromium`): no browser downloads. */
export async function launchBrowser(): Promise<Browser> {
  const executablePath =
    optionalTestVar('CHROMIUM_PATH', '') ||
    (await resolveDebianBinary(CHROMIUM, { findExecutable: createExecutableFinder(optionalTestVar('PATH', '')), log: (line) => console.log(`[e2e] ${line}`) }));
  // --no-sandbox: CI runs as root, where Chromium refuses its sandbox.
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: resolve(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** A page the size of a laptop screen, waiting up to 15 s for what a test looks for. */
export async function newConsolePage(browser: Browser): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(15_000);
  return page;
}

/**
 * Clicks `trigger` until `dialog` shows. Playwright clicks once the trigger holds still, but a section above it that
 * finishes loading just then moves it, and the click lands beside it (a loaded box, CI). So: wait until nothing on the
 * page is loading (`aria-busy`), click, and click again only while no dialog is there and after giving the last click
 * time to open it, so a click never reaches the dialog itself.
 */
export async function openDialog(trigger: Locator, dialog: Locator, attempts = 3): Promise<void> {
  await trigger.page().locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
  for (let i = 1; ; i++) {
    await trigger.click();
    try {
      return await dialog.waitFor({ timeout: 5_000 });
    } catch (err) {
      if (i === attempts) throw err;
    }
  }
}
