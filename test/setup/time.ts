/** Moments for tests that move the service's clock. */
export const SECOND = 1000;
export const HOUR = 3600 * SECOND;
export const later = (from: Date, ms: number) => new Date(from.getTime() + ms);
/** A whole second, so that timestamps stored with millisecond precision come back equal. */
export const wholeSecond = () => new Date(Math.floor(Date.now() / SECOND) * SECOND);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
