import { startServer } from './setup/server';
test('x', async () => {
  const server = await startServer();
  const res = await server.gql(`query ($query: String!) { searchAssets(query: $query) { remaining result { id name } } }`, { query: '' });
  console.log(res.status, JSON.stringify(res.body).slice(0, 300));
  await server.close();
});
