import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * ERC-4906 and ERC-2981 as the chain follower reads them (docs/chain.md, issue #41 items 3 and 5):
 * - `chain_metadata_update_ranges`: a BatchMetadataUpdate(from, to) log, kept as a range and expanded into
 *   tokenURI reads (chain_token_uris_pending) a chunk at a time by the follower, from `next_token_id` up: a
 *   batch over every id of a collection is one row, not a row per token;
 * - `chain_collection_royalties`: the royalty a collection's contract declares (royaltyInfo), when it was
 *   read, whether a read is due (a new collection, a refresh) and whether the collection's fees show it
 *   (they do when its owner set none).
 */
export class ChainMetadataUpdates1765650000000 implements MigrationInterface {
  name = 'ChainMetadataUpdates1765650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "chain_metadata_update_ranges" (
      "id" bigserial PRIMARY KEY,
      "chain_id" varchar(20) NOT NULL,
      "collection_id" uuid NOT NULL REFERENCES "collections"("id") ON DELETE CASCADE,
      "next_token_id" numeric(78,0) NOT NULL,
      "to_token_id" numeric(78,0) NOT NULL,
      "created_at" timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX "ix_chain_metadata_update_ranges_chain" ON "chain_metadata_update_ranges" ("chain_id", "id")`);
    await q.query(`CREATE INDEX "ix_chain_metadata_update_ranges_collection" ON "chain_metadata_update_ranges" ("collection_id")`);
    await q.query(`CREATE TABLE "chain_collection_royalties" (
      "collection_id" uuid PRIMARY KEY REFERENCES "collections"("id") ON DELETE CASCADE,
      "due" boolean NOT NULL DEFAULT true,
      "supported" boolean,
      "fees" jsonb NOT NULL DEFAULT '[]',
      "shown" boolean NOT NULL DEFAULT false,
      "read_at" timestamptz)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "chain_collection_royalties"`);
    await q.query(`DROP TABLE "chain_metadata_update_ranges"`);
  }
}
