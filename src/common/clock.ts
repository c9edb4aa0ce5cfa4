/**
 * The service's notion of now. Every rule that depends on time (expiry of listings and offers, a dutch
 * auction's price, statistics periods) reads it here and passes it to SQL as a parameter, so tests can
 * move time (`clock.set`) instead of sleeping.
 */
let source: () => Date = () => new Date();

export const clock = {
  now(): Date {
    return source();
  },
  /** Tests only: freeze or shift time; `clock.reset()` goes back to the real one. */
  set(value: Date | (() => Date)): void {
    source = typeof value === 'function' ? value : () => new Date(value.getTime());
  },
  reset(): void {
    source = () => new Date();
  },
};
