import { Field, Int, ObjectType } from 'type-graphql';
import { AddressScalar } from '../../common/scalars';
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
