import { Field, Int, ObjectType } from 'type-graphql';
import { AddressScalar } from '../../common/scalars';
import type { ReadRelation, SqlScope } from '../../common/read-model';
import { StoredFee } from './collection.entity';

@ObjectType({ simpleResolvers: true })
export class Fee {
  @Field(() => AddressScalar)
  address: string;

  @Field(() => Int)
  basisPoints: number;

  @Field(() => String, { description: 'royalty (collection fees) or maker (listing fees)' })
  type: string;
}

export function feesOf(stored: StoredFee[] | null | undefined, type: 'royalty' | 'maker'): Fee[] {
  return (stored ?? []).map((f) => ({ address: f.address, basisPoints: f.basisPoints, type }));
}

/**
 * A row's fees (Collection.fees, Asset.fees, Listing.fees) as feesOf reads them: `stored` gives the SQL of
 * the stored JSON arrays over the row, [royalty] or [royalty, maker]; each array's fees in their order.
 */
export function feesRelation(stored: (row: string, s: SqlScope) => string[]): ReadRelation {
  return {
    kind: 'rows',
    type: 'Fee',
    from: (u, row, s) => {
      const sources = stored(row, s).map(
        (sql, k) => `SELECT f, ${k} AS k, i, '${k === 0 ? 'royalty' : 'maker'}'::text AS t FROM jsonb_array_elements(${sql}) WITH ORDINALITY e(f, i)`,
      );
      return `(${sources.join(' UNION ALL ')}) ${u} ORDER BY ${u}.k, ${u}.i`;
    },
    fields: {
      address: { sql: (u) => `${u}.f->>'address'`, kind: 'value' },
      basisPoints: { sql: (u) => `(${u}.f->>'basisPoints')::int`, kind: 'value' },
      type: { sql: 't', kind: 'value' },
    },
  };
}
