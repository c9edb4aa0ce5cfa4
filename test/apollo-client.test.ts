import { ApolloClient, ApolloLink, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
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
  collection: { id: string; name: string; assets: { result: { id: string; tokenId: string; name: string; listing: { id: string; currentPrice: number; currentPriceDecimal: string } | null }[] } };
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

/** The cache of the README's "From a frontend": Relay-style pagination for the connections. */
function readmeCache(): InMemoryCache {
  return new InMemoryCache({
    typePolicies: {
      Query: { fields: { assets: relayStylePagination(['collectionId', 'ownerId', 'status', 'trait', 'orderBy', 'direction']) } },
      Collection: { fields: { assets: relayStylePagination(['orderBy', 'direction']) } },
    },
  });
}

test('when an object is refetched Relay-style by node(id), then it is the same object, cached once under its type and id', async () => {
  const owned = await saveOwnedAsset(server);
  const listing = await saveListing(server, owned.owner.key, owned.asset.id, { startPrice: 3 });
  const client = new ApolloClient({ link: new HttpLink({ uri: `${server.url}/graphql` }), cache: readmeCache() });
  const page = await client.query<CollectionPageData>({ query: COLLECTION_PAGE, variables: { address: owned.collection.contractAddress } });
  const card = page.data!.collection.assets.result[0];

  const NODE = gql`
    query Refetch($id: ID!) {
      node(id: $id) {
        __typename
        id
        ... on Asset { name listing { id currentPrice currentPriceDecimal } }
      }
    }
  `;
  const refetched = await client.query<{ node: { __typename: string; id: string; name: string; listing: { id: string } } }>({ query: NODE, variables: { id: card.id } });
  expect(refetched.data!.node).toMatchObject({ __typename: 'Asset', id: owned.asset.id, name: card.name, listing: { id: listing.id } });
  // One normalised entry per object: Asset:<id> and Listing:<id>, shared by both queries.
  const cached = client.cache.extract() as Record<string, unknown>;
  expect(Object.keys(cached).filter((k) => k === `Asset:${owned.asset.id}` || k === `Listing:${listing.id}`).sort()).toEqual([`Asset:${owned.asset.id}`, `Listing:${listing.id}`].sort());

  // A collection's node id comes back as a Collection.
  const collection = await client.query<{ node: { __typename: string; id: string } }>({ query: gql`query ($id: ID!) { node(id: $id) { __typename id } }`, variables: { id: page.data!.collection.id } });
  expect(collection.data!.node).toEqual({ __typename: 'Collection', id: owned.collection.id });
});

test('when a list is walked with fetchMore and relayStylePagination, then the cached connection holds every item once, in order', async () => {
  const owned = await saveOwnedAsset(server);
  for (let i = 0; i < 6; i += 1) await saveAsset(server, owned.owner.key, owned.collection, owned.owner.address);
  const client = new ApolloClient({ link: new HttpLink({ uri: `${server.url}/graphql` }), cache: readmeCache() });
  const ASSETS = gql`
    query Assets($collectionId: String!, $after: String) {
      assets(collectionId: $collectionId, orderBy: TOKEN_ID, direction: ASC, first: 3, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { cursor node { id tokenId } }
      }
    }
  `;
  type Data = { assets: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string }; edges: { node: { id: string; tokenId: string } }[] } };
  const vars = { collectionId: owned.collection.id };
  let result = await client.query<Data>({ query: ASSETS, variables: vars });
  const observable = client.watchQuery<Data>({ query: ASSETS, variables: vars });
  while (result.data!.assets.pageInfo.hasNextPage) {
    result = await observable.fetchMore({ variables: { after: result.data!.assets.pageInfo.endCursor } });
  }
  const merged = client.readQuery<Data>({ query: ASSETS, variables: vars })!;
  expect(merged.assets.edges.map((e) => e.node.tokenId)).toEqual(['1', '2', '3', '4', '5', '6', '7']);
  expect(merged.assets.totalCount).toBe(7);
  expect(merged.assets.pageInfo.hasNextPage).toBe(false);
});
