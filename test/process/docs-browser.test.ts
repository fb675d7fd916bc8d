import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startServer, type ServerProcess } from '../helpers/server-process';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = path.resolve(__dirname, '..', '..', 'test-results', 'docs-withdraw.png');
const OTHER_HOST = 'receiver.test';

if (!existsSync(CHROMIUM)) {
  process.stderr.write(
    `Chromium not found at ${CHROMIUM}: the /docs browser test is SKIPPED (apt-get install chromium, as .ci/run does)\n`,
  );
}

(existsSync(CHROMIUM) ? describe : describe.skip)('the /docs page in a real browser (headless Chromium)', () => {
  let server: ServerProcess;
  let browser: Browser;
  beforeAll(async () => {
    server = await startServer();
    // As root, without a sandbox; and no background traffic, since this machine reaches no internet.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // receiver.test is this service under another name than localhost, as any deployment reaches it.
      args: [
        `--host-resolver-rules=MAP ${OTHER_HOST} 127.0.0.1`,
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('is whole when the service is reached over plain HTTP by another name than localhost (no upgrade to https)', async () => {
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(request.url()));
    await page.goto(`http://${OTHER_HOST}:${server.port}/docs`);
    await page.waitForSelector('.opblock-summary', { timeout: 15_000 });
    expect(await page.locator('.opblock-summary-description').allInnerTexts()).toEqual(
      expect.arrayContaining(['Status Change', 'Withdraw']),
    );
    expect(failed).toEqual([]);
    await page.close();
  });

  it('shows the three operations, expands Withdraw, and loads nothing from outside the service', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    const foreign: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.host !== `127.0.0.1:${server.port}` && url.protocol !== 'data:') foreign.push(request.url());
    });
    await page.goto(`http://127.0.0.1:${server.port}/docs`);
    await page.waitForSelector('.opblock-summary');

    const summaries = await page.locator('.opblock-summary-description').allInnerTexts();
    expect(summaries).toEqual(expect.arrayContaining(['Status Change', 'Withdraw', 'Modify Booking']));

    const withdraw = page.locator('#operations-Token_notifications-withdraw');
    await withdraw.locator('.opblock-summary').click();
    // Swagger UI opens the block first and fills it in after: wait for the responses, which come last.
    await withdraw.locator('.opblock-body .responses-table').first().waitFor();
    const body = await withdraw.locator('.opblock-body').innerText();
    expect(body).toContain('transaction_id');
    expect(body).toContain('422');

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(existsSync(SCREENSHOT)).toBe(true);
    expect(foreign).toEqual([]);
  });
});
