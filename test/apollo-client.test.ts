import { ApolloClient, ApolloLink, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { saveListing, saveOwnedAsset } from './factories/market';
import { saveAsset } from './factories/marketplace';
import { startServer, TestServer } from './setup/server';

/**
 * Issue #29: the gateway under a real client. Apollo Client 4 with its normalised InMemoryCache, over
 * HTTP, as a frontend runs it in Node: objects are identified by `__typename` and `id`, so a mutation's
 * answer updates every cached query that holds the same object.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** A client as a frontend makes one: the HTTP link and a normalising cache. */
function newClient(key?: string): ApolloClient {
  const link: ApolloLink = new HttpLink({ uri: `${server.url}/graphql`, headers: key ? { 'access-token': key } : {} });
  return new ApolloClient({
    link,
    cache: new InMemoryCache(),
  });
}

const COLLECTION_PAGE = gql`
  query CollectionPage($address: Address!) {
    collection(address: $address) {
      id
      name
      assets(orderBy: TOKEN_ID, direction: ASC, limit: 24) {
        cursor
        result {
          ...AssetCard
        }
      }
    }
  }
  fragment AssetCard on Asset {
    id
    tokenId
    name
    listing {
      ...ListingPrice
    }
  }
  fragment ListingPrice on Listing {
    id
    currentPrice
    currentPriceDecimal
  }
`;

const UPDATE_PRICE = gql`
  mutation UpdatePrice($tokenAddress: Address!, $tokenId: TokenId!, $price: Price!) {
    updateListing(tokenAddress: $tokenAddress, tokenId: $tokenId, input: { startPrice: $price }) {
      id
      currentPrice
      currentPriceDecimal
    }
  }
`;

interface CollectionPageData {
  collection: { id: string; name: string; assets: { result: { id: string; tokenId: string; listing: { id: string; currentPrice: number; currentPriceDecimal: string } | null }[] } };
}

test('when a mutation changes a listing\'s price, then a collection page cached before shows the new price without a refetch', async () => {
  const owned = await saveOwnedAsset(server);
  await saveAsset(server, owned.owner.key, owned.collection, owned.owner.address);
  const listing = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 5 });
  const client = newClient(owned.owner.key);

  const first = await client.query<CollectionPageData>({ query: COLLECTION_PAGE, variables: { address: owned.collection.contractAddress } });
  const cards = first.data!.collection.assets.result;
  expect(cards).toHaveLength(2);
  expect(cards.find((a) => a.id === owned.asset.id)!.listing).toMatchObject({ id: listing.id, currentPrice: 5, currentPriceDecimal: '5' });

  // The mutation's answer is the same Listing (same __typename and id): the cache merges it in place.
  const requests: string[] = [];
  const counting = new ApolloLink((operation, forward) => {
    requests.push(operation.operationName ?? '');
    return forward(operation);
  });
  client.setLink(counting.concat(new HttpLink({ uri: `${server.url}/graphql`, headers: { 'access-token': owned.owner.key } })));
  const updated = await client.mutate({ mutation: UPDATE_PRICE, variables: { tokenAddress: owned.asset.tokenAddress, tokenId: owned.asset.tokenId, price: '7.5' } });
  expect(updated.data).toMatchObject({ updateListing: { id: listing.id, currentPrice: 7.5 } });

  const cached = client.readQuery<CollectionPageData>({ query: COLLECTION_PAGE, variables: { address: owned.collection.contractAddress } });
  expect(cached!.collection.assets.result.find((a) => a.id === owned.asset.id)!.listing).toEqual({
    __typename: 'Listing',
    id: listing.id,
    currentPrice: 7.5,
    currentPriceDecimal: '7.5',
  });
  // cache-first answers from the cache: no request went out for the page.
  const again = await client.query<CollectionPageData>({ query: COLLECTION_PAGE, variables: { address: owned.collection.contractAddress } });
  expect(again.data!.collection.assets.result.find((a) => a.id === owned.asset.id)!.listing!.currentPrice).toBe(7.5);
  expect(requests).toEqual(['UpdatePrice']);

  // And the server agrees: a network-only read shows the same price.
  const fresh = await client.query<CollectionPageData>({ query: COLLECTION_PAGE, variables: { address: owned.collection.contractAddress }, fetchPolicy: 'network-only' });
  expect(fresh.data!.collection.assets.result.find((a) => a.id === owned.asset.id)!.listing!.currentPriceDecimal).toBe('7.5');
});
