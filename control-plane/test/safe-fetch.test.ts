import { execFile } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Server as TcpServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { classifyAddress, devLocalAddressPolicy, strictAddressPolicy } from '../src/media/address-policy.ts';
import type { AddressPolicy } from '../src/media/address-policy.ts';
import { sniffContentType } from '../src/media/content-sniffer.ts';
import type { HostResolver, ResolvedAddress } from '../src/media/host-resolvers.ts';
import { createConfiguredUserUrlFetcher, createUserUrlFetcher, fetchUserUrl, vetUserUrl } from '../src/media/safe-fetch.ts';
import type { FetchUserUrlOptions } from '../src/media/url-download.ts';
import { UrlRefusedError } from '../src/media/url-refusal.ts';

const run = promisify(execFile);

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(992, 7)]);
const HTML = Buffer.from(`<!doctype html><html><head><title>not an image</title></head><body>${'x'.repeat(500)}</body></html>`);
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(200, 1)]);
const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WAVEfmt '), Buffer.alloc(200, 2)]);
const SECRET = 'SECRET-BODY-DO-NOT-ECHO';

interface Hit {
  server: 'good' | 'attacker';
  path: string;
  host: string | undefined;
  servername: string | false | null | undefined;
  localAddress: string | undefined;
}

const hits: Hit[] = [];
const endlessBytes = { written: 0 };
let scratch = '';
let cert = '';
let port = 0;
let httpPort = 0;
let silentPort = 0;
let good: HttpServer;
let attacker: HttpServer;
let plain: HttpServer;
let silent: TcpServer;
const silentSockets = new Set<Socket>();

/** Routes of the fixture "internet". */
function handle(server: Hit['server'], req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'https://fixture.invalid');
  hits.push({
    server,
    path: url.pathname,
    host: req.headers.host,
    servername: (req.socket as TLSSocket).servername,
    localAddress: req.socket.localAddress,
  });
  if (server === 'attacker') {
    res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.concat([PNG.subarray(0, 8), Buffer.from('ATTACKER')]));
    return;
  }
  const path = url.pathname;
  if (path === '/png') {
    res.writeHead(200, { 'content-type': 'text/html' }).end(PNG);
  } else if (path === '/html-as-png') {
    res.writeHead(200, { 'content-type': 'image/png' }).end(HTML);
  } else if (path === '/mp4') {
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(MP4);
  } else if (path === '/wav') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(WAV);
  } else if (path === '/redirect') {
    res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '' }).end();
  } else if (path.startsWith('/chain/')) {
    const remaining = Number(path.slice('/chain/'.length));
    if (remaining === 0) res.writeHead(200).end(PNG);
    else res.writeHead(302, { location: `/chain/${remaining - 1}` }).end();
  } else if (path.startsWith('/status/')) {
    res.writeHead(Number(path.slice('/status/'.length)), { 'content-type': 'text/plain' }).end(SECRET);
  } else if (path === '/exact') {
    // Chunked: no Content-Length, so only the streaming count can enforce the cap.
    const size = Number(url.searchParams.get('size'));
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.write(PNG.subarray(0, 8));
    res.end(Buffer.alloc(size - 8, 1));
  } else if (path === '/big-declared') {
    res.writeHead(200, { 'content-length': String(50 * 1024 * 1024) });
    res.write(PNG); // then hold the connection open
  } else if (path === '/endless') {
    endlessBytes.written = 0;
    res.writeHead(200, { 'content-type': 'image/png' });
    const chunk = Buffer.concat([PNG, Buffer.alloc(64 * 1024 - PNG.length, 3)]);
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) endlessBytes.written += chunk.length;
      if (!res.destroyed) {
        endlessBytes.written += chunk.length;
        res.once('drain', pump);
      }
    };
    pump();
  } else if (path === '/no-headers') {
    // never answers
  } else if (path === '/trickle') {
    res.writeHead(200);
    res.write(PNG);
    const timer = setInterval(() => res.write(Buffer.from([0])), 50);
    res.on('close', () => clearInterval(timer));
  } else if (path === '/stall-body') {
    res.writeHead(200);
    res.write(PNG); // then nothing
  } else {
    res.writeHead(404).end();
  }
}

const listen = (server: HttpServer | TcpServer, host: string, wantedPort = 0) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wantedPort, host, () => resolve((server.address() as AddressInfo).port));
  });

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'petsing-safe-fetch-'));
  const keyPath = join(scratch, 'key.pem');
  const certPath = join(scratch, 'cert.pem');
  await run('openssl', [
    'req', '-x509', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-keyout', keyPath, '-out', certPath,
    '-days', '2', '-subj', '/CN=pets.example.com', '-addext', 'subjectAltName=DNS:pets.example.com,DNS:*.example.com',
  ]);
  cert = await readFile(certPath, 'utf8');
  const key = await readFile(keyPath, 'utf8');

  good = createHttpsServer({ key, cert }, (req, res) => handle('good', req, res));
  attacker = createHttpsServer({ key, cert }, (req, res) => handle('attacker', req, res));
  plain = createHttpServer((req, res) => handle('good', req, res));
  // Accepts TCP and never speaks TLS: a server that hangs the handshake.
  silent = createTcpServer((socket) => {
    silentSockets.add(socket);
    socket.on('close', () => silentSockets.delete(socket));
  });
  port = await listen(good, '127.0.0.1');
  // Same port, other loopback address: where a rebinding answer would send the connection.
  await listen(attacker, '127.0.0.2', port);
  httpPort = await listen(plain, '127.0.0.1');
  silentPort = await listen(silent, '127.0.0.1');
});

afterAll(async () => {
  for (const server of [good, attacker, plain]) server?.closeAllConnections();
  for (const socket of silentSockets) socket.destroy();
  await Promise.all([good, attacker, plain, silent].map((server) => new Promise((resolve) => server ? server.close(resolve) : resolve(undefined))));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** A fake DNS: names map to answers; rebind.example.com answers the fixture first and the attacker after. */
const resolverCalls: string[] = [];
let rebindAnswers = 0;
const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });
const dnsTable: Record<string, ResolvedAddress[]> = {
  'pets.example.com': [v4('127.0.0.1')],
  'cdn.example.com': [v4('127.0.0.1')],
  'pets.example.org': [v4('127.0.0.1')],
  'public.example.com': [v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')],
  'internal.example.com': [v4('10.0.0.5')],
  'corp.example.com': [v4('172.20.1.1')],
  'home.example.com': [v4('192.168.0.10')],
  'cgnat.example.com': [v4('100.64.1.1')],
  'meta.example.com': [v4('169.254.169.254')],
  'mixed.example.com': [v4('93.184.216.34'), v4('10.1.2.3')],
  'mixed6.example.com': [v6('2606:2800:220:1:248:1893:25c8:1946'), v6('fe80::1')],
  'ula.example.com': [v6('fd12:3456::1')],
  'mapped.example.com': [v6('::ffff:127.0.0.1')],
  'nat64.example.com': [v6('64:ff9b::a9fe:a9fe')],
  'loopback6.example.com': [v6('::1')],
  'other-loopback.example.com': [v4('127.0.0.2')],
  '127.0.0.1.nip.io': [v4('127.0.0.1')],
  'zero.example.com': [v4('0.0.0.0')],
  'junk.example.com': [v4('0x7f.1')],
  'empty.example.com': [],
};
const fakeResolver: HostResolver = async (hostname) => {
  resolverCalls.push(hostname);
  if (hostname === 'rebind.example.com') {
    rebindAnswers += 1;
    return [v4(rebindAnswers === 1 ? '127.0.0.1' : '127.0.0.2')];
  }
  const answer = dnsTable[hostname];
  if (!answer) throw Object.assign(new Error(`queryA ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return answer;
};

beforeEach(() => {
  hits.length = 0;
  resolverCalls.length = 0;
  rebindAnswers = 0;
});

/** Lets exactly the fixture server's address and ports through; everything else falls to the strict policy. */
const fixturePolicy = (): AddressPolicy => ({
  checkAddress: (address) => (address === '127.0.0.1' ? null : strictAddressPolicy.checkAddress(address)),
  extraPorts: [port, httpPort, silentPort],
});
const fixtureFetcher = () => createUserUrlFetcher({ addressPolicy: fixturePolicy(), resolver: fakeResolver, tlsCa: cert });
const strictFetcher = () => createUserUrlFetcher({ resolver: fakeResolver });
const at = (path: string, host = 'pets.example.com') => `https://${host}:${port}${path}`;
const imageOptions: FetchUserUrlOptions = { accept: 'image', maxBytes: 15 * 1024 * 1024, timeoutMs: 5000, connectTimeoutMs: 2000, stallTimeoutMs: 2000 };

async function refusal(promise: Promise<unknown>): Promise<UrlRefusedError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error('expected a refusal, got a result');
  expect(outcome.error).toBeInstanceOf(UrlRefusedError);
  return outcome.error as UrlRefusedError;
}

function syncRefusal(action: () => unknown): UrlRefusedError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(UrlRefusedError);
    return error as UrlRefusedError;
  }
  throw new Error('expected a refusal');
}

describe('hostile URLs are refused before any connection', () => {
  // [url, expected reason]
  const hostile: Array<[string, string]> = [
    ['https://2130706433/', 'address_loopback'],
    ['https://0x7f000001/', 'address_loopback'],
    ['https://017700000001/', 'address_loopback'],
    ['https://0x7f.1/', 'address_loopback'],
    ['https://0177.0.0.1/', 'address_loopback'],
    ['https://127.1/', 'address_loopback'],
    ['https://0/', 'address_unspecified'],
    ['https://127。0。0。1/', 'address_loopback'],
    ['https://%31%32%37.0.0.1/', 'address_loopback'],
    ['https://[::1]/', 'address_loopback'],
    ['https://[::ffff:127.0.0.1]/', 'address_ipv4_embedded_ipv4Mapped'],
    ['https://[::ffff:7f00:1]/', 'address_ipv4_embedded_ipv4Mapped'],
    ['https://[::ffff:a9fe:a9fe]/', 'address_cloud_metadata'],
    ['https://[::7f00:1]/', 'address_ipv4_embedded_compatible'],
    ['https://[fe80::1%25eth0]/', 'malformed'],
    ['https://[fe80::1]/', 'address_linkLocal'],
    ['https://[64:ff9b::a00:1]/', 'address_ipv4_embedded_rfc6052'],
    ['https://[64:ff9b:1::a00:1]/', 'address_ipv4_embedded_rfc6052'],
    ['https://[2002:7f00:1::]/', 'address_ipv4_embedded_6to4'],
    ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'address_ipv4_embedded_teredo'],
    ['https://[fc00::1]/', 'address_uniqueLocal'],
    ['https://[fd00:ec2::254]/', 'address_cloud_metadata'],
    ['https://[::]/', 'address_unspecified'],
    ['https://[ff02::1]/', 'address_multicast'],
    ['https://[2001:db8::1]/', 'address_reserved'],
    ['https://[100::1]/', 'address_discard'],
    ['https://good.com@127.0.0.1/', 'userinfo'],
    ['https://user:pass@example.com/', 'userinfo'],
    ['https://127.0.0.1#@good.com/', 'address_loopback'],
    ['https://127.0.0.1\\@good.com/', 'address_loopback'],
    ['https:\\\\127.0.0.1\\cat.png', 'address_loopback'],
    ['https://127.0.0.1?@good.com/', 'address_loopback'],
    ['https://169.254.169.254/latest/meta-data/', 'address_cloud_metadata'],
    ['https://100.100.100.200/latest/meta-data/', 'address_cloud_metadata'],
    ['https://168.63.129.16/machine', 'address_cloud_metadata'],
    ['https://169.254.1.1/', 'address_linkLocal'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'host_cloud_metadata'],
    ['https://metadata.google.internal./computeMetadata/v1/', 'host_cloud_metadata'],
    ['https://metadata/computeMetadata/v1/', 'host_cloud_metadata'],
    ['https://localhost/', 'host_internal_host_name'],
    ['https://LOCALHOST./', 'host_internal_host_name'],
    ['https://foo.localhost/', 'host_internal_host_name'],
    ['https://printer.local/', 'host_internal_host_name'],
    ['https://db.internal/', 'host_internal_host_name'],
    ['https://api.svc.cluster.local/', 'host_internal_host_name'],
    ['https://intranet/', 'host_single_label_host'],
    ['https://10.0.0.1/', 'address_private'],
    ['https://172.16.5.4/', 'address_private'],
    ['https://192.168.1.1/', 'address_private'],
    ['https://100.64.0.1/', 'address_carrierGradeNat'],
    ['https://0.0.0.0/', 'address_unspecified'],
    ['https://255.255.255.255/', 'address_broadcast'],
    ['https://224.0.0.1/', 'address_multicast'],
    ['https://240.0.0.1/', 'address_reserved'],
    ['https://198.18.0.1/', 'address_reserved'],
    ['https://192.0.2.1/', 'address_reserved'],
    ['http://example.com/cat.png', 'scheme'],
    ['ftp://example.com/cat.png', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['gopher://127.0.0.1:6379/_INFO', 'scheme'],
    ['data:image/png;base64,iVBORw0KGgo=', 'scheme'],
    ['https://example.com:22/', 'port'],
    ['https://example.com:80/', 'port'],
    ['not a url', 'malformed'],
    [`https://example.com/${'a'.repeat(2100)}`, 'too_long'],
    // DNS names whose answers point inward (the fake resolver stands in for a hostile name server).
    ['https://internal.example.com/cat.png', 'address_private'],
    ['https://corp.example.com/cat.png', 'address_private'],
    ['https://home.example.com/cat.png', 'address_private'],
    ['https://cgnat.example.com/cat.png', 'address_carrierGradeNat'],
    ['https://meta.example.com/latest/meta-data/', 'address_cloud_metadata'],
    ['https://mixed.example.com/cat.png', 'address_private'],
    ['https://mixed6.example.com/cat.png', 'address_linkLocal'],
    ['https://ula.example.com/cat.png', 'address_uniqueLocal'],
    ['https://mapped.example.com/cat.png', 'address_ipv4_embedded_ipv4Mapped'],
    ['https://nat64.example.com/cat.png', 'address_cloud_metadata'],
    ['https://loopback6.example.com/cat.png', 'address_loopback'],
    ['https://127.0.0.1.nip.io/cat.png', 'address_loopback'],
    ['https://zero.example.com/cat.png', 'address_unspecified'],
    ['https://pets.example.com/cat.png', 'address_loopback'],
  ];

  it('has at least 30 cases', () => {
    expect(hostile.length).toBeGreaterThanOrEqual(30);
  });

  it.each(hostile)('refuses %s (%s) when vetting the host at create time', async (url, reason) => {
    const error = await refusal(strictFetcher().vetHost(url));
    expect(error.code).toBe('image_url_refused');
    expect(error.reason).toBe(reason);
    expect(error.message).not.toMatch(/\d+\.\d+\.\d+\.\d+/);
  });

  it.each(hostile)('refuses %s (%s) when fetching', async (url, reason) => {
    const error = await refusal(strictFetcher().fetch(url, imageOptions));
    expect(error.code).toBe('image_url_refused');
    expect(error.reason).toBe(reason);
    expect(hits).toEqual([]);
  });

  it('refuses the literal ones with no network at all, synchronously', () => {
    expect(syncRefusal(() => vetUserUrl('https://0x7f.1/')).reason).toBe('address_loopback');
    expect(syncRefusal(() => vetUserUrl('https://good.com@example.com/')).reason).toBe('userinfo');
    expect(syncRefusal(() => vetUserUrl('http://example.com/')).reason).toBe('scheme');
    expect(syncRefusal(() => vetUserUrl('https://foo.localhost/')).reason).toBe('host_internal_host_name');
  });

  it('lets ordinary public URLs through the synchronous checks', () => {
    expect(vetUserUrl('https://images.example.com/cats/1.png?x=1').hostname).toBe('images.example.com');
    expect(vetUserUrl('https://1.1.1.1/cat.png').literal).toEqual({ address: '1.1.1.1', family: 4 });
    expect(vetUserUrl('https://[2606:4700::1111]/cat.png').literal).toEqual({ address: '2606:4700::1111', family: 6 });
    // The backslash ends the authority: the host really is good.com, which is why it is fine.
    expect(vetUserUrl('https://good.com\\@127.0.0.1/').hostname).toBe('good.com');
    expect(vetUserUrl('http://example.com/', { allowHttp: true }).url.protocol).toBe('http:');
    expect(syncRefusal(() => vetUserUrl('http://example.com:8080/', { allowHttp: true })).reason).toBe('port');
  });

  it('resolves public names and reports every address', async () => {
    const vetted = await strictFetcher().vetHost('https://public.example.com/cat.png');
    expect(vetted.addresses.map((entry) => entry.address)).toEqual(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']);
    expect(vetted.pinned.address).toBe('93.184.216.34');
  });

  it('treats resolver failures and non-address answers as unreachable', async () => {
    expect((await refusal(strictFetcher().vetHost('https://nx.example.com/'))).reason).toBe('dns');
    expect((await refusal(strictFetcher().vetHost('https://empty.example.com/'))).reason).toBe('dns_no_address');
    const junk = await refusal(strictFetcher().vetHost('https://junk.example.com/'));
    expect([junk.code, junk.reason]).toEqual(['image_url_unreachable', 'dns_bad_answer']);
  });

  it('times out a resolver that never answers', async () => {
    const fetcher = createUserUrlFetcher({ resolver: () => new Promise(() => undefined) });
    const started = Date.now();
    const error = await refusal(fetcher.vetHost('https://slow-dns.example.com/', { timeoutMs: 200 }));
    expect([error.code, error.reason]).toEqual(['image_url_unreachable', 'timeout']);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('address policy', () => {
  it('allows public unicast and refuses what is not', () => {
    for (const address of ['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) {
      expect(classifyAddress(address)).toBeNull();
    }
    for (const address of ['127.0.0.1', '10.255.255.255', '172.31.0.1', '169.254.169.254', '::1', 'fe80::1', '::ffff:8.8.8.8', '3fff::1', '0x7f.1', 'fe80::1%eth0']) {
      expect(classifyAddress(address)).not.toBeNull();
    }
  });

  it('cannot be loosened from outside: the strict policy is frozen and has no extra ports', () => {
    expect(Object.isFrozen(strictAddressPolicy)).toBe(true);
    expect(Object.isFrozen(strictAddressPolicy.extraPorts)).toBe(true);
    expect(strictAddressPolicy.extraPorts).toEqual([]);
  });

  it('the default exports cannot reach the fixture server', async () => {
    expect((await refusal(fetchUserUrl(at('/png'), imageOptions))).reason).toBe('port');
    // Even with the port admitted and the name resolving, loopback stays refused without the fixture policy.
    const portOnly = createUserUrlFetcher({ resolver: fakeResolver, tlsCa: cert, addressPolicy: { ...strictAddressPolicy, extraPorts: [port] } });
    expect((await refusal(portOnly.fetch(at('/png'), imageOptions))).reason).toBe('address_loopback');
    expect(hits).toEqual([]);
  });

  it('DEV_ALLOW_LOCAL_URLS reaches a server on this machine over http, by name and address, and still refuses metadata', async () => {
    const local = createConfiguredUserUrlFetcher(true);
    for (const url of [`http://localhost:${httpPort}/png`, `http://127.0.0.1:${httpPort}/png`]) {
      const fetched = await local.fetch(url, imageOptions);
      expect([fetched.contentType, fetched.address]).toEqual(['image/png', '127.0.0.1']);
    }
    expect(syncRefusal(() => local.vetUrl('http://169.254.169.254/latest/meta-data/')).reason).toBe('address_cloud_metadata');
    expect(syncRefusal(() => local.vetUrl('http://metadata.google.internal/')).reason).toBe('host_cloud_metadata');
    expect(syncRefusal(() => local.vetUrl('ftp://localhost/pet.png')).reason).toBe('scheme');
    // Off, nothing changes: the same URLs are refused as before.
    const strict = createConfiguredUserUrlFetcher(false);
    expect(syncRefusal(() => strict.vetUrl(`http://localhost:${httpPort}/png`)).reason).toBe('scheme');
    expect(syncRefusal(() => strict.vetUrl(`https://localhost/png`)).reason).toBe('host_internal_host_name');
    expect(syncRefusal(() => strict.vetUrl(`https://127.0.0.1/png`)).reason).toBe('address_loopback');
  });

  // Issue 34: every IPv6 spelling of a metadata address: mapped (both notations), RFC 6145, compatible, NAT64 (the
  // well-known /96 and RFC 8215's local-use /48 in two of RFC 6052's layouts), 6to4 and Teredo (server and client).
  const metadataSpellings = [
    '[::ffff:169.254.169.254]', '[::ffff:a9fe:a9fe]', '[::ffff:0:a9fe:a9fe]', '[::169.254.169.254]', '[64:ff9b::169.254.169.254]',
    '[64:ff9b:1::a9fe:a9fe]', '[64:ff9b:1:a9fe:a9:fe00::]', '[2002:a9fe:a9fe::1]', '[2001:0:a9fe:a9fe::1]', '[2001:0:4136:e378:8000:63bf:5601:5601]',
    '[::ffff:a9fe:aa02]', '[::ffff:a9fe:aa17]', '[::ffff:a83f:8110]', '[::ffff:6464:64c8]', '[fd00:ec2::254]',
  ];

  it.each(metadataSpellings)('DEV_ALLOW_LOCAL_URLS still refuses the metadata address spelt %s', (host) => {
    const local = createConfiguredUserUrlFetcher(true);
    expect(syncRefusal(() => local.vetUrl(`http://${host}/latest/meta-data/`)).reason).toBe('address_cloud_metadata');
    expect(syncRefusal(() => vetUserUrl(`https://${host}/latest/meta-data/`)).reason).toBe('address_cloud_metadata');
  });

  it('DEV_ALLOW_LOCAL_URLS refuses them in DNS answers too, for a download and for a webhook POST', async () => {
    const answers = metadataSpellings.map((host) => host.slice(1, -1));
    for (const answer of answers) {
      const resolver: HostResolver = async () => [v6(answer)];
      const local = createUserUrlFetcher({ addressPolicy: devLocalAddressPolicy, resolver });
      expect((await refusal(local.vetHost('http://rebound.example.com/'))).reason, answer).toBe('address_cloud_metadata');
      expect((await refusal(local.fetch('http://rebound.example.com/', imageOptions))).reason, answer).toBe('address_cloud_metadata');
      expect((await refusal(local.post('http://hooks.example.com/', { body: '{}', headers: {}, timeoutMs: 1000, maxResponseBytes: 100 }))).reason, answer).toBe('address_cloud_metadata');
    }
  });

  it('DEV_ALLOW_LOCAL_URLS refuses them after a redirect from a local server', async () => {
    const local = createConfiguredUserUrlFetcher(true);
    for (const host of ['[::ffff:169.254.169.254]', '[64:ff9b::a9fe:a9fe]', '[2002:a9fe:a9fe::]']) {
      hits.length = 0;
      const location = `http://${host}/latest/meta-data/`;
      const error = await refusal(local.fetch(`http://127.0.0.1:${httpPort}/redirect?to=${encodeURIComponent(location)}`, imageOptions));
      expect([error.code, error.reason], host).toEqual(['image_url_refused', 'address_cloud_metadata']);
      expect(hits.map((hit) => hit.path)).toEqual(['/redirect']);
    }
  });

  it('DEV_ALLOW_LOCAL_URLS treats an embedded loopback or private address as the address it embeds: allowed, as 127.0.0.1 is', () => {
    const local = createConfiguredUserUrlFetcher(true);
    expect(local.vetUrl(`http://[::ffff:127.0.0.1]:${httpPort}/png`).literal).toEqual({ address: '::ffff:7f00:1', family: 6 });
    expect(local.vetUrl('http://[::ffff:10.0.0.1]/').hostname).toBe('::ffff:a00:1');
  });
});

describe('fetching', () => {
  it('downloads over TLS to the vetted address, keeping SNI and Host as the original name', async () => {
    const result = await fixtureFetcher().fetch(at('/png'), imageOptions);
    expect(result.contentType).toBe('image/png'); // served as text/html: the bytes decide
    expect(result.body.equals(PNG)).toBe(true);
    expect(result.finalUrl).toBe(at('/png'));
    expect(result.address).toBe('127.0.0.1');
    expect(hits).toEqual([{ server: 'good', path: '/png', host: `pets.example.com:${port}`, servername: 'pets.example.com', localAddress: '127.0.0.1' }]);
  });

  it('refuses HTML labelled image/png', async () => {
    const error = await refusal(fixtureFetcher().fetch(at('/html-as-png'), imageOptions));
    expect(error.code).toBe('image_url_unsupported_type');
    expect(error.message).not.toContain('doctype');
  });

  it('refuses a video where an image is expected and accepts media by its bytes', async () => {
    expect((await refusal(fixtureFetcher().fetch(at('/mp4'), imageOptions))).code).toBe('image_url_unsupported_type');
    const wav = await fixtureFetcher().fetch(at('/wav'), { ...imageOptions, accept: 'media' });
    expect(wav.contentType).toBe('audio/wav');
    const mp4 = await fixtureFetcher().fetch(at('/mp4'), { ...imageOptions, accept: 'media' });
    expect(mp4.contentType).toBe('video/mp4');
  });

  it('verifies the certificate against the original host name', async () => {
    const error = await refusal(fixtureFetcher().fetch(at('/png', 'pets.example.org'), imageOptions));
    expect([error.code, error.reason]).toEqual(['image_url_unreachable', 'tls']);
    const untrusting = createUserUrlFetcher({ addressPolicy: fixturePolicy(), resolver: fakeResolver });
    expect((await refusal(untrusting.fetch(at('/png'), imageOptions))).reason).toBe('tls');
  });

  it('uses plain http only behind the development flag', async () => {
    const url = `http://pets.example.com:${httpPort}/png`;
    expect((await refusal(fixtureFetcher().fetch(url, imageOptions))).reason).toBe('scheme');
    const result = await fixtureFetcher().fetch(url, { ...imageOptions, allowHttp: true });
    expect(result.contentType).toBe('image/png');
  });

  it.each([404, 500, 403])('maps HTTP %i to unreachable without echoing the body', async (status) => {
    const error = await refusal(fixtureFetcher().fetch(at(`/status/${status}`), imageOptions));
    expect([error.code, error.reason]).toEqual(['image_url_unreachable', 'http_status']);
    expect(error.message).toContain(String(status));
    expect(`${error.message} ${error.hint}`).not.toContain(SECRET);
  });

  it('stops the caller-abortable download when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = fixtureFetcher().fetch(at('/no-headers'), { ...imageOptions, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled by workflow')), 100);
    await expect(pending).rejects.toThrow('cancelled by workflow');
  });
});

describe('DNS rebinding', () => {
  it('connects to the address it vetted even when the name answers differently afterwards', async () => {
    const fetcher = fixtureFetcher();
    const result = await fetcher.fetch(at('/png', 'rebind.example.com'), imageOptions);
    expect(result.body.equals(PNG)).toBe(true);
    expect(result.address).toBe('127.0.0.1');
    // One resolution per hop: nothing asked DNS again between the check and the connect...
    expect(resolverCalls).toEqual(['rebind.example.com']);
    // ...and the socket reached the vetted address, not the one DNS now gives.
    expect(hits.map((hit) => [hit.server, hit.localAddress])).toEqual([['good', '127.0.0.1']]);

    // The name now answers the refused address: the next fetch re-checks and refuses it.
    const error = await refusal(fetcher.fetch(at('/png', 'rebind.example.com'), imageOptions));
    expect(error.reason).toBe('address_loopback');
    expect(hits.filter((hit) => hit.server === 'attacker')).toEqual([]);
  });

  it('re-resolves at fetch time instead of trusting the create-time check', async () => {
    const fetcher = fixtureFetcher();
    await fetcher.vetHost(at('/png', 'rebind.example.com')); // create time: 127.0.0.1, admitted
    const error = await refusal(fetcher.fetch(at('/png', 'rebind.example.com'), imageOptions));
    expect(error.reason).toBe('address_loopback');
    expect(hits).toEqual([]);
  });
});

describe('redirects', () => {
  const redirect = (to: string, status = 302) => at(`/redirect?status=${status}&to=${encodeURIComponent(to)}`);

  it.each([301, 302, 303, 307, 308])('follows a relative %i and reports the final URL', async (status) => {
    const result = await fixtureFetcher().fetch(redirect('/png', status), imageOptions);
    expect(result.finalUrl).toBe(at('/png'));
    expect(hits.map((hit) => hit.path)).toEqual(['/redirect', '/png']);
  });

  it('follows to another vetted host, resolving it too', async () => {
    const result = await fixtureFetcher().fetch(redirect(at('/png', 'cdn.example.com')), imageOptions);
    expect(result.finalUrl).toBe(at('/png', 'cdn.example.com'));
    expect(resolverCalls).toEqual(['pets.example.com', 'cdn.example.com']);
    expect(hits[1]?.servername).toBe('cdn.example.com');
  });

  it.each([
    ['https://internal.example.com/cat.png', 'address_private'],
    ['https://169.254.169.254/latest/meta-data/', 'address_cloud_metadata'],
    ['https://meta.example.com/latest/meta-data/', 'address_cloud_metadata'],
    ['https://[::ffff:127.0.0.2]/', 'address_ipv4_embedded_ipv4Mapped'],
    ['https://0x7f.2/', 'address_loopback'],
    ['https://localhost/', 'host_internal_host_name'],
    ['https://user@pets.example.com/png', 'userinfo'],
    ['file:///etc/passwd', 'scheme_downgrade'],
  ])('refuses a redirect to %s', async (location, reason) => {
    const error = await refusal(fixtureFetcher().fetch(redirect(location), imageOptions));
    expect([error.code, error.reason]).toEqual(['image_url_refused', reason]);
    expect(hits.map((hit) => hit.path)).toEqual(['/redirect']);
  });

  it('refuses a redirect to the attacker address on the allowed port', async () => {
    const error = await refusal(fixtureFetcher().fetch(redirect(`https://127.0.0.2:${port}/png`), imageOptions));
    expect(error.reason).toBe('address_loopback');
    expect(hits.filter((hit) => hit.server === 'attacker')).toEqual([]);
  });

  it('refuses a redirect from https to http, even with the development flag', async () => {
    const target = `http://pets.example.com:${httpPort}/png`;
    expect((await refusal(fixtureFetcher().fetch(redirect(target), imageOptions))).reason).toBe('scheme_downgrade');
    expect((await refusal(fixtureFetcher().fetch(redirect(target), { ...imageOptions, allowHttp: true }))).reason).toBe('scheme_downgrade');
  });

  it('follows exactly maxRedirects hops and refuses one more', async () => {
    expect((await fixtureFetcher().fetch(at('/chain/3'), imageOptions)).finalUrl).toBe(at('/chain/0'));
    hits.length = 0;
    const error = await refusal(fixtureFetcher().fetch(at('/chain/4'), imageOptions));
    expect([error.code, error.reason]).toEqual(['image_url_unreachable', 'too_many_redirects']);
    expect(hits).toHaveLength(4);
    expect((await refusal(fixtureFetcher().fetch(at('/chain/1'), { ...imageOptions, maxRedirects: 0 }))).reason).toBe('too_many_redirects');
  });

  it('treats a redirect without a Location as unreachable', async () => {
    expect((await refusal(fixtureFetcher().fetch(redirect(''), imageOptions))).reason).toBe('bad_redirect');
  });
});

describe('size cap', () => {
  it('accepts a body of exactly maxBytes and refuses one byte more, without Content-Length', async () => {
    const ok = await fixtureFetcher().fetch(at('/exact?size=5000'), { ...imageOptions, maxBytes: 5000 });
    expect(ok.body.length).toBe(5000);
    const error = await refusal(fixtureFetcher().fetch(at('/exact?size=5001'), { ...imageOptions, maxBytes: 5000 }));
    expect(error.code).toBe('image_url_too_large');
  });

  it('refuses a declared Content-Length above the cap before reading the body', async () => {
    const started = Date.now();
    const error = await refusal(fixtureFetcher().fetch(at('/big-declared'), { ...imageOptions, stallTimeoutMs: 4000 }));
    expect(error.code).toBe('image_url_too_large');
    expect(error.message).toContain('15 MB');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('aborts an endless chunked body as soon as it passes the cap', async () => {
    const maxBytes = 1024 * 1024;
    const error = await refusal(fixtureFetcher().fetch(at('/endless'), { ...imageOptions, maxBytes }));
    expect(error.code).toBe('image_url_too_large');
    // The server wrote at most the cap plus what sat in socket buffers when we hung up.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(endlessBytes.written).toBeLessThan(maxBytes + 8 * 1024 * 1024);
  });
});

describe('slow servers', () => {
  it('gives up on a server that never sends headers', async () => {
    const started = Date.now();
    const error = await refusal(fixtureFetcher().fetch(at('/no-headers'), { ...imageOptions, stallTimeoutMs: 300 }));
    expect([error.code, error.reason]).toEqual(['image_url_unreachable', 'stalled']);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('gives up on a body that stops flowing', async () => {
    const error = await refusal(fixtureFetcher().fetch(at('/stall-body'), { ...imageOptions, stallTimeoutMs: 300 }));
    expect([error.code, error.reason]).toEqual(['image_url_unreachable', 'stalled']);
  });

  it('enforces the total deadline on a trickle that never stalls', async () => {
    const started = Date.now();
    const error = await refusal(fixtureFetcher().fetch(at('/trickle'), { ...imageOptions, timeoutMs: 600, stallTimeoutMs: 400 }));
    expect([error.code, error.reason]).toEqual(['image_url_unreachable', 'timeout']);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('times out a TLS handshake that never completes', async () => {
    const started = Date.now();
    const url = `https://pets.example.com:${silentPort}/png`;
    const error = await refusal(fixtureFetcher().fetch(url, { ...imageOptions, connectTimeoutMs: 300 }));
    expect([error.code, error.reason]).toEqual(['image_url_unreachable', 'connect_timeout']);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe('content sniffing', () => {
  const bytes = (...parts: Array<string | number[]>) =>
    Buffer.concat([...parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part))), Buffer.alloc(64)]);
  const ftyp = (brand: string) => bytes([0, 0, 0, 0x18], 'ftyp', brand, [0, 0, 0, 0]);

  it.each([
    ['jpeg', bytes([0xff, 0xd8, 0xff, 0xe0]), 'image/jpeg'],
    ['png', PNG, 'image/png'],
    ['webp', bytes('RIFF', [1, 0, 0, 0], 'WEBPVP8 '), 'image/webp'],
    ['heic', ftyp('heic'), 'image/heic'],
    ['heix', ftyp('heix'), 'image/heic'],
    ['hevc', ftyp('hevc'), 'image/heic-sequence'],
    ['mif1', ftyp('mif1'), 'image/heif'],
    ['msf1', ftyp('msf1'), 'image/heif-sequence'],
    ['mp4 as image', ftyp('isom'), null],
    ['avif as image', ftyp('avif'), null],
    ['gif', bytes('GIF89a'), null],
    ['svg', bytes('<svg xmlns="http://www.w3.org/2000/svg">'), null],
    ['html', HTML, null],
    ['wav as image', WAV, null],
    ['too short', Buffer.from([0xff, 0xd8]), null],
  ])('image: %s', (_name, data, expected) => {
    expect(sniffContentType(data, 'image')).toBe(expected);
  });

  it.each([
    ['mp4', ftyp('isom'), 'video/mp4'],
    ['m4a', ftyp('M4A '), 'audio/mp4'],
    ['mov', ftyp('qt  '), 'video/quicktime'],
    ['old mov', bytes([0, 0, 0, 8], 'wide'), 'video/quicktime'],
    ['webm', bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84], 'webm'), 'video/webm'],
    ['matroska', bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x88], 'matroska'), 'video/x-matroska'],
    ['mp3 id3', bytes('ID3', [4, 0, 0]), 'audio/mpeg'],
    ['mp3 frame', bytes([0xff, 0xfb, 0x90, 0x64]), 'audio/mpeg'],
    ['wav', WAV, 'audio/wav'],
    ['aac adts', bytes([0xff, 0xf1, 0x50, 0x80]), 'audio/aac'],
    ['ogg', bytes('OggS', [0]), 'audio/ogg'],
    ['heic as media', ftyp('heic'), null],
    ['png as media', PNG, null],
    ['html', HTML, null],
    ['sync-like garbage', bytes([0xff, 0xff, 0xff, 0xff]), null],
  ])('media: %s', (_name, data, expected) => {
    expect(sniffContentType(data, 'media')).toBe(expected);
  });
});
