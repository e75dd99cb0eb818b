import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadControlPlaneConfig } from '../src/config/env.ts';
import { createLogger } from '../src/logging/logger.ts';
import { startService } from '../src/runtime/start-service.ts';
import { captureLines } from '../../test/support/log-capture.ts';

describe('configuration', () => {
  it('runs on embedded defaults when nothing is set', () => {
    const config = loadControlPlaneConfig({});
    expect(config.baseUrl).toBe('http://localhost:8080');
    expect(config.wsUrl).toBe('ws://localhost:8080/ws');
    expect(config.siteUrl).toBe('http://localhost:8080');
    expect(config.embedded).toEqual({ database: true, temporal: true, objectStore: true });
    expect(config.dataDir.endsWith('.data')).toBe(true);
  });

  it('switches each part to external mode independently', () => {
    const config = loadControlPlaneConfig({
      DATABASE_URL: 'postgres://db.internal/petsing',
      TEMPORAL_ADDRESS: 'petsing.tmprl.cloud:7233',
      S3_BUCKET: 'media',
      BASE_URL: 'https://api.petsing.app/',
    });
    expect(config.embedded).toEqual({ database: false, temporal: false, objectStore: false });
    expect(config.baseUrl).toBe('https://api.petsing.app');
    expect(config.wsUrl).toBe('wss://api.petsing.app/ws');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x/y' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ SIGNING_SECRET: 'short' }, 'SIGNING_SECRET'],
    [{ OIDC_ISSUER: 'https://issuer.example' }, 'OIDC_AUDIENCE'],
    [{ S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'id' }, 'S3_SECRET_ACCESS_KEY'],
    [{ CORS_ALLOWED_ORIGINS: 'not a url' }, 'CORS_ALLOWED_ORIGINS'],
    [{ CORS_ALLOWED_ORIGINS: '*,https://a.example' }, 'CORS_ALLOWED_ORIGINS'],
    [{ DEV_ALLOW_LOCAL_URLS: 'sometimes' }, 'DEV_ALLOW_LOCAL_URLS'],
    [{ FACE_DETECTION_TIMEOUT_MS: '10' }, 'FACE_DETECTION_TIMEOUT_MS'],
  ])('names the variable that is wrong (%o)', (env, variable) => {
    expect(() => loadControlPlaneConfig(env)).toThrow(ConfigError);
    expect(() => loadControlPlaneConfig(env)).toThrow(new RegExp(variable));
  });

  it('keeps local user URLs off by default, and warns at every start while they are on', async () => {
    expect(loadControlPlaneConfig({}).env).toMatchObject({ DEV_ALLOW_LOCAL_URLS: false, FACE_DETECTION_TIMEOUT_MS: 30_000 });
    const dataDir = await mkdtemp(join(tmpdir(), 'petsing-config-'));
    const { lines, sink } = captureLines();
    try {
      const started = await startService(loadControlPlaneConfig({ DATA_DIR: dataDir, DEV_ALLOW_LOCAL_URLS: 'true' }), createLogger('info', 'petsing', sink), {
        api: false,
        controlWorker: false,
      });
      await started.stop();
      const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.msg.includes('DEV_ALLOW_LOCAL_URLS'));
      expect(warnings).toEqual([expect.objectContaining({ level: 40 })]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
