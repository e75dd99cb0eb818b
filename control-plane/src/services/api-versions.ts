/** The version registry. Deprecating a version is a data change here; the /v1 middleware reads it. */
export type ApiVersionEntry = {
  version: string;
  status: 'current' | 'deprecated' | 'sunset';
  released: string;
  deprecatedOn: string | null;
  sunsetOn: string | null;
};

export const API_VERSIONS: readonly ApiVersionEntry[] = [
  { version: 'v1', status: 'current', released: '2026-08-22', deprecatedOn: null, sunsetOn: null },
];

export const CURRENT_API_VERSION = 'v1';
const NOTICE_PERIOD_DAYS = 180;

export function versionsDocument(baseUrl: string, versions: readonly ApiVersionEntry[]) {
  return {
    current: CURRENT_API_VERSION,
    versions: versions.map((entry) => ({
      version: entry.version,
      status: entry.status,
      base_url: `${baseUrl}/${entry.version}`,
      released: entry.released,
      deprecated_on: entry.deprecatedOn,
      sunset_on: entry.sunsetOn,
    })),
    policy: {
      scheme: 'url_path' as const,
      description:
        'The major version is the first path segment. Non-breaking changes ship inside the current version without notice; ' +
        `a breaking change ships as a new major version, and the old one keeps answering for at least ${NOTICE_PERIOD_DAYS} days after its deprecation is announced.`,
      breaking_changes: [
        'removing an endpoint',
        'removing a field',
        'removing an enum value',
        'making an optional request field required',
        'changing the type of a field',
        'changing the meaning of a status code',
      ],
      non_breaking_changes: [
        'adding an endpoint',
        'adding an optional request field',
        'adding a response field',
        'adding an enum value to a field documented as extensible',
      ],
      notice_period_days: NOTICE_PERIOD_DAYS,
      signals: [
        'Deprecation response header (RFC 8594) with the date of deprecation',
        'Sunset response header (RFC 8594) with the date the version stops answering',
        'Link header with rel="deprecation" pointing at migration notes',
        'GET /versions lists every version with its dates',
      ],
      documentation_url: `${baseUrl}/docs#versioning`,
    },
  };
}

/** Headers every response of a version carries: the policy link always, deprecation signals once announced. */
export function versionHeaders(baseUrl: string, entry: ApiVersionEntry): Record<string, string> {
  const links = [`<${baseUrl}/versions>; rel="version-policy"`];
  const headers: Record<string, string> = {};
  if (entry.deprecatedOn) {
    headers['Deprecation'] = httpDate(entry.deprecatedOn);
    links.push(`<${baseUrl}/docs#migrating-from-${entry.version}>; rel="deprecation"; type="text/html"`);
  }
  if (entry.sunsetOn) headers['Sunset'] = httpDate(entry.sunsetOn);
  headers['Link'] = links.join(', ');
  return headers;
}

function httpDate(isoDate: string): string {
  return new Date(`${isoDate}T00:00:00Z`).toUTCString();
}
