import { Field, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { AddressScalar } from '../../common/scalars';

/** The address that stands for a chain's native currency (ETH, POL, ...), which has no contract. */
export const NATIVE_CURRENCY = '0x0000000000000000000000000000000000000000';

/** SQL: the row `x`'s price is in the native currency (statistics count only these). */
export const isNativeSql = (x: string) => `${x}.currency = '${NATIVE_CURRENCY}'`;

/**
 * A currency prices may be given in on one chain: its native currency (address 0x000…0, the chain's
 * symbol, 18 decimals) or a configured ERC-20 token (seeded by a migration, more with CURRENCIES).
 */
@Entity('currencies')
@ObjectType({ simpleResolvers: true, description: 'A currency of a chain: its native one (address 0x0000000000000000000000000000000000000000) or a configured ERC-20 token' })
export class Currency {
  @Field(() => String, { description: 'EIP-155 chain id' })
  @PrimaryColumn({ name: 'chain_id', type: 'varchar', length: 20 })
  chainId: string;

  @Field(() => AddressScalar, { description: "The token's contract; 0x0000000000000000000000000000000000000000 for the native currency" })
  @PrimaryColumn({ type: 'varchar', length: 42 })
  address: string;

  @Field(() => String)
  @Column({ type: 'varchar', length: 20 })
  symbol: string;

  @Field(() => Int, { description: "Decimals of the token's smallest unit: a price in it has at most this many" })
  @Column({ type: 'smallint' })
  decimals: number;
}
