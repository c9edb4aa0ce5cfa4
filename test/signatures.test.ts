import { parseUnits } from 'viem';
import { privateKeyToAccount, generatePrivateKey, PrivateKeyAccount } from 'viem/accounts';
import { startServer, TestServer, HttpResult } from './setup/server';
import { saveCollection, saveAsset } from './factories/marketplace';

/**
 * Issue #14, signed listings and offers: EIP-712 signatures made with viem's local accounts, exactly as
 * docs/signatures.md tells a client to make them (the domain and types are written out here, not taken
 * from the server's code, so that a change of the message shape fails this test).
 */
const DOMAIN = { name: 'NFT Marketplace Gateway', version: '1' };
const TYPES = {
  Listing: [
    { name: 'maker', type: 'address' },
    { name: 'tokenAddress', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'orderType', type: 'string' },
    { name: 'currency', type: 'address' },
    { name: 'startPrice', type: 'uint256' },
    { name: 'acceptPrice', type: 'uint256' },
    { name: 'listingTime', type: 'uint256' },
    { name: 'expirationTime', type: 'uint256' },
  ],
  Offer: [
    { name: 'taker', type: 'address' },
    { name: 'tokenAddress', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'currency', type: 'address' },
    { name: 'price', type: 'uint256' },
    { name: 'startTime', type: 'uint256' },
    { name: 'endTime', type: 'uint256' },
  ],
  CollectionOffer: [
    { name: 'taker', type: 'address' },
    { name: 'tokenAddress', type: 'address' },
    { name: 'quantity', type: 'uint256' },
    { name: 'currency', type: 'address' },
    { name: 'price', type: 'uint256' },
    { name: 'startTime', type: 'uint256' },
    { name: 'endTime', type: 'uint256' },
    { name: 'traits', type: 'Trait[]' },
  ],
  Trait: [
    { name: 'traitType', type: 'string' },
    { name: 'value', type: 'string' },
  ],
} as const;
/** The Listing type signed before currencies (no `currency`): still valid for native prices. */
const LEGACY_LISTING = { Listing: TYPES.Listing.filter((f) => f.name !== 'currency') };

/** A currency of chain 1 as a client signs its prices: its contract (0x000…0 for ETH) and decimals. */
interface SigningCurrency {
  address: `0x${string}`;
  decimals: number;
  symbol: string;
}
const ETH: SigningCurrency = { address: '0x0000000000000000000000000000000000000000', decimals: 18, symbol: 'ETH' };
const WETH: SigningCurrency = { address: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', decimals: 18, symbol: 'WETH' };
const USDC: SigningCurrency = { address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', decimals: 6, symbol: 'USDC' };
const seconds = (iso: string) => BigInt(Math.floor(Date.parse(iso) / 1000));

interface Wallet {
  account: PrivateKeyAccount;
  address: string;
  key: string;
}

interface Token {
  owner: Wallet;
  tokenAddress: string;
  tokenId: string;
  assetId: string;
}

let optional: TestServer;
let required: TestServer;
let off: TestServer;
beforeAll(async () => {
  [optional, required, off] = await Promise.all([startServer(), startServer({ signatures: 'required' }), startServer({ signatures: 'off' })]);
});
afterAll(() => Promise.all([optional.close(), required.close(), off.close()]));

async function wallet(server: TestServer): Promise<Wallet> {
  const account = privateKeyToAccount(generatePrivateKey());
  const { key, address } = await server.key({ address: account.address.toLowerCase() });
  return { account, address, key };
}

/** A fresh wallet owning a fresh asset on chain 1. */
async function ownedToken(server: TestServer): Promise<Token> {
  const owner = await wallet(server);
  const collection = await saveCollection(server, owner.key);
  const asset = await saveAsset(server, owner.key, collection, owner.address);
  return { owner, tokenAddress: asset.tokenAddress, tokenId: asset.tokenId, assetId: asset.id };
}

const inHours = (h: number) => new Date(Math.floor(Date.now() / 1000) * 1000 + h * 3600_000).toISOString();

interface ListingBody {
  start_price: string;
  accept_price?: string;
  order_type?: string;
  listing_time: string;
  expiration_time?: { at: string };
}

/** The terms of the owner's listing of the token, its prices in `currency`'s smallest unit. */
function listingMessage(token: Token, body: ListingBody, currency: SigningCurrency) {
  return {
    maker: token.owner.account.address,
    tokenAddress: token.tokenAddress as `0x${string}`,
    tokenId: BigInt(token.tokenId),
    orderType: body.order_type ?? 'fixed_price',
    currency: currency.address,
    startPrice: parseUnits(body.start_price, currency.decimals),
    acceptPrice: parseUnits(body.accept_price ?? body.start_price, currency.decimals),
    listingTime: seconds(body.listing_time),
    expirationTime: body.expiration_time ? seconds(body.expiration_time.at) : 0n,
  };
}

/** The owner's listing of the token, signed by `signer` (the owner, unless a test signs in another's name). */
function signListing(signer: Wallet, token: Token, body: ListingBody, chainId = 1, currency = ETH) {
  return signer.account.signTypedData({ domain: { ...DOMAIN, chainId }, types: TYPES, primaryType: 'Listing', message: listingMessage(token, body, currency) });
}

interface OfferBody {
  price: string;
  start_time: string;
  end_time: string;
}

/** The taker's offer, signed by `signer` (the taker, unless a test signs in another's name). */
function signOffer(taker: Wallet, token: Token, body: OfferBody, signer: Wallet = taker, currency = ETH) {
  return signer.account.signTypedData({
    domain: { ...DOMAIN, chainId: 1 },
    types: TYPES,
    primaryType: 'Offer',
    message: {
      taker: taker.account.address,
      tokenAddress: token.tokenAddress as `0x${string}`,
      tokenId: BigInt(token.tokenId),
      currency: currency.address,
      price: parseUnits(body.price, currency.decimals),
      startTime: seconds(body.start_time),
      endTime: seconds(body.end_time),
    },
  });
}

const listingBody = (): ListingBody => ({ start_price: '3', listing_time: inHours(-1), expiration_time: { at: inHours(48) } });
const offerBody = (): OfferBody => ({ price: '2', start_time: inHours(-1), end_time: inHours(24) });

function expectSignatureRefused(res: HttpResult, mention: string): void {
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('VALIDATION_FAILED');
  expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'signature', message: expect.stringContaining(mention) })]));
}

const listingsOf = async (server: TestServer, token: Token) =>
  server.ds.query('SELECT status, signature FROM listings WHERE asset_id = $1 ORDER BY created_at', [token.assetId]);
const offersOf = async (server: TestServer, token: Token) => server.ds.query('SELECT status, signature FROM offers WHERE asset_id = $1', [token.assetId]);

describe('SIGNATURES=optional (the default)', () => {
  test('when a listing carries its owner\'s signature of its terms, then it is listed and the signature is stored and shown', async () => {
    const token = await ownedToken(optional);
    const body = listingBody();
    const signature = await signListing(token.owner, token, body);

    const res = await optional.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, ...body, signature }, token.owner.key);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'active', start_price: 3, signature });
    expect(await listingsOf(optional, token)).toEqual([{ status: 'active', signature }]);
  });

  test('when the signature is another account\'s, then 422 naming the account it recovers to, and nothing is listed', async () => {
    const token = await ownedToken(optional);
    const stranger = await wallet(optional);
    const body = listingBody();
    const signature = await signListing(stranger, token, body);

    const res = await optional.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, ...body, signature }, token.owner.key);

    expectSignatureRefused(res, `recovers to ${stranger.address}`);
    expect(await listingsOf(optional, token)).toEqual([]);
  });

  test('when the owner signed other terms (price 3, body says 2), then 422 and nothing is listed, on both doors', async () => {
    const token = await ownedToken(optional);
    const body = listingBody();
    const signature = await signListing(token.owner, token, body);

    const rest = await optional.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, ...body, start_price: '2', signature }, token.owner.key);
    const gql = await optional.gql(
      `mutation ($input: CreateListingInput!) { createListing(input: $input) { id } }`,
      { input: { assetId: token.assetId, startPrice: '2', listingTime: body.listing_time, expirationTime: body.expiration_time, signature } },
      token.owner.key,
    );

    expectSignatureRefused(rest, 'not to the maker');
    expect(gql.body.errors?.[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(gql.body.errors?.[0].message).toContain('signature');
    expect(await listingsOf(optional, token)).toEqual([]);
  });

  test('when a signature was made for another chain, then 422', async () => {
    const token = await ownedToken(optional);
    const body = listingBody();
    const signature = await signListing(token.owner, token, body, 137);

    const res = await optional.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, ...body, signature }, token.owner.key);

    expectSignatureRefused(res, 'not to the maker');
  });

  test('when the signature is not 65 bytes of hex, then 422 saying the form', async () => {
    const token = await ownedToken(optional);

    const res = await optional.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, ...listingBody(), signature: '0xsigned' }, token.owner.key);

    expectSignatureRefused(res, '130 hex digits');
  });

  test('when a signed listing does not name its listing_time, then 422: the server\'s clock cannot be what was signed', async () => {
    const token = await ownedToken(optional);
    const body = listingBody();
    const signature = await signListing(token.owner, token, body);

    const res = await optional.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, start_price: body.start_price, signature }, token.owner.key);

    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.error.details)).toContain('listing');
  });

  test('when a listing or an offer has no signature, then it is accepted without one', async () => {
    const token = await ownedToken(optional);
    const buyer = await wallet(optional);

    const listed = await optional.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, start_price: 3 }, token.owner.key);
    const offered = await optional.rest('POST', '/v1/offers', { asset_id: token.assetId, ...offerBody() }, buyer.key);

    expect([listed.status, offered.status]).toEqual([200, 200]);
    expect([listed.body.signature, offered.body.signature]).toEqual([null, null]);
  });

  test('when an offer carries its taker\'s signature, then it is stored and shown; signed by the asset\'s owner instead, then 422', async () => {
    const token = await ownedToken(optional);
    const buyer = await wallet(optional);
    const body = offerBody();

    const good = await optional.rest('POST', '/v1/offers', { asset_id: token.assetId, ...body, signature: await signOffer(buyer, token, body) }, buyer.key);
    const bad = await optional.rest('POST', '/v1/offers', { asset_id: token.assetId, ...body, signature: await signOffer(buyer, token, body, token.owner) }, buyer.key);

    expect(good.status).toBe(200);
    expect(good.body.signature).toMatch(/^0x[0-9a-f]{130}$/);
    expectSignatureRefused(bad, `recovers to ${token.owner.address}`);
    const read = await optional.gql(`query ($id: ID!) { offer(id: $id) { signature } }`, { id: good.body.id });
    expect(read.body.data.offer.signature).toBe(good.body.signature);
    expect(await offersOf(optional, token)).toEqual([{ status: 'active', signature: good.body.signature }]);
  });

  test('when a collection or trait offer carries its taker\'s CollectionOffer signature, then it is stored; signed for another quantity or other traits, then 422 and nothing is written', async () => {
    const token = await ownedToken(optional);
    const buyer = await wallet(optional);
    const body = { ...offerBody(), collection_id: token.tokenAddress, quantity: 3 };
    const traits = [
      { trait_type: 'Background', value: 'Blue' },
      { trait_type: 'Eyes', value: 'Laser' },
    ];
    const sign = (quantity: number, signedTraits: typeof traits, signer: Wallet = buyer) =>
      signer.account.signTypedData({
        domain: { ...DOMAIN, chainId: 1 },
        types: TYPES,
        primaryType: 'CollectionOffer',
        message: {
          taker: buyer.account.address,
          tokenAddress: token.tokenAddress as `0x${string}`,
          quantity: BigInt(quantity),
          currency: ETH.address,
          price: parseUnits(body.price, 18),
          startTime: seconds(body.start_time),
          endTime: seconds(body.end_time),
          traits: signedTraits.map((t) => ({ traitType: t.trait_type, value: t.value })),
        },
      });
    const post = async (extra: Record<string, unknown>) => optional.rest('POST', '/v1/offers', { ...body, ...extra }, buyer.key);

    const collectionOffer = await post({ signature: await sign(3, []) });
    const traitOffer = await post({ traits, signature: await sign(3, traits) });
    const otherQuantity = await post({ signature: await sign(2, []) });
    const otherTraits = await post({ traits, signature: await sign(3, traits.slice(0, 1)) });
    const byOwner = await post({ signature: await sign(3, [], token.owner) });

    expect([collectionOffer.status, traitOffer.status]).toEqual([200, 200]);
    expect([collectionOffer.body.kind, traitOffer.body.kind]).toEqual(['collection', 'trait']);
    expect(traitOffer.body.signature).toMatch(/^0x[0-9a-f]{130}$/);
    expectSignatureRefused(otherQuantity, 'recovers to');
    expectSignatureRefused(otherTraits, 'recovers to');
    expectSignatureRefused(byOwner, `recovers to ${token.owner.address}`);
    const stored = await optional.ds.query(
      'SELECT kind, quantity, signature FROM offers WHERE taker = $1 ORDER BY created_at',
      [buyer.address],
    );
    expect(stored).toEqual([
      { kind: 'collection', quantity: 3, signature: collectionOffer.body.signature },
      { kind: 'trait', quantity: 3, signature: traitOffer.body.signature },
    ]);
  });

  test('when a signed listing\'s price is changed with a new signature, then the new one is stored; changed without one, then the old is dropped', async () => {
    const token = await ownedToken(optional);
    const body = listingBody();
    await optional.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, ...body, signature: await signListing(token.owner, token, body) }, token.owner.key);
    const path = `/v1/assets/listing/${token.tokenAddress}/${token.tokenId}`;

    const resigned = await signListing(token.owner, token, { ...body, start_price: '4' });
    const changed = await optional.rest('PUT', path, { start_price: '4', signature: resigned }, token.owner.key);
    const wrong = await optional.rest('PUT', path, { start_price: '6', signature: resigned }, token.owner.key);
    const unsigned = await optional.rest('PUT', path, { start_price: '5' }, token.owner.key);

    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ start_price: 4, signature: resigned });
    expectSignatureRefused(wrong, 'not to the maker');
    expect(unsigned.status).toBe(200);
    expect(unsigned.body).toMatchObject({ start_price: 5, signature: null });
    expect(await listingsOf(optional, token)).toEqual([{ status: 'active', signature: null }]);
  });
});

describe('signed prices and their currency', () => {
  const list = (token: Token, body: ListingBody, signature: string, currency?: SigningCurrency) =>
    optional.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, ...body, ...(currency && { currency: currency.symbol }), signature }, token.owner.key);

  test('when a listing is signed for WETH, then the same numbers in ETH or in USDC are refused (422) and in WETH it is listed', async () => {
    const token = await ownedToken(optional);
    const body = listingBody();
    const signature = await signListing(token.owner, token, body, 1, WETH);

    const asNative = await list(token, body, signature);
    const asUsdc = await list(token, body, signature, USDC);
    const asWeth = await list(token, body, signature, WETH);

    expectSignatureRefused(asNative, 'not to the maker');
    expectSignatureRefused(asUsdc, 'not to the maker');
    expect(asWeth.status).toBe(200);
    expect(asWeth.body).toMatchObject({ currency: { symbol: 'WETH' }, signature });
    expect(await listingsOf(optional, token)).toEqual([{ status: 'active', signature }]);
  });

  test('when a USDC listing and a USDC offer are signed with 6-decimal amounts, then they verify; signed with 18 decimals, then 422', async () => {
    const token = await ownedToken(optional);
    const buyer = await wallet(optional);
    const body = { ...listingBody(), start_price: '12.5' };
    const offer = { ...offerBody(), price: '7.25' };
    const usdcIn18 = { ...USDC, decimals: 18 };

    const wrongListing = await list(token, body, await signListing(token.owner, token, body, 1, usdcIn18), USDC);
    const listed = await list(token, body, await signListing(token.owner, token, body, 1, USDC), USDC);
    const offerIn = async (currency: SigningCurrency) =>
      optional.rest('POST', '/v1/offers', { asset_id: token.assetId, ...offer, currency: 'USDC', signature: await signOffer(buyer, token, offer, buyer, currency) }, buyer.key);
    const wrongOffer = await offerIn(usdcIn18);
    const offered = await offerIn(USDC);

    expectSignatureRefused(wrongListing, 'not to the maker');
    expectSignatureRefused(wrongOffer, 'not to the maker');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ start_price: 12.5, currency: { symbol: 'USDC', decimals: 6 } });
    expect(offered.status).toBe(200);
    expect(offered.body).toMatchObject({ price: 7.25, currency: { symbol: 'USDC' } });
  });

  test('when a native listing carries a signature of the types made before currencies (no currency field), then it still verifies; the same for a WETH price is refused', async () => {
    const token = await ownedToken(optional);
    const body = listingBody();
    const { currency: _native, ...legacyTerms } = listingMessage(token, body, ETH);
    const legacy = await token.owner.account.signTypedData({ domain: { ...DOMAIN, chainId: 1 }, types: LEGACY_LISTING, primaryType: 'Listing', message: legacyTerms });

    const asWeth = await list(token, body, legacy, WETH);
    const asNative = await list(token, body, legacy);

    expectSignatureRefused(asWeth, 'not to the maker');
    expect(asNative.status).toBe(200);
    expect(asNative.body).toMatchObject({ currency: { symbol: 'ETH' }, signature: legacy });
  });
});

describe('SIGNATURES=required', () => {
  test('when a listing or an offer comes without a signature, then 422 on both doors, and nothing is written', async () => {
    const token = await ownedToken(required);
    const buyer = await wallet(required);

    const listing = await required.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, start_price: 3 }, token.owner.key);
    const offer = await required.rest('POST', '/v1/offers', { asset_id: token.assetId, ...offerBody() }, buyer.key);
    const gql = await required.gql(
      `mutation ($input: CreateOfferInput!) { createOffer(input: $input) { id } }`,
      { input: { assetId: token.assetId, price: '2', startTime: inHours(-1), endTime: inHours(24) } },
      buyer.key,
    );

    expectSignatureRefused(listing, 'is required');
    expectSignatureRefused(offer, 'is required');
    expect(gql.body.errors?.[0]).toMatchObject({ extensions: { code: 'VALIDATION_FAILED' }, message: expect.stringContaining('signature: is required') });
    expect(await listingsOf(required, token)).toEqual([]);
    expect(await offersOf(required, token)).toEqual([]);
  });

  test('when they are signed, then they are written; a price change without a new signature is refused', async () => {
    const token = await ownedToken(required);
    const buyer = await wallet(required);
    const body = listingBody();
    const offer = offerBody();

    const listed = await required.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, ...body, signature: await signListing(token.owner, token, body) }, token.owner.key);
    const offered = await required.rest('POST', '/v1/offers', { asset_id: token.assetId, ...offer, signature: await signOffer(buyer, token, offer) }, buyer.key);
    const unsigned = await required.rest('PUT', `/v1/assets/listing/${token.tokenAddress}/${token.tokenId}`, { start_price: '5' }, token.owner.key);

    expect([listed.status, offered.status]).toEqual([200, 200]);
    expectSignatureRefused(unsigned, 'is required');
    expect(await listingsOf(required, token)).toEqual([{ status: 'active', signature: listed.body.signature }]);
  });

  test('when a bulk listing has an unsigned item and one signed by another account, then 422 lists those two items and nothing is written; all signed, then 201', async () => {
    const owner = await wallet(required);
    const stranger = await wallet(required);
    const collection = await saveCollection(required, owner.key);
    const tokens: Token[] = [];
    for (let i = 0; i < 3; i += 1) {
      const asset = await saveAsset(required, owner.key, collection, owner.address);
      tokens.push({ owner, tokenAddress: asset.tokenAddress, tokenId: asset.tokenId, assetId: asset.id });
    }
    const body = listingBody();
    const item = async (token: Token, signer: Wallet | null) => ({ asset_id: token.assetId, ...body, ...(signer && { signature: await signListing(signer, token, body) }) });

    const refused = await required.rest('POST', '/v1/listings/bulk', { listings: [await item(tokens[0], owner), await item(tokens[1], null), await item(tokens[2], stranger)] }, owner.key);
    const signed = await required.rest('POST', '/v1/listings/bulk', { listings: await Promise.all(tokens.map((t) => item(t, owner))) }, owner.key);

    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([
      { index: 1, code: 'VALIDATION_FAILED', field: 'signature', message: expect.stringContaining('is required') },
      { index: 2, code: 'VALIDATION_FAILED', field: 'signature', message: expect.stringMatching(new RegExp(`recovers to ${stranger.address}`, 'i')) },
    ]);
    expect(signed.status).toBe(201);
    for (const token of tokens) expect(await listingsOf(required, token)).toEqual([{ status: 'active', signature: expect.stringMatching(/^0x/) }]);
  });
});

describe('SIGNATURES=off', () => {
  test('when a signature is anything, then it is stored as given, unchecked', async () => {
    const token = await ownedToken(off);

    const res = await off.rest('POST', '/v1/assets/listing', { asset_id: token.assetId, start_price: 3, signature: '0xsigned' }, token.owner.key);

    expect(res.status).toBe(200);
    expect(await listingsOf(off, token)).toEqual([{ status: 'active', signature: '0xsigned' }]);
  });
});
