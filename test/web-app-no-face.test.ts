import AxeBuilder from '@axe-core/playwright';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeStripe, type FakeStripe } from './support/fake-stripe.ts';
import { json } from './support/http.ts';
import { waitFor } from './support/processes.ts';
import { startTestService, type TestService } from './support/test-service.ts';
import { insertWebVideo } from './support/web-video-row.ts';
import { seedTemplates } from './support/templates.ts';

const ROOT = join(import.meta.dirname, '..');
/** Debian's chromium, as in web-app-e2e.test.ts; no browser is downloaded. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** A real photo with no pet in it (groceries in bags; ../shared/pets, read in place): the pet-face model finds nothing. */
const NO_PET_PHOTO = join(ROOT, '..', 'shared', 'pets', 'other-03.jpg');
/** The git-ignored folder web-app-e2e.test.ts writes to; `npm run screenshots:docs` copies to docs/screenshots/. */
const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? join(ROOT, 'test-output', 'screenshots');
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true };
/** Where the test drags the marker: a point on the photo (there is no pet: any point the person chose). */
const DRAGGED_TO = { x: 0.3, y: 0.4 };
/** What the create page says beside "Make it sing" while the marker waits to be placed. */
const PLACE_MARKER = "Move the marker onto your pet's mouth to continue.";
const STRIPE_WEBHOOK_SECRET = 'whsec_petsing_web_no_face';

type Point = { x: number; y: number };
/** A text field of a multipart body as Chromium sent it. */
const formField = (form: string, name: string) => new RegExp(`name="${name}"\r\n\r\n([^\r]*)\r\n`).exec(form)?.[1];

/**
 * The web app in a real Chromium against the real API (Postgres, the Temporal dev server, a control and a render
 * worker, each real): a photo with no pet is never made into a video (and costs nothing) until the person has
 * placed the mouth marker, by keyboard or by a drag, and the create then sends that point; without payments
 * configured no page offers anything to buy, and with them (the test suite's local Stripe) the same pages do.
 */
describe('the web app in Chromium: no face, no payments', () => {
  let plain: TestService;
  let paying: TestService;
  let stripe: FakeStripe;
  let browser: Browser;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dashboard', 'dist', 'index.html'))) throw new Error('The web app is not built: run `npm run build:dashboard` (npm ci does it).');
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: install Debian's chromium or set CHROMIUM_PATH.`);
    await mkdir(SCREENSHOTS, { recursive: true });
    stripe = await startFakeStripe();
    [plain, paying, browser] = await Promise.all([
      // The embedded default: no STRIPE_* set.
      startTestService({ temporal: true, controlWorker: true, renderWorker: true, env: { RENDER_OUTPUT_SIZE: '192' } }),
      startTestService({ env: { STRIPE_SECRET_KEY: 'sk_test_petsing_web_no_face', STRIPE_WEBHOOK_SECRET, STRIPE_API_BASE: stripe.apiBase } }),
      chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] }),
    ]);
    await seedTemplates(plain.context);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await plain?.stop();
    await paying?.stop();
    await stripe?.close();
  });

  /** A new person signed in with the development sign-in, on the create page; its ID token for the API. */
  const signedIn = async (service: TestService, email: string, { watch }: { watch: boolean }) => {
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    if (watch) {
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    }
    await page.goto(`${service.baseUrl}/app/sign-in`);
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Sign in (development)' }).click();
    await page.getByRole('heading', { level: 1, name: 'New video' }).waitFor();
    const stored = (await context.storageState()).origins.flatMap((origin) => origin.localStorage).find((entry) => entry.name === 'petsing.session');
    const token = JSON.parse(stored?.value ?? '{}').idToken as string;
    return { context, page, token };
  };

  /** The landing page once its prices have been answered (the pricing section is aria-busy until then). */
  const landing = async (service: TestService) => {
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    await page.goto(`${service.baseUrl}/`);
    await page.locator('#pricing[aria-busy="false"]').waitFor();
    return { context, page };
  };

  it('a photo with no pet waits for the marker to be placed, by keyboard or by a drag, spends nothing meanwhile, then is made with the placed mouth', async () => {
    const { context, page, token } = await signedIn(plain, 'no-face@example.com', { watch: true });
    const api = (path: string) => json(fetch(`${plain.baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } }));
    const makeItSing = page.getByRole('button', { name: 'Make it sing' });
    const marker = page.getByRole('button', { name: /^Your pet's mouth:/ });
    const markerAt = async (): Promise<Point> => ({ x: Number(await marker.getAttribute('data-x')), y: Number(await marker.getAttribute('data-y')) });
    const pickNoPetPhoto = async () => {
      await page.locator('input[type=file][name=image]').setInputFiles(NO_PET_PHOTO);
      await page.getByTestId('face-check').getByText(/^No pet face was found\./).waitFor({ timeout: 60_000 });
      await page.locator('input[name=template_id]:checked').waitFor();
      await waitFor('the photo', async () => page.locator('.marker-frame img').evaluate((image) => (image as unknown as { complete: boolean }).complete));
    };
    /** "Make it sing" waits: disabled for assistive technology too (so it stays focusable), the reason read with it. */
    const expectWaitingForMarker = async () => {
      expect(await makeItSing.isDisabled()).toBe(true);
      expect(await makeItSing.getAttribute('aria-disabled')).toBe('true');
      const describedBy = await makeItSing.getAttribute('aria-describedby');
      expect(describedBy).toBeTruthy();
      expect(await page.locator(`[id="${describedBy}"]`).textContent()).toBe(PLACE_MARKER);
    };
    const expectReady = async () => {
      await page.getByTestId('face-check').getByText('The mouth is where you put the marker.').waitFor();
      expect(await makeItSing.isEnabled()).toBe(true);
      expect(await makeItSing.getAttribute('aria-describedby')).toBeNull();
      expect(await page.getByTestId('create-waiting').count()).toBe(0);
    };
    const creates: string[] = [];
    page.on('request', (request) => {
      if (/\/create-with-(template|audio)$/.test(request.url())) creates.push(request.url());
    });

    await page.getByText('2 free videos left').waitFor();
    await pickNoPetPhoto();
    await expectWaitingForMarker();
    const { violations } = await new AxeBuilder({ page }).analyze();
    const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
    expect(serious.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)).toEqual([]);
    // The whole page, so that the button and what it waits for are in the picture.
    await page.screenshot({ path: join(SCREENSHOTS, 'create-no-face-phone.png'), fullPage: true, animations: 'disabled' });
    // A tap, and Enter on the focused button, make nothing and spend nothing.
    await makeItSing.click({ force: true });
    await makeItSing.press('Enter');
    await expectWaitingForMarker();
    expect(await api('/user/me')).toMatchObject({ free_credits: 2 });
    expect(await api('/user/videos')).toMatchObject({ total: 0 });

    // By keyboard: Shift+Tab from the photo's buttons reaches the marker; the arrow keys move it (Shift: 5 %).
    await page.getByLabel('Take a photo').focus();
    await page.keyboard.press('Shift+Tab');
    expect(await marker.evaluate((element) => (element as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement === element)).toBe(true);
    const centre = await markerAt();
    for (const key of ['Shift+ArrowLeft', 'Shift+ArrowLeft', 'ArrowUp']) await page.keyboard.press(key);
    const keyed = await markerAt();
    expect(keyed.x).toBeCloseTo(centre.x - 0.1, 3);
    expect(keyed.y).toBeCloseTo(centre.y - 0.01, 3);
    await expectReady();

    // By a drag, on the photo picked afresh (the page reloaded: nothing placed yet).
    await page.reload();
    await page.getByText('2 free videos left').waitFor();
    await pickNoPetPhoto();
    await expectWaitingForMarker();
    const from = await markerAt();
    const frame = (await page.locator('.marker-frame').boundingBox())!;
    await page.mouse.move(frame.x + from.x * frame.width, frame.y + from.y * frame.height);
    await page.mouse.down();
    await page.mouse.move(frame.x + DRAGGED_TO.x * frame.width, frame.y + DRAGGED_TO.y * frame.height, { steps: 8 });
    await page.mouse.up();
    const placed = await markerAt();
    expect(Math.hypot(placed.x - DRAGGED_TO.x, placed.y - DRAGGED_TO.y), JSON.stringify(placed)).toBeLessThan(0.01);
    await expectReady();
    await page.screenshot({ path: join(SCREENSHOTS, 'create-no-face-placed-phone.png'), fullPage: true, animations: 'disabled' });

    // The create names the checked photo and carries the placed mouth; the API takes it and the render makes it.
    expect(creates).toEqual([]);
    const creating = page.waitForRequest((request) => request.url().endsWith('/create-with-template'));
    await makeItSing.click();
    const form = (await creating).postData() ?? '';
    expect(formField(form, 'image_id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(form).not.toContain('filename=');
    expect(JSON.parse(formField(form, 'face') ?? '{}')).toEqual({ mouth: placed });
    await page.waitForURL(/\/app\/videos\/[0-9a-f-]{36}$/);
    await page.getByTestId('video-status').getByText('Ready').waitFor({ timeout: 180_000 });
    await page.getByRole('link', { name: 'Download' }).waitFor();
    expect(creates).toHaveLength(1);
    expect(await api('/user/me')).toMatchObject({ free_credits: 1 });
    expect(await api('/user/videos')).toMatchObject({ total: 1, videos: [{ status: 'completed', has_watermark: true }] });

    expect(problems, problems.join('\n')).toEqual([]);
    await context.close();
  }, 300_000);

  it('without payments configured, no page offers anything to buy: no watermark removal, no plan, no credits, no paid plan on the start page', async () => {
    const { context, page, token } = await signedIn(plain, 'no-payments@example.com', { watch: false });
    const { id: userId } = await json(fetch(`${plain.baseUrl}/user/me`, { headers: { Authorization: `Bearer ${token}` } }));
    const videoId = await insertWebVideo(plain.database.db, userId);
    await plain.database.db.updateTable('users').set({ free_credits: 0 }).where('id', '=', userId).execute();

    // The month's free videos used: when they come back, and no plan to buy instead.
    await page.reload();
    await page.getByTestId('no-credits').getByText(/They come back on/).waitFor();
    expect(await page.getByTestId('no-credits').getByRole('link').count()).toBe(0);
    expect(await page.getByTestId('no-credits').getByRole('listitem').count()).toBe(0);
    // A finished, watermarked video: no removal offered.
    await page.goto(`${plain.baseUrl}/app/videos/${videoId}`);
    await page.getByRole('link', { name: 'Download' }).waitFor();
    expect(await page.getByRole('button', { name: /Remove the watermark/ }).count()).toBe(0);
    // The plan page: the free plan and its videos, no plan to choose; the developer page: no credits to buy.
    await page.getByRole('link', { name: 'Plan', exact: true }).click();
    await page.getByTestId('current-plan').getByText('Free.').waitFor();
    expect(await page.getByRole('heading', { name: 'Plans' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Choose / }).count()).toBe(0);
    await page.getByRole('link', { name: 'Developers', exact: true }).click();
    await page.getByTestId('credit-balance').waitFor();
    expect(await page.getByRole('heading', { name: 'Buy credits' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Buy \d+ credits$/ }).count()).toBe(0);
    await context.close();
    // The start page: the free plan only.
    const visitor = await landing(plain);
    await visitor.page.getByText('2 videos every month').waitFor();
    expect(await visitor.page.getByText(/per week|per year|Removing the watermark/).count()).toBe(0);
    await visitor.context.close();
  }, 120_000);

  it('with payments configured (the local Stripe), the same pages offer the plans, credits and the watermark removal', async () => {
    const visitor = await landing(paying);
    await visitor.page.getByText(/per week/).waitFor();
    await visitor.page.getByText('Removing the watermark from one video: $1.99.').waitFor();
    await visitor.context.close();

    const { context, page, token } = await signedIn(paying, 'paying@example.com', { watch: false });
    const { id: userId } = await json(fetch(`${paying.baseUrl}/user/me`, { headers: { Authorization: `Bearer ${token}` } }));
    const videoId = await insertWebVideo(paying.database.db, userId as string);
    await page.goto(`${paying.baseUrl}/app/videos/${videoId}`);
    // The page asks for the video and the prices at once; on a loaded machine (the suite's two files at a time) that has
    // taken longer than the default 30 s.
    await page.getByRole('button', { name: 'Remove the watermark ($1.99)' }).waitFor({ timeout: 60_000 });
    await page.getByRole('link', { name: 'Plan', exact: true }).click();
    await page.getByRole('button', { name: 'Choose Annual' }).waitFor();
    await page.getByRole('link', { name: 'Developers', exact: true }).click();
    await page.getByRole('button', { name: 'Buy 100 credits' }).waitFor();
    await context.close();
  }, 120_000);
});
