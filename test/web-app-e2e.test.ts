import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page, type Response as PageResponse } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverWebhook, startFakeStripe, stripeEvent, type FakeStripe } from './support/fake-stripe.ts';
import { embeddedServiceEnv, PETSING_CLI, stopProcess, waitFor, waitForHealth } from './support/processes.ts';
import { json } from './support/http.ts';
import { distance, motionCentre, motionGain, motionMap, type FramePoint } from './support/video-motion.ts';
import { SHORT_VIDEO, startFakeShortVideo } from './support/fake-short-video.ts';
import { makeSong, songWav } from './support/song-mix.ts';
import { prepareJob } from '@petsing/render-node';
import { writeSilence } from '../render-node/test/helpers.ts';
import { unsubscribeToken } from '../control-plane/src/services/email.service.ts';
import { devIdToken, startOAuthClient } from './support/oauth-authorization.ts';
import { startOidcProvider } from './support/oidc-provider.ts';
import { startTestService } from './support/test-service.ts';

const ROOT = join(import.meta.dirname, '..');
/** Debian's chromium (infra/setup-host.sh installs it with PETSING_TEST_TOOLS=1); no browser is downloaded. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** A real pet photo beside the project (read in place, never copied): a frontal tabby kitten, CC0. */
const PET_PHOTO = join(ROOT, '..', 'shared', 'pets', 'cat-01.jpg');
/**
 * Where the run leaves one screenshot per page and size: a git-ignored folder, so a run leaves the tree clean.
 * `npm run screenshots:docs` copies them to docs/screenshots/, where the current ones are committed.
 */
const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? join(ROOT, 'test-output', 'screenshots');
/** The output size the service renders at here (RENDER_OUTPUT_SIZE): square videos are this wide and high. */
const RENDER_SIZE = 192;
const FIRST_PAGE_JS_BUDGET_BYTES = 150 * 1024;
/** All the landing page may transfer on a phone before the person taps anything. */
const LANDING_BUDGET_BYTES = 500 * 1024;
const STRIPE_WEBHOOK_SECRET = 'whsec_petsing_web_e2e';
/** The photo's hand-checked mouth, as fractions of its width and height (shared/pets/landmarks.json). */
const PET_MOUTH = (() => {
  const { mouth, width, height } = JSON.parse(readFileSync(join(ROOT, '..', 'shared', 'pets', 'landmarks.json'), 'utf8'))['cat-01.jpg'] as { mouth: [number, number]; width: number; height: number };
  return { x: mouth[0] / width, y: mouth[1] / height };
})();
/** Where the mouth-marker test drags the marker first: low on the left, well away from the kitten's mouth. */
const WRONG_MOUTH = { x: 0.25, y: 0.85 };
/** A text field of a multipart body as Chromium sent it. */
const formField = (form: string, name: string) => new RegExp(`name="${name}"\r\n\r\n([^\r]*)\r\n`).exec(form)?.[1];
/** The face a create sends (fractions of the photo), as the render node takes it. */
type FaceHintsSent = { mouth: FramePoint; nose?: FramePoint; chin?: FramePoint; eyes?: [FramePoint, FramePoint] };
/** The parts of a <video> element read here (the test program is type-checked without the DOM library). */
type MediaElement = { play(): Promise<void>; pause(): void; duration: number; readyState: number; paused: boolean; currentTime: number };
/** How many pixels the page reaches past the right edge of the screen (0 when it fits). */
const overflowOf = (target: Page) =>
  target.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
/** Waits until every <img> of the page has loaded (so a screenshot shows them), but those left to load when scrolled to. */
const imagesLoaded = (target: Page) =>
  waitFor('the images', async () => target.locator('img').evaluateAll((images) => images.every((image) => {
    const { complete, loading } = image as unknown as { complete: boolean; loading: string };
    return complete || loading === 'lazy';
  })), 15_000);
/** Waits until the page's player reaches a readyState (3: HAVE_FUTURE_DATA, it can play); no eval (the CSP forbids it). */
const playerReady = (target: Page, state: number) =>
  waitFor(`the player's readyState ${state}`, async () => (await target.locator('.player video').evaluate((element) => (element as unknown as MediaElement).readyState)) >= state, 30_000);

const SIZES = {
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true },
  desktop: { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 },
} as const;

/**
 * The web app in a real Chromium against `petsing start` on its embedded defaults (PGlite, local object
 * store, Temporal dev server, control and render workers), with Stripe pointed at the test suite's local
 * Stripe: development sign-in, a video made from a template with a real pet photo whose mouth marker (where
 * the photo check found the mouth) is dragged and nudged by a key, its progress seen live
 * over the websocket, the finished video playing inline, the library, the watermark removed and a plan
 * bought through Stripe Checkout (its pages stood in for by the test: it completes the session, delivers the
 * signed webhook and sends the browser back where Stripe would), the billing portal's round trip, an API key
 * made, used and revoked on the developer page, API credits bought, a recording made with Chromium's fake
 * microphone turned into a video, deleting.
 * Every page is photographed at phone and desktop size.
 */
describe('the web app in Chromium', () => {
  let dataDir: string;
  let baseUrl: string;
  let service: ChildProcess | undefined;
  let output = '';
  let browser: Browser;
  let phone: BrowserContext;
  let page: Page;
  let stripe: FakeStripe;
  let shortVideo: Awaited<ReturnType<typeof startFakeShortVideo>> | undefined;
  const problems: string[] = [];

  const started = Date.now();
  const mark = (what: string) => console.log(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dashboard', 'dist', 'index.html'))) throw new Error('The web app is not built: run `npm run build:dashboard` (npm ci does it).');
    if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: install Debian's chromium (PETSING_TEST_TOOLS=1 bash infra/setup-host.sh) or set CHROMIUM_PATH.`);
    await mkdir(SCREENSHOTS, { recursive: true });
    stripe = await startFakeStripe();
    dataDir = await mkdtemp(join(tmpdir(), 'petsing-web-e2e-'));
    shortVideo = await startFakeShortVideo(dataDir);
    // A band without a voice: the create page warns before paying.
    await writeFile(join(dataDir, 'instrumental.wav'), songWav(makeSong({ seconds: 3, verses: [] })));
    const { env, port } = await embeddedServiceEnv(dataDir, {
      RENDER_OUTPUT_SIZE: String(RENDER_SIZE),
      STRIPE_SECRET_KEY: 'sk_test_petsing_web_e2e',
      STRIPE_WEBHOOK_SECRET,
      STRIPE_API_BASE: stripe.apiBase,
      // Short-video links: yt-dlp and the platform's CDN played by the test, the CDN on loopback.
      YTDLP_PATH: shortVideo.ytDlpPath,
      DEV_ALLOW_LOCAL_URLS: 'true',
      // The landing page plays them.
      TEMPLATE_PREVIEWS: 'true',
    });
    baseUrl = `http://localhost:${port}`;
    service = spawn(process.execPath, [PETSING_CLI, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    service.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    service.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [
        '--no-sandbox',
        '--disable-dev-shm-usage',
        '--autoplay-policy=no-user-gesture-required',
        // A microphone that plays a tone, allowed without asking: the recording create.
        '--use-fake-device-for-media-stream',
        '--use-fake-ui-for-media-stream',
      ], });
    // Three test files start `petsing start`; on a loaded 2-core machine a start takes up to 2 minutes.
    await waitForHealth(service, baseUrl, () => output, 150_000);
    // A first start builds its template songs in the background, and template requests (the landing page's) wait for
    // them: on a loaded machine, past a page load's 30 s. The pages are tried once they are there.
    expect((await fetch(`${baseUrl}/templates`, { signal: AbortSignal.timeout(150_000) })).status).toBe(200);
    mark('service up');
    phone = await browser.newContext(SIZES.phone);
    await standInForStripe(phone);
    page = await phone.newPage();
    watch(page);
  }, 200_000);

  afterAll(async () => {
    await browser?.close();
    await stopProcess(service);
    await stripe?.close();
    await shortVideo?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /**
   * Stripe's hosted pages, played by the test: Checkout completes the session the service created (a
   * subscription's with an active subscription), delivers `checkout.session.completed` signed like Stripe,
   * and sends the browser to the session's success URL; the billing portal sends it back to its return URL.
   */
  const standInForStripe = async (context: BrowserContext) => {
    await context.route('https://checkout.stripe.test/**', async (route) => {
      const id = new URL(route.request().url()).pathname.split('/').pop()!;
      const session = stripe.sessions.get(id);
      if (!session) return route.fulfill({ status: 404, body: 'no such checkout session' });
      const metadata = session.metadata as Record<string, string>;
      const subscription =
        session.mode === 'subscription'
          ? stripe.putSubscription({ customer: String(session.customer), status: 'active', plan: metadata.plan as 'weekly' | 'annual', userId: metadata.user_id })
          : undefined;
      const delivered = await deliverWebhook(baseUrl, stripeEvent('checkout.session.completed', stripe.completeSession(id, subscription?.id)), STRIPE_WEBHOOK_SECRET);
      expect(delivered.status).toBe(200);
      await route.fulfill({ status: 303, headers: { Location: String(session.success_url).replace('{CHECKOUT_SESSION_ID}', id) } });
    });
    await context.route('https://billing.stripe.test/**', async (route) => {
      const portal = stripe.requests.filter((request) => request.path === '/v1/billing_portal/sessions').at(-1);
      await route.fulfill({ status: 303, headers: { Location: String(portal?.body.return_url) } });
    });
  };

  /** Console errors (a CSP refusal is one) and warnings, and failed page loads, are collected and must stay empty. */
  const watch = (target: Page) => {
    target.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
    });
    target.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  };

  const shoot = async (target: Page, name: string, size: keyof typeof SIZES) => {
    await target.screenshot({ path: join(SCREENSHOTS, `${name}-${size}.png`), fullPage: false, animations: 'disabled' });
  };

  /** The same page at desktop size, signed in as the phone is (its localStorage). */
  const onDesktop = async (path: string, name: string, ready: (target: Page) => Promise<unknown>) => {
    const desktop = await browser.newContext({ ...SIZES.desktop, storageState: await phone.storageState() });
    try {
      const target = await desktop.newPage();
      watch(target);
      await target.goto(`${baseUrl}${path}`);
      await ready(target);
      await shoot(target, name, 'desktop');
    } finally {
      await desktop.close();
    }
  };

  it('signs in, makes a video from a pet photo, follows it live, plays it, pays to remove its watermark, buys a plan, manages API keys and credits, records a voice, deletes', async () => {
    // The landing page: a browser asking for / gets the app, with songs and prices. Everything it transfers before
    // any tap (bytes on the wire: headers and compressed bodies), and its JavaScript, stay within budget.
    const reading: Promise<{ url: string; type: string; encoding: string | undefined; wire: number }>[] = [];
    const collect = (response: PageResponse) => {
      const request = response.request();
      reading.push(request.sizes().then((sizes) => ({
        url: response.url(),
        type: request.resourceType(),
        encoding: response.headers()['content-encoding'],
        wire: sizes.responseHeadersSize + sizes.responseBodySize,
      })));
    };
    page.on('response', collect);
    await page.goto(`${baseUrl}/`, { waitUntil: 'networkidle' });
    await page.getByRole('heading', { level: 1, name: 'Make your pet sing' }).waitFor();
    await page.locator('.template-grid li').first().waitFor();
    await page.getByText(/per week/).waitFor();
    await page.waitForLoadState('networkidle');
    page.off('response', collect);
    const transfers = await Promise.all(reading);
    const scripts = transfers.filter((transfer) => transfer.type === 'script');
    const firstPageJs = scripts.reduce((sum, script) => sum + script.wire, 0);
    const landingBytes = transfers.reduce((sum, transfer) => sum + transfer.wire, 0);
    console.log(`landing page before any tap: ${transfers.length} responses, ${(landingBytes / 1024).toFixed(1)} KB on the wire; JavaScript ${scripts.length} files, ${(firstPageJs / 1024).toFixed(1)} KB`);
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) expect(script.encoding, script.url).toMatch(/^(br|gzip)$/);
    expect(firstPageJs).toBeLessThanOrEqual(FIRST_PAGE_JS_BUDGET_BYTES);
    expect(transfers.filter((transfer) => transfer.type === 'media'), 'no song preview loads before a tap').toEqual([]);
    expect(landingBytes).toBeLessThanOrEqual(LANDING_BUDGET_BYTES);
    mark('landing');
    await onDesktop('/app/sign-in', 'sign-in', (target) => target.getByText('Development sign-in.').waitFor());

    // Development sign-in, clearly labelled as such.
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByText('Development sign-in.').waitFor();
    await shoot(page, 'sign-in', 'phone');
    await page.getByLabel('Email address').fill('e2e-owner@example.com');
    await page.getByRole('button', { name: 'Sign in (development)' }).click();

    // Create: a photo, a song, a shape; the free credits left are shown before the tap.
    await page.getByRole('heading', { level: 1, name: 'New video' }).waitFor();
    mark('signed in');
    await page.getByText('2 free videos left').waitFor();
    await page.locator('input[type=file][name=image]').setInputFiles(PET_PHOTO);

    // The photo check shows where the mouth was found; the marker is dragged (and nudged with a key) elsewhere.
    const marker = page.getByRole('button', { name: /^Your pet's mouth:/ });
    await marker.waitFor({ timeout: 60_000 });
    await page.getByTestId('face-check').getByText("We found your cat's mouth").waitFor();
    const markerAt = async () => ({ x: Number(await marker.getAttribute('data-x')), y: Number(await marker.getAttribute('data-y')) });
    const found = await markerAt();
    expect(Math.hypot(found.x - PET_MOUTH.x, found.y - PET_MOUTH.y), JSON.stringify({ found, PET_MOUTH })).toBeLessThan(0.12);
    await imagesLoaded(page);
    await shoot(page, 'create', 'phone');
    const frame = (await page.locator('.marker-frame').boundingBox())!;
    await page.mouse.move(frame.x + found.x * frame.width, frame.y + found.y * frame.height);
    await page.mouse.down();
    await page.mouse.move(frame.x + (found.x + 0.1) * frame.width, frame.y + (found.y + 0.05) * frame.height, { steps: 5 });
    await page.mouse.up();
    const dragged = await markerAt();
    expect(Math.abs(dragged.x - (found.x + 0.1))).toBeLessThan(0.01);
    expect(Math.abs(dragged.y - (found.y + 0.05))).toBeLessThan(0.01);
    await marker.press('ArrowLeft');
    const placed = await markerAt();
    expect(placed.x).toBeCloseTo(dragged.x - 0.01, 3);
    await page.getByTestId('face-check').getByText('The mouth is where you put the marker.').waitFor();

    // The first song (the oldest template), as GET /templates lists them, and the story shape.
    await page.locator('input[name=template_id]').first().check();
    const templates = (await json(fetch(`${baseUrl}/templates`))) as Array<{ id: string; duration_seconds: number }>;
    await page.getByLabel(/Story/).check();
    await onDesktop('/app/new', 'create', (target) => target.getByText('2 free videos left').waitFor());

    // Live progress: the websocket's video.status events, and what the page shows of them.
    const events: { status: string; progress: number }[] = [];
    page.on('websocket', (socket) =>
      socket.on('framereceived', ({ payload }) => {
        const message = JSON.parse(String(payload)) as { type: string; status: string; progress: number };
        if (message.type === 'video.status') events.push({ status: message.status, progress: message.progress });
      }),
    );
    // Everything the status panel shows is recorded as it changes (a MutationObserver reporting to the test),
    // so a fast render cannot slip between two looks.
    const panelTexts: string[] = [];
    await page.exposeFunction('reportStatusPanel', (text: string) => panelTexts.push(text));
    // On the phone, with a photo chosen and a song picked, "Make it sing" is within two screen heights of the top.
    await page.locator('input[name=template_id]').nth(1).check();
    const makeItSing = page.getByRole('button', { name: 'Make it sing' });
    const buttonBottom = await makeItSing.evaluate((element) => {
      const view = globalThis as unknown as { scrollY: number };
      return (element as unknown as { getBoundingClientRect(): { bottom: number } }).getBoundingClientRect().bottom + view.scrollY;
    });
    console.log(`create page: "Make it sing" ends ${Math.round(buttonBottom)} px from the top (two screens: ${2 * SIZES.phone.viewport.height})`);
    await page.screenshot({ path: join(SCREENSHOTS, 'create-whole-phone.png'), fullPage: true, animations: 'disabled' });
    expect(buttonBottom).toBeLessThanOrEqual(2 * SIZES.phone.viewport.height);
    const creating = page.waitForRequest((request) => request.url().endsWith('/create-with-template'));
    await makeItSing.click();
    // The create names the checked photo and carries the mouth where the marker was left.
    const form = (await creating).postData() ?? '';
    const field = (name: string) => formField(form, name);
    expect(field('image_id')).toMatch(/^[0-9a-f-]{36}$/);
    // The song the video is made of: the one checked last (the second), as the create sent it.
    const chosen = templates.find((template) => String(template.id) === field('template_id'))!;
    expect(chosen, form).toBeDefined();
    expect(form).not.toContain('filename=');
    expect(JSON.parse(field('face') ?? '{}').mouth).toEqual(placed);
    await page.waitForURL(/\/app\/videos\/[0-9a-f-]{36}$/);
    const videoId = page.url().split('/').pop()!;
    mark('created');
    await page.locator('.status-panel').evaluate((panel) => {
      type Observer = new (callback: () => void) => { observe(target: unknown, options: object): void };
      const page = globalThis as unknown as { reportStatusPanel(text: string): void; MutationObserver: Observer };
      const report = () => page.reportStatusPanel((panel as unknown as { textContent: string }).textContent);
      report();
      new page.MutationObserver(report).observe(panel, { childList: true, characterData: true, subtree: true });
    });
    let rendering = false;
    await waitFor('the render to finish', async () => {
      const text = (await page.getByTestId('video-status').textContent()) ?? '';
      if (!rendering && /^Rendering, [1-9]\d?% done$/.test(text)) {
        rendering = true;
        await shoot(page, 'video-rendering', 'phone');
      }
      return text === 'Ready';
    }, 120_000);
    mark('ready');
    expect(events.some((event) => event.status === 'processing' && event.progress > 0 && event.progress < 100), JSON.stringify(events)).toBe(true);
    expect(events.at(-1)?.status).toBe('completed');
    expect(panelTexts.some((text) => text.includes('Live updates on')), panelTexts.join(' | ')).toBe(true);
    expect(panelTexts.some((text) => /Rendering, [1-9]\d?% done/.test(text)), panelTexts.join(' | ')).toBe(true);

    // The finished video plays inline, as long as the song.
    const video = page.locator('video[aria-label="Your pet\'s singing video"]');
    await video.waitFor();
    await video.evaluate((element) => (element as unknown as MediaElement).play().catch(() => undefined));
    await playerReady(page, 3);
    const duration = await video.evaluate((element) => (element as unknown as MediaElement).duration);
    expect(Math.abs(duration - Math.min(30, chosen.duration_seconds)), `${duration} s played, song ${JSON.stringify(chosen)}`).toBeLessThan(0.1);
    await page.getByRole('link', { name: 'Download' }).waitFor();
    await video.evaluate((element) => (element as unknown as MediaElement).pause());
    await shoot(page, 'video', 'phone');
    await onDesktop(`/app/videos/${videoId}`, 'video', (target) =>
      playerReady(target, 2),
    );

    // The library: newest first, with status and the watermark badge.
    await page.getByRole('link', { name: 'My videos', exact: true }).click();
    const item = page.locator('.video-item').first();
    await item.getByText('Ready').waitFor();
    await item.getByText('Watermark').waitFor();
    await shoot(page, 'library', 'phone');
    await onDesktop('/app', 'library', (target) => target.locator('.video-item').first().getByText('Ready').waitFor());
    mark('library');

    // The watermark removed: Checkout, back to the video, which is made again without it, live.
    await item.getByRole('link').click();
    await page.getByRole('button', { name: /^Remove the watermark \(.+\)$/ }).click();
    await page.waitForURL(`${baseUrl}/app/videos/${videoId}`);
    await page.getByText('The watermark is gone: this is the new video.').waitFor({ timeout: 90_000 });
    await page.locator('.facts').getByText('No', { exact: true }).waitFor();
    expect(page.url()).toBe(`${baseUrl}/app/videos/${videoId}`);
    await playerReady(page, 2);
    mark('watermark removed');

    // A plan: the plans in the visitor's currency, Checkout, back to a confirmed plan; then the billing portal.
    await page.getByRole('link', { name: 'Plan', exact: true }).click();
    await page.getByRole('button', { name: 'Choose Annual' }).waitFor();
    await shoot(page, 'plans', 'phone');
    await onDesktop('/account', 'plans', (target) => target.getByRole('button', { name: 'Choose Annual' }).waitFor());
    await page.getByRole('button', { name: 'Choose Annual' }).click();
    await page.waitForURL(/\/checkout\/success\?session_id=cs_test_/);
    await page.getByText('Your Annual plan is active').waitFor({ timeout: 30_000 });
    await shoot(page, 'checkout-success', 'phone');
    await onDesktop('/checkout/success?session_id=cs_test_again', 'checkout-success', (target) => target.getByText('Your Annual plan is active').waitFor({ timeout: 30_000 }));
    await page.getByRole('link', { name: 'Plan and billing' }).click();
    await page.getByTestId('current-plan').getByText('Annual plan').waitFor();
    await page.getByRole('button', { name: 'Manage billing and receipts' }).click();
    await page.waitForURL(`${baseUrl}/account`);
    await page.getByTestId('current-plan').getByText('Annual plan').waitFor();
    mark('plan bought');

    // Developers: a read-only key made in the page works from outside, is shown only once, and answers 401 once
    // revoked there; API credits bought through Checkout show in the balance and the ledger.
    await page.getByRole('link', { name: 'Developers', exact: true }).click();
    await page.getByLabel('Key name').fill('e2e laptop');
    await page.getByLabel(/^Read-only/).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('API key', { exact: true }).inputValue();
    expect(key).toMatch(/^psk_live_/);
    const asKey = () => fetch(`${baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${key}` } });
    const me = await asKey();
    expect(me.status).toBe(200);
    expect((await json(me)).scopes).toEqual(['videos:read']);
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await page.reload();
    await page.getByTestId('api-key').getByText('e2e laptop').waitFor();
    expect(await page.content()).not.toContain(key);
    await page.getByRole('button', { name: 'Buy 100 credits' }).click();
    await page.waitForURL(`${baseUrl}/app/developers`);
    await page.getByTestId('credit-balance').getByText('100', { exact: true }).waitFor({ timeout: 30_000 });
    await page.getByRole('cell', { name: 'Credits bought' }).waitFor();
    await shoot(page, 'developers', 'phone');
    await onDesktop('/app/developers', 'developers', (target) => target.getByTestId('credit-balance').getByText('100', { exact: true }).waitFor());
    await page.getByRole('button', { name: 'Revoke e2e laptop' }).click();
    await page.getByRole('button', { name: 'Yes, revoke it' }).click();
    await page.getByTestId('api-key').getByText(/^Revoked/).waitFor();
    expect((await asKey()).status).toBe(401);
    mark('developers');

    // A recording made in the browser (Chromium's fake microphone) becomes an audio create, as long as the take.
    await page.getByRole('link', { name: 'New video', exact: true }).click();
    await page.locator('input[type=file][name=image]').setInputFiles(PET_PHOTO);
    await page.getByText('Your plan includes this video').waitFor();
    await page.getByTestId('face-check').getByText("We found your cat's mouth").waitFor({ timeout: 60_000 });
    await page.getByLabel('Record your voice').check();
    await page.getByRole('button', { name: 'Start recording' }).click();
    await page.getByText(/^Recording… 3 s/).waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Stop recording' }).click();
    const recorded = Number(/Recorded (\d+\.\d) s/.exec((await page.getByText(/^Recorded \d/).textContent()) ?? '')?.[1]);
    expect(recorded).toBeGreaterThanOrEqual(3);
    await shoot(page, 'create-recording', 'phone');
    await page.getByRole('button', { name: 'Make it sing' }).click();
    await page.waitForURL(/\/app\/videos\/[0-9a-f-]{36}$/);
    await page.getByTestId('video-status').getByText('Ready').waitFor({ timeout: 120_000 });
    await playerReady(page, 3);
    const recordedVideo = await page.locator('.player video').evaluate((element) => (element as unknown as MediaElement).duration);
    expect(Math.abs(recordedVideo - recorded)).toBeLessThan(0.75);
    await page.getByRole('button', { name: 'Delete video' }).click();
    await page.getByRole('button', { name: 'Yes, delete it' }).click();
    await page.getByText('The video was deleted.').waitFor();
    mark('recording');

    // Delete, confirmed in the page; the API no longer lists it.
    await page.goto(`${baseUrl}/app/videos/${videoId}`);
    await page.getByRole('button', { name: 'Delete video' }).click();
    await page.getByRole('button', { name: 'Yes, delete it' }).click();
    await page.getByText('The video was deleted.').waitFor();
    await page.getByText('No videos yet.').waitFor();
    const stored = (await phone.storageState()).origins.flatMap((origin) => origin.localStorage).find((entry) => entry.name === 'petsing.session');
    const token = JSON.parse(stored?.value ?? '{}').idToken as string;
    const listed = await json(fetch(`${baseUrl}/user/videos`, { headers: { Authorization: `Bearer ${token}` } }));
    expect(listed.total).toBe(0);
    mark('deleted');

    // Signed out, the landing page shows the songs' preview clips as stills to tap (rendered in the background since
    // the start; a new browser, since GET /templates is cacheable for an hour and the first visit saw none yet).
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Make your pet sing' }).waitFor();
    await waitFor('the first preview clip', async () => (await json(fetch(`${baseUrl}/templates`)))[0].preview_video_url !== null, 90_000);
    const landingReady = async (target: Page) => {
      await target.getByText(/per week/).waitFor();
      await target.getByRole('button', { name: /^Play the example video: / }).first().waitFor();
      await imagesLoaded(target);
    };
    for (const size of ['phone', 'desktop'] as const) {
      const visitor = await browser.newContext(SIZES[size]);
      const target = await visitor.newPage();
      watch(target);
      await target.goto(`${baseUrl}/`);
      await landingReady(target);
      await shoot(target, 'landing', size);
      await visitor.close();
    }
    mark('landing with previews');

    expect(problems, problems.join('\n')).toEqual([]);
    expect(service?.exitCode, `the service stopped:\n${output}`).toBeNull();
  }, 300_000);

  /** A new person, signed in with the development sign-in in a browser context of its own; lands on the create page. */
  const signedIn = async (email: string, options: BrowserContextOptions) => {
    const context = await browser.newContext(options);
    await standInForStripe(context);
    const target = await context.newPage();
    watch(target);
    await target.goto(`${baseUrl}/app/sign-in`);
    await target.getByLabel('Email address').fill(email);
    await target.getByRole('button', { name: 'Sign in (development)' }).click();
    await target.getByRole('heading', { level: 1, name: 'New video' }).waitFor();
    return { context, page: target };
  };

  /** Picks the pet photo on the create page and waits for the photo check's marker. */
  const pickPetPhoto = async (target: Page) => {
    await target.locator('input[type=file][name=image]').setInputFiles(PET_PHOTO);
    await target.getByTestId('face-check').getByText("We found your cat's mouth").waitFor({ timeout: 60_000 });
  };

  const markerAt = async (target: Page): Promise<FramePoint> => {
    const marker = target.getByRole('button', { name: /^Your pet's mouth:/ });
    return { x: Number(await marker.getAttribute('data-x')), y: Number(await marker.getAttribute('data-y')) };
  };

  /** Drags the mouth marker with the mouse from where it is to `to` (fractions of the photo). */
  const dragMarker = async (target: Page, to: FramePoint) => {
    const from = await markerAt(target);
    await target.locator('.marker-frame').scrollIntoViewIfNeeded();
    const frame = (await target.locator('.marker-frame').boundingBox())!;
    await target.mouse.move(frame.x + from.x * frame.width, frame.y + from.y * frame.height);
    await target.mouse.down();
    await target.mouse.move(frame.x + to.x * frame.width, frame.y + to.y * frame.height, { steps: 8 });
    await target.mouse.up();
    const at = await markerAt(target);
    expect(distance(at, to), JSON.stringify({ at, to })).toBeLessThan(0.01);
  };

  /** Taps "Make it sing" and follows the video until it is ready: the create's form, the video's page and file link. */
  const makeVideo = async (target: Page, endpoint: '/create-with-template' | '/create-with-audio') => {
    const creating = target.waitForRequest((request) => request.url().endsWith(endpoint));
    await target.getByRole('button', { name: 'Make it sing' }).click();
    const form = (await creating).postData() ?? '';
    await target.waitForURL(/\/app\/videos\/[0-9a-f-]{36}$/);
    await target.getByTestId('video-status').getByText('Ready').waitFor({ timeout: 120_000 });
    const src = await target.locator('.player video').getAttribute('src');
    return { form, path: new URL(target.url()).pathname, file: new URL(src!, baseUrl).href };
  };

  /** One page photographed at both sizes, signed in as `storageState` says. */
  const photograph = async (storageState: Awaited<ReturnType<BrowserContext['storageState']>>, path: string, name: string, ready: (target: Page) => Promise<unknown>) => {
    for (const size of ['phone', 'desktop'] as const) {
      const context = await browser.newContext({ ...SIZES[size], storageState });
      try {
        const target = await context.newPage();
        watch(target);
        await target.goto(`${baseUrl}${path}`);
        await ready(target);
        await shoot(target, name, size);
      } finally {
        await context.close();
      }
    }
  };

  it('a wrong mouth marker dragged to the right place changes where the mouth moves', async () => {
    const { context, page: target } = await signedIn('e2e-mouth@example.com', SIZES.desktop);
    const scratch = await mkdtemp(join(tmpdir(), 'petsing-web-mouth-'));
    try {
      // Two videos of the same photo and song: the marker dragged far from the mouth, and dragged there first and
      // then onto the hand-checked mouth. Only the mouth point differs between their creates.
      const made: Partial<Record<'wrong' | 'right', { video: string; face: FaceHintsSent }>> = {};
      for (const [name, stops] of [['wrong', [WRONG_MOUTH]], ['right', [WRONG_MOUTH, PET_MOUTH]]] as const) {
        await target.goto(`${baseUrl}/app/new`);
        await pickPetPhoto(target);
        for (const stop of stops) await dragMarker(target, stop);
        const created = await makeVideo(target, '/create-with-template');
        const face = JSON.parse(formField(created.form, 'face') ?? 'null') as FaceHintsSent;
        expect(distance(face.mouth, stops.at(-1)!), JSON.stringify(face)).toBeLessThan(0.01);
        const video = join(scratch, `${name}.mp4`);
        await writeFile(video, Buffer.from(await (await fetch(created.file)).arrayBuffer()));
        made[name] = { video, face };
      }
      mark('mouth videos made');

      // Where the mouth point lands in the output frame: the render node's own framing of the same face.
      const silence = join(scratch, 'silence.wav');
      await writeSilence(silence, 2);
      const mouthInFrame = async (face: FaceHintsSent): Promise<FramePoint> => {
        const job = await prepareJob({ imagePath: PET_PHOTO, audioPath: silence, width: RENDER_SIZE, aspect: 'square', faceHints: face });
        return { x: job.frameFace.mouth[0] / job.frame.width, y: job.frameFace.mouth[1] / job.frame.height };
      };
      const wrongMouth = await mouthInFrame(made.wrong!.face);
      const rightMouth = await mouthInFrame(made.right!.face);
      const wrong = await motionMap(made.wrong!.video, RENDER_SIZE, RENDER_SIZE);
      const right = await motionMap(made.right!.video, RENDER_SIZE, RENDER_SIZE);
      // Head sway and blinks are the same in both; what differs is where the mouth opens.
      const onlyWrong = motionCentre(motionGain(wrong, right));
      const onlyRight = motionCentre(motionGain(right, wrong));
      const measured = { wrongMouth, rightMouth, onlyWrong, onlyRight, wrongCentre: motionCentre(wrong), rightCentre: motionCentre(right) };
      console.log(`mouth motion: ${JSON.stringify(measured)}`);
      expect(distance(onlyRight, rightMouth), JSON.stringify(measured)).toBeLessThan(0.1);
      expect(distance(onlyWrong, wrongMouth), JSON.stringify(measured)).toBeLessThan(0.1);
      // Nearer the wrong marker than the real mouth: the marker, not the model, placed the moving mouth.
      expect(distance(onlyWrong, rightMouth), JSON.stringify(measured)).toBeGreaterThan(distance(wrongMouth, rightMouth) / 2);
      // Each video's own motion centre moves the way the marker moved.
      const moved = { x: measured.wrongCentre.x - measured.rightCentre.x, y: measured.wrongCentre.y - measured.rightCentre.y };
      const dragged = { x: wrongMouth.x - rightMouth.x, y: wrongMouth.y - rightMouth.y };
      const cosine = (moved.x * dragged.x + moved.y * dragged.y) / (Math.hypot(moved.x, moved.y) * Math.hypot(dragged.x, dragged.y));
      expect(cosine, JSON.stringify(measured)).toBeGreaterThan(0.8);

      // Both free videos of the month are spent: the create page says so and offers the plans instead.
      await target.goto(`${baseUrl}/app/new`);
      const noCredits = target.getByTestId('no-credits');
      await noCredits.getByRole('link', { name: 'See the plans' }).waitFor();
      await pickPetPhoto(target);
      expect(await target.getByRole('button', { name: 'Make it sing' }).isDisabled()).toBe(true);
      await photograph(await context.storageState(), '/app/new', 'create-no-credits', (page) => page.getByTestId('no-credits').waitFor());
      await noCredits.getByRole('link', { name: 'See the plans' }).click();
      await target.getByRole('button', { name: 'Choose Annual' }).waitFor();
      mark('mouth');
    } finally {
      await context.close();
      await rm(scratch, { recursive: true, force: true });
    }
    expect(problems, problems.join('\n')).toEqual([]);
  }, 300_000);

  /** The speech test's person and video, which the accessibility pass visits. */
  let speechUser: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;
  let speechVideoPath: string | undefined;

  it('makes a video from typed text in a voice (local espeak-ng), and says why a short-video link was refused', async () => {
    const { context, page: target } = await signedIn('e2e-speech@example.com', SIZES.phone);
    try {
      await pickPetPhoto(target);
      await target.getByLabel('Type what it says').check();
      // Every voice has a sample that plays.
      const samples = target.locator('.voice audio');
      await samples.first().waitFor();
      expect(await samples.count()).toBeGreaterThan(1);
      await samples.nth(1).evaluate((element) => (element as unknown as MediaElement).play());
      await waitFor('a voice sample playing', async () => samples.nth(1).evaluate((element) => (element as unknown as MediaElement).currentTime > 0), 30_000);
      await samples.nth(1).evaluate((element) => (element as unknown as MediaElement).pause());
      await target.locator('input[name=voice_id]').nth(1).check();
      await target.getByText('Make the speech to continue.').waitFor();
      await target.getByLabel(/^What your pet says/).fill('Happy birthday to you, my dear little kitten. You sing so very well today!');
      const speaking = target.waitForResponse((response) => response.url().endsWith('/tts'));
      await target.getByRole('button', { name: 'Make the speech' }).click();
      const speech = (await (await speaking).json()) as { audio_url: string; duration_seconds: number };
      await target.getByText(/^Speech ready: \d+\.\d s/).waitFor();
      await shoot(target, 'create-speech', 'phone');
      const created = await makeVideo(target, '/create-with-audio');
      expect(formField(created.form, 'audio_url')).toBe(speech.audio_url);
      expect(created.form).not.toContain('filename=');
      await target.locator('.player video').evaluate((element) => (element as unknown as MediaElement).play().catch(() => undefined));
      await playerReady(target, 3);
      const duration = await target.locator('.player video').evaluate((element) => (element as unknown as MediaElement).duration);
      expect(Math.abs(duration - speech.duration_seconds)).toBeLessThan(0.5);
      await target.locator('.player video').evaluate((element) => (element as unknown as MediaElement).pause());
      speechVideoPath = created.path;
      mark('speech');

      // A link the service does not take: its message and hint are shown, in words.
      await target.getByRole('link', { name: 'Make another' }).click();
      await target.getByLabel(/^A short video/).check();
      await target.getByLabel(/^Link to a short video/).fill('https://example.com/videos/42');
      const extracting = target.waitForResponse((response) => response.url().endsWith('/social/extract-audio'));
      const problemsBefore = problems.length;
      await target.getByRole('button', { name: 'Get the sound' }).click();
      const refused = await extracting;
      expect(refused.status()).toBe(400);
      const { error } = (await refused.json()) as { error: { code: string; message: string; hint: string } };
      expect(error.code).toBe('unsupported_video_url');
      const notice = target.getByRole('alert').filter({ hasText: 'The sound could not be taken from this video.' });
      await notice.getByText(error.message, { exact: true }).waitFor();
      await notice.getByText(error.hint, { exact: true }).waitFor();
      // Chromium logs the refused request itself; that one is expected.
      const logged = problems.splice(problemsBefore);
      expect(logged.every((problem) => problem.includes('status of 400')), logged.join('\n')).toBe(true);
      // The hint quotes a long link: the page still fits the phone.
      expect(await overflowOf(target)).toBe(0);
      await shoot(target, 'create-link', 'phone');
      speechUser = await context.storageState();
    } finally {
      await context.close();
    }
    expect(problems, problems.join('\n')).toEqual([]);
  }, 240_000);

  it("makes a video from a short video's sound (yt-dlp and the platform's CDN played by the test)", async () => {
    const { context, page: target } = await signedIn('e2e-link@example.com', SIZES.phone);
    try {
      await pickPetPhoto(target);
      await target.getByLabel(/^A short video/).check();
      const link = 'https://www.tiktok.com/@petsing/video/7300000000000000001';
      await target.getByLabel(/^Link to a short video/).fill(link);
      const extracting = target.waitForResponse((response) => response.url().endsWith('/social/extract-audio'));
      await target.getByRole('button', { name: 'Get the sound' }).click();
      const sound = (await (await extracting).json()) as { audio_url: string; duration_seconds: number; title: string | null };
      expect(await shortVideo!.pages()).toContain(link);
      expect(sound.title).toBe(SHORT_VIDEO.title);
      expect(Math.abs(sound.duration_seconds - SHORT_VIDEO.seconds)).toBeLessThan(0.5);
      await target.getByText(`Sound ready from “${SHORT_VIDEO.title}”`, { exact: false }).waitFor();
      const created = await makeVideo(target, '/create-with-audio');
      expect(formField(created.form, 'audio_url')).toBe(sound.audio_url);
      expect(created.form).not.toContain('filename=');
      await target.locator('.player video').evaluate((element) => (element as unknown as MediaElement).play().catch(() => undefined));
      await playerReady(target, 3);
      const duration = await target.locator('.player video').evaluate((element) => (element as unknown as MediaElement).duration);
      expect(Math.abs(duration - sound.duration_seconds)).toBeLessThan(0.5);
      await target.locator('.player video').evaluate((element) => (element as unknown as MediaElement).pause());
      mark('short-video link');
    } finally {
      await context.close();
    }
    expect(problems, problems.join('\n')).toEqual([]);
  }, 240_000);

  it('every page has no serious or critical axe violations, fits 360 px and respects reduced motion', async () => {
    expect(speechUser && speechVideoPath, 'the speech test made the video visited here').toBeTruthy();
    const heading = (name: string | RegExp) => (target: Page) => target.getByRole('heading', { level: 1, name }).waitFor();
    const sound = (label: string | RegExp, shown: (target: Page) => Promise<unknown>) => async (target: Page) => {
      await target.getByLabel(label).check();
      await shown(target);
    };
    /** Every page of the app; `shot` says at which sizes a page is photographed here (the others are in the tests above). */
    const pages: { name: string; path: string; signedIn: boolean; ready: (target: Page) => Promise<unknown>; shot?: 'both' | 'desktop' }[] = [
      { name: 'landing', path: '/', signedIn: false, ready: (target) => target.getByText(/per week/).waitFor() },
      { name: 'sign-in', path: '/app/sign-in', signedIn: false, ready: (target) => target.getByText('Development sign-in.').waitFor() },
      { name: 'not-found', path: '/app/no/such/page', signedIn: false, ready: heading('Page not found'), shot: 'both' },
      { name: 'create-song', path: '/app/new', signedIn: true, ready: (target) => target.locator('input[name=template_id]').first().waitFor() },
      { name: 'create-photo', path: '/app/new', signedIn: true, ready: pickPetPhoto },
      { name: 'create-recording', path: '/app/new', signedIn: true, ready: sound('Record your voice', (target) => target.getByRole('button', { name: 'Start recording' }).waitFor()) },
      {
        name: 'create-file',
        path: '/app/new',
        signedIn: true,
        // An instrumental file: the audio check finds no singing voice and the page says so before paying.
        ready: sound('An audio file', async (target) => {
          await target.getByLabel(/^Audio file/).setInputFiles(join(dataDir, 'instrumental.wav'));
          await target.getByTestId('no-voice').getByText(/^No singing voice found/).waitFor();
        }),
        shot: 'both',
      },
      { name: 'create-speech', path: '/app/new', signedIn: true, ready: sound('Type what it says', (target) => target.locator('.voice audio').first().waitFor()), shot: 'desktop' },
      { name: 'create-link', path: '/app/new', signedIn: true, ready: sound(/^A short video/, (target) => target.getByLabel(/^Link to a short video/).waitFor()), shot: 'desktop' },
      { name: 'video', path: speechVideoPath!, signedIn: true, ready: (target) => target.getByTestId('video-status').getByText('Ready').waitFor() },
      { name: 'library', path: '/app', signedIn: true, ready: (target) => target.locator('.video-item').first().waitFor() },
      { name: 'plans', path: '/account', signedIn: true, ready: (target) => target.getByRole('button', { name: 'Choose Annual' }).waitFor() },
      { name: 'checkout-success', path: '/checkout/success?session_id=cs_test_none', signedIn: true, ready: heading('Thank you') },
      { name: 'checkout-cancel', path: '/checkout/cancel', signedIn: true, ready: heading('Payment cancelled'), shot: 'both' },
      { name: 'developers', path: '/app/developers', signedIn: true, ready: (target) => target.getByLabel('Key name').waitFor() },
    ];
    const found: string[] = [];
    const visit = async (size: 'phone' | 'desktop') => {
      // Phones ask for reduced motion here, so both settings are seen.
      const options = size === 'phone' ? { ...SIZES.phone, reducedMotion: 'reduce' as const } : SIZES.desktop;
      const signedOut = await browser.newContext(options);
      const signedInAs = await browser.newContext({ ...options, storageState: speechUser });
      try {
        for (const entry of pages) {
          const target = await (entry.signedIn ? signedInAs : signedOut).newPage();
          watch(target);
          await target.goto(`${baseUrl}${entry.path}`);
          await entry.ready(target);
          await imagesLoaded(target);
          if (entry.shot === 'both' || entry.shot === size) await shoot(target, entry.name, size);
          const { violations } = await new AxeBuilder({ page: target }).analyze();
          for (const violation of violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
            const where = violation.nodes.slice(0, 4).map((node) => node.target.join(' ')).join('; ');
            found.push(`${entry.name} (${size}): ${violation.id} [${violation.impact}] ${violation.help}: ${where}`);
          }
          if (size === 'phone') {
            // Usable from 360 px wide: nothing reaches past the screen's edge.
            await target.setViewportSize({ width: 360, height: 740 });
            const overflow = await overflowOf(target);
            if (overflow > 0) found.push(`${entry.name} (360 px): ${overflow} px wider than the screen`);
          }
          if (entry.name === 'landing' && size === 'phone') {
            // Nothing moves or loads by itself: the previews are stills until one is tapped, which then plays with controls.
            expect(await target.locator('.template-grid video').count()).toBe(0);
            const posters = target.getByRole('button', { name: /^Play the example video: / });
            expect(await posters.count()).toBeGreaterThan(0);
            await posters.first().click();
            const played = target.locator('.template-grid video');
            await played.waitFor();
            expect(await played.getAttribute('controls')).not.toBeNull();
            await waitFor('the tapped preview to play', async () => !(await played.evaluate((element) => (element as unknown as MediaElement).paused)), 15_000);
          }
          await target.close();
        }
      } finally {
        await signedOut.close();
        await signedInAs.close();
      }
    };
    await visit('phone');
    await visit('desktop');
    mark('accessibility');
    expect(found, found.join('\n')).toEqual([]);
    expect(problems, problems.join('\n')).toEqual([]);
  }, 300_000);

  it('authorizes an OAuth client: signed out, development sign-in, the request in words, Allow brings a working code back; Deny brings access_denied', async () => {
    // The client is the test process (oauth4webapi); its redirect URI a local server that shows a page.
    const client = await startOAuthClient(baseUrl, 'Pet Poster');
    const { redirectUri } = client;
    const found: string[] = [];
    const context = await browser.newContext(SIZES.phone);
    try {
      expect(client.as.authorization_endpoint).toBe(`${baseUrl}/oauth/authorize`);
      const request = client.request;
      const backAtClient = (target: Page) => target.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 15_000 });
      const audit = async (target: Page, name: string) => {
        const { violations } = await new AxeBuilder({ page: target }).analyze();
        for (const violation of violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) found.push(`${name}: ${violation.id} [${violation.impact}] ${violation.help}`);
      };

      // Signed out: the page names the application and what it asks, then sends the person to sign in and back.
      const allow = await request('videos:read videos:write');
      const target = await context.newPage();
      watch(target);
      await target.goto(allow.url.href);
      const consent = target.getByRole('heading', { level: 1, name: 'Authorize Pet Poster' });
      await consent.waitFor();
      await target.getByText('Create and delete videos, spending credits.').waitFor();
      await audit(target, 'authorize, signed out');
      await target.getByRole('link', { name: 'Sign in to continue' }).click();
      await target.getByLabel('Email address').fill('oauth-e2e@example.com');
      await target.getByRole('button', { name: 'Sign in (development)' }).click();
      await consent.waitFor();
      expect(new URL(target.url()).search).toBe(allow.url.search);
      await target.getByText('oauth-e2e@example.com', { exact: true }).waitFor();
      await target.getByText(new URL(redirectUri).origin, { exact: true }).waitFor();
      await target.getByText('Read templates, videos and the credit balance.').waitFor();
      await imagesLoaded(target);
      await shoot(target, 'authorize', 'phone');
      await audit(target, 'authorize');
      const desktop = await browser.newContext({ ...SIZES.desktop, storageState: await context.storageState() });
      const wide = await desktop.newPage();
      watch(wide);
      await wide.goto(allow.url.href);
      await wide.getByRole('button', { name: 'Allow' }).waitFor();
      await shoot(wide, 'authorize', 'desktop');
      await desktop.close();

      await Promise.all([backAtClient(target), target.getByRole('button', { name: 'Allow' }).click()]);
      await target.getByRole('heading', { name: 'Back at Pet Poster' }).waitFor();
      const callback = new URL(target.url());
      expect(callback.searchParams.get('iss')).toBe(baseUrl);
      const tokens = await client.exchange(callback, allow);
      expect(tokens.scope).toBe('videos:read videos:write');
      const me = await fetch(`${baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
      expect(me.status).toBe(200);
      expect(await json(me)).toMatchObject({ scopes: ['videos:read', 'videos:write'] });

      // Signed in already: straight to the decision. Deny tells the client access_denied, with no code.
      const deny = await request('videos:read');
      await target.goto(deny.url.href);
      await Promise.all([backAtClient(target), target.getByRole('button', { name: 'Deny' }).click()]);
      const denied = new URL(target.url());
      expect(denied.searchParams.get('error')).toBe('access_denied');
      expect(denied.searchParams.get('state')).toBe(deny.state);
      expect(denied.searchParams.get('code')).toBeNull();

      // A redirect URI the client never registered is shown, never followed.
      const forged = new URL(deny.url);
      forged.searchParams.set('redirect_uri', 'https://attacker.example/steal');
      const problemsBefore = problems.length;
      await target.goto(forged.href);
      await target.getByRole('heading', { name: 'This authorization request cannot continue' }).waitFor();
      await target.getByText('not one that this application registered').waitFor();
      // Chromium logs the refused check itself; that one is expected.
      const logged = problems.splice(problemsBefore);
      expect(logged.every((problem) => problem.includes('status of 400')), logged.join('\n')).toBe(true);
      expect(new URL(target.url()).origin).toBe(baseUrl);
      await audit(target, 'authorize, refused');
      mark('OAuth authorization page');
    } finally {
      await context.close();
      client.close();
    }
    expect(found, found.join('\n')).toEqual([]);
    expect(problems, problems.join('\n')).toEqual([]);
  }, 120_000);

  it('the unsubscribe link of an email, opened in the browser, opts out and says so on a page of the site', async () => {
    const idToken = await devIdToken(baseUrl, 'unsubscribe-e2e@example.com');
    const me = () => json(fetch(`${baseUrl}/user/me`, { headers: { Authorization: `Bearer ${idToken}` } }));
    const account = await me();
    expect(account.email_opt_out).toBe(false);
    // The link lifecycle emails carry (List-Unsubscribe), derived as the service derives it.
    const signingSecret = (await readFile(join(dataDir, 'signing-secret'), 'utf8')).trim();
    const link = `${baseUrl}/email/unsubscribe?token=${unsubscribeToken(signingSecret, account.id)}`;
    const found: string[] = [];
    for (const size of ['phone', 'desktop'] as const) {
      const context = await browser.newContext(SIZES[size]);
      try {
        const target = await context.newPage();
        watch(target);
        await target.goto(link);
        await target.getByRole('heading', { level: 1, name: 'Email preferences' }).waitFor();
        await target.getByText('u***@example.com', { exact: true }).waitFor();
        await target.getByRole('link', { name: 'Sign in to your account' }).waitFor();
        await shoot(target, 'unsubscribe', size);
        const { violations } = await new AxeBuilder({ page: target }).analyze();
        for (const violation of violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) found.push(`unsubscribe (${size}): ${violation.id} ${violation.help}`);
      } finally {
        await context.close();
      }
    }
    expect((await me()).email_opt_out).toBe(true);
    expect(found, found.join('\n')).toEqual([]);
    expect(problems, problems.join('\n')).toEqual([]);
  }, 60_000);
});

/**
 * The other identity mode: the API alone (in this process, on the run's Postgres; signing in needs no workers)
 * configured with a local OpenID Connect provider (test/support/oidc-provider.ts), in Chromium.
 */
describe('the web app in Chromium with an OpenID Connect provider', () => {
  let browser: Browser;
  const problems: string[] = [];
  const watch = (target: Page) => {
    target.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    target.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  };

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dashboard', 'dist', 'index.html'))) throw new Error('The web app is not built: run `npm run build:dashboard` (npm ci does it).');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('signs in with an OpenID Connect provider (code + PKCE through /app/callback), and the authorization page sends a signed-out person there and back', async () => {
    const provider = await startOidcProvider('petsing-web');
    const oidcService = await startTestService({ env: { OIDC_ISSUER: provider.issuer, OIDC_AUDIENCE: provider.clientId, OIDC_JWKS_URL: provider.jwksUrl } });
    const site = oidcService.baseUrl;
    provider.redirectUris.push(`${site}/app/callback`);
    const client = await startOAuthClient(site, 'Pet Poster');
    const context = await browser.newContext(SIZES.phone);
    /** On the provider's own page: its login form, then back to the app's /app/callback. */
    const signInAtProvider = async (target: Page, email: string) => {
      await target.waitForURL((url) => url.href.startsWith(`${provider.issuer}/authorize`));
      await target.getByLabel('Your email').fill(email);
      await target.getByRole('button', { name: 'Sign in' }).click();
    };
    try {
      const target = await context.newPage();
      watch(target);
      await target.goto(`${site}/app/sign-in`);
      await target.getByText('Sign in with your account.').waitFor();
      expect(await target.getByText('Development sign-in.').count()).toBe(0);
      const { violations } = await new AxeBuilder({ page: target }).analyze();
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`)).toEqual([]);
      await target.getByRole('button', { name: 'Continue to sign-in' }).click();
      await signInAtProvider(target, 'oidc-person@example.com');
      // Back from the provider through /app/callback, signed in, on the page a sign-in leads to.
      await target.waitForURL(`${site}/app/new`);
      const authorizeRequest = provider.requests.find((request) => request.path === '/authorize')!.params;
      expect(authorizeRequest).toMatchObject({ client_id: 'petsing-web', redirect_uri: `${site}/app/callback`, response_type: 'code', code_challenge_method: 'S256' });
      expect(provider.requests.find((request) => request.path === '/token')!.params.code_verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
      // The provider's ID token is the session: /user/me accepts it, and the account has the verified email.
      const stored = (await context.storageState()).origins.find((origin) => origin.origin === site)!.localStorage.find((item) => item.name === 'petsing.session')!;
      const idToken = (JSON.parse(stored.value) as { idToken: string; via: string }).idToken;
      const me = await fetch(`${site}/user/me`, { headers: { Authorization: `Bearer ${idToken}` } });
      expect(me.status).toBe(200);
      expect(await json(me)).toMatchObject({ email: 'oidc-person@example.com', free_credits: 2 });
      const devSignIn = await fetch(`${site}/dev-identity/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"a@example.com"}' });
      expect(devSignIn.status).toBe(404);

      // An OAuth client's request, opened signed out: sign-in goes to the provider and comes back to the request.
      expect(client.as.authorization_endpoint).toBe(`${site}/oauth/authorize`);
      const pending = await client.request();
      const fresh = await browser.newContext(SIZES.phone);
      try {
        const person = await fresh.newPage();
        watch(person);
        await person.goto(pending.url.href);
        await person.getByRole('link', { name: 'Sign in to continue' }).click();
        await person.getByRole('button', { name: 'Continue to sign-in' }).click();
        await signInAtProvider(person, 'oidc-client-owner@example.com');
        await person.getByRole('heading', { level: 1, name: 'Authorize Pet Poster' }).waitFor();
        expect(new URL(person.url()).search).toBe(pending.url.search);
        await person.getByText('oidc-client-owner@example.com', { exact: true }).waitFor();
        await Promise.all([person.waitForURL((next) => next.href.startsWith(client.redirectUri)), person.getByRole('button', { name: 'Allow' }).click()]);
        const tokens = await client.exchange(new URL(person.url()), pending);
        const apiMe = await fetch(`${site}/v1/me`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
        expect(apiMe.status).toBe(200);
        const owner = await oidcService.context.services.users.resolve('oidc-client-owner@example.com');
        expect((await json(apiMe)).user_id).toBe(owner.id);
      } finally {
        await fresh.close();
      }
    } finally {
      await context.close();
      client.close();
      await oidcService.stop();
      await provider.close();
    }
    expect(problems, problems.join('\n')).toEqual([]);
  }, 90_000);
});
