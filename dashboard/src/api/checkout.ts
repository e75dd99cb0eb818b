/**
 * Stripe Checkout round trips. Before the browser leaves for Checkout, what it went to buy is noted in
 * sessionStorage; Stripe sends it back to {SITE_URL}/checkout/success or /checkout/cancel (the service's
 * return addresses, docs/web-app.md), where the app reads the note to show the right page.
 */
export type CheckoutPurpose =
  | { purpose: 'plan'; plan: string }
  | { purpose: 'watermark_removal'; videoId: string }
  | { purpose: 'credit_pack'; pack: string };

const KEY = 'petsing.checkout';

export function leaveForCheckout(url: string, purpose: CheckoutPurpose): void {
  sessionStorage.setItem(KEY, JSON.stringify(purpose));
  window.location.assign(url);
}

/** What the last Checkout was for (read once). */
export function takeCheckoutPurpose(): CheckoutPurpose | undefined {
  const stored = sessionStorage.getItem(KEY);
  sessionStorage.removeItem(KEY);
  try {
    return stored ? (JSON.parse(stored) as CheckoutPurpose) : undefined;
  } catch {
    return undefined;
  }
}
