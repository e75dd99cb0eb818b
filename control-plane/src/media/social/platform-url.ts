import { isIP } from 'node:net';

export type PlatformUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Whether `input` is a video page on one of the platform's own hosts. Pure parsing, no network: it runs
 * before yt-dlp is started, so nobody can make this service (or yt-dlp's generic extractor) fetch any
 * other address. Hosts match exactly; subdomains are not implied, so `www.tiktok.com.evil.com` and
 * `eviltiktok.com` fail.
 */
export function checkPlatformUrl(input: string, allowedHosts: ReadonlySet<string>): PlatformUrlCheck {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: 'it is not an absolute URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'only https:// links are accepted' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'links with a user name or password (user@host) are refused' };
  // The WHATWG parser drops an explicit :443 on https, so any port left is another one.
  if (url.port !== '') return { ok: false, reason: 'only the default port is accepted' };
  if (url.hostname.startsWith('[') || isIP(url.hostname) !== 0) return { ok: false, reason: 'IP addresses are not video hosts' };
  if (!allowedHosts.has(url.hostname)) return { ok: false, reason: `${url.hostname} is not a host of the platform` };
  return { ok: true, url };
}
