/**
 * What things cost. Plans and the watermark removal are priced per currency (set by hand, not converted,
 * so each price looks local); the caller's currency follows the country the edge reports. Amounts are in
 * the currency's minor unit the way Stripe counts it: cents for USD, but whole yen and won for the
 * zero-decimal JPY and KRW.
 */

// The money rules of a video, defined here only: repositories, schemas, hints and emails import them.
// (The users table's CHECK and default restate FREE_CREDITS_PER_MONTH; changing it needs a migration.)
/** API credits a video costs (POST /v1/videos, MCP create_video); a failed render gives them back. */
export const CREDITS_PER_VIDEO = 1;
/** Free web credits a person has at the start of every calendar month (UTC); unused ones do not carry over. */
export const FREE_CREDITS_PER_MONTH = 2;
/** Free credits a web create consumes, unless the person is subscribed; a failed render gives it back. */
export const FREE_CREDITS_PER_VIDEO = 1;

export const PLAN_TYPES = ['weekly', 'annual'] as const;
export type PlanType = (typeof PLAN_TYPES)[number];

export const PLAN_INTERVALS: Record<PlanType, 'week' | 'year'> = { weekly: 'week', annual: 'year' };

export type CurrencyPrices = {
  /** Digits after the decimal point of the currency's major unit (0 for JPY and KRW). */
  exponent: 0 | 2;
  weekly: number;
  annual: number;
  watermarkRemoval: number;
};

/** Upper-case ISO 4217 code → prices in minor units. */
export const PRICE_TABLE = {
  USD: { exponent: 2, weekly: 499, annual: 4999, watermarkRemoval: 199 },
  EUR: { exponent: 2, weekly: 499, annual: 4999, watermarkRemoval: 199 },
  GBP: { exponent: 2, weekly: 449, annual: 4499, watermarkRemoval: 179 },
  CAD: { exponent: 2, weekly: 699, annual: 6999, watermarkRemoval: 279 },
  AUD: { exponent: 2, weekly: 799, annual: 7999, watermarkRemoval: 299 },
  CHF: { exponent: 2, weekly: 499, annual: 4999, watermarkRemoval: 199 },
  SEK: { exponent: 2, weekly: 5900, annual: 59900, watermarkRemoval: 2200 },
  PLN: { exponent: 2, weekly: 1999, annual: 19999, watermarkRemoval: 799 },
  JPY: { exponent: 0, weekly: 750, annual: 7500, watermarkRemoval: 300 },
  KRW: { exponent: 0, weekly: 6900, annual: 69000, watermarkRemoval: 2700 },
  INR: { exponent: 2, weekly: 39900, annual: 399900, watermarkRemoval: 14900 },
  BRL: { exponent: 2, weekly: 2490, annual: 24990, watermarkRemoval: 990 },
  MXN: { exponent: 2, weekly: 9900, annual: 99900, watermarkRemoval: 3900 },
  SGD: { exponent: 2, weekly: 699, annual: 6999, watermarkRemoval: 279 },
} as const satisfies Record<string, CurrencyPrices>;

export type Currency = keyof typeof PRICE_TABLE;
export const FALLBACK_CURRENCY: Currency = 'USD';

const EURO_AREA = ['AT', 'BE', 'CY', 'DE', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PT', 'SI', 'SK'];

/** ISO 3166-1 alpha-2 country → currency; every country not listed pays in USD. */
const COUNTRY_CURRENCY: Record<string, Currency> = {
  ...Object.fromEntries(EURO_AREA.map((country) => [country, 'EUR' as const])),
  US: 'USD',
  GB: 'GBP',
  CA: 'CAD',
  AU: 'AUD',
  CH: 'CHF',
  LI: 'CHF',
  SE: 'SEK',
  PL: 'PLN',
  JP: 'JPY',
  KR: 'KRW',
  IN: 'INR',
  BR: 'BRL',
  MX: 'MXN',
  SG: 'SGD',
};

export type LocalPrices = {
  /** The country as the edge sent it (upper-cased), or null when absent or not a country code. */
  country: string | null;
  currency: Currency;
  prices: CurrencyPrices;
};

/** Prices for the country in the edge header; a missing, malformed or unlisted country gets USD. */
export function pricesForCountry(header: string | undefined): LocalPrices {
  const code = header?.trim().toUpperCase();
  const country = code && /^[A-Z]{2}$/.test(code) ? code : null;
  const currency = (country && COUNTRY_CURRENCY[country]) || FALLBACK_CURRENCY;
  return { country, currency, prices: PRICE_TABLE[currency] };
}

/** The amount as a person reads it, e.g. "$4.99" or "¥750". */
export function formatAmount(amount: number, currency: Currency): string {
  const { exponent } = PRICE_TABLE[currency];
  return new Intl.NumberFormat('en', { style: 'currency', currency, minimumFractionDigits: exponent, maximumFractionDigits: exponent }).format(
    amount / 10 ** exponent,
  );
}

/** Prepaid API credit packs (spec: Credit packs); priced in USD only. */
export const CREDIT_PACKS = {
  starter: { credits: 100, amount: 500 },
  growth: { credits: 500, amount: 2000 },
  scale: { credits: 2500, amount: 7500 },
} as const satisfies Record<string, { credits: number; amount: number }>;

export type CreditPackKey = keyof typeof CREDIT_PACKS;

export const CREDIT_PACK_KEYS = Object.keys(CREDIT_PACKS) as CreditPackKey[];
export const CREDIT_PACK_CURRENCY: Currency = 'USD';
