/**
 * The largest photo the service takes. The control plane refuses a bigger upload or download before
 * storing it; render nodes refuse one that got past it anyway, before decoding it.
 */

/** 50 megapixels: above any phone camera's default output, well below what would exhaust a render node. */
export const MAX_INPUT_PIXELS = 50_000_000;
/** The longest side in pixels. */
export const MAX_INPUT_SIDE = 16_384;
