import { Entity, Column, PrimaryColumn } from 'typeorm';

/**
 * A row of `asset_traits`: one trait of an asset, copied from its metadata's attributes when written (asset.traits.ts),
 * so trait filters and rarity are index walks. As the migrations build it (test/entities.test.ts holds the two equal).
 */
@Entity('asset_traits')
export class AssetTraitRecord {
  @PrimaryColumn({ name: 'asset_id', type: 'uuid' })
  assetId: string;

  @Column({ name: 'collection_id', type: 'uuid' })
  collectionId: string;

  @PrimaryColumn({ name: 'trait_type', type: 'varchar', length: 200 })
  traitType: string;

  @PrimaryColumn({ type: 'varchar', length: 200 })
  value: string;
}
