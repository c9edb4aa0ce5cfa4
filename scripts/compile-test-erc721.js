// Compiles test/chain/TestERC721.sol with solc from npm into test/chain/TestERC721.json (abi + bytecode),
// committed beside it so the tests need no compiler at run time: node scripts/compile-test-erc721.js
// evmVersion paris: the local node (ganache 7) knows no later opcodes (PUSH0, MCOPY).
const fs = require('node:fs');
const path = require('node:path');
const solc = require('solc');

const dir = path.join(__dirname, '..', 'test', 'chain');
const source = path.join(dir, 'TestERC721.sol');
const input = {
  language: 'Solidity',
  sources: { 'TestERC721.sol': { content: fs.readFileSync(source, 'utf8') } },
  settings: { evmVersion: 'paris', optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
};
const findImports = (p) => ({ contents: fs.readFileSync(require.resolve(p), 'utf8') });
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
const contract = output.contracts['TestERC721.sol'].TestERC721;
const artefact = { compiler: `solc ${solc.version()}`, evmVersion: 'paris', abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
fs.writeFileSync(path.join(dir, 'TestERC721.json'), `${JSON.stringify(artefact, null, 1)}\n`);
