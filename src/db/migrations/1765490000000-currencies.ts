import { MigrationInterface, QueryRunner } from 'typeorm';

const NATIVE = `'0x0000000000000000000000000000000000000000'`;

/** WETH and USDC (and BNB Chain's WBNB) of each seeded chain, as their contracts declare them. */
const DEFAULT_TOKENS: [chainId: string, symbol: string, address: string, decimals: number][] = [
  ['1', 'WETH', '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', 18],
  ['1', 'USDC', '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', 6],
  ['137', 'WETH', '0x7ceb23fd6bc0add59e62ac25578270cff1b9f619', 18],
  ['137', 'USDC', '0x3c499c542cef5e3811e1192ce70d8cc03d5c3359', 6],
  ['56', 'WBNB', '0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c', 18],
  ['56', 'USDC', '0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d', 18],
  ['42161', 'WETH', '0x82af49447d8a07e3bd95bd0d56f35241523fbab1', 18],
  ['42161', 'USDC', '0xaf88d065e77c8cc2239327c5edb3a432268e5831', 6],
  ['10', 'WETH', '0x4200000000000000000000000000000000000006', 18],
  ['10', 'USDC', '0x0b2c639c533813f4aa9d7837caf62653d097ff85', 6],
  ['8453', 'WETH', '0x4200000000000000000000000000000000000006', 18],
  ['8453', 'USDC', '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', 6],
  ['43114', 'WAVAX', '0xb31f66aa3c1e785363f0875a1b74e27b85fd66c7', 18],
  ['43114', 'USDC', '0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e', 6],
  ['11155111', 'WETH', '0xfff9976782d46cc05630d1f6ebab18b2324d6b14', 18],
  ['11155111', 'USDC', '0x1c7d4b196cb0c7b01d743fbc6116a902379c7238', 6],
];

/**
 * Currencies (issue #31): a price is an amount of one currency of its chain: the native one (address
 * 0x000…0, the chain's symbol, 18 decimals; what every price was before, so existing rows and clients keep
 * it by default) or a configured ERC-20 token. Listings, offers and orders record theirs; a listing also
 * keeps its currency's decimals, to which a dutch auction's falling price is rounded in SQL. Statistics
 * count native sales only: the rollups' trigger leaves other currencies out (no sale in them exists yet).
 */
export class Currencies1765490000000 implements MigrationInterface {
  name = 'Currencies1765490000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "currencies" (
      "chain_id" varchar(20) NOT NULL REFERENCES "chains"("id"),
      "address" varchar(42) NOT NULL CHECK ("address" ~ '^0x[0-9a-f]{40}$'),
      "symbol" varchar(20) NOT NULL CHECK ("symbol" ~ '^[A-Za-z0-9.]+$'),
      "decimals" smallint NOT NULL CHECK ("decimals" BETWEEN 0 AND 18),
      PRIMARY KEY ("chain_id", "address"))`);
    await q.query(`CREATE UNIQUE INDEX "uq_currencies_chain_symbol" ON "currencies" ("chain_id", upper("symbol"))`);
    await q.query(`INSERT INTO "currencies" ("chain_id", "address", "symbol", "decimals") SELECT "id", ${NATIVE}, "symbol", 18 FROM "chains"`);
    await q.query(
      `INSERT INTO "currencies" ("chain_id", "address", "symbol", "decimals")
       SELECT t.chain_id, t.address, t.symbol, t.decimals FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::smallint[]) t(chain_id, symbol, address, decimals)
       WHERE EXISTS (SELECT 1 FROM "chains" c WHERE c.id = t.chain_id)`,
      [DEFAULT_TOKENS.map((t) => t[0]), DEFAULT_TOKENS.map((t) => t[1]), DEFAULT_TOKENS.map((t) => t[2]), DEFAULT_TOKENS.map((t) => t[3])],
    );
    await q.query(`ALTER TABLE "listings" ADD COLUMN "currency" varchar(42) NOT NULL DEFAULT ${NATIVE},
      ADD COLUMN "currency_decimals" smallint NOT NULL DEFAULT 18`);
    await q.query(`ALTER TABLE "offers" ADD COLUMN "currency" varchar(42) NOT NULL DEFAULT ${NATIVE}`);
    await q.query(`ALTER TABLE "orders" ADD COLUMN "currency" varchar(42) NOT NULL DEFAULT ${NATIVE}`);
    await q.query(`ALTER TABLE "offers" ADD CONSTRAINT "fk_offers_currency" FOREIGN KEY ("chain_id", "currency") REFERENCES "currencies"("chain_id", "address")`);
    await q.query(`ALTER TABLE "orders" ADD CONSTRAINT "fk_orders_currency" FOREIGN KEY ("chain_id", "currency") REFERENCES "currencies"("chain_id", "address")`);
    await q.query(`DROP TRIGGER "orders_sales_rollup" ON "orders"`);
    await q.query(`CREATE TRIGGER "orders_sales_rollup" AFTER INSERT ON "orders" FOR EACH ROW
      WHEN (NEW.status = 'completed' AND NEW.seller <> NEW.buyer AND NEW.currency = ${NATIVE}) EXECUTE FUNCTION "collection_sales_hourly_add"()`);
  }

  /**
   * Refused while a listing, an offer or an order is priced in an ERC-20 token: without its currency column
   * the older schema would read its amount as native (12.5 USDC as 12.5 ETH), a silent money error. The
   * operator ends or removes those rows first (docs/operations.md "Reverting migrations").
   */
  async down(q: QueryRunner): Promise<void> {
    const [priced] = await q.query(`SELECT
      (SELECT count(*)::int FROM "listings" WHERE "currency" <> ${NATIVE}) AS listings,
      (SELECT count(*)::int FROM "offers" WHERE "currency" <> ${NATIVE}) AS offers,
      (SELECT count(*)::int FROM "orders" WHERE "currency" <> ${NATIVE}) AS orders`);
    if (priced.listings || priced.offers || priced.orders) {
      throw new Error(
        `Currencies1765490000000 cannot be reverted: rows are priced in an ERC-20 token: ${priced.listings} listings, ${priced.offers} offers, ` +
          `${priced.orders} orders (WHERE currency <> ${NATIVE}). Without the currency column their amounts would read as native. ` +
          'End or delete them first (docs/operations.md "Reverting migrations"); nothing was changed.',
      );
    }
    await q.query(`DROP TRIGGER "orders_sales_rollup" ON "orders"`);
    await q.query(`CREATE TRIGGER "orders_sales_rollup" AFTER INSERT ON "orders" FOR EACH ROW
      WHEN (NEW.status = 'completed' AND NEW.seller <> NEW.buyer) EXECUTE FUNCTION "collection_sales_hourly_add"()`);
    await q.query(`ALTER TABLE "orders" DROP COLUMN "currency"`);
    await q.query(`ALTER TABLE "offers" DROP COLUMN "currency"`);
    await q.query(`ALTER TABLE "listings" DROP COLUMN "currency", DROP COLUMN "currency_decimals"`);
    await q.query(`DROP TABLE "currencies"`);
  }
}
