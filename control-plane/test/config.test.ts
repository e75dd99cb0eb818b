import { describe, expect, it } from 'vitest';
import { ConfigError, loadControlPlaneConfig } from '../src/config/env.ts';

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
  ])('names the variable that is wrong (%o)', (env, variable) => {
    expect(() => loadControlPlaneConfig(env)).toThrow(ConfigError);
    expect(() => loadControlPlaneConfig(env)).toThrow(new RegExp(variable));
  });
});
