import { describe, expect, it } from 'vitest';
import { CREDIT_PACKS, FALLBACK_CURRENCY, formatAmount, PRICE_TABLE, pricesForCountry, type Currency } from '../src/domain/pricing.ts';

/** Currencies Stripe charges in whole units (https://docs.stripe.com/currencies#zero-decimal). */
const STRIPE_ZERO_DECIMAL = ['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'];

describe('the price table', () => {
  const currencies = Object.keys(PRICE_TABLE) as Currency[];

  it('has at least 10 currencies, JPY and KRW among them', () => {
    expect(currencies.length).toBeGreaterThanOrEqual(10);
    expect(currencies).toEqual(expect.arrayContaining(['USD', 'EUR', 'JPY', 'KRW']));
  });

  it("counts every amount in the currency's minor unit as Stripe does: whole units for zero-decimal currencies", () => {
    for (const currency of currencies) {
      const { exponent, weekly, annual, watermarkRemoval } = PRICE_TABLE[currency];
      expect(exponent, currency).toBe(STRIPE_ZERO_DECIMAL.includes(currency) ? 0 : 2);
      // Intl agrees on the number of decimals (JPY and KRW have none).
      expect(new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits, currency).toBe(exponent);
      for (const amount of [weekly, annual, watermarkRemoval]) {
        expect(Number.isInteger(amount) && amount > 0, `${currency} ${amount}`).toBe(true);
      }
      // A year costs more than a week, and less than 52 of them.
      expect(annual, currency).toBeGreaterThan(weekly);
      expect(annual, currency).toBeLessThan(weekly * 52);
    }
    expect(formatAmount(PRICE_TABLE.JPY.weekly, 'JPY')).toBe('¥750');
    expect(formatAmount(PRICE_TABLE.KRW.annual, 'KRW')).toBe('₩69,000');
    expect(formatAmount(PRICE_TABLE.USD.weekly, 'USD')).toBe('$4.99');
  });

  it('maps countries to their currency, and anything else to USD', () => {
    expect(pricesForCountry('JP')).toEqual({ country: 'JP', currency: 'JPY', prices: PRICE_TABLE.JPY });
    expect(pricesForCountry(' kr ')).toMatchObject({ country: 'KR', currency: 'KRW' });
    for (const country of ['FR', 'DE', 'IE', 'ES']) expect(pricesForCountry(country).currency).toBe('EUR');
    expect(pricesForCountry('GB').currency).toBe('GBP');
    expect(pricesForCountry('US').currency).toBe('USD');
    expect(FALLBACK_CURRENCY).toBe('USD');
    for (const unknown of [undefined, '', 'XX', 'ZW', 'T1', 'USA', '12']) expect(pricesForCountry(unknown).currency, String(unknown)).toBe('USD');
  });

  it('sells the credit packs of the spec in USD cents', () => {
    expect(CREDIT_PACKS).toEqual({ starter: { credits: 100, amount: 500 }, growth: { credits: 500, amount: 2000 }, scale: { credits: 2500, amount: 7500 } });
  });
});
