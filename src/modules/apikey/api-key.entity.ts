import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { AddressScalar } from '../../common/scalars';
import { ApiKeyRole } from '../../common/request/context';
import { Node } from '../../common/graphql/node';

export { ApiKeyRole };
registerEnumType(ApiKeyRole, { name: 'ApiKeyRole' });

/** An API key. Only the SHA-256 digest of the key is kept; the key itself is shown once, at creation. */
@Entity('api_keys')
@ObjectType({ simpleResolvers: true, implements: Node })
export class ApiKey {
  @Field(() => ID)
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'key_hash', type: 'char', length: 64, unique: true })
  keyHash: string;

  @Field(() => String, { description: 'The first characters of the key, to tell keys apart' })
  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  @Field(() => AddressScalar)
  @Column({ type: 'varchar', length: 42 })
  address: string;

  @Field(() => ApiKeyRole)
  @Column({ type: 'varchar', length: 10 })
  role: ApiKeyRole;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 200, nullable: true })
  label: string | null;

  @Field(() => Date)
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @Field(() => Date, { nullable: true })
  @Column({ name: 'revoked_at', type: 'timestamptz', precision: 3, nullable: true })
  revokedAt: Date | null;
}
