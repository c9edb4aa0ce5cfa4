import { InitialSchema1763800000000 } from './1763800000000-initial-schema';
import { Marketplace1763900000000 } from './1763900000000-marketplace';
import { MarketCorrectness1763950000000 } from './1763950000000-market-correctness';
import { Events1764000000000 } from './1764000000000-events';
import { IdempotencyKeys1764100000000 } from './1764100000000-idempotency-keys';

/** Every migration, in order. Listed explicitly so the build and jest find the same set. */
export const migrations = [
  InitialSchema1763800000000,
  Marketplace1763900000000,
  MarketCorrectness1763950000000,
  Events1764000000000,
  IdempotencyKeys1764100000000,
];
