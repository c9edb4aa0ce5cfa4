// Compiles the tests' contracts (test/chain/TestERC721.sol, TestERC721Metadata.sol, TestERC721Owned.sol) with solc from npm into
// test/chain/<name>.json (abi + bytecode), committed beside them so the tests need no compiler at run time:
// node scripts/compile-test-erc721.js
// evmVersion paris: the local node (ganache 7) knows no later opcodes (PUSH0, MCOPY).
const fs = require('node:fs');
const path = require('node:path');
const solc = require('solc');

const dir = path.join(__dirname, '..', 'test', 'chain');
const findImports = (p) => ({ contents: fs.readFileSync(require.resolve(p), 'utf8') });
for (const name of ['TestERC721', 'TestERC721Metadata', 'TestERC721Owned']) {
  const file = `${name}.sol`;
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: fs.readFileSync(path.join(dir, file), 'utf8') } },
    settings: { evmVersion: 'paris', optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const contract = output.contracts[file][name];
  const artefact = { compiler: `solc ${solc.version()}`, evmVersion: 'paris', abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  fs.writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(artefact, null, 1)}\n`);
}
