import type { ReadModel } from '../../common/read-model';

/**
 * How an account is read by the SQL plans: an address, no row of its own. Its row is made of the
 * `account(address)` root's argument (its key `id` is the address), and its lists are the read models'
 * pages of an account (`pagesOf` of asset.read.ts, collection.read.ts, listing.read.ts, and by its part in
 * them, `role`, offer.read.ts and order.read.ts), which their loaders read too.
 */
export const ACCOUNT_READ: ReadModel = {
  type: 'Account',
  alias: 'ac',
  fields: {
    address: { sql: 'id', kind: 'value' },
  },
  filters: [],
  rootFilters: [],
  sorts: {},
  relations: {},
  pagesOf: {},
  one: {
    field: 'account',
    args: ['address'],
    // Every address is an account (one with nothing has empty lists): found whatever it is.
    where: () => [],
    row: (s, args) => `(SELECT ${s.p.add(args.address)}::varchar AS id)`,
  },
};
